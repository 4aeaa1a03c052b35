package allocator

import (
	"errors"
	"fmt"
	"sync"
)

// fakeMemory is a device for tests: a capacity, addresses handed out by a bump pointer
// (never reused, so they are unique), virtual memory with page tracking, and an
// injectable non-OOM failure.
type fakeMemory struct {
	mu       sync.Mutex
	capacity uint64
	used     uint64
	next     uint64
	segs     map[uint64]uint64
	vas      map[uint64]uint64
	mapped   map[uint64]bool   // mapped 2 MiB pages
	mappings map[uint64]uint64 // start → size of each Map call
	failNext error             // returned by the next Malloc/Map when set
}

type fakeOOM struct{}

func (fakeOOM) Error() string     { return "fake: out of memory" }
func (fakeOOM) OutOfMemory() bool { return true }

func newFakeMemory(capacity uint64) *fakeMemory {
	return &fakeMemory{capacity: capacity, next: 1 << 40, segs: map[uint64]uint64{}, vas: map[uint64]uint64{}, mapped: map[uint64]bool{}, mappings: map[uint64]uint64{}}
}

func (m *fakeMemory) Malloc(size uint64) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failNext; err != nil {
		m.failNext = nil
		return 0, err
	}
	if m.used+size > m.capacity {
		return 0, fakeOOM{}
	}
	addr := m.next
	m.next += (size + (2<<20 - 1)) &^ (2<<20 - 1)
	m.next += 2 << 20
	m.segs[addr] = size
	m.used += size
	return addr, nil
}

func (m *fakeMemory) Free(addr uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	size, ok := m.segs[addr]
	if !ok {
		return fmt.Errorf("fake: free of unknown %#x", addr)
	}
	delete(m.segs, addr)
	m.used -= size
	return nil
}

func (m *fakeMemory) MemGetInfo() (uint64, uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.capacity - m.used, m.capacity, nil
}

func (m *fakeMemory) Granularity() uint64 { return 2 << 20 }

func (m *fakeMemory) ReserveAddress(size uint64) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	addr := m.next
	m.next += size + 1<<30
	m.vas[addr] = size
	return addr, nil
}

func (m *fakeMemory) FreeAddress(addr, size uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.vas[addr] != size {
		return fmt.Errorf("fake: free of unknown reservation %#x", addr)
	}
	for p := addr; p < addr+size; p += 2 << 20 {
		if m.mapped[p] {
			return fmt.Errorf("fake: reservation %#x freed with page %#x mapped", addr, p)
		}
	}
	delete(m.vas, addr)
	return nil
}

func (m *fakeMemory) Map(addr, size uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failNext; err != nil {
		m.failNext = nil
		return err
	}
	if m.used+size > m.capacity {
		return fakeOOM{}
	}
	for p := addr; p < addr+size; p += 2 << 20 {
		if m.mapped[p] {
			return fmt.Errorf("fake: page %#x mapped twice", p)
		}
	}
	for p := addr; p < addr+size; p += 2 << 20 {
		m.mapped[p] = true
	}
	m.mappings[addr] = size
	m.used += size
	return nil
}

func (m *fakeMemory) Unmap(addr, size uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	// Like cuMemUnmap + cuMemRelease: only whole mappings can go, so the range
	// must be a run of complete Map calls.
	for p := addr; p < addr+size; {
		n, ok := m.mappings[p]
		if !ok || p+n > addr+size {
			return fmt.Errorf("fake: unmap of [%#x, +%d) cuts through a mapping at %#x", addr, size, p)
		}
		p += n
	}
	for p := addr; p < addr+size; p += 2 << 20 {
		if !m.mapped[p] {
			return fmt.Errorf("fake: unmap of unmapped page %#x", p)
		}
		delete(m.mapped, p)
		delete(m.mappings, p)
	}
	m.used -= size
	return nil
}

// plainMemory hides the virtual-memory methods of a fakeMemory.
type plainMemory struct{ m *fakeMemory }

func (p plainMemory) Malloc(size uint64) (uint64, error)  { return p.m.Malloc(size) }
func (p plainMemory) Free(addr uint64) error              { return p.m.Free(addr) }
func (p plainMemory) MemGetInfo() (uint64, uint64, error) { return p.m.MemGetInfo() }

