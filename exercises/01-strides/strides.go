//go:build !solution

// Package strides is exercise 01 of the memlab course: the strides of a row-major
// tensor and the storage offset of one element. See README.md.
package strides

// RowMajorStrides returns the strides, in elements, of a contiguous (row-major)
// tensor of the given shape: the last dimension has stride 1 and every earlier
// dimension's stride is the product of the sizes after it. A dimension of size 0
// counts as size 1 in that product, as in PyTorch. A scalar (empty shape) has no
// strides: the result is an empty, non-nil slice.
//
// It returns an error naming the dimension if a size is negative, and an error if
// the number of elements does not fit in an int.
func RowMajorStrides(shape []int) ([]int, error) {
	panic("not implemented")
}

// Offset returns the storage position, in elements, of the element at index in a
// tensor with the given shape and strides: the sum of index[k]·strides[k]. Strides
// may be anything (including 0); they are not required to be row-major.
//
// It returns an error if strides or index do not have one entry per dimension of
// shape, or if some index[k] lies outside [0, shape[k]).
func Offset(shape, strides, index []int) (int, error) {
	panic("not implemented")
}
