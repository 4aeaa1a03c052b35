package allocator

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
)

// ErrInvalidSize is wrapped by Malloc's error for a negative size.
var ErrInvalidSize = errors.New("allocator: invalid size")

// ErrInvalidPointer is wrapped by Free's error for an address that is not a live
// allocation of this allocator (never allocated, or already freed).
var ErrInvalidPointer = errors.New("allocator: invalid device pointer")

// ErrInvalidFraction is returned by SetPerProcessMemoryFraction for a
// fraction outside 0~1 (wrapped, with the fraction).
var ErrInvalidFraction = errors.New("allocator: invalid fraction value")

// Allocator is a caching allocator over one device's Memory that makes the decisions
// PyTorch 2.11's native CUDA caching allocator makes, streams included: a free block
// is reused only by a request on the stream that allocated its segment (see
// MallocStream, RecordStream and CompleteFree). It is safe for concurrent use: one
// mutex guards all state, as PyTorch's per-device lock does.
type Allocator struct {
	mu   sync.Mutex
	mem  Memory
	vmem VirtualMemory // nil if mem cannot map pages
	cfg  Config

	maxSplit, nonSplitRounding, largeSeg int64

	small, large pool
	active       addrTable
	stats        deviceStats

	// pendingFrees are blocks freed while other streams still use them, in the order
	// of their Free (PyTorch's cuda_events), until CompleteFree or a synchronisation;
	// a completed one leaves a nil until the list is compacted. pendingAt is each
	// pending block's index in it, pendingN how many are pending.
	pendingFrees []*block
	pendingAt    map[uint64]int
	pendingN     int
	syncOrder    func(x, y uint64) int // order of completion at a synchronisation, nil: free order

	totalAllocated int64 // bytes of all held segments / mapped pages
	setFraction    bool
	allowed        int64
	total          int64 // device total memory (MemGetInfo at New)
	device         int
	limits         Limits // when the cap and the garbage collection engaged

	expSegs []*expSegment
	spare   []*block
	rng     uint32
	scratch []*block

	// Private pools (PyTorch's graph_pools): by id, and in creation order (the order
	// EmptyCache visits the freeable ones). captures are captures_underway.
	graphPools                  map[PoolID]*privatePool
	poolOrder                   []*privatePool
	captures                    []capture
	nextUserPool, nextGraphPool uint64

	tracing   bool
	hist      history
	subs      []subscriber
	nextSubID int
	subPanic  *SubscriberPanic // a callback's panic, re-raised by unlock
}

