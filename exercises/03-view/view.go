//go:build !solution

// Package view is exercise 03 of the memlab course: PyTorch's rule for when a
// tensor can be viewed with a new shape without copying, and the strides of that
// view. See README.md.
//
// 中文：练习 03：PyTorch 判断张量能否不拷贝地换成新形状（view）
// 的规则，以及这个视图的步长。题目见 README.zh-CN.md。
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
//
// 中文：像 view/reshape 那样按 numel 个元素解析 shape：
// 最多一项为 -1，它取使乘积等于 numel 的大小。返回新切片，不修改 shape。
// 多于一个 -1、有小于 -1 的项、-1 有歧义（其余乘积为 0）或元素个数对不上时返回错误。
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
//
// 中文：按 ATen 的 computeStride 返回视图的步长：原来的各维组成彼此连续的组块，
// 新形状必须分成元素个数相同的组块，组块内新步长按行优先排列并乘上该组块最后一维的步长。
// 标量的 view 步长全为 1；没有元素的张量形状不变则保留步长，否则用行优先步长（0 按 1 计）。
// 不存在步长时返回包装 ErrNotViewable 的错误；长度不同、大小为负或元素个数不同时返回其他错误。
func ViewStrides(shape, strides, newShape []int) ([]int, error) {
	panic("not implemented")
}