// checkInvariants verifies the allocator's structure and statistics against a recount
// from its blocks, and its agreement with the fake device.
func checkInvariants(a *Allocator, m *fakeMemory) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	var all []*block
	seen := map[*block]bool{}
	add := func(b *block) {
		if !seen[b] {
			seen[b] = true
			all = append(all, b)
		}
	}
	for _, p := range a.allPools() {
		for _, b := range p.blocks.appendInOrder(nil) {
			if b.allocated || !b.mapped || b.pool != p {
				return fmt.Errorf("free set of %s pool holds block %#x (allocated %v, mapped %v)", p.name(), b.addr, b.allocated, b.mapped)
			}
			add(b)
		}
		if got := len(p.blocks.appendInOrder(nil)); got != p.blocks.n {
			return fmt.Errorf("%s free set count %d, walk finds %d", p.name(), p.blocks.n, got)
		}
		for _, b := range p.unmapped.appendInOrder(nil) {
			if b.mapped || b.allocated || b.seg == nil {
				return fmt.Errorf("unmapped set holds block %#x (mapped %v)", b.addr, b.mapped)
			}
			add(b)
		}
	}
	var activeErr error
	nActive := 0
	a.active.each(func(b *block) {
		nActive++
		if !b.allocated || a.active.get(b.addr) != b {
			activeErr = fmt.Errorf("active table entry for block %#x is wrong (allocated=%v)", b.addr, b.allocated)
		}
		add(b)
	})
	if activeErr != nil {
		return activeErr
	}
	if nActive != a.active.len() {
		return fmt.Errorf("active table holds %d entries, counts %d", nActive, a.active.len())
	}
	nPending := 0
	for i, b := range a.pendingFrees {
		if b == nil {
			continue
		}
		nPending++
		if j, ok := a.pendingAt[b.addr]; !ok || j != i {
			return fmt.Errorf("pending free %#x at %d, indexed at %d (%v)", b.addr, i, j, ok)
		}
		if b.allocated || !b.pending || a.active.get(b.addr) == b {
			return fmt.Errorf("pending free %#x: allocated %v, pending %v", b.addr, b.allocated, b.pending)
		}
		add(b)
	}
	if nPending != a.pendingN || len(a.pendingAt) != a.pendingN {
		return fmt.Errorf("%d pending frees listed, %d counted, %d indexed", nPending, a.pendingN, len(a.pendingAt))
	}
	// Every block reachable through the segment links must be one we know of.
	var want deviceStats
	segSizes := map[uint64]uint64{}
	var reserved int64
	heads := 0
	for _, b := range all {
		if b.prev != nil {
			if b.prev.next != b {
				return fmt.Errorf("block %#x: prev.next does not point back", b.addr)
			}
			continue
		}
		heads++
		var segTotal int64
		for x := b; x != nil; x = x.next {
			if !seen[x] {
				return fmt.Errorf("block %#x reachable from segment %#x but in no set", x.addr, b.addr)
			}
			if x.next != nil {
				if x.next.prev != x {
					return fmt.Errorf("block %#x: next.prev does not point back", x.addr)
				}
				if x.next.addr != x.addr+uint64(x.size) {
					return fmt.Errorf("gap or overlap after block %#x+%d: next at %#x", x.addr, x.size, x.next.addr)
				}
				if x.mapped && x.next.mapped && !x.allocated && !x.next.allocated && !x.pending && !x.next.pending {
					return fmt.Errorf("adjacent free blocks %#x and %#x not merged", x.addr, x.next.addr)
				}
			}
			if x.size <= 0 || x.size%MinBlockSize != 0 {
				return fmt.Errorf("block %#x has size %d", x.addr, x.size)
			}
			if (x.seg != nil) != (b.seg != nil) || x.pool != b.pool || x.stream != b.stream {
				return fmt.Errorf("block %#x disagrees with its segment head", x.addr)
			}
			idx := x.pool.statIndex()
			if x.mapped {
				reserved += x.size
				want.reservedBytes[statAll].Current += x.size
				want.reservedBytes[idx].Current += x.size
			}
			if x.allocated {
				for _, arr := range []*statArray{&want.allocatedBytes, &want.activeBytes} {
					arr[statAll].Current += x.size
					arr[idx].Current += x.size
				}
				for _, arr := range []*statArray{&want.allocation, &want.active} {
					arr[statAll].Current++
					arr[idx].Current++
				}
				want.requestedBytes[statAll].Current += x.requested
				want.requestedBytes[idx].Current += x.requested
				if x.size >= a.maxSplit {
					want.oversizeAllocations.Current++
				}
			} else if x.pending {
				for _, arr := range []*statArray{&want.activeBytes} {
					arr[statAll].Current += x.size
					arr[idx].Current += x.size
				}
				want.active[statAll].Current++
				want.active[idx].Current++
				want.requestedBytes[statAll].Current += x.requested
				want.requestedBytes[idx].Current += x.requested
			} else if x.mapped && x.seg == nil && x.isSplit() {
				want.inactiveSplit[statAll].Current++
				want.inactiveSplit[idx].Current++
				want.inactiveSplitBytes[statAll].Current += x.size
				want.inactiveSplitBytes[idx].Current += x.size
			}
			segTotal += x.size
		}
		if b.seg == nil {
			idx := b.pool.statIndex()
			want.segment[statAll].Current++
			want.segment[idx].Current++
			if segTotal >= a.maxSplit {
				want.oversizeSegments.Current++
			}
			segSizes[b.addr] = uint64(segTotal)
		} else if segTotal != b.seg.size() {
			return fmt.Errorf("expandable segment %#x: blocks cover %d of %d bytes", b.seg.base, segTotal, b.seg.size())
		}
	}
	got := &a.stats
	for i, e := range want.arrays() {
		g := got.arrays()[i]
		for k := range e.a {
			if e.a[k].Current != g.a[k].Current {
				return fmt.Errorf("%s.%s.current = %d, recount from blocks gives %d", e.name, statTypeNames[k], g.a[k].Current, e.a[k].Current)
			}
			if g.a[k].Peak < g.a[k].Current || g.a[k].Current < 0 {
				return fmt.Errorf("%s.%s: current %d, peak %d", e.name, statTypeNames[k], g.a[k].Current, g.a[k].Peak)
			}
			if g.a[k].Allocated-g.a[k].Freed != g.a[k].Current && got.numAllocRetries >= 0 && !accumulatedReset {
				return fmt.Errorf("%s.%s: allocated %d - freed %d != current %d", e.name, statTypeNames[k], g.a[k].Allocated, g.a[k].Freed, g.a[k].Current)
			}
		}
	}
	if want.oversizeAllocations.Current != got.oversizeAllocations.Current {
		return fmt.Errorf("oversize_allocations %d, recount %d", got.oversizeAllocations.Current, want.oversizeAllocations.Current)
	}
	if want.oversizeSegments.Current != got.oversizeSegments.Current {
		return fmt.Errorf("oversize_segments %d, recount %d", got.oversizeSegments.Current, want.oversizeSegments.Current)
	}
	if err := checkPoolInvariants(a, all); err != nil {
		return err
	}
	if a.totalAllocated != reserved {
		return fmt.Errorf("total_allocated_memory %d, blocks map %d", a.totalAllocated, reserved)
	}
	if m != nil {
		m.mu.Lock()
		defer m.mu.Unlock()
		if len(m.segs) != len(segSizes) {
			return fmt.Errorf("device holds %d segments, allocator %d", len(m.segs), len(segSizes))
		}
		for addr, size := range m.segs {
			if segSizes[addr] != size {
				return fmt.Errorf("device segment %#x of %d bytes; allocator's blocks there cover %d", addr, size, segSizes[addr])
			}
		}
		if int64(m.used) != reserved {
			return fmt.Errorf("device has %d bytes in use, allocator reserves %d", m.used, reserved)
		}
		if len(m.vas) != len(a.expSegs) {
			return fmt.Errorf("device holds %d reservations, allocator %d expandable segments", len(m.vas), len(a.expSegs))
		}
	}
	return nil
}