// New returns an allocator over mem configured by cfg. It asks mem for its total size
// once (for memory fractions and expandable reservations). expandable_segments needs
// mem to implement VirtualMemory.
func New(mem Memory, cfg Config) (*Allocator, error) {
	if mem == nil {
		return nil, errors.New("allocator: nil Memory")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	a := &Allocator{
		mem: mem,
		cfg: cfg,
		rng: 0x9e3779b9,
	}
	a.small.small = true
	a.large.small = false
	a.small.unmapped.byAddr = true
	a.large.unmapped.byAddr = true
	if vm, ok := mem.(VirtualMemory); ok {
		a.vmem = vm
	}
	if cfg.ExpandableSegments && a.vmem == nil {
		return nil, errNoVirtualMemory
	}
	if d, ok := mem.(interface{ Index() int }); ok {
		a.device = d.Index()
	}
	a.maxSplit = cfg.maxSplit()
	a.nonSplitRounding = cfg.maxNonSplitRounding()
	a.largeSeg = cfg.largeSegment()
	if a.maxSplit == math.MaxInt64 {
		a.stats.maxSplitSize = -1
	} else {
		a.stats.maxSplitSize = a.maxSplit
	}
	_, total, err := mem.MemGetInfo()
	if err != nil {
		return nil, fmt.Errorf("allocator: reading device memory size: %w", err)
	}
	if total > math.MaxInt64 {
		total = math.MaxInt64
	}
	a.total = int64(total)
	if f, ok := cfg.memoryFraction(); ok {
		a.setFraction = true
		a.allowed = int64(f * float64(a.total))
	}
	return a, nil
}

// Config returns the configuration the allocator was made with.
func (a *Allocator) Config() Config { return a.cfg }

func (a *Allocator) newBlock(addr uint64, size int64, p *pool, stream uint64) *block {
	var b *block
	if n := len(a.spare); n > 0 {
		b = a.spare[n-1]
		a.spare = a.spare[:n-1]
		*b = block{}
	} else {
		b = new(block)
	}
	a.rng ^= a.rng << 13
	a.rng ^= a.rng >> 17
	a.rng ^= a.rng << 5
	b.prio = a.rng
	b.addr, b.size, b.pool, b.mapped, b.stream = addr, size, p, true, stream
	return b
}

func (a *Allocator) recycle(b *block) {
	*b = block{}
	a.spare = append(a.spare, b)
}

func (a *Allocator) poolFor(size int64) *pool {
	if size <= SmallSize {
		return &a.small
	}
	return &a.large
}

// Malloc allocates size bytes on the default stream and returns the block's device
// address, deciding exactly as PyTorch's DeviceCachingAllocator::malloc does. A size of
// 0 returns (0, nil) without touching the allocator, as torch.empty(0) does. When the
// device (or the memory fraction) has no room it returns an *OutOfMemoryError and the
// allocator stays consistent and usable. A negative size is an error wrapping
// ErrInvalidSize.
func (a *Allocator) Malloc(size int64) (uint64, error) { return a.MallocStream(size, 0) }

// MallocStream is Malloc on a stream (a cudaStream_t value; 0 is the default stream).
// Free blocks are kept per stream, as PyTorch keeps them: the request is served only
// from cached blocks of its stream, or from a new segment (or, with expandable
// segments, pages of that stream's expandable segment) that then belongs to it.
// While BeginAllocateToPool is in force and its filter takes the stream, the request
// is served from that private pool instead (see BeginAllocateToPool).
func (a *Allocator) MallocStream(size int64, stream uint64) (uint64, error) {
	if err := checkSize(size); err != nil || size == 0 {
		return 0, err
	}
	a.mu.Lock()
	defer a.unlock()
	return a.malloc(size, stream)
}

// checkSize rejects what Malloc rejects before taking the lock.
func checkSize(size int64) error {
	if size < 0 {
		return fmt.Errorf("%w: negative size %d", ErrInvalidSize, size)
	}
	if size >= maxRequest {
		return &OutOfMemoryError{Requested: size, tooLarge: true}
	}
	return nil
}

// malloc is DeviceCachingAllocator::malloc for a valid size > 0, with a.mu held.
func (a *Allocator) malloc(size int64, stream uint64) (uint64, error) {
	rounded := roundSize(size, &a.cfg.RoundupPower2Divisions)
	p := a.getPool(rounded, stream)
	allocSize := allocationSize(rounded, a.largeSeg)

	b := a.getFreeBlock(p, rounded, stream)
	if b == nil {
		var err error
		if a.setFraction && a.cfg.GarbageCollectionThreshold > 0 {
			if err = a.garbageCollect(); err != nil {
				return 0, err
			}
		}
		b, err = a.allocBlock(p, rounded, allocSize, stream, false)
		if b == nil && err == nil {
			var released bool
			released, err = a.releaseAvailableCachedBlocks(p, rounded, stream)
			if released && err == nil {
				b, err = a.allocBlock(p, rounded, allocSize, stream, false)
			}
		}
		// Freeing every cached segment and retrying happens only when no
		// allocation is being routed to a private pool (captures_underway.empty()).
		if b == nil && err == nil && len(a.captures) == 0 {
			if err = a.releaseCachedBlocks(PoolID{}); err == nil {
				b, err = a.allocBlock(p, rounded, allocSize, stream, true)
			}
		}
		if err != nil {
			return 0, err
		}
		if b == nil {
			return 0, a.outOfMemory(size, rounded, allocSize, stream, p)
		}
	}
	b = a.allocFoundBlock(b, p, rounded, size, a.shouldSplit(b, rounded))
	return b.addr, nil
}

// getFreeBlock is get_free_block: best fit by (size, address) among the stream's
// cached blocks, with the expandable-segment preference and the oversize rules.
func (a *Allocator) getFreeBlock(p *pool, size int64, stream uint64) *block {
	if a.setFraction && a.cfg.GarbageCollectionThreshold > 0 {
		p.getFreeBlocksCalls++
	}
	b, link := p.blocks.lowerBoundLink(key{stream, size, 0})
	if b == nil || b.stream != stream {
		return nil
	}
	if b.seg != nil {
		link = nil // the choice may move; remove by search
		if a.cfg.ExpandableSegments {
			next := p.blocks.successor(b)
			for b.seg != nil && next != nil && next.stream == stream && expandableSize(next) < expandableSize(b) {
				b = next
				next = p.blocks.successor(next)
			}
		} else {
			for b != nil && b.seg != nil && b.stream == stream {
				b = p.blocks.successor(b)
			}
			if b == nil || b.stream != stream {
				return nil
			}
		}
	}
	if size < a.maxSplit && b.size >= a.maxSplit {
		return nil
	}
	if size >= a.maxSplit && b.size >= size+a.nonSplitRounding {
		return nil
	}
	if link != nil {
		p.blocks.removeAt(link, b)
	} else {
		p.blocks.remove(b)
	}
	return b
}

// expandableSize is the size a free block could grow to by mapping the unmapped block
// after it.
func expandableSize(b *block) int64 {
	if b.next != nil && !b.next.mapped {
		return b.size + b.next.size
	}
	return b.size
}

func (a *Allocator) shouldSplit(b *block, size int64) bool {
	remaining := b.size - size
	if b.pool.small || a.cfg.ExpandableSegments {
		return remaining >= MinBlockSize
	}
	return size < a.maxSplit && remaining > SmallSize
}

// allocFoundBlock is alloc_found_block: split if asked (the allocation keeps the low
// addresses), mark allocated, update the statistics.
func (a *Allocator) allocFoundBlock(b *block, p *pool, size, orig int64, split bool) *block {
	idx := p.statIndex()
	alreadySplit := b.isSplit()
	st := &a.stats
	if split {
		remaining := b
		b = a.newBlock(remaining.addr, size, p, remaining.stream)
		b.seg = remaining.seg
		b.prev = remaining.prev
		if b.prev != nil {
			b.prev.next = b
		}
		b.next = remaining
		remaining.prev = b
		remaining.addr += uint64(size)
		remaining.size -= size
		p.insertFree(remaining)
		if remaining.seg == nil {
			if alreadySplit {
				st.inactiveSplitBytes.decrease(idx, size)
			} else {
				st.inactiveSplitBytes.increase(idx, remaining.size)
				st.inactiveSplit.increase(idx, 1)
			}
		}
	} else if alreadySplit && b.seg == nil {
		st.inactiveSplitBytes.decrease(idx, b.size)
		st.inactiveSplit.decrease(idx, 1)
	}
	b.allocated = true
	b.requested = orig
	if p.owner != nil {
		p.owner.live++
	}
	a.active.put(b.addr, b)
	st.allocation.increase(idx, 1)
	st.allocatedBytes.increase(idx, b.size)
	st.active.increase(idx, 1)
	st.activeBytes.increase(idx, b.size)
	st.requestedBytes.increase(idx, orig)
	if b.size >= a.maxSplit {
		st.oversizeAllocations.increase(1)
	}
	if a.tracing {
		a.emit(ActionAlloc, b.addr, orig, b.stream, p, b)
	}
	return b
}

// Free returns the block at addr to the cache (PyTorch's free + free_block). The memory
// stays reserved; only EmptyCache, the out-of-memory retry path and garbage collection
// give memory back to the device. An address that is not a live allocation is an error
// wrapping ErrInvalidPointer, and nothing changes. Free(0) is a no-op, like freeing the
// storage of an empty tensor.
//
// A block that RecordStream marked as used on other streams is not reusable yet: Free
// lowers the allocated statistics at once (PyTorch's free), but the block stays active,
// in state "active_pending_free", until CompleteFree, EmptyCache or the out-of-memory
// retry path (which synchronise every stream) completes it (PyTorch's free_block).
func (a *Allocator) Free(addr uint64) error {
	if addr == 0 {
		return nil
	}
	a.mu.Lock()
	defer a.unlock()
	b := a.active.get(addr)
	if b == nil {
		return fmt.Errorf("%w: %#x is not allocated (double free, or not from this allocator)", ErrInvalidPointer, addr)
	}
	a.active.del(addr)
	b.allocated = false
	idx := b.pool.statIndex()
	st := &a.stats
	st.allocation.decrease(idx, 1)
	st.allocatedBytes.decrease(idx, b.size)
	if a.tracing {
		a.emit(ActionFreeRequested, b.addr, b.requested, b.stream, b.pool, b)
	}
	if b.size >= a.maxSplit {
		st.oversizeAllocations.decrease(1)
	}
	if len(b.uses) > 0 {
		b.uses = b.uses[:0]
		b.pending = true
		if a.pendingAt == nil {
			a.pendingAt = map[uint64]int{}
		}
		a.pendingAt[b.addr] = len(a.pendingFrees)
		a.pendingFrees = append(a.pendingFrees, b)
		a.pendingN++
		return nil
	}
	a.freeBlock(b)
	return nil
}

// RecordStream marks the allocated block at addr as used on stream (PyTorch's
// recordStream, behind Tensor.record_stream): its Free then waits for that stream (see
// CompleteFree). A use on the block's own stream is ignored, as in PyTorch. An address
// that is not a live allocation is an error wrapping ErrInvalidPointer.
func (a *Allocator) RecordStream(addr, stream uint64) error {
	a.mu.Lock()
	defer a.unlock()
	b := a.active.get(addr)
	if b == nil {
		return fmt.Errorf("%w: record_stream of %#x, which is not allocated", ErrInvalidPointer, addr)
	}
	if stream == b.stream {
		return nil
	}
	for _, s := range b.uses {
		if s == stream {
			return nil
		}
	}
	b.uses = append(b.uses, stream)
	return nil
}

// CompleteFree finishes the pending free of the block at addr: the other streams that
// used it are done, so it returns to its stream's cache (PyTorch's process_events
// finding the block's events complete, then free_block). An address that is not
// pending a free is an error wrapping ErrInvalidPointer, and nothing changes.
func (a *Allocator) CompleteFree(addr uint64) error {
	a.mu.Lock()
	defer a.unlock()
	i, ok := a.pendingAt[addr]
	if !ok {
		return fmt.Errorf("%w: %#x has no pending free", ErrInvalidPointer, addr)
	}
	b := a.pendingFrees[i]
	delete(a.pendingAt, addr)
	a.pendingFrees[i] = nil
	a.pendingN--
	if len(a.pendingFrees) > 64 && a.pendingN < len(a.pendingFrees)/2 {
		a.compactPending()
	}
	b.pending = false
	a.freeBlock(b)
	return nil
}

// compactPending drops the completed entries of pendingFrees, keeping the order.
func (a *Allocator) compactPending() {
	k := 0
	for _, b := range a.pendingFrees {
		if b != nil {
			a.pendingFrees[k] = b
			a.pendingAt[b.addr] = k
			k++
		}
	}
	clear(a.pendingFrees[k:])
	a.pendingFrees = a.pendingFrees[:k]
}

// SetSyncOrder sets the order in which a synchronisation (EmptyCache, the out-of-memory
// retry) completes pending frees: cmp compares two pending blocks by address, as
// slices.SortFunc's cmp does. The default, nil, completes them in the order of their
// Free — PyTorch's order when every block waits on one other stream; with several, it
// walks its per-stream event lists in hash order, which a replay can take from the
// recorded trace. cmp runs under the allocator's lock and must not call the Allocator.
func (a *Allocator) SetSyncOrder(cmp func(x, y uint64) int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.syncOrder = cmp
}

// PendingFrees returns the addresses of blocks freed but still waiting on other streams,
// in the order they were freed.
func (a *Allocator) PendingFrees() []uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]uint64, 0, a.pendingN)
	for _, b := range a.pendingFrees {
		if b != nil {
			out = append(out, b.addr)
		}
	}
	return out
}

