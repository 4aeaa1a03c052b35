package memlab

import "fmt"

// CheckLeaks is the leak-check idiom of section 2.4: it runs f and reports how
// many bytes MemoryAllocated grew by, which is what f left allocated. A
// function that releases everything it allocates leaks 0. The error is f's,
// wrapped.
//
// As in PyTorch, compare allocated rather than reserved memory: reserved
// memory stays up after a release because the allocator caches it.
func (l *Lab) CheckLeaks(f func() error) (leaked int64, err error) {
	if f == nil {
		return 0, fmt.Errorf("memlab: CheckLeaks(nil)")
	}
	before := l.MemoryAllocated()
	if err := f(); err != nil {
		return l.MemoryAllocated() - before, fmt.Errorf("memlab: CheckLeaks: %w", err)
	}
	return l.MemoryAllocated() - before, nil
}

// CheckLeaks is [Lab.CheckLeaks] on the current lab.
func CheckLeaks(f func() error) (leaked int64, err error) {
	l, err := Current()
	if err != nil {
		return 0, err
	}
	return l.CheckLeaks(f)
}
