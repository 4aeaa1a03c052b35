//go:build !solution

// Package contiguous is exercise 02 of the memlab course: deciding whether shape
// and strides describe a contiguous tensor, and the transpose that makes one
// non-contiguous without moving memory. See README.md.
package contiguous

// IsContiguous reports whether a tensor with the given shape and strides (in
// elements) is contiguous by PyTorch's rule: true if it has no elements; otherwise,
// walking from the last dimension to the first and ignoring dimensions of size 1,
// each stride equals the product of the sizes of the dimensions after it.
//
// It returns an error if shape and strides differ in length or a size is negative.
func IsContiguous(shape, strides []int) (bool, error) {
	panic("not implemented")
}

// Transpose returns the shape and strides of the tensor with dimensions dim0 and
// dim1 swapped, as PyTorch's transpose does: no memory moves, only the two sizes and
// the two strides trade places. Negative dimensions count from the end (-1 is the
// last); a scalar accepts 0 and -1. The input slices are not modified.
//
// It returns an error if shape and strides differ in length or a dimension is out
// of range.
func Transpose(shape, strides []int, dim0, dim1 int) (newShape, newStrides []int, err error) {
	panic("not implemented")
}
