package allocator

import (
	"errors"
	"fmt"
)

// Private memory pools, as PyTorch 2.11's CUDA caching allocator keeps them for CUDA
// graph capture and for torch.cuda.MemPool / torch.cuda.use_mem_pool.
//
// What this follows: c10/cuda/CUDACachingAllocator.cpp (DeviceCachingAllocator:
// createOrIncrefPool / create_or_incref_pool, beginAllocateToPool, endAllocateToPool,
// releasePool, getPoolUseCount, get_pool, release_cached_blocks(context, mempool_id),
// synchronize_and_free_events(context, pool), release_block / unmap_block's
// cudaMalloc_count, the malloc path's `captures_underway.empty() &&
// release_cached_blocks(...)`, snapshot's owner_private_pool_id and the OOM message's
// "allocated in private pools"), torch/cuda/memory.py (use_mem_pool: begin, then end
// and releasePool on exit) and aten/src/ATen/cuda/CUDAGraph.cpp (capture_begin:
// beginAllocateToPool with a filter on the capturing stream; capture_end:
// endAllocateToPool; reset: releasePool) and MemPool.cpp (ids {0, n} for
// graph_pool_handle() and user MemPools, {n, 0} for a graph's own pool; ~MemPool:
// releasePool then emptyCache(id)). No copy at the v2.11.0 tag could be read; two
// copies of CUDACachingAllocator.cpp bracket it: an older one (its OOM message links
// the documentation's old "#environment-variables" anchor) and a newer one (its OOM
// text is 2.11's, which memlab matches byte for byte). Every rule used here reads the
// same in both: create_or_incref_pool, the LIFO filter walk of get_pool,
// release_cached_blocks(context, mempool_id) — which leaves the default pool alone
// while a capture is under way; copies older than both released it regardless —, the
// malloc path skipping it during a capture, and the OOM message's private-pool bytes.
//
// Not modelled: MemPools with their own allocator (CUDAPluggableAllocator), for which
// the two copies turn expandable segments off or reject them — every memlab pool uses
// the device's memory, so expandable segments apply to private pools as to the default
// one, as both copies do for such pools; use_on_oom pools (the copies differ in where
// that fallback runs: after every release, or before release_available_cached_blocks);
// no_split pools; graph-capture record_stream reuse (a free with pending stream uses
// during a capture waits for CompleteFree, as any other); and checkpointing a pool's
// state (CUDA graph trees' setCheckpointPoolState).

// PoolID names a private memory pool: PyTorch's MempoolId_t, a pair. A graph's own
// pool has First set (capture_begin without a pool); a pool made by
// torch.cuda.graph_pool_handle() or by a user's torch.cuda.MemPool() has Second set.
// The zero PoolID is the default pool, which is not a private pool.
type PoolID struct {
	First, Second uint64
}

// IsDefault reports whether id is the default pool's id, (0, 0).
func (id PoolID) IsDefault() bool { return id == PoolID{} }

// String renders the id as Python prints the tuple: "(0, 1)".
func (id PoolID) String() string { return fmt.Sprintf("(%d, %d)", id.First, id.Second) }

// ErrUnknownPool is wrapped by the pool calls' errors for an id the allocator has no
// live pool for (never created, or already released and emptied).
var ErrUnknownPool = errors.New("allocator: unknown memory pool")

// privatePool is PyTorch's PrivatePool: its own small and large block pools, a count
// of the graphs or MemPools using it, and of its unreleased device allocations.
type privatePool struct {
	id PoolID
	// useCount is use_count: created at 1 by CreateOrIncrefPool (or the first
	// BeginAllocateToPool), +1 for each sharer, −1 by ReleasePool.
	useCount int
	// mallocCount is cudaMalloc_count: device allocations (segments, or mapping
	// calls of expandable segments) made for the pool and not yet given back.
	mallocCount int
	// freeable: the use count reached 0 (graph_pools_freeable); EmptyCache and the
	// out-of-memory release may now give its whole free segments back.
	freeable bool
	// live counts the pool's allocated blocks and those pending a free.
	live         int
	small, large pool
}

