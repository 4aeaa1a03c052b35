//go:build solution

package tensorpool

import (
	"errors"
	"fmt"
	"sync"
)

// Buffer is one buffer of a Pool. Data holds its bytes.
type Buffer struct {
	Data []byte
	pool *Pool
	idle bool
}

// Pool is the reference solution; tensorpool.go documents the contract.
type Pool struct {
	mu       sync.Mutex
	bytes    int
	capacity int
	idle     []*Buffer
	stats    Stats
}

// NewPool is the reference solution; tensorpool.go documents the contract.
func NewPool(shape []int, elemSize, capacity int) (*Pool, error) {
	if elemSize < 1 {
		return nil, fmt.Errorf("tensorpool: element size %d, want at least 1", elemSize)
	}
	if capacity < 1 {
		return nil, fmt.Errorf("tensorpool: capacity %d, want at least 1", capacity)
	}
	n := elemSize
	for k, s := range shape {
		if s < 0 {
			return nil, fmt.Errorf("tensorpool: dimension %d has negative size %d", k, s)
		}
		n *= s
	}
	return &Pool{bytes: n, capacity: capacity}, nil
}

// Get is the reference solution; tensorpool.go documents the contract.
func (p *Pool) Get() (*Buffer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b *Buffer
	switch {
	case len(p.idle) > 0:
		b = p.idle[len(p.idle)-1]
		p.idle[len(p.idle)-1] = nil
		p.idle = p.idle[:len(p.idle)-1]
		b.idle = false
		p.stats.Reused++
		p.stats.Idle--
	case p.stats.Created < p.capacity:
		b = &Buffer{Data: make([]byte, p.bytes), pool: p}
		p.stats.Created++
	default:
		return nil, fmt.Errorf("%w (capacity %d)", ErrExhausted, p.capacity)
	}
	p.stats.InUse++
	return b, nil
}

// Put is the reference solution; tensorpool.go documents the contract.
func (p *Pool) Put(b *Buffer) error {
	if b == nil {
		return errors.New("tensorpool: put of a nil buffer")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if b.pool != p {
		return errors.New("tensorpool: put of a buffer from another pool")
	}
	if b.idle {
		return errors.New("tensorpool: double put: the buffer is already in the pool")
	}
	b.idle = true
	p.idle = append(p.idle, b)
	p.stats.InUse--
	p.stats.Idle++
	return nil
}

// Stats is the reference solution; tensorpool.go documents the contract.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}
