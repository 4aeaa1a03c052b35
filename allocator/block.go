package allocator

// block is one piece of a segment: allocated, free (cached, in its pool's free set) or,
// in an expandable segment, unmapped address space. Blocks of a segment are linked in
// address order through prev/next; a block with neither is a whole segment.
type block struct {
	addr      uint64
	size      int64
	stream    uint64 // the stream it was allocated on (its segment's stream)
	requested int64  // request that last allocated it (stale once free, as in PyTorch)
	pool      *pool
	prev      *block
	next      *block
	seg       *expSegment // non-nil inside an expandable segment
	gcBase    int64       // pool.getFreeBlocksCalls when last inserted into the free set
	allocated bool
	mapped    bool
	// pending is set between Free and the completion of the block's last stream
	// use (PyTorch's event_count > 0): it is neither allocated nor in a free set.
	pending bool
	// uses are the other streams the block was used on (RecordStream), until Free.
	uses []uint64

	// intrusive treap links (the pool's free set or its unmapped set)
	left, right *block
	prio        uint32

	frames []Frame // where it was last allocated, when history records stacks
}

func (b *block) isSplit() bool { return b.prev != nil || b.next != nil }

// splice links b between before and after.
func (b *block) splice(before, after *block) {
	if before != nil {
		before.next = b
	}
	b.prev = before
	if after != nil {
		after.prev = b
	}
	b.next = after
}

// tree is an intrusive treap of blocks ordered by (stream, size, addr) — PyTorch's
// BlockComparatorSize — or by (stream, addr) (BlockComparatorAddress). With only the
// default stream (0) the orders are (size, addr) and addr. It never allocates: the
// blocks are the nodes.
type tree struct {
	root   *block
	byAddr bool
	n      int
}

// key is a position in a tree's order.
type key struct {
	stream uint64
	size   int64
	addr   uint64
}

func keyOf(b *block) key { return key{b.stream, b.size, b.addr} }

func (t *tree) less(a *block, k key) bool {
	if a.stream != k.stream {
		return a.stream < k.stream
	}
	size, addr := k.size, k.addr
	if t.byAddr {
		return a.addr < addr
	}
	if a.size != size {
		return a.size < size
	}
	return a.addr < addr
}

func (t *tree) insert(b *block) {
	// Descend to where b's priority puts it, then split that subtree around b's key.
	link := &t.root
	for n := *link; n != nil && n.prio >= b.prio; n = *link {
		if t.less(b, keyOf(n)) {
			link = &n.left
		} else {
			link = &n.right
		}
	}
	l, r := &b.left, &b.right
	for n := *link; n != nil; {
		if t.less(n, keyOf(b)) {
			*l = n
			l = &n.right
			n = n.right
		} else {
			*r = n
			r = &n.left
			n = n.left
		}
	}
	*l, *r = nil, nil
	*link = b
	t.n++
}

// remove deletes b, which must be in the tree.
func (t *tree) remove(b *block) {
	link := &t.root
	for n := *link; n != b; n = *link {
		if n == nil {
			panic("allocator: internal error: block missing from its free set")
		}
		if t.less(b, keyOf(n)) {
			link = &n.left
		} else {
			link = &n.right
		}
	}
	t.removeAt(link, b)
}

// removeAt deletes b, found at *link.
func (t *tree) removeAt(link **block, b *block) {
	// Replace b by the merge of its subtrees.
	l, r := b.left, b.right
	for l != nil && r != nil {
		if l.prio > r.prio {
			*link = l
			link = &l.right
			l = l.right
		} else {
			*link = r
			link = &r.left
			r = r.left
		}
	}
	if l != nil {
		*link = l
	} else {
		*link = r
	}
	b.left, b.right = nil, nil
	t.n--
}

// lowerBoundLink is lowerBound that also returns the link pointing at the block, for
// removeAt.
func (t *tree) lowerBoundLink(k key) (*block, **block) {
	var best *block
	var bestLink **block
	link := &t.root
	for n := *link; n != nil; n = *link {
		if t.less(n, k) {
			link = &n.right
		} else {
			best, bestLink = n, link
			link = &n.left
		}
	}
	return best, bestLink
}

// lowerBound returns the first block not less than k, or nil.
func (t *tree) lowerBound(k key) *block {
	var best *block
	for n := t.root; n != nil; {
		if t.less(n, k) {
			n = n.right
		} else {
			best = n
			n = n.left
		}
	}
	return best
}

// successor returns the block after b in tree order (b need not be in the tree).
func (t *tree) successor(b *block) *block {
	if t.byAddr {
		return t.lowerBound(key{b.stream, 0, b.addr + 1})
	}
	return t.lowerBound(key{b.stream, b.size, b.addr + 1})
}

// predecessor returns the last block before b in tree order, or nil.
func (t *tree) predecessor(b *block) *block {
	return t.before(keyOf(b))
}

// before returns the last block less than k, or nil.
func (t *tree) before(k key) *block {
	var best *block
	for n := t.root; n != nil; {
		if t.less(n, k) {
			best = n
			n = n.right
		} else {
			n = n.left
		}
	}
	return best
}

// last returns the greatest block, or nil.
func (t *tree) last() *block {
	n := t.root
	if n == nil {
		return nil
	}
	for n.right != nil {
		n = n.right
	}
	return n
}

// appendInOrder appends every block in tree order to dst.
func (t *tree) appendInOrder(dst []*block) []*block {
	return walk(t.root, dst)
}

func walk(n *block, dst []*block) []*block {
	for n != nil {
		dst = walk(n.left, dst)
		dst = append(dst, n)
		n = n.right
	}
	return dst
}

// pool is one block pool (PyTorch's BlockPool): small (≤ 1 MiB) or large, of the
// default pool or of a private pool (owner).
type pool struct {
	small              bool
	owner              *privatePool // nil for the default pool's two
	blocks             tree         // free, mapped blocks by (size, addr)
	unmapped           tree         // unmapped expandable blocks by addr
	getFreeBlocksCalls int64
}

func (p *pool) statIndex() int {
	if p.small {
		return statSmall
	}
	return statLarge
}

func (p *pool) name() string {
	if p.small {
		return "small"
	}
	return "large"
}

// appendReleasable appends, in tree order, the free blocks that could go back to the
// device: those of at least SmallBuffer bytes. Every segment is at least that large,
// and so is every expandable page, so a smaller free block is neither a whole segment
// nor holds a whole page. The out-of-memory retry path and garbage collection walk
// only these, not every cached block (a cache of many small free blocks made each
// retry cost a walk over all of them).
func (p *pool) appendReleasable(dst []*block) []*block {
	b := p.blocks.lowerBound(key{0, SmallBuffer, 0})
	for b != nil {
		if b.size < SmallBuffer {
			// the smallest block of a later stream: skip to that stream's large ones
			b = p.blocks.lowerBound(key{b.stream, SmallBuffer, 0})
			continue
		}
		dst = append(dst, b)
		b = p.blocks.successor(b)
	}
	return dst
}

// insertFree puts b into the free set and restarts its GC age (insert_into_blocks).
func (p *pool) insertFree(b *block) {
	b.gcBase = p.getFreeBlocksCalls
	p.blocks.insert(b)
}
