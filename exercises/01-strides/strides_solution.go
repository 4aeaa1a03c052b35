//go:build solution

// Package strides is exercise 01 of the memlab course: the strides of a row-major
// tensor and the storage offset of one element. See README.md.
package strides

import (
	"fmt"
	"math"
)

// RowMajorStrides is the reference solution; strides.go documents the contract.
func RowMajorStrides(shape []int) ([]int, error) {
	strides := make([]int, len(shape))
	acc := 1
	for k := len(shape) - 1; k >= 0; k-- {
		n := shape[k]
		if n < 0 {
			return nil, fmt.Errorf("strides: dimension %d has negative size %d", k, n)
		}
		strides[k] = acc
		if n > 1 {
			if acc > math.MaxInt/n {
				return nil, fmt.Errorf("strides: shape %v has more elements than fit in an int", shape)
			}
			acc *= n
		}
	}
	return strides, nil
}

// Offset is the reference solution; strides.go documents the contract.
func Offset(shape, strides, index []int) (int, error) {
	if len(strides) != len(shape) {
		return 0, fmt.Errorf("strides: %d strides for a %d-dimensional shape", len(strides), len(shape))
	}
	if len(index) != len(shape) {
		return 0, fmt.Errorf("strides: index %v has %d entries for a %d-dimensional shape", index, len(index), len(shape))
	}
	off := 0
	for k, i := range index {
		if i < 0 || i >= shape[k] {
			return 0, fmt.Errorf("strides: index %d out of range for dimension %d of size %d", i, k, shape[k])
		}
		off += i * strides[k]
	}
	return off, nil
}
