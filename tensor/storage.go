package tensor

import (
	"fmt"
	"sync"
)

// Storage is the device memory behind one or more tensors: a tensor and all of
// its views share one Storage. It carries the reference count of the tensors
// using it and the version counter that in-place operations bump. The memory
// goes back to the device when the last tensor using it is released, so a small
// view keeps a large storage alive.
type Storage struct {
	dev    Device
	ptr    Ptr
	nbytes int64

	mu      sync.Mutex
	refs    int   // live tensors using the storage
	version int64 // bumped by every in-place operation on any tensor using it
}

// newStorage allocates nbytes on dev, with one reference. An empty storage
// allocates nothing and has address 0, as in PyTorch.
func newStorage(dev Device, nbytes int64) (*Storage, error) {
	s := &Storage{dev: dev, nbytes: nbytes, refs: 1}
	if nbytes == 0 {
		return s, nil
	}
	p, err := dev.Allocate(nbytes)
	if err != nil {
		return nil, fmt.Errorf("tensor: allocating %d bytes on %v: %w", nbytes, dev, err)
	}
	if p == 0 {
		return nil, fmt.Errorf("tensor: %v returned address 0 for %d bytes", dev, nbytes)
	}
	s.ptr = p
	return s, nil
}

// Device returns the device the storage lives on.
func (s *Storage) Device() Device { return s.dev }

// Ptr returns the device address of the storage's first byte (0 when empty).
func (s *Storage) Ptr() Ptr { return s.ptr }

// Nbytes returns the size of the storage in bytes.
func (s *Storage) Nbytes() int64 { return s.nbytes }

// Version returns the version counter: the number of in-place writes made
// through any tensor using the storage (PyTorch's tensor._version).
func (s *Storage) Version() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// Refs returns how many live tensors use the storage; 0 once it is freed.
func (s *Storage) Refs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refs
}

func (s *Storage) bump() {
	s.mu.Lock()
	s.version++
	s.mu.Unlock()
}

// retain adds a reference for a new tensor; it fails once the storage is freed.
func (s *Storage) retain() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refs <= 0 {
		return ErrReleased
	}
	s.refs++
	return nil
}

// release drops one reference and frees the memory with the last one.
func (s *Storage) release() error {
	s.mu.Lock()
	s.refs--
	last := s.refs == 0
	s.mu.Unlock()
	if !last || s.ptr == 0 {
		return nil
	}
	if err := s.dev.Deallocate(s.ptr); err != nil {
		return fmt.Errorf("tensor: freeing %d bytes at %#x on %v: %w", s.nbytes, uint64(s.ptr), s.dev, err)
	}
	return nil
}
