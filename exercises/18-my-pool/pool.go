//go:build !solution

package mypool

import "memlab.dev/memlab/tensor"

// Pool hands out float32 tensors of one shape from device memory it allocated
// once, up front: serving from it never asks the allocator for memory.
type Pool struct {
	// Add the fields you need.
}

// NewPool allocates n buffers of the given shape on dev (n ≥ 1, every
// dimension ≥ 1) and returns the pool.
//
// 中文：在 dev 上分配 n 个形状为 shape 的 float32 缓冲区。
// n < 1 或某一维小于 1 时返回错误。
func NewPool(dev tensor.Device, n int, shape ...int) (*Pool, error) {
	panic("not implemented")
}

// Get hands out a buffer no one else holds; ErrExhausted if there is none.
// Its contents are whatever the last user left.
//
// 中文：交出一个别人没有拿着的缓冲区，不向分配器要显存；全部被拿走时返回 ErrExhausted。
func (p *Pool) Get() (*tensor.Tensor, error) {
	panic("not implemented")
}

// Put gives back a buffer Get handed out; ErrNotFromPool for anything else,
// including a buffer already given back.
//
// 中文：收回 Get 交出的缓冲区；不是池交出的或已经还回来的返回 ErrNotFromPool。
func (p *Pool) Put(t *tensor.Tensor) error {
	panic("not implemented")
}

// Close releases the pool's memory; ErrInUse (and nothing released) while
// buffers are still handed out.
//
// 中文：释放池的全部显存；还有缓冲区没还时返回 ErrInUse，什么都不释放。
func (p *Pool) Close() error {
	panic("not implemented")
}
