//go:build solution

package version

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// Tensor is the reference solution; counter.go documents the contract.
type Tensor struct {
	Name    string
	version *atomic.Uint64
}

// NewTensor is the reference solution; counter.go documents the contract.
func NewTensor(name string) *Tensor { return &Tensor{Name: name, version: new(atomic.Uint64)} }

// View is the reference solution; counter.go documents the contract.
func (t *Tensor) View(name string) *Tensor { return &Tensor{Name: name, version: t.version} }

// Detach is the reference solution; counter.go documents the contract.
func (t *Tensor) Detach(name string) *Tensor { return &Tensor{Name: name, version: t.version} }

// Data is the reference solution; counter.go documents the contract.
func (t *Tensor) Data(name string) *Tensor { return NewTensor(name) }

// Clone is the reference solution; counter.go documents the contract.
func (t *Tensor) Clone(name string) *Tensor { return NewTensor(name) }

// InPlace is the reference solution; counter.go documents the contract.
func (t *Tensor) InPlace() { t.version.Add(1) }

// Version is the reference solution; counter.go documents the contract.
func (t *Tensor) Version() uint64 { return t.version.Load() }

// Saved is the reference solution; counter.go documents the contract.
type Saved struct {
	t       *Tensor
	version uint64
}

// Save is the reference solution; counter.go documents the contract.
func Save(t *Tensor) Saved { return Saved{t: t, version: t.Version()} }

// Unpack is the reference solution; counter.go documents the contract.
func (s Saved) Unpack() (*Tensor, error) {
	if s.t == nil {
		return nil, errors.New("version: unpack of an empty Saved")
	}
	if now := s.t.Version(); now != s.version {
		return nil, fmt.Errorf("%w: [%s] is at version %d; expected version %d instead", ErrModifiedInPlace, s.t.Name, now, s.version)
	}
	return s.t, nil
}
