package ch4

import (
	"fmt"

	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/tensor"
)

// ChapterPool is the chapter's TensorPool keyed by (shape, dtype), so that
// one pool serves several shapes: Get pops one or allocates a new one, Put
// pushes back whatever it is given. Like the chapter's class it has no limit
// and no check: a tensor put twice is handed out twice.
type ChapterPool struct {
	dev          tensor.Device
	free         map[string][]*tensor.Tensor
	Hits, Misses int
}

// NewChapterPool is an empty pool of tensors on dev.
func NewChapterPool(dev tensor.Device) *ChapterPool {
	return &ChapterPool{dev: dev, free: map[string][]*tensor.Tensor{}}
}

// Get pops a tensor of the shape and dtype, or allocates one.
func (p *ChapterPool) Get(dtype tensor.DType, shape ...int) *tensor.Tensor {
	key := fmt.Sprint(dtype, tensor.Shape(shape))
	if n := len(p.free[key]); n > 0 {
		t := p.free[key][n-1]
		p.free[key] = p.free[key][:n-1]
		p.Hits++
		return t
	}
	p.Misses++
	return memlab.Must(tensor.Empty(p.dev, dtype, shape...))
}

// Put pushes t back.
func (p *ChapterPool) Put(t *tensor.Tensor) {
	key := fmt.Sprint(t.DType(), t.Shape())
	p.free[key] = append(p.free[key], t)
}

// Release frees every tensor the pool holds.
func (p *ChapterPool) Release() {
	for _, ts := range p.free {
		memlab.Check(tensor.ReleaseAll(ts...))
	}
	clear(p.free)
}

// OnePool is the chapter's TensorPool as printed: one shape; Get pops a
// tensor or allocates one of that shape, Put takes whatever it is given.
type OnePool struct {
	Dev   tensor.Device
	Shape []int
	pool  []*tensor.Tensor
}

// Get pops a tensor, or allocates one of the pool's shape (float32).
func (p *OnePool) Get() *tensor.Tensor {
	if n := len(p.pool); n > 0 {
		t := p.pool[n-1]
		p.pool = p.pool[:n-1]
		return t
	}
	return memlab.Must(tensor.Empty(p.Dev, tensor.Float32, p.Shape...))
}

// Put pushes t back, whatever its shape.
func (p *OnePool) Put(t *tensor.Tensor) { p.pool = append(p.pool, t) }
