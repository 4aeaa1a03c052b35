package memlab

import (
	"fmt"
	"sync"

	"memlab.dev/memlab/allocator"
)

// Private pools: torch.cuda.MemPool with use_mem_pool, and the pool a CUDA graph
// capture allocates into. Both are private pools of the lab's allocator
// (allocator.BeginAllocateToPool): memory allocated while one is in use comes from
// segments of that pool only, is never handed to other tensors, and goes back to the
// device only after the pool is released and the cache emptied.
//
// A lab has one stream and no threads of its own, so while a pool is in use every
// allocation of the lab goes to it — PyTorch routes those of the calling thread
// (use_mem_pool) or of the capturing stream (graph capture), which in a lesson's
// single-threaded cell is the same thing.

// MemPool is torch.cuda.MemPool: a private pool of the lab's allocator. Tensors
// allocated inside [MemPool.Use] live in the pool's own segments; when they are
// freed their blocks stay in the pool for its next allocations. Close it (MemPool's
// destructor) to give its memory back.
type MemPool struct {
	lab *Lab
	id  allocator.PoolID

	mu     sync.Mutex
	inUse  bool
	closed bool
}

// NewMemPool is torch.cuda.MemPool(): a new private pool with a use count of 1.
func (l *Lab) NewMemPool() (*MemPool, error) {
	id := l.alloc.NewPoolID(true)
	if err := l.alloc.CreateOrIncrefPool(id); err != nil {
		return nil, fmt.Errorf("memlab: %s: NewMemPool: %w", l.dev, err)
	}
	return &MemPool{lab: l, id: id}, nil
}

// ID is MemPool.id: the pool's id, (0, n) for a user's pool, as segments carry it
// (allocator.Segment.PoolID, segment_pool_id in snapshots).
func (p *MemPool) ID() allocator.PoolID { return p.id }

// UseCount is MemPool.use_count(): 1 for a pool not in use, 2 inside Use, 0 after
// Close.
func (p *MemPool) UseCount() int {
	n, err := p.lab.alloc.PoolUseCount(p.id)
	if err != nil {
		return 0
	}
	return n
}

// Use is `with torch.cuda.use_mem_pool(pool):` — it runs f with every allocation of
// the lab served from the pool, then routes allocations back to the default pool
// (even if f panics). Tensors created inside keep their memory in the pool after Use
// returns. Use of a closed pool, and a Use nested in another Use of the same pool,
// are errors.
func (p *MemPool) Use(f func() error) (err error) {
	p.mu.Lock()
	switch {
	case p.closed:
		p.mu.Unlock()
		return fmt.Errorf("memlab: %s: MemPool %v: Use after Close", p.lab.dev, p.id)
	case p.inUse:
		p.mu.Unlock()
		return fmt.Errorf("memlab: %s: MemPool %v: Use inside its own Use", p.lab.dev, p.id)
	}
	p.inUse = true
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.inUse = false
		p.mu.Unlock()
	}()
	return p.lab.routeTo(p.id, true, f)
}

// Segments is MemPool.snapshot(): the pool's segments, in address order.
func (p *MemPool) Segments() []allocator.Segment { return p.lab.poolSegments(p.id) }

// Reserved is the bytes of the pool's segments: its share of MemoryReserved.
func (p *MemPool) Reserved() int64 { return reservedOf(p.Segments()) }

// Close is what destroying a torch.cuda.MemPool does: the pool's use count drops to
// 0 and its cache is emptied (releasePool, then emptyCache(pool.id)). Segments that
// still hold a live tensor stay, and go back on a later EmptyCache once the tensors
// are freed. Closing inside Use is an error; closing twice is a no-op.
func (p *MemPool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	if p.inUse {
		return fmt.Errorf("memlab: %s: MemPool %v: Close inside Use", p.lab.dev, p.id)
	}
	p.closed = true
	if err := p.lab.alloc.ReleasePool(p.id); err != nil {
		return fmt.Errorf("memlab: %s: MemPool %v: %w", p.lab.dev, p.id, err)
	}
	if err := p.lab.alloc.EmptyCachePool(p.id); err != nil {
		return fmt.Errorf("memlab: %s: MemPool %v: %w", p.lab.dev, p.id, err)
	}
	return nil
}