// checkPoolInvariants checks the private pools' bookkeeping: the id map and the
// creation-order list agree, a pool is freeable exactly when its use count is 0, every
// routed capture names a live pool, and a pool's count of device allocations matches
// its plain segments (expandable ones are counted per mapping call and unmapping
// call, as in PyTorch, which need not pair: under expandable segments the count is
// only checked for not going negative, even once the pool's segments are all gone).
func checkPoolInvariants(a *Allocator, all []*block) error {
	if len(a.graphPools) != len(a.poolOrder) {
		return fmt.Errorf("%d pools by id, %d in order", len(a.graphPools), len(a.poolOrder))
	}
	segs := map[*privatePool]int{}
	live := map[*privatePool]int{}
	for _, b := range all {
		if (b.allocated || b.pending) && b.pool.owner != nil {
			live[b.pool.owner]++
		}
		if b.prev != nil || b.pool.owner == nil {
			continue
		}
		if b.seg == nil {
			segs[b.pool.owner]++
		}
	}
	for _, pp := range a.poolOrder {
		if a.graphPools[pp.id] != pp {
			return fmt.Errorf("pool %v: id map and order disagree", pp.id)
		}
		if pp.freeable != (pp.useCount == 0) || pp.useCount < 0 {
			return fmt.Errorf("pool %v: use count %d, freeable %v", pp.id, pp.useCount, pp.freeable)
		}
		if pp.small.owner != pp || pp.large.owner != pp {
			return fmt.Errorf("pool %v: block pools not owned by it", pp.id)
		}
		if !a.cfg.ExpandableSegments && pp.mallocCount != segs[pp] {
			return fmt.Errorf("pool %v: cudaMalloc_count %d, %d segments", pp.id, pp.mallocCount, segs[pp])
		}
		if pp.live != live[pp] {
			return fmt.Errorf("pool %v: live count %d, %d live blocks", pp.id, pp.live, live[pp])
		}
		if pp.mallocCount < 0 {
			return fmt.Errorf("pool %v: cudaMalloc_count %d", pp.id, pp.mallocCount)
		}
	}
	for owner := range segs {
		if a.graphPools[owner.id] != owner {
			return fmt.Errorf("a segment belongs to pool %v, which the allocator forgot", owner.id)
		}
	}
	for _, c := range a.captures {
		if a.graphPools[c.id] == nil {
			return fmt.Errorf("allocating to pool %v, which does not exist", c.id)
		}
	}
	return nil
}

// accumulatedReset is never set: the fuzz and race tests do not reset accumulated
// stats, so allocated − freed must equal current for every stat array.
const accumulatedReset = false

var errInjected = errors.New("fake: device lost")
