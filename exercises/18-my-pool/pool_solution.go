//go:build solution

package mypool

import (
	"errors"
	"fmt"

	"memlab.dev/memlab/tensor"
)

// Pool hands out float32 tensors of one shape from device memory it allocated
// once, up front: serving from it never asks the allocator for memory.
type Pool struct {
	slab *tensor.Tensor          // one allocation for every buffer
	free []*tensor.Tensor        // views of slab not handed out
	out  map[*tensor.Tensor]bool // views handed out
	all  []*tensor.Tensor
}

// NewPool allocates n buffers of the given shape on dev (n ≥ 1, every
// dimension ≥ 1) and returns the pool.
func NewPool(dev tensor.Device, n int, shape ...int) (*Pool, error) {
	if n < 1 {
		return nil, fmt.Errorf("mypool: %d buffers, want at least 1", n)
	}
	numel := 1
	for _, d := range shape {
		if d < 1 {
			return nil, fmt.Errorf("mypool: shape %v, want every dimension at least 1", shape)
		}
		numel *= d
	}
	slab, err := tensor.Empty(dev, tensor.Float32, n, numel)
	if err != nil {
		return nil, err
	}
	p := &Pool{slab: slab, out: map[*tensor.Tensor]bool{}}
	for i := 0; i < n; i++ {
		row, err := slab.Select(0, i)
		if err != nil {
			return nil, errors.Join(err, p.release())
		}
		buf, err := row.View(shape...)
		err = errors.Join(err, row.Release())
		if err != nil {
			return nil, errors.Join(err, p.release())
		}
		p.all = append(p.all, buf)
		p.free = append(p.free, buf)
	}
	return p, nil
}

// Get hands out a buffer no one else holds; ErrExhausted if there is none.
// Its contents are whatever the last user left.
func (p *Pool) Get() (*tensor.Tensor, error) {
	if len(p.free) == 0 {
		return nil, ErrExhausted
	}
	t := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	p.out[t] = true
	return t, nil
}

// Put gives back a buffer Get handed out; ErrNotFromPool for anything else,
// including a buffer already given back.
func (p *Pool) Put(t *tensor.Tensor) error {
	if !p.out[t] {
		return ErrNotFromPool
	}
	delete(p.out, t)
	p.free = append(p.free, t)
	return nil
}

// Close releases the pool's memory; ErrInUse (and nothing released) while
// buffers are still handed out.
func (p *Pool) Close() error {
	if len(p.out) > 0 {
		return fmt.Errorf("%w: %d of them", ErrInUse, len(p.out))
	}
	return p.release()
}

func (p *Pool) release() error {
	err := tensor.ReleaseLive(p.all...)
	p.all, p.free = nil, nil
	if p.slab != nil {
		err = errors.Join(err, p.slab.Release())
		p.slab = nil
	}
	return err
}