// synchronizeAndFreeEvents is synchronize_and_free_events: wait for every stream and
// complete every pending free — or, given a private pool, only that pool's.
func (a *Allocator) synchronizeAndFreeEvents(only *privatePool) {
	a.stats.numSyncAllStreams++
	a.compactPending()
	if a.syncOrder != nil {
		slices.SortStableFunc(a.pendingFrees, func(x, y *block) int { return a.syncOrder(x.addr, y.addr) })
	}
	k := 0
	for i, b := range a.pendingFrees {
		a.pendingFrees[i] = nil
		if only != nil && b.pool.owner != only {
			a.pendingFrees[k] = b
			k++
			continue
		}
		b.pending = false
		delete(a.pendingAt, b.addr)
		a.pendingN--
		a.freeBlock(b)
	}
	a.pendingFrees = a.pendingFrees[:k]
	for i, b := range a.pendingFrees {
		a.pendingAt[b.addr] = i
	}
}

// freeBlock moves a block into its pool's free set, merging free neighbours.
func (a *Allocator) freeBlock(b *block) {
	p := b.pool
	addr := b.addr
	orig, req := b.size, b.requested
	var netBlocks, netSize int64
	prev, next := b.prev, b.next
	if sub := a.tryMerge(b, prev); sub > 0 {
		netBlocks--
		netSize -= sub
	}
	if sub := a.tryMerge(b, next); sub > 0 {
		netBlocks--
		netSize -= sub
	}
	p.insertFree(b)
	if p.owner != nil {
		p.owner.live--
	}
	if b.isSplit() {
		netBlocks++
		netSize += b.size
	}
	idx := p.statIndex()
	st := &a.stats
	if b.seg == nil {
		if netBlocks > 0 {
			st.inactiveSplit.increase(idx, netBlocks)
		} else if netBlocks < 0 {
			st.inactiveSplit.decrease(idx, -netBlocks)
		}
		if netSize > 0 {
			st.inactiveSplitBytes.increase(idx, netSize)
		} else if netSize < 0 {
			st.inactiveSplitBytes.decrease(idx, -netSize)
		}
	}
	st.active.decrease(idx, 1)
	st.activeBytes.decrease(idx, orig)
	st.requestedBytes.decrease(idx, req)
	if a.tracing {
		a.emit(ActionFreeCompleted, addr, req, b.stream, p, b)
	}
	b.frames = nil
}

