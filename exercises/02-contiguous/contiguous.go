//go:build !solution

// Package contiguous is exercise 02 of the memlab course: deciding whether shape
// and strides describe a contiguous tensor, and the transpose that makes one
// non-contiguous without moving memory. See README.md.
//
// 中文：练习 02：判断形状和步长描述的张量是否连续，以及不移动内存就让张量变得不连续的转置。
// 题目见 README.zh-CN.md。
package contiguous

// IsContiguous reports whether a tensor with the given shape and strides (in
// elements) is contiguous by PyTorch's rule: true if it has no elements; otherwise,
// walking from the last dimension to the first and ignoring dimensions of size 1,
// each stride equals the product of the sizes of the dimensions after it.
//
// It returns an error if shape and strides differ in length or a size is negative.
//
// 中文：按 PyTorch 的规则判断是否连续：没有元素时为 true；否则从最后一维到第一维、
// 跳过大小为 1 的维，每个步长都等于它后面各维大小之积。形状与步长长度不同或有负的大小时返回错误。
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
//
// 中文：返回交换 dim0 与 dim1 之后的形状和步长（同 PyTorch 的 transpose）：
// 内存不动，只交换两个大小和两个步长。负维度从末尾数起（-1 是最后一维）；
// 标量接受 0 和 -1。不修改传入的切片。长度不同或维度越界时返回错误。
func Transpose(shape, strides []int, dim0, dim1 int) (newShape, newStrides []int, err error) {
	panic("not implemented")
}
