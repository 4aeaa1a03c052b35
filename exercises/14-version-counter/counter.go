//go:build !solution

package version

// Tensor is a tensor as far as version counting is concerned: a name and a version
// counter that it may share with other tensors of the same storage.
type Tensor struct {
	Name string
	// Add the fields you need.
}

// NewTensor returns a new tensor with its own version counter, at version 0.
func NewTensor(name string) *Tensor {
	panic("not implemented")
}

// View returns a view of t named name: it shares t's storage and version counter.
func (t *Tensor) View(name string) *Tensor {
	panic("not implemented")
}

// Detach returns t.detach() named name: it shares t's storage and, as in PyTorch,
// t's version counter.
func (t *Tensor) Detach(name string) *Tensor {
	panic("not implemented")
}

// Data returns t.data named name: it shares t's storage but has a new version
// counter at 0, so in-place changes through it are invisible to t's counter.
func (t *Tensor) Data(name string) *Tensor {
	panic("not implemented")
}

// Clone returns a copy of t named name, with its own version counter at 0.
func (t *Tensor) Clone(name string) *Tensor {
	panic("not implemented")
}

// InPlace records an in-place operation on t: its version counter goes up by one.
// It is safe for concurrent use.
func (t *Tensor) InPlace() {
	panic("not implemented")
}

// Version returns the current value of t's version counter (PyTorch's t._version).
// It is safe for concurrent use.
func (t *Tensor) Version() uint64 {
	panic("not implemented")
}

// Saved is a tensor saved for the backward pass together with the version it had.
// The zero value holds nothing.
type Saved struct {
	// Add the fields you need.
}

// Save records t and its current version, as ctx.save_for_backward does.
func Save(t *Tensor) Saved {
	panic("not implemented")
}

// Unpack returns the saved tensor. It returns an error wrapping ErrModifiedInPlace,
// naming the tensor with its current and saved versions, if the version changed
// since Save, and an error if s holds nothing.
func (s Saved) Unpack() (*Tensor, error) {
	panic("not implemented")
}