// empty reports whether the pool holds no device memory: no live block and no cached
// block. An expandable segment's range with no page mapped holds none: a range whose
// first mapping failed stays reserved (as PyTorch keeps it), and PyTorch erases the pool
// all the same, since its cudaMalloc_count counts only the mappings that succeeded
// (FuzzAllocator found a pool kept for such a range after it was released and emptied).
func (pp *privatePool) empty() bool {
	return pp.live == 0 && pp.small.blocks.n == 0 && pp.large.blocks.n == 0
}

// capturing reports whether requests are being routed to pool id.
func (a *Allocator) capturing(id PoolID) bool {
	for _, c := range a.captures {
		if c.id == id {
			return true
		}
	}
	return false
}

// capture is one entry of captures_underway: the pool requests are routed to while
// filter(stream) is true. A nil filter matches every stream (MallocInPool).
type capture struct {
	id     PoolID
	filter func(stream uint64) bool
}

func newPrivatePool(id PoolID) *privatePool {
	pp := &privatePool{id: id, useCount: 1}
	pp.small = pool{small: true, owner: pp}
	pp.large = pool{small: false, owner: pp}
	pp.small.unmapped.byAddr = true
	pp.large.unmapped.byAddr = true
	return pp
}

// NewPoolID returns a fresh pool id, as PyTorch's MemPool::graph_pool_handle does:
// with userCreated, (0, n) — the id of torch.cuda.graph_pool_handle() and of a user's
// MemPool — and otherwise (n, 0), the id a graph capture makes for a pool of its own.
// Each counter starts at 1 and is per allocator (PyTorch's are per process); an id
// that names a live pool (one a replay created with an id of its own) is skipped. The
// id names no pool until CreateOrIncrefPool or BeginAllocateToPool creates one.
func (a *Allocator) NewPoolID(userCreated bool) PoolID {
	a.mu.Lock()
	defer a.mu.Unlock()
	for {
		var id PoolID
		if userCreated {
			a.nextUserPool++
			id = PoolID{0, a.nextUserPool}
		} else {
			a.nextGraphPool++
			id = PoolID{a.nextGraphPool, 0}
		}
		if a.graphPools[id] == nil {
			return id
		}
	}
}

// CreateOrIncrefPool creates the private pool id with a use count of 1, or, if it
// exists, adds one use (createOrIncrefPool; MemPool's constructor calls it). Creating
// the default pool's id is an error, and so is adding a use to a pool whose count has
// already dropped to 0 (PyTorch asserts it never happens).
func (a *Allocator) CreateOrIncrefPool(id PoolID) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.createOrIncref(id)
}

func (a *Allocator) createOrIncref(id PoolID) error {
	if id.IsDefault() {
		return fmt.Errorf("allocator: pool id %v is the default pool, not a private pool", id)
	}
	if pp := a.graphPools[id]; pp != nil {
		if pp.useCount <= 0 {
			return fmt.Errorf("allocator: pool %v was released (use count 0) and cannot be shared again", id)
		}
		pp.useCount++
		return nil
	}
	if a.graphPools == nil {
		a.graphPools = map[PoolID]*privatePool{}
	}
	pp := newPrivatePool(id)
	a.graphPools[id] = pp
	a.poolOrder = append(a.poolOrder, pp)
	return nil
}

// BeginAllocateToPool routes requests into the private pool id while filter(stream)
// reports true for the request's stream (beginAllocateToPool, called by
// CUDAGraph::capture_begin with a filter matching the capturing stream, and by
// use_mem_pool with one matching the calling thread). It creates the pool, or adds a
// use to it, as CreateOrIncrefPool does. Several pools may be active at once; a
// request goes to the most recently begun one whose filter matches. A nil filter
// matches every stream. filter runs under the allocator's lock and must not call the
// Allocator. Beginning a pool that is already being allocated to is an error (PyTorch
// counts the use before it checks; here the failed call changes nothing).
func (a *Allocator) BeginAllocateToPool(id PoolID, filter func(stream uint64) bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.capturing(id) {
		return fmt.Errorf("allocator: BeginAllocateToPool: already allocating to pool %v", id)
	}
	if err := a.createOrIncref(id); err != nil {
		return err
	}
	a.captures = append(a.captures, capture{id: id, filter: filter})
	return nil
}

