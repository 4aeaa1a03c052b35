//go:build !solution

// Package view is exercise 03 of the memlab course: PyTorch's rule for when a
// tensor can be viewed with a new shape without copying, and the strides of that
// view. See README.md.
package view

import "errors"

// ErrNotViewable is returned (wrapped) by ViewStrides when the elements of the
// tensor cannot be described by any strides for the new shape, so view() must fail
// and reshape() would copy.
var ErrNotViewable = errors.New("view: view size is not compatible with input tensor's size and stride; use reshape instead")

// InferShape resolves shape against a tensor of numel elements, as view and reshape
// do: at most one entry may be -1, and it becomes the size that makes the product of
// the shape equal numel. The result is a new slice; shape is not modified.
//
// It returns an error if more than one entry is -1, if an entry is below -1, if the
// -1 is ambiguous (the other sizes multiply to 0), or if no size makes the element
// count equal numel.
func InferShape(numel int, shape []int) ([]int, error) {
	panic("not implemented")
}

// ViewStrides returns the strides of the view of a tensor (shape, strides) with the
// fully specified newShape, following ATen's computeStride: the old dimensions form
// chunks of mutually contiguous dimensions, the new shape must split into chunks of
// the same element counts, and within a chunk the new strides are row-major scaled
// by the stride of the chunk's last old dimension.
//
// A scalar (empty shape) views as strides of all ones. A tensor with no elements
// keeps its strides if newShape equals shape, and otherwise gets row-major strides
// (sizes of 0 counted as 1).
//
// It returns an error wrapping ErrNotViewable if no strides exist, and a different
// error if shape and strides differ in length, a size is negative, or newShape
// holds a different number of elements than shape.
func ViewStrides(shape, strides, newShape []int) ([]int, error) {
	panic("not implemented")
}
