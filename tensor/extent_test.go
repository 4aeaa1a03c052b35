package tensor_test

import (
	"strings"
	"testing"

	"memlab.dev/memlab/tensor"
)

func TestStridedExtent(t *testing.T) {
	const base = tensor.Ptr(0x1000)
	cases := []struct {
		name string
		s    tensor.Strided
		want tensor.Extent
	}{
		{"contiguous", tensor.Strided{Base: base, DType: tensor.Float32, Shape: []int{2, 3}, Strides: []int{3, 1}},
			tensor.Extent{N: 6, Lo: 0x1000, Hi: 0x1018, Start: 0x1000}},
		{"offset and broadcast", tensor.Strided{Base: base, DType: tensor.Float16, Shape: []int{4, 2}, Strides: []int{0, 1}, Offset: 3},
			tensor.Extent{N: 8, MinOff: 3, Lo: 0x1006, Hi: 0x100a, Start: 0x1006}},
		{"negative stride", tensor.Strided{Base: base, DType: tensor.Float32, Shape: []int{3}, Strides: []int{-2}, Offset: 4},
			tensor.Extent{N: 3, Lo: 0x1000, Hi: 0x1014, Start: 0x1010}},
		{"scalar", tensor.Strided{Base: base, DType: tensor.Int64, Offset: 1},
			tensor.Extent{N: 1, MinOff: 1, Lo: 0x1008, Hi: 0x1010, Start: 0x1008}},
		{"no elements, no base", tensor.Strided{DType: tensor.Float32, Shape: []int{0, 5}, Strides: []int{5, 1}},
			tensor.Extent{}},
	}
	for _, c := range cases {
		got, err := c.s.Extent()
		if err != nil || got != c.want {
			t.Errorf("%s: Extent() = %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
	bad := []struct {
		name string
		s    tensor.Strided
		want string
	}{
		{"dtype", tensor.Strided{Base: base, DType: tensor.DType(200)}, "invalid dtype"},
		{"rank", tensor.Strided{Base: base, DType: tensor.Float32, Shape: make([]int, tensor.MaxRank+1), Strides: make([]int, tensor.MaxRank+1)}, "exceeds the maximum rank"},
		{"strides", tensor.Strided{Base: base, DType: tensor.Float32, Shape: []int{2}}, "0 strides for 1 dimensions"},
		{"offset", tensor.Strided{Base: base, DType: tensor.Float32, Offset: -1}, "offset -1 out of range"},
		{"size", tensor.Strided{Base: base, DType: tensor.Float32, Shape: []int{-1}, Strides: []int{1}}, "dimension 0 has invalid size -1"},
		{"stride", tensor.Strided{Base: base, DType: tensor.Float32, Shape: []int{2}, Strides: []int{1 << 57}}, "invalid stride"},
		{"elements", tensor.Strided{Base: base, DType: tensor.Float32, Shape: []int{1 << 30, 1 << 30}, Strides: []int{0, 0}}, "too many elements"},
		{"span", tensor.Strided{Base: base, DType: tensor.Float32, Shape: []int{1 << 20}, Strides: []int{1 << 40}}, "spans too far"},
		{"before base", tensor.Strided{Base: base, DType: tensor.Float32, Shape: []int{3}, Strides: []int{-1}, Offset: 1}, "reach element -1 before the base address"},
		{"null base", tensor.Strided{DType: tensor.Float32, Shape: []int{1}, Strides: []int{1}}, "null base address"},
	}
	for _, c := range bad {
		if _, err := c.s.Extent(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Extent() error %v, want one containing %q", c.name, err, c.want)
		}
	}
}
