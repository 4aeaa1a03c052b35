//go:build solution

// Package contiguous is exercise 02 of the memlab course: deciding whether shape
// and strides describe a contiguous tensor, and the transpose that makes one
// non-contiguous without moving memory. See README.md.
package contiguous

import (
	"fmt"
	"slices"
)

// IsContiguous is the reference solution; contiguous.go documents the contract.
func IsContiguous(shape, strides []int) (bool, error) {
	if len(shape) != len(strides) {
		return false, fmt.Errorf("contiguous: %d strides for a %d-dimensional shape", len(strides), len(shape))
	}
	for k, n := range shape {
		if n < 0 {
			return false, fmt.Errorf("contiguous: dimension %d has negative size %d", k, n)
		}
	}
	if slices.Contains(shape, 0) {
		return true, nil
	}
	expected := 1
	for k := len(shape) - 1; k >= 0; k-- {
		if shape[k] == 1 {
			continue
		}
		if strides[k] != expected {
			return false, nil
		}
		expected *= shape[k]
	}
	return true, nil
}

// Transpose is the reference solution; contiguous.go documents the contract.
func Transpose(shape, strides []int, dim0, dim1 int) (newShape, newStrides []int, err error) {
	if len(shape) != len(strides) {
		return nil, nil, fmt.Errorf("contiguous: %d strides for a %d-dimensional shape", len(strides), len(shape))
	}
	d0, err := wrapDim(dim0, len(shape))
	if err != nil {
		return nil, nil, err
	}
	d1, err := wrapDim(dim1, len(shape))
	if err != nil {
		return nil, nil, err
	}
	newShape, newStrides = slices.Clone(shape), slices.Clone(strides)
	if len(shape) == 0 {
		return []int{}, []int{}, nil
	}
	newShape[d0], newShape[d1] = newShape[d1], newShape[d0]
	newStrides[d0], newStrides[d1] = newStrides[d1], newStrides[d0]
	return newShape, newStrides, nil
}

// wrapDim turns a possibly negative dimension into an index into a shape of rank
// ndim, as PyTorch's maybe_wrap_dim does (a scalar behaves as rank 1).
func wrapDim(dim, ndim int) (int, error) {
	n := max(ndim, 1)
	if dim < -n || dim >= n {
		return 0, fmt.Errorf("contiguous: dimension %d out of range for a %d-dimensional tensor (expected [%d, %d])", dim, ndim, -n, n-1)
	}
	if dim < 0 {
		dim += n
	}
	return dim, nil
}
