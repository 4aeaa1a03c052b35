//go:build solution

// Package view is exercise 03 of the memlab course: PyTorch's rule for when a
// tensor can be viewed with a new shape without copying, and the strides of that
// view. See README.md.
package view

import (
	"errors"
	"fmt"
	"slices"
)

// ErrNotViewable is returned (wrapped) by ViewStrides when the elements of the
// tensor cannot be described by any strides for the new shape, so view() must fail
// and reshape() would copy.
var ErrNotViewable = errors.New("view: view size is not compatible with input tensor's size and stride; use reshape instead")

// InferShape is the reference solution; view.go documents the contract.
func InferShape(numel int, shape []int) ([]int, error) {
	res := slices.Clone(shape)
	if res == nil {
		res = []int{}
	}
	infer := -1
	product := 1
	for k, n := range shape {
		switch {
		case n == -1:
			if infer >= 0 {
				return nil, fmt.Errorf("view: only one dimension can be inferred in shape %v", shape)
			}
			infer = k
		case n < 0:
			return nil, fmt.Errorf("view: invalid shape dimension %d in shape %v", n, shape)
		default:
			product *= n
		}
	}
	if infer >= 0 {
		if product == 0 {
			return nil, fmt.Errorf("view: cannot reshape tensor of %d elements into shape %v because the unspecified dimension size -1 can be any value and is ambiguous", numel, shape)
		}
		if numel%product == 0 {
			res[infer] = numel / product
			return res, nil
		}
	} else if product == numel {
		return res, nil
	}
	return nil, fmt.Errorf("view: shape %v is invalid for input of size %d", shape, numel)
}

// ViewStrides is the reference solution; view.go documents the contract.
func ViewStrides(shape, strides, newShape []int) ([]int, error) {
	if len(shape) != len(strides) {
		return nil, fmt.Errorf("view: %d strides for a %d-dimensional shape", len(strides), len(shape))
	}
	numel, err := count(shape)
	if err != nil {
		return nil, err
	}
	newNumel, err := count(newShape)
	if err != nil {
		return nil, err
	}
	if numel != newNumel {
		return nil, fmt.Errorf("view: shape %v is invalid for input of size %d", newShape, numel)
	}
	newStrides := make([]int, len(newShape))
	if len(shape) == 0 {
		for i := range newStrides {
			newStrides[i] = 1
		}
		return newStrides, nil
	}
	if numel == 0 {
		if slices.Equal(shape, newShape) {
			return slices.Clone(strides), nil
		}
		acc := 1
		for d := len(newShape) - 1; d >= 0; d-- {
			newStrides[d] = acc
			acc *= max(newShape[d], 1)
		}
		return newStrides, nil
	}
	viewD := len(newShape) - 1
	chunkBase := strides[len(strides)-1]
	tensorNumel, viewNumel := 1, 1
	for d := len(shape) - 1; d >= 0; d-- {
		tensorNumel *= shape[d]
		if d == 0 || (shape[d-1] != 1 && strides[d-1] != tensorNumel*chunkBase) {
			for viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] == 1) {
				newStrides[viewD] = viewNumel * chunkBase
				viewNumel *= newShape[viewD]
				viewD--
			}
			if viewNumel != tensorNumel {
				return nil, fmt.Errorf("%w (shape %v, strides %v, new shape %v)", ErrNotViewable, shape, strides, newShape)
			}
			if d > 0 {
				chunkBase = strides[d-1]
				tensorNumel, viewNumel = 1, 1
			}
		}
	}
	if viewD != -1 {
		return nil, fmt.Errorf("%w (shape %v, strides %v, new shape %v)", ErrNotViewable, shape, strides, newShape)
	}
	return newStrides, nil
}

// count returns the number of elements of shape, rejecting negative sizes.
func count(shape []int) (int, error) {
	n := 1
	for k, s := range shape {
		if s < 0 {
			return 0, fmt.Errorf("view: dimension %d of shape %v has negative size %d", k, shape, s)
		}
		n *= s
	}
	return n, nil
}
