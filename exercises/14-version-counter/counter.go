//go:build !solution

package version

// Tensor is a tensor as far as version counting is concerned: a name and a version
// counter that it may share with other tensors of the same storage.
type Tensor struct {
	Name string
	// Add the fields you need.
}

// NewTensor returns a new tensor with its own version counter, at version 0.
//
// 中文：返回一个名为 name 的新张量，版本 0，有自己的计数器。
func NewTensor(name string) *Tensor {
	panic("not implemented")
}

// View returns a view of t named name: it shares t's storage and version counter.
//
// 中文：返回 t 的一个视图，与 t 共享版本计数器。
func (t *Tensor) View(name string) *Tensor {
	panic("not implemented")
}

// Detach returns t.detach() named name: it shares t's storage and, as in PyTorch,
// t's version counter.
//
// 中文：返回 t.detach()：共享内存，也共享版本计数器。
func (t *Tensor) Detach(name string) *Tensor {
	panic("not implemented")
}

// Data returns t.data named name: it shares t's storage but has a new version
// counter at 0, so in-place changes through it are invisible to t's counter.
//
// 中文：返回 t.data：共享内存，但有一个从 0 开始的新计数器。
func (t *Tensor) Data(name string) *Tensor {
	panic("not implemented")
}

// Clone returns a copy of t named name, with its own version counter at 0.
//
// 中文：返回 t 的克隆：新内存，新计数器从 0 开始。
func (t *Tensor) Clone(name string) *Tensor {
	panic("not implemented")
}

// InPlace records an in-place operation on t: its version counter goes up by one.
// It is safe for concurrent use.
//
// 中文：记录对 t 的一次原地操作：计数器加一。可并发调用。
func (t *Tensor) InPlace() {
	panic("not implemented")
}

// Version returns the current value of t's version counter (PyTorch's t._version).
// It is safe for concurrent use.
//
// 中文：返回 t 的计数器当前的值（PyTorch 的 t._version）。
// 可并发调用。
func (t *Tensor) Version() uint64 {
	panic("not implemented")
}

// Saved is a tensor saved for the backward pass together with the version it had.
// The zero value holds nothing.
type Saved struct {
	// Add the fields you need.
}

// Save records t and its current version, as ctx.save_for_backward does.
//
// 中文：保存 t 及其当前版本（ctx.save_for_backward）。
func Save(t *Tensor) Saved {
	panic("not implemented")
}

// Unpack returns the saved tensor. It returns an error wrapping ErrModifiedInPlace,
// naming the tensor with its current and saved versions, if the version changed
// since Save, and an error if s holds nothing.
//
// 中文：返回保存的张量；计数器此后变过时返回包装 ErrModifiedInPlace 的错误，
// 信息写明张量和两个版本。零值的 Saved 也返回错误。
func (s Saved) Unpack() (*Tensor, error) {
	panic("not implemented")
}