// tryMerge merges src into dst if src is a free neighbour in the same mapped state.
// dst must not be in a tree. It returns the bytes merged, 0 if none.
func (a *Allocator) tryMerge(dst, src *block) int64 {
	if src == nil || src.allocated || src.pending || dst.mapped != src.mapped {
		return 0
	}
	if dst.prev == src {
		dst.addr = src.addr
		dst.prev = src.prev
		if dst.prev != nil {
			dst.prev.next = dst
		}
	} else {
		dst.next = src.next
		if dst.next != nil {
			dst.next.prev = dst
		}
	}
	sub := src.size
	dst.size += sub
	if src.mapped {
		src.pool.blocks.remove(src)
	} else {
		src.pool.unmapped.remove(src)
	}
	a.recycle(src)
	return sub
}

// allocBlock is alloc_block: a new segment (or newly mapped pages) for the request.
// It returns (nil, nil) when the device or the fraction cap has no room.
func (a *Allocator) allocBlock(p *pool, size, allocSize int64, stream uint64, retry bool) (*block, error) {
	if retry {
		a.stats.numAllocRetries++
	}
	if a.setFraction && a.totalAllocated+allocSize > a.allowed {
		a.limits.CapRefusals++
		return nil, nil
	}
	if a.cfg.ExpandableSegments {
		b, err := a.tryAllocateExpandableBlock(p, size, stream)
		if b != nil && p.owner != nil {
			p.owner.mallocCount++ // once per allocation, however many pages it mapped
		}
		return b, err
	}
	addr, err := a.mem.Malloc(uint64(allocSize))
	if err != nil {
		if isOOM(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("allocator: device allocation of %d bytes: %w", allocSize, err)
	}
	if addr == 0 {
		return nil, errors.Join(fmt.Errorf("allocator: device allocation of %d bytes returned address 0, where a block could never be freed (Free(0) is a no-op)", allocSize), a.mem.Free(0))
	}
	a.totalAllocated += allocSize
	if p.owner != nil {
		p.owner.mallocCount++
	}
	b := a.newBlock(addr, allocSize, p, stream)
	idx := p.statIndex()
	a.stats.segment.increase(idx, 1)
	a.stats.reservedBytes.increase(idx, allocSize)
	if allocSize >= a.maxSplit {
		a.stats.oversizeSegments.increase(1)
	}
	a.stats.numDeviceAlloc++
	if a.tracing {
		a.emit(ActionSegmentAlloc, addr, allocSize, stream, p, nil)
	}
	return b, nil
}

func isOOM(err error) bool {
	var o interface{ OutOfMemory() bool }
	return errors.As(err, &o) && o.OutOfMemory()
}

// releaseBlock is release_block: cudaFree a whole free segment.
func (a *Allocator) releaseBlock(b *block) error {
	if err := a.mem.Free(b.addr); err != nil {
		return fmt.Errorf("allocator: device free of %#x: %w", b.addr, err)
	}
	p := b.pool
	idx := p.statIndex()
	a.stats.numDeviceFree++
	a.totalAllocated -= b.size
	if p.owner != nil && p.owner.mallocCount > 0 {
		p.owner.mallocCount--
	}
	a.stats.segment.decrease(idx, 1)
	a.stats.reservedBytes.decrease(idx, b.size)
	if b.size >= a.maxSplit {
		a.stats.oversizeSegments.decrease(1)
	}
	p.blocks.remove(b)
	if a.tracing {
		a.emit(ActionSegmentFree, b.addr, b.size, b.stream, p, nil)
	}
	a.recycle(b)
	return nil
}

// releaseAvailableCachedBlocks frees the stream's oversize cached segments, largest
// first, until the request could fit (release_available_cached_blocks). Expandable
// blocks are skipped.
func (a *Allocator) releaseAvailableCachedBlocks(p *pool, size int64, stream uint64) (bool, error) {
	if a.maxSplit == math.MaxInt64 {
		return false, nil
	}
	want := size
	if want < a.maxSplit {
		want = a.maxSplit
	}
	it := p.blocks.lowerBound(key{stream, want, 0})
	if it != nil && it.stream == stream && it.seg == nil {
		return true, a.releaseBlock(it)
	}
	if it == nil {
		it = p.blocks.last()
	} else {
		it = p.blocks.predecessor(it)
	}
	if it == nil {
		return false, nil
	}
	var released int64
	for released < want && it.size >= a.maxSplit && it.stream == stream {
		cur := it
		it = p.blocks.predecessor(cur)
		if cur.seg == nil && !cur.isSplit() {
			sz := cur.size
			if err := a.releaseBlock(cur); err != nil {
				return false, err
			}
			released += sz
		}
		if it == nil {
			break
		}
	}
	return released >= want, nil
}

func (a *Allocator) releaseBlocks(p *pool) error {
	list := p.appendReleasable(a.scratch[:0])
	var toUnmap []*block
	var err error
	for _, b := range list {
		if b.seg != nil {
			toUnmap = append(toUnmap, b)
		} else if !b.isSplit() {
			if err = a.releaseBlock(b); err != nil {
				break
			}
		}
	}
	if err == nil {
		for _, b := range toUnmap {
			if err = a.unmapBlock(b); err != nil {
				break
			}
			if !b.mapped && !b.isSplit() {
				if err = a.releaseExpandableSegment(b); err != nil {
					break
				}
			}
		}
	}
	for i := range list {
		list[i] = nil
	}
	a.scratch = list[:0]
	return err
}

// garbageCollect is garbage_collect_cached_blocks: with a fraction cap and
// garbage_collection_threshold set, free whole cached large segments that have gone
// unused for at least the average age until reserved memory drops below the threshold.
func (a *Allocator) garbageCollect() error {
	gcThreshold := int64(a.cfg.GarbageCollectionThreshold * float64(a.allowed))
	if a.totalAllocated <= gcThreshold {
		return nil
	}
	target := a.totalAllocated - gcThreshold
	a.limits.GCPasses++
	var reclaimed, totalAge, count int64
	p := &a.large
	// As in PyTorch, the average age counts every unsplit free block, but only
	// non-expandable ones are released.
	candidates := p.appendReleasable(nil)
	for _, b := range candidates {
		if !b.isSplit() {
			totalAge += p.getFreeBlocksCalls - b.gcBase
			count++
		}
	}
	if count == 0 {
		return nil
	}
	freed := true
	for reclaimed < target && freed && count > 0 {
		threshold := float64(totalAge) / float64(count)
		freed = false
		for _, b := range candidates {
			if b.pool == nil {
				continue // released in an earlier pass
			}
			age := p.getFreeBlocksCalls - b.gcBase
			if !b.isSplit() && b.seg == nil && float64(age) >= threshold {
				freed = true
				reclaimed += b.size
				totalAge -= age
				count--
				a.limits.GCReleased++
				a.limits.GCReleasedBytes += b.size
				if err := a.releaseBlock(b); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// EmptyCache releases every cached segment that is entirely free back to the device and
// unmaps fully free pages of expandable segments (torch.cuda.empty_cache). Segments
// holding any allocated block stay, with their free pieces.
func (a *Allocator) EmptyCache() error {
	a.mu.Lock()
	defer a.unlock()
	err := a.releaseCachedBlocks(PoolID{})
	if a.tracing {
		a.emit(ActionEmptyCache, 0, 0, 0, nil, nil)
	}
	return err
}

// SetPerProcessMemoryFraction caps reserved memory at fraction × the device's total
// memory, as torch.cuda.set_per_process_memory_fraction does in PyTorch 2.11: a fraction
// below 1 sets the cap (and enables garbage collection when configured), 1 removes it.
// The cap is checked only when a new segment is needed.
func (a *Allocator) SetPerProcessMemoryFraction(f float64) error {
	if math.IsNaN(f) || f < 0 || f > 1 {
		return fmt.Errorf("%w %v: allowed range is 0~1", ErrInvalidFraction, f)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if f < 1 {
		a.setFraction = true
		a.allowed = int64(f * float64(a.total))
	} else {
		a.setFraction = false
		a.allowed = 0
	}
	return nil
}

// PerProcessMemoryFraction returns the cap as a fraction of total memory (1 when none).
func (a *Allocator) PerProcessMemoryFraction() float64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.setFraction || a.total == 0 {
		return 1
	}
	return float64(a.allowed) / float64(a.total)
}

// MemGetInfo passes through to the Memory: the device's free and total bytes as the
// driver sees them (torch.cuda.mem_get_info). The call is made under the allocator's
// lock, so a Memory need not be safe for concurrent use.
func (a *Allocator) MemGetInfo() (free, total uint64, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	free, total, err = a.mem.MemGetInfo()
	if err != nil {
		err = fmt.Errorf("allocator: %w", err)
	}
	return
}

// MemoryAllocated is the bytes of all allocated blocks, rounding included
// (torch.cuda.memory_allocated).
func (a *Allocator) MemoryAllocated() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stats.allocatedBytes[statAll].Current
}

// MemoryReserved is the bytes of all segments held from the device
// (torch.cuda.memory_reserved).
func (a *Allocator) MemoryReserved() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stats.reservedBytes[statAll].Current
}

// MaxMemoryAllocated is the peak of MemoryAllocated since the last ResetPeakMemoryStats.
func (a *Allocator) MaxMemoryAllocated() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stats.allocatedBytes[statAll].Peak
}

// MaxMemoryReserved is the peak of MemoryReserved since the last ResetPeakMemoryStats.
func (a *Allocator) MaxMemoryReserved() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stats.reservedBytes[statAll].Peak
}

// ResetPeakMemoryStats sets every peak to its current value.
func (a *Allocator) ResetPeakMemoryStats() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stats.resetPeak()
}

