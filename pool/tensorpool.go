package pool

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"memlab.dev/memlab/tensor"
)

// Errors of TensorPool, matched with errors.Is.
var (
	// ErrWrongShape is wrapped by Put of a tensor whose shape or dtype is not
	// the pool's.
	ErrWrongShape = errors.New("pool: tensor of the wrong shape or dtype")
	// ErrDoublePut is wrapped by Put of a tensor that is already back in the
	// pool: accepting it would hand it to two callers.
	ErrDoublePut = errors.New("pool: double put: the tensor is already in the pool")
	// ErrForeign is wrapped by Put of a tensor this pool did not hand out.
	ErrForeign = errors.New("pool: tensor did not come from this pool")
	// ErrStillViewed is wrapped by Put of a tensor whose storage other live
	// tensors (views) still use: the next Get would overwrite what they read.
	ErrStillViewed = errors.New("pool: tensor is still viewed by other tensors")
	// ErrExhausted is wrapped by Get when the pool's limit of tensors is out.
	ErrExhausted = errors.New("pool: every tensor of the pool is in use")
	// ErrClosed is wrapped by Get after Release.
	ErrClosed = errors.New("pool: pool is released")
)

// TensorPool hands out tensors of one shape and dtype and takes them back for
// reuse, like a free list in front of the allocator: Get returns the most
// recently returned tensor (a hit) or allocates a new one (a miss); Put returns
// it. A tensor handed out is not handed out again until it is put back.
// Reused tensors keep their old contents, as torch.empty does.
//
// A TensorPool is safe for concurrent use.
type TensorPool struct {
	dev   tensor.Device
	dtype tensor.DType
	shape tensor.Shape
	limit int

	mu       sync.Mutex
	idle     []*tensor.Tensor
	state    map[*tensor.Tensor]bool // every tensor the pool owns: true when idle
	hits     int64
	misses   int64
	released bool
}

// Stats counts what a TensorPool did.
type Stats struct {
	Hits        int64 // Gets served by an idle tensor
	Misses      int64 // Gets that allocated a new tensor
	Outstanding int   // tensors handed out and not yet put back
	Idle        int   // tensors in the pool, ready for Get
	Bytes       int64 // device bytes of all the pool's tensors (outstanding and idle)
}

// NewTensorPool returns an empty pool of tensors of shape and dtype on dev.
// limit caps how many tensors the pool allocates in all (0: no cap); Get fails
// with ErrExhausted beyond it. No memory is allocated until the first Get.
func NewTensorPool(dev tensor.Device, dtype tensor.DType, shape []int, limit int) (*TensorPool, error) {
	if dev == nil {
		return nil, errors.New("pool: NewTensorPool: nil device")
	}
	if !dtype.Valid() {
		return nil, fmt.Errorf("pool: NewTensorPool: invalid dtype %d", dtype)
	}
	if len(shape) > tensor.MaxRank {
		return nil, fmt.Errorf("pool: NewTensorPool: shape %v has %d dimensions, at most %d allowed", shape, len(shape), tensor.MaxRank)
	}
	nbytes := int64(dtype.Size())
	for i, s := range shape {
		if s < 0 {
			return nil, fmt.Errorf("pool: NewTensorPool: dimension %d of shape %v is negative", i, shape)
		}
		if s != 0 && nbytes > math.MaxInt64/int64(s) {
			return nil, fmt.Errorf("pool: NewTensorPool: shape %v of %v overflows int64 bytes", shape, dtype)
		}
		nbytes *= int64(s)
	}
	if limit < 0 {
		return nil, fmt.Errorf("pool: NewTensorPool: limit %d is negative", limit)
	}
	return &TensorPool{dev: dev, dtype: dtype, shape: tensor.Shape(shape).Clone(), limit: limit,
		state: map[*tensor.Tensor]bool{}}, nil
}

// Shape returns the shape of the pool's tensors.
func (p *TensorPool) Shape() tensor.Shape { return p.shape.Clone() }

// DType returns the dtype of the pool's tensors.
func (p *TensorPool) DType() tensor.DType { return p.dtype }

