package tensor

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// Tensor is a view of a Storage: a Layout (shape, strides, offset) and a dtype.
// Views (View, Transpose, Slice, …) make new Tensors over the same Storage; each
// Tensor is a handle that holds one reference to it and must be released once,
// with Release or by a Scope. The memory goes back to the device when the last
// handle over it is released.
//
// Reading a tensor's metadata is safe at any time. Operations return
// ErrReleased once the tensor is released. Different tensors may be used from
// different goroutines; one tensor must not be released while another
// goroutine is still running an operation on it.
type Tensor struct {
	storage *Storage
	layout  Layout
	dtype   DType
	state   *handleState

	scope atomic.Pointer[Scope]
	// grad is the autograd metadata, set at creation and changed only by
	// Tape.Watch and in-place operations: writes a program must not make while
	// another goroutine uses the tensor.
	grad gradInfo
}

// newTensor makes a handle over s (whose reference it takes over) and
// registers the leak report for it.
func newTensor(s *Storage, l Layout, dtype DType) *Tensor {
	t := &Tensor{storage: s, layout: l, dtype: dtype}
	t.state = watchLeak(t)
	return t
}

// Shape returns the size of each dimension (a copy).
func (t *Tensor) Shape() Shape { return t.layout.Shape.Clone() }

// Size returns the size of dimension dim; negative dims count from the end.
func (t *Tensor) Size(dim int) (int, error) {
	if t == nil {
		return 0, fmt.Errorf("tensor: size: nil tensor")
	}
	if t.Dim() == 0 {
		return 0, indexErr("size", "Dimension specified as %d but tensor has no dimensions", dim)
	}
	d, err := wrapDim("size", dim, t.Dim())
	if err != nil {
		return 0, err
	}
	return t.layout.Shape[d], nil
}

// Strides returns the stride of each dimension in elements (a copy).
func (t *Tensor) Strides() []int { return append([]int(nil), t.layout.Strides...) }

// StorageOffset returns the index, in elements, of the tensor's first element
// within its storage.
func (t *Tensor) StorageOffset() int { return t.layout.Offset }

// Layout returns the tensor's metadata (a copy).
func (t *Tensor) Layout() Layout { return t.layout.clone() }

// Dim returns the number of dimensions.
func (t *Tensor) Dim() int { return t.layout.Dim() }

// Numel returns the number of elements.
func (t *Tensor) Numel() int { return t.layout.Numel() }

// DType returns the element type.
func (t *Tensor) DType() DType { return t.dtype }

// ElementSize returns the size of one element in bytes.
func (t *Tensor) ElementSize() int { return t.dtype.Size() }

// Nbytes returns the bytes the tensor's elements occupy, Numel × ElementSize
// (PyTorch's nbytes). A view's Nbytes may be far below its StorageNbytes.
func (t *Tensor) Nbytes() int64 { return int64(t.Numel()) * int64(t.ElementSize()) }

// StorageNbytes returns the size of the storage the tensor keeps alive.
func (t *Tensor) StorageNbytes() int64 { return t.storage.nbytes }

// DataPtr returns the device address of the tensor's first element: the
// storage's address plus StorageOffset × ElementSize (PyTorch's data_ptr).
func (t *Tensor) DataPtr() Ptr {
	if t.storage.ptr == 0 {
		return 0
	}
	return t.storage.ptr + Ptr(t.layout.Offset*t.ElementSize())
}

// Device returns the device holding the tensor.
func (t *Tensor) Device() Device { return t.storage.dev }

// Storage returns the storage the tensor views.
func (t *Tensor) Storage() *Storage { return t.storage }

// Version returns the storage's version counter (PyTorch's t._version): it
// counts in-place writes through this tensor or any view sharing its storage.
func (t *Tensor) Version() int64 { return t.storage.Version() }

// IsContiguous reports whether the elements are laid out row-major without
// gaps; see Layout.IsContiguous.
func (t *Tensor) IsContiguous() bool { return t.layout.IsContiguous() }