// EndAllocateToPool stops routing requests into pool id (endAllocateToPool). The use
// count is unchanged: ReleasePool drops it. Ending a pool that is not being allocated
// to is an error.
func (a *Allocator) EndAllocateToPool(id PoolID) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, c := range a.captures {
		if c.id == id {
			a.captures = append(a.captures[:i], a.captures[i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("allocator: EndAllocateToPool: not allocating to pool %v", id)
}

// ReleasePool drops one use of pool id (releasePool: a graph's reset or destruction,
// MemPool's destructor, the end of use_mem_pool). At 0 the pool becomes freeable:
// from then on EmptyCache and the out-of-memory path give its whole free segments back
// to the device — never before, and never a segment with a live block — and once it
// holds no device memory the pool is forgotten. Releasing an unknown pool, or one
// whose count is already 0, is an error.
func (a *Allocator) ReleasePool(id PoolID) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	pp := a.graphPools[id]
	if pp == nil {
		return fmt.Errorf("%w: ReleasePool of %v", ErrUnknownPool, id)
	}
	if pp.useCount <= 0 {
		return fmt.Errorf("allocator: ReleasePool of %v, whose use count is already 0", id)
	}
	pp.useCount--
	if pp.useCount == 0 {
		pp.freeable = true
	}
	return nil
}

// PoolUseCount returns the use count of pool id (getPoolUseCount, MemPool.use_count()).
func (a *Allocator) PoolUseCount(id PoolID) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	pp := a.graphPools[id]
	if pp == nil {
		return 0, fmt.Errorf("%w: %v", ErrUnknownPool, id)
	}
	return pp.useCount, nil
}

// Pools returns the ids of the live private pools, in the order they were created. A
// released pool stays listed until EmptyCache has given all its memory back.
func (a *Allocator) Pools() []PoolID {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]PoolID, 0, len(a.poolOrder))
	for _, pp := range a.poolOrder {
		out = append(out, pp.id)
	}
	return out
}

// AllocatingToPools reports whether a BeginAllocateToPool is in force (PyTorch's
// captures_underway is not empty): while it is, the out-of-memory path does not free
// every cached segment, and EmptyCache leaves the default pool alone.
func (a *Allocator) AllocatingToPools() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.captures) > 0
}

// MallocInPool allocates size bytes on stream from private pool id for this one
// request, deciding as MallocStream does while BeginAllocateToPool(id, nil) is in
// force (the pool takes the request, and the out-of-memory path runs as it does during
// a capture), without changing the pool's use count or the pools being allocated to.
// It is for replays of recorded traces, where the pool of each request is known from
// the trace and toggling Begin/End around every request would be awkward. The pool
// must exist and be in use (use count above 0).
func (a *Allocator) MallocInPool(size int64, stream uint64, id PoolID) (uint64, error) {
	if err := checkSize(size); err != nil || size == 0 {
		return 0, err
	}
	a.mu.Lock()
	defer a.unlock()
	pp := a.graphPools[id]
	if pp == nil {
		return 0, fmt.Errorf("%w: MallocInPool into %v", ErrUnknownPool, id)
	}
	if pp.useCount <= 0 {
		return 0, fmt.Errorf("allocator: MallocInPool into %v, which was released (use count 0)", id)
	}
	a.captures = append(a.captures, capture{id: id})
	addr, err := a.malloc(size, stream)
	a.captures = a.captures[:len(a.captures)-1]
	return addr, err
}