// Graph is what a CUDA graph capture leaves in the allocator: a private pool that
// holds the memory the captured work used, reserved for the graph's replays for as
// long as the graph lives. Replaying a graph makes no allocator calls, so memlab's
// Graph has no Replay: the lesson is in where the capture's memory went.
type Graph struct {
	lab *Lab
	id  allocator.PoolID

	mu    sync.Mutex
	reset bool
}

// GraphPoolHandle is torch.cuda.graph_pool_handle(): an id for a pool that several
// captures share (pass it to CaptureGraph). The pool is created by the first capture
// that uses it.
func (l *Lab) GraphPoolHandle() allocator.PoolID { return l.alloc.NewPoolID(true) }

// CaptureGraph is `with torch.cuda.graph(g, pool=...):` as the allocator sees it:
// f runs with every allocation of the lab served from the graph's private pool, then
// allocations go back to the default pool. With no pool the graph gets a pool of its
// own, id (n, 0); with one (another graph's [Graph.Pool], or [Lab.GraphPoolHandle])
// it shares that pool, as graphs captured one after another do. If f fails, the
// capture's pool use is released and the error returned.
func (l *Lab) CaptureGraph(f func() error, pool ...allocator.PoolID) (*Graph, error) {
	var id allocator.PoolID
	switch len(pool) {
	case 0:
		id = l.alloc.NewPoolID(false)
	case 1:
		if pool[0].IsDefault() {
			return nil, fmt.Errorf("memlab: %s: CaptureGraph: pool %v is the default pool", l.dev, pool[0])
		}
		id = pool[0]
	default:
		return nil, fmt.Errorf("memlab: %s: CaptureGraph: %d pools given, want at most one", l.dev, len(pool))
	}
	if err := l.routeTo(id, false, f); err != nil {
		if rerr := l.alloc.ReleasePool(id); rerr != nil {
			err = fmt.Errorf("%w (and releasing its pool: %v)", err, rerr)
		}
		return nil, err
	}
	return &Graph{lab: l, id: id}, nil
}

// Pool is the id of the graph's private pool, to share it with a later capture.
func (g *Graph) Pool() allocator.PoolID { return g.id }

// Segments are the segments of the graph's pool (shared with other graphs, if any).
func (g *Graph) Segments() []allocator.Segment { return g.lab.poolSegments(g.id) }

// Reserved is the bytes of the graph pool's segments.
func (g *Graph) Reserved() int64 { return reservedOf(g.Segments()) }

// Reset is CUDAGraph.reset() (and what deleting the graph does): the graph stops
// using its pool. Once no graph uses the pool, EmptyCache gives its free segments back
// to the device. Resetting twice is a no-op.
func (g *Graph) Reset() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.reset {
		return nil
	}
	g.reset = true
	if err := g.lab.alloc.ReleasePool(g.id); err != nil {
		return fmt.Errorf("memlab: %s: graph pool %v: %w", g.lab.dev, g.id, err)
	}
	return nil
}

// routeTo runs f with every allocation of the lab routed to pool id (begin, f, end;
// and releasePool after, for use_mem_pool), restoring the routing if f panics.
func (l *Lab) routeTo(id allocator.PoolID, release bool, f func() error) (err error) {
	if f == nil {
		return fmt.Errorf("memlab: %s: pool %v: nil function", l.dev, id)
	}
	if err := l.alloc.BeginAllocateToPool(id, nil); err != nil {
		return fmt.Errorf("memlab: %s: %w", l.dev, err)
	}
	defer func() {
		if e := l.alloc.EndAllocateToPool(id); e != nil && err == nil {
			err = fmt.Errorf("memlab: %s: %w", l.dev, e)
		}
		if release {
			if e := l.alloc.ReleasePool(id); e != nil && err == nil {
				err = fmt.Errorf("memlab: %s: %w", l.dev, e)
			}
		}
	}()
	return f()
}

func (l *Lab) poolSegments(id allocator.PoolID) []allocator.Segment {
	var out []allocator.Segment
	for _, s := range l.alloc.Snapshot().Segments {
		if s.PoolID == id {
			out = append(out, s)
		}
	}
	return out
}

func reservedOf(segs []allocator.Segment) int64 {
	var n int64
	for _, s := range segs {
		n += s.TotalSize
	}
	return n
}
