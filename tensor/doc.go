// Package tensor implements tensors with PyTorch's semantics over device memory:
// shapes and strides, views that share storage, storage lifetime, the ops a
// small transformer needs, and the saved tensors of a backward pass.
//
// # Metadata and storage
//
// A tensor is a [Layout] (shape, strides, storage offset, all in elements) over
// a [Storage] (one device allocation). The Layout methods are pure functions,
// usable without any device: they compute what View, Transpose, Slice, Expand
// and the other views give, with PyTorch's rules and its error messages
// (carried by [*Error]). Element (i, j) of a [2, 3] tensor with strides [3, 1]
// is storage element offset + 3i + j; its transpose has strides [1, 3] and the
// same storage.
//
// # Lifetime
//
// Views never allocate: they are new *Tensor handles over the same Storage,
// which counts them. The storage goes back to the [Device] when its last handle
// is released, so a small slice keeps a large base alive. Every handle is
// released exactly once, by [Tensor.Release] or by a [Scope]; a second release
// and any use after release are errors ([ErrDoubleRelease], [ErrReleased]).
// Go's garbage collector cannot see device memory: a handle dropped without
// Release is reported on the leak writer ([SetLeakWriter]) and its memory stays
// allocated.
//
// # Operations
//
// Every operation that makes a new tensor allocates it through
// [Device.Allocate], so its memory cost is visible in the allocator; the
// methods ending in _ work in place, bump the storage's version counter and
// allocate nothing (unless a [Tape] needs the value they overwrite). Contiguous and Reshape copy only when the layout requires
// it. Writing in place to a tensor whose elements overlap (an Expand) or from
// an input that partly overlaps it fails as in PyTorch.
//
// # Saved tensors
//
// A [Tape] records operations on watched tensors and keeps the tensors their
// backward formulas need, as autograd does: their memory stays allocated until
// the backward pass (or the tape's release), and an in-place change to one of
// them is reported by [Tape.Backward] with PyTorch's error.
//
// Differences from PyTorch: no type promotion (operands must share a dtype),
// integer sums keep their dtype, Max returns no indices, in-place methods
// return only an error (not the tensor, whose handle the caller already
// holds), and the tape computes no gradients.
package tensor