// ResetAccumulatedMemoryStats zeroes every "allocated"/"freed" total and the event
// counters (retries, OOMs, syncs, device allocs and frees).
func (a *Allocator) ResetAccumulatedMemoryStats() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stats.resetAccumulated()
}

// MemoryStats returns every counter under the key torch.cuda.memory_stats() uses, such
// as "allocated_bytes.all.current" or "num_alloc_retries". See StatKeys.
func (a *Allocator) MemoryStats() map[string]int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stats.flatten()
}

// LargestFreeBlock returns the size of the largest cached (free, mapped) block of any
// pool (private pools included, as in PyTorch's cacheInfo) and stream: the biggest request the cache could serve without asking the device,
// were it on that block's stream and pool. Its cost grows with the number of streams,
// not of blocks.
func (a *Allocator) LargestFreeBlock() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	var m int64
	for _, p := range a.allPools() {
		for b := p.blocks.last(); b != nil; b = p.blocks.before(key{b.stream, 0, 0}) {
			m = max(m, b.size)
		}
	}
	return m
}

// PendingFreeCount is len(PendingFrees()) without building the list.
func (a *Allocator) PendingFreeCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.pendingN
}

// Usage returns MemoryAllocated and MemoryReserved under one lock.
func (a *Allocator) Usage() (allocated, reserved int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stats.allocatedBytes[statAll].Current, a.stats.reservedBytes[statAll].Current
}