// EmptyCachePool is torch.cuda.empty_cache for one pool (emptyCache(mempool_id), which
// MemPool's destructor calls after releasing the pool): if pool id is freeable, its
// pending frees complete and its whole free segments go back to the device; a pool
// still in use is left alone, as in PyTorch. The default pool's id is EmptyCache.
// While a capture is under way, emptying a freeable pool is an error (PyTorch asserts
// it never synchronises then).
func (a *Allocator) EmptyCachePool(id PoolID) error {
	if id.IsDefault() {
		return a.EmptyCache()
	}
	a.mu.Lock()
	defer a.unlock()
	pp := a.graphPools[id]
	if pp == nil {
		return fmt.Errorf("%w: EmptyCachePool of %v", ErrUnknownPool, id)
	}
	if pp.freeable && len(a.captures) > 0 {
		return fmt.Errorf("allocator: EmptyCachePool of %v while allocations are routed to a pool (a capture is under way)", id)
	}
	err := a.releaseCachedBlocks(id)
	if a.tracing {
		a.emit(ActionEmptyCache, 0, 0, 0, nil, nil)
	}
	return err
}

// getPool is get_pool: the block pool for a request of size bytes on stream — the
// small or large pool of the most recently begun private pool whose filter takes the
// stream, or the default pool's.
func (a *Allocator) getPool(size int64, stream uint64) *pool {
	for i := len(a.captures) - 1; i >= 0; i-- {
		c := a.captures[i]
		if c.filter == nil || c.filter(stream) {
			pp := a.graphPools[c.id]
			if size <= SmallSize {
				return &pp.small
			}
			return &pp.large
		}
	}
	return a.poolFor(size)
}

// releaseCachedBlocks is release_cached_blocks(context, mempool_id). For the default
// id with no capture under way it completes every pending free and gives back the
// default pool's whole free segments (large pool first); then, for the default id,
// every freeable private pool — for a private id, only that pool if it is freeable,
// after completing that pool's pending frees — gives back its whole free segments
// (small pool first, as PyTorch orders them) and is forgotten once it holds no device
// memory.
func (a *Allocator) releaseCachedBlocks(id PoolID) error {
	if id.IsDefault() && len(a.captures) == 0 {
		a.synchronizeAndFreeEvents(nil)
		if err := a.releaseBlocks(&a.large); err != nil {
			return err
		}
		if err := a.releaseBlocks(&a.small); err != nil {
			return err
		}
	}
	k := 0
	var err error
	for _, pp := range a.poolOrder {
		if err == nil && pp.freeable && (id.IsDefault() || pp.id == id) {
			if !id.IsDefault() {
				a.synchronizeAndFreeEvents(pp)
			}
			if err = a.releaseBlocks(&pp.small); err == nil {
				err = a.releaseBlocks(&pp.large)
			}
			// PyTorch erases the pool when its cudaMalloc_count is 0. That count
			// is exact for plain segments; with expandable segments it counts
			// allocations up and unmaps down, which need not pair, so the pool is
			// forgotten here when it holds no memory at all. A pool still being
			// allocated to is kept (PyTorch would fail an internal assert on the
			// next request routed to it).
			if err == nil && pp.empty() && !a.capturing(pp.id) {
				delete(a.graphPools, pp.id)
				continue
			}
		}
		a.poolOrder[k] = pp
		k++
	}
	clear(a.poolOrder[k:])
	a.poolOrder = a.poolOrder[:k]
	return err
}

// privatePoolFreeBytes is the OOM message's allocated_in_private_pools: the bytes of
// the free (cached, mapped) blocks of every private pool.
func (a *Allocator) privatePoolFreeBytes() int64 {
	var n int64
	for _, pp := range a.poolOrder {
		for _, p := range [2]*pool{&pp.large, &pp.small} {
			for _, b := range p.blocks.appendInOrder(nil) {
				n += b.size
			}
		}
	}
	return n
}

// allPools returns the default pool's block pools and then every private pool's.
func (a *Allocator) allPools() []*pool {
	out := make([]*pool, 0, 2+2*len(a.poolOrder))
	out = append(out, &a.large, &a.small)
	for _, pp := range a.poolOrder {
		out = append(out, &pp.large, &pp.small)
	}
	return out
}

// poolID is the id of the private pool owning p, or the default pool's (0, 0).
func (p *pool) poolID() PoolID {
	if p == nil || p.owner == nil {
		return PoolID{}
	}
	return p.owner.id
}