// Get returns a tensor of the pool's shape and dtype: the most recently put
// back one if any is idle (a hit), otherwise a new allocation (a miss). Its
// contents are whatever it last held. Give it back with Put, not Release.
func (p *TensorPool) Get() (*tensor.Tensor, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.released {
		return nil, fmt.Errorf("pool: Get: %w", ErrClosed)
	}
	p.forgetReleased()
	if n := len(p.idle); n > 0 {
		t := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.state[t] = false
		p.hits++
		return t, nil
	}
	if p.limit > 0 && len(p.state) >= p.limit {
		return nil, fmt.Errorf("pool: Get: %w (limit %d tensors of %v %v)", ErrExhausted, p.limit, p.dtype, p.shape)
	}
	t, err := tensor.Empty(p.dev, p.dtype, p.shape...)
	if err != nil {
		return nil, fmt.Errorf("pool: Get: %w", err)
	}
	p.state[t] = false
	p.misses++
	return t, nil
}

// Put gives t back to the pool. It is an error, which changes nothing, to put
// nil, a tensor of another shape or dtype, a tensor this pool did not hand out
// (a view of a pooled tensor included), a tensor already put back, or a
// tensor whose storage a live view still uses. Putting a released tensor is
// an error too; if the pool handed it out, the pool forgets it (its memory
// went back with the Release), so that it does not count against the limit.
// A tensor released after it was put back is forgotten the same way: Get
// never hands it out again. After Release, Put releases t instead of keeping it.
func (p *TensorPool) Put(t *tensor.Tensor) error {
	if t == nil {
		return errors.New("pool: Put: nil tensor")
	}
	if t.Released() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if idle, ok := p.state[t]; ok && !idle {
			delete(p.state, t)
			return fmt.Errorf("pool: Put: %w: it was released instead of put back; the pool forgets it", tensor.ErrReleased)
		}
		return fmt.Errorf("pool: Put: %w", tensor.ErrReleased)
	}
	if t.DType() != p.dtype || !t.Shape().Equal(p.shape) {
		return fmt.Errorf("pool: Put: %w: got %v %v, pool holds %v %v", ErrWrongShape, t.DType(), t.Shape(), p.dtype, p.shape)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	idle, ok := p.state[t]
	switch {
	case !ok:
		return fmt.Errorf("pool: Put: %w", ErrForeign)
	case idle:
		return fmt.Errorf("pool: Put: %w", ErrDoublePut)
	}
	if refs := t.Storage().Refs(); refs > 1 {
		return fmt.Errorf("pool: Put: %w (%d other handles); release them first", ErrStillViewed, refs-1)
	}
	if p.released {
		delete(p.state, t)
		return t.Release()
	}
	p.state[t] = true
	p.idle = append(p.idle, t)
	return nil
}

// Stats returns the pool's counters.
func (p *TensorPool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.forgetReleased()
	per := int64(p.shape.Numel() * p.dtype.Size())
	return Stats{Hits: p.hits, Misses: p.misses, Outstanding: len(p.state) - len(p.idle),
		Idle: len(p.idle), Bytes: per * int64(len(p.state))}
}

// forgetReleased drops the idle tensors that were released after Put (a
// mistake: their memory is gone), so that Get never hands one out. Called
// with p.mu held.
func (p *TensorPool) forgetReleased() {
	kept := p.idle[:0]
	for _, t := range p.idle {
		if t.Released() {
			delete(p.state, t)
			continue
		}
		kept = append(kept, t)
	}
	clear(p.idle[len(kept):])
	p.idle = kept
}

// Release frees every idle tensor and closes the pool: Get fails from now on
// and Put releases what it is given. Tensors still handed out stay valid; the
// error says how many there are, so that a caller can find the one it forgot.
// Further calls do nothing.
func (p *TensorPool) Release() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.released {
		return nil
	}
	p.released = true
	p.forgetReleased()
	var errs []error
	for _, t := range p.idle {
		delete(p.state, t)
		errs = append(errs, t.Release())
	}
	p.idle = nil
	if n := len(p.state); n > 0 {
		errs = append(errs, fmt.Errorf("pool: Release: %d tensors still handed out; Put releases them", n))
	}
	return errors.Join(errs...)
}
