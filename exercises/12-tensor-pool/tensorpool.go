//go:build !solution

package tensorpool

// Buffer is one buffer of a Pool. Data holds its bytes.
type Buffer struct {
	Data []byte
	// Add the fields you need, for example the pool the buffer came from.
}

// Pool hands out buffers of one shape and element size, at most capacity of them
// at a time, reusing returned buffers most-recently-returned first. It is safe for
// concurrent use.
type Pool struct {
	// Add the fields you need.
}

// NewPool returns a pool of buffers of numel(shape)·elemSize bytes, of which it
// creates at most capacity.
//
// It returns an error if a size in shape is negative, elemSize < 1 or capacity < 1.
//
// 中文：创建一个池：每个缓冲区的 Data 有 numel(shape)·elemSize 字节，
// 最多 capacity 个。大小为负、elemSize < 1 或 capacity < 1 时返回错误。
func NewPool(shape []int, elemSize, capacity int) (*Pool, error) {
	panic("not implemented")
}

// Get returns the most recently returned idle buffer, or a new one if none is idle
// and fewer than capacity exist. A reused buffer keeps its old contents.
//
// It returns an error wrapping ErrExhausted if capacity buffers are all in use.
//
// 中文：返回一个空闲缓冲区（最近归还的那个，后进先出），没有则新建一个，最多 capacity 个；
// 全部在用时返回包装 ErrExhausted 的错误。可并发调用。
func (p *Pool) Get() (*Buffer, error) {
	panic("not implemented")
}

// Put returns b to the pool.
//
// It returns an error, and changes nothing, if b is nil, came from another pool,
// or is already in the pool.
//
// 中文：把 b 还给池，内容不清零。b 为 nil、来自另一个池或已经在池里（重复归还）
// 时返回错误，什么都不改。可并发调用。
func (p *Pool) Put(b *Buffer) error {
	panic("not implemented")
}

// Stats returns the pool's counters.
//
// 中文：报告 Created、Reused、InUse 和 Idle。
func (p *Pool) Stats() Stats {
	panic("not implemented")
}
