package allocator

// addrTable maps the address of every allocated block to the block: an open-addressing
// hash table with linear probing and backward-shift deletion. Unlike a Go map it never
// allocates once grown, and it does not reseed when it empties, which keeps the
// Malloc+Free cache-hit path allocation-free and short. Address 0 marks an empty slot
// (no block lives at address 0).
type addrTable struct {
	keys  []uint64
	vals  []*block
	n     int
	shift uint
}

func (t *addrTable) slot(k uint64) uint64 {
	return (k * 0x9e3779b97f4a7c15) >> t.shift
}

func (t *addrTable) init(logSize uint) {
	t.keys = make([]uint64, 1<<logSize)
	t.vals = make([]*block, 1<<logSize)
	t.shift = 64 - logSize
	t.n = 0
}

func (t *addrTable) get(k uint64) *block {
	if t.keys == nil || k == 0 {
		return nil
	}
	mask := uint64(len(t.keys) - 1)
	for i := t.slot(k); ; i = (i + 1) & mask {
		switch t.keys[i] {
		case k:
			return t.vals[i]
		case 0:
			return nil
		}
	}
}

func (t *addrTable) put(k uint64, b *block) {
	if t.keys == nil {
		t.init(10)
	}
	if (t.n+1)*4 > len(t.keys)*3 {
		t.grow()
	}
	mask := uint64(len(t.keys) - 1)
	for i := t.slot(k); ; i = (i + 1) & mask {
		switch t.keys[i] {
		case k:
			t.vals[i] = b
			return
		case 0:
			t.keys[i], t.vals[i] = k, b
			t.n++
			return
		}
	}
}

func (t *addrTable) grow() {
	keys, vals := t.keys, t.vals
	t.init(64 - t.shift + 1)
	for i, k := range keys {
		if k != 0 {
			t.put(k, vals[i])
		}
	}
}

// del removes k and returns its block, or nil if k is absent.
func (t *addrTable) del(k uint64) *block {
	if t.keys == nil || k == 0 {
		return nil
	}
	mask := uint64(len(t.keys) - 1)
	i := t.slot(k)
	for ; t.keys[i] != k; i = (i + 1) & mask {
		if t.keys[i] == 0 {
			return nil
		}
	}
	b := t.vals[i]
	t.keys[i], t.vals[i] = 0, nil
	t.n--
	// Shift later entries of the probe run back into the hole.
	for j := (i + 1) & mask; t.keys[j] != 0; j = (j + 1) & mask {
		h := t.slot(t.keys[j])
		// The entry at j may move to i unless its home h lies cyclically in (i, j].
		if (i < j && (h <= i || h > j)) || (i > j && h <= i && h > j) {
			t.keys[i], t.vals[i] = t.keys[j], t.vals[j]
			t.keys[j], t.vals[j] = 0, nil
			i = j
		}
	}
	return b
}

func (t *addrTable) len() int { return t.n }

// each calls f for every block, in no particular order.
func (t *addrTable) each(f func(*block)) {
	for i, k := range t.keys {
		if k != 0 {
			f(t.vals[i])
		}
	}
}
