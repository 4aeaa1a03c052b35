package tensor

import (
	"errors"
	"sync"
)

// Scope releases, at once, every tensor tracked by it: the Go counterpart of a
// Python block whose tensors die at its end.
//
// Go has no implicit context, so a scope learns of tensors in two ways: Track
// adopts one (wrap a creation call: x, err := s.Track(tensor.Zeros(dev, …))),
// and the result of any operation or view joins the scope of its first input
// that has one, so a computation started from tracked tensors is tracked whole.
// Keep takes a tensor out of its scope, to outlive it.
//
//	s := tensor.NewScope()
//	defer s.Release()
//	x, err := s.Track(tensor.Randn(dev, 1, tensor.Float32, 1024, 1024))
//	y, err := x.Relu()   // tracked by s too
//	return s.Keep(y), nil // y survives s.Release
//
// Tensors released by hand before the scope ends are skipped. A Scope is safe
// for concurrent use.
type Scope struct {
	mu       sync.Mutex
	tensors  []*Tensor
	released bool
}

// NewScope returns an empty scope.
func NewScope() *Scope { return &Scope{} }

// WithScope runs f with a new scope and releases the scope when f returns (or
// panics). The error is f's joined with any error from releasing.
func WithScope(f func(s *Scope) error) (err error) {
	s := NewScope()
	defer func() { err = errors.Join(err, s.Release()) }()
	return f(s)
}

// Track adopts t (moving it from any other scope) and returns its arguments,
// so that it can wrap a call that returns a tensor and an error. When err is not
// nil, or the scope is already released, t is returned untracked with an error.
func (s *Scope) Track(t *Tensor, err error) (*Tensor, error) {
	if err != nil || t == nil {
		return t, err
	}
	if !s.add(t) {
		return t, ErrScopeReleased
	}
	return t, nil
}

// add records t in s unless s is released.
func (s *Scope) add(t *Tensor) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return false
	}
	if t.scope.Swap(s) != s {
		s.tensors = append(s.tensors, t)
	}
	return true
}

// Keep takes t out of whatever scope tracks it and returns t; the caller now
// releases it.
func (s *Scope) Keep(t *Tensor) *Tensor {
	if t != nil {
		t.scope.Store(nil)
	}
	return t
}

// Len returns the number of live tensors the scope would release now.
func (s *Scope) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := make(map[*Tensor]bool, len(s.tensors))
	for _, t := range s.tensors {
		if t.scope.Load() == s && !t.Released() {
			seen[t] = true
		}
	}
	return len(seen)
}

// Release releases every tensor still tracked by s that is not released yet,
// newest first. Further calls do nothing. The error joins those of the
// individual releases.
func (s *Scope) Release() error {
	s.mu.Lock()
	ts := s.tensors
	s.tensors, s.released = nil, true
	s.mu.Unlock()
	var errs []error
	for i := len(ts) - 1; i >= 0; i-- {
		t := ts[i]
		if !t.scope.CompareAndSwap(s, nil) || t.Released() {
			continue
		}
		if err := t.Release(); err != nil && !errors.Is(err, ErrDoubleRelease) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