// SharesStorage reports whether t and o view the same storage, so that writing
// through one may change what the other reads.
func (t *Tensor) SharesStorage(o *Tensor) bool {
	return t != nil && o != nil && t.storage == o.storage
}

// Released reports whether Release was called on this handle.
func (t *Tensor) Released() bool { return t.state.released.Load() }

// describe names the tensor for messages: "float32 [2, 3] on cuda:0".
func (t *Tensor) describe() string {
	return fmt.Sprintf("%v %v on %v", t.dtype, t.layout.Shape, t.storage.dev)
}

// Release drops this handle's reference to the storage; the memory goes back
// to the device when no other tensor uses it. Releasing twice is an error
// (ErrDoubleRelease), as is any operation on the tensor afterwards.
func (t *Tensor) Release() error {
	if t == nil {
		return fmt.Errorf("tensor: Release of a nil tensor")
	}
	if !t.state.released.CompareAndSwap(false, true) {
		return fmt.Errorf("%w of tensor %s", ErrDoubleRelease, t.describe())
	}
	return t.storage.release()
}

// ReleaseAll releases every tensor of ts that is not nil and joins the
// errors. Each tensor is released as by Release, so one already released is
// an error (ErrDoubleRelease).
func ReleaseAll(ts ...*Tensor) error {
	var errs []error
	for _, t := range ts {
		if t != nil {
			errs = append(errs, t.Release())
		}
	}
	return errors.Join(errs...)
}

// ReleaseLive releases the tensors of ts that are neither nil nor released
// yet and joins the errors: for lists that may name a tensor twice (an
// in-place result beside its input) or hold tensors a scope has released.
func ReleaseLive(ts ...*Tensor) error {
	var errs []error
	for _, t := range ts {
		if t != nil && !t.Released() {
			errs = append(errs, t.Release())
		}
	}
	return errors.Join(errs...)
}

// live returns an error when t cannot be used by op.
func (t *Tensor) live(op string) error {
	if t == nil {
		return fmt.Errorf("tensor: %s: nil tensor", op)
	}
	if t.state.released.Load() {
		return fmt.Errorf("tensor: %s: %w (%s)", op, ErrReleased, t.describe())
	}
	return nil
}

// strided describes t for a kernel.
func (t *Tensor) strided() Strided { return stridedOf(t.storage.ptr, t.dtype, t.layout) }

func stridedOf(base Ptr, dtype DType, l Layout) Strided {
	return Strided{Base: base, DType: dtype, Shape: append([]int(nil), l.Shape...), Strides: append([]int(nil), l.Strides...), Offset: l.Offset}
}

// alias makes a new handle over t's storage with layout l: a view. The view
// belongs to t's scope and, when t is watched by a tape, to t's tape with
// gradFn as its producer.
func (t *Tensor) alias(op string, l Layout, gradFn string) (*Tensor, error) {
	if err := t.live(op); err != nil {
		return nil, err
	}
	// A view may not claim more elements than int64 bytes can count (an empty
	// tensor viewed as [1<<62, 4], a broadcast to [1<<32, 1<<32]): its Numel
	// would wrap around.
	if _, err := checkNumel(op, t.dtype, l.Shape); err != nil {
		return nil, err
	}
	if err := t.storage.retain(); err != nil {
		return nil, fmt.Errorf("tensor: %s: %w", op, err)
	}
	v := newTensor(t.storage, l, t.dtype)
	v.inherit(gradFn, t)
	if t.grad.tape != nil && (t.grad.fn == "" || t.grad.viewOfLeaf) {
		v.grad.viewOfLeaf = true
	}
	return v, nil
}

// inherit puts a new tensor in the scope of the first of inputs that has one,
// and on the tape of the first that is watched.
func (t *Tensor) inherit(gradFn string, inputs ...*Tensor) {
	for _, in := range inputs {
		if s := in.scope.Load(); s != nil && s.add(t) {
			break
		}
	}
	if gradFn == "" {
		return
	}
	for _, in := range inputs {
		if in.grad.tape != nil {
			t.grad = gradInfo{tape: in.grad.tape, fn: gradFn}
			break
		}
	}
}
