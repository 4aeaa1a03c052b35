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
func NewPool(shape []int, elemSize, capacity int) (*Pool, error) {
	panic("not implemented")
}

// Get returns the most recently returned idle buffer, or a new one if none is idle
// and fewer than capacity exist. A reused buffer keeps its old contents.
//
// It returns an error wrapping ErrExhausted if capacity buffers are all in use.
func (p *Pool) Get() (*Buffer, error) {
	panic("not implemented")
}

// Put returns b to the pool.
//
// It returns an error, and changes nothing, if b is nil, came from another pool,
// or is already in the pool.
func (p *Pool) Put(b *Buffer) error {
	panic("not implemented")
}

// Stats returns the pool's counters.
func (p *Pool) Stats() Stats {
	panic("not implemented")
}
