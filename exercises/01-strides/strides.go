//go:build !solution

// Package strides is exercise 01 of the memlab course: the strides of a row-major
// tensor and the storage offset of one element. See README.md.
//
// 中文：练习 01：行优先张量的步长，以及单个元素在存储中的偏移。题目见 README.zh-CN.md。
package strides

// RowMajorStrides returns the strides, in elements, of a contiguous (row-major)
// tensor of the given shape: the last dimension has stride 1 and every earlier
// dimension's stride is the product of the sizes after it. A dimension of size 0
// counts as size 1 in that product, as in PyTorch. A scalar (empty shape) has no
// strides: the result is an empty, non-nil slice.
//
// It returns an error naming the dimension if a size is negative, and an error if
// the number of elements does not fit in an int.
//
// 中文：返回给定形状的连续（行优先）张量的步长（以元素计）：最后一维步长为 1，
// 前面每一维的步长是它后面各维大小之积；大小为 0 的维在乘积里按 1 计（与 PyTorch 相同）。
// 标量返回空的非 nil 切片。大小为负时返回写明维度的错误，元素个数超出 int 时返回错误。
func RowMajorStrides(shape []int) ([]int, error) {
	panic("not implemented")
}

// Offset returns the storage position, in elements, of the element at index in a
// tensor with the given shape and strides: the sum of index[k]·strides[k]. Strides
// may be anything (including 0); they are not required to be row-major.
//
// It returns an error if strides or index do not have one entry per dimension of
// shape, or if some index[k] lies outside [0, shape[k]).
//
// 中文：返回下标 index 处的元素在存储中的位置（以元素计）：index[k]·strides[k] 之和；
// 步长可以是任意值（包括 0）。strides 或 index 不是每维一项，
// 或某个 index[k] 不在 [0, shape[k]) 内时返回错误。
func Offset(shape, strides, index []int) (int, error) {
	panic("not implemented")
}
