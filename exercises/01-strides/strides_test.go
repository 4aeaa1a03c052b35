package strides

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
)

func TestA_RowMajorStrides(t *testing.T) {
	tests := []struct {
		name  string
		shape []int
		want  []int
		why   string
	}{
		{"3-D tensor", []int{2, 3, 4}, []int{12, 4, 1}, "dimension 0 jumps over 3·4 elements, dimension 1 over 4"},
		{"vector", []int{5}, []int{1}, "the last dimension is always adjacent: stride 1"},
		{"scalar", []int{}, []int{}, "a scalar has no dimensions, so no strides (an empty slice)"},
		{"matrix", []int{3, 7}, []int{7, 1}, "a row of a 3×7 matrix is 7 elements long"},
		{"leading ones", []int{1, 1, 6}, []int{6, 6, 1}, "sizes of 1 still take part in the product (they multiply by 1)"},
		{"zero-size middle dimension", []int{2, 0, 3}, []int{3, 3, 1}, "a size of 0 counts as 1 in the product, as in PyTorch's torch.empty(2, 0, 3).stride() == (3, 3, 1)"},
		{"zero-size last dimension", []int{4, 0}, []int{1, 1}, "the 0 counts as 1, so dimension 0 gets stride 1"},
		{"4-D image batch", []int{8, 3, 32, 32}, []int{3072, 1024, 32, 1}, "NCHW: one image is 3·32·32 = 3072 elements"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			var err error
			if !exercisetest.Call(t, fmt.Sprintf("RowMajorStrides(%v)", tc.shape), func() { got, err = RowMajorStrides(tc.shape) }) {
				return
			}
			if err != nil {
				t.Fatalf("RowMajorStrides(%v): unexpected error %v", tc.shape, err)
			}
			if got == nil || !slices.Equal(got, tc.want) {
				t.Errorf("RowMajorStrides(%v): want %v, got %#v — %s", tc.shape, tc.want, got, tc.why)
			}
		})
	}
}

func TestA_RowMajorStridesErrors(t *testing.T) {
	tests := []struct {
		name  string
		shape []int
		why   string
	}{
		{"negative size", []int{2, -1, 3}, "a dimension cannot have a negative size"},
		{"negative first size", []int{-4}, "a dimension cannot have a negative size"},
		{"too many elements", []int{math.MaxInt / 2, 3}, "the element count overflows int; check before multiplying"},
		{"overflow spread over dims", []int{1 << 32, 1 << 32, 2}, "2^65 elements do not fit in an int"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			var err error
			if !exercisetest.Call(t, fmt.Sprintf("RowMajorStrides(%v)", tc.shape), func() { got, err = RowMajorStrides(tc.shape) }) {
				return
			}
			if err == nil {
				t.Errorf("RowMajorStrides(%v): want an error, got strides %v — %s", tc.shape, got, tc.why)
			}
		})
	}
}

func TestB_Offset(t *testing.T) {
	tests := []struct {
		name                  string
		shape, strides, index []int
		want                  int
		why                   string
	}{
		{"row-major matrix", []int{2, 3}, []int{3, 1}, []int{1, 2}, 5, "row 1 starts at 3, plus column 2"},
		{"transposed matrix", []int{2, 3}, []int{1, 2}, []int{1, 2}, 5, "1·1 + 2·2 = 5: strides need not be row-major"},
		{"first element", []int{4, 5}, []int{5, 1}, []int{0, 0}, 0, "index 0 in every dimension is the start"},
		{"3-D", []int{2, 3, 4}, []int{12, 4, 1}, []int{1, 2, 3}, 23, "12 + 2·4 + 3 = 23"},
		{"broadcast dimension", []int{3, 4}, []int{0, 1}, []int{2, 3}, 3, "stride 0 repeats the same row: 2·0 + 3·1 = 3"},
		{"scalar", []int{}, []int{}, []int{}, 0, "a scalar's only element is at offset 0"},
		{"column of a wider tensor", []int{4, 1}, []int{10, 1}, []int{3, 0}, 30, "strides can skip elements: 3·10 = 30"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got int
			var err error
			call := fmt.Sprintf("Offset(%v, %v, %v)", tc.shape, tc.strides, tc.index)
			if !exercisetest.Call(t, call, func() { got, err = Offset(tc.shape, tc.strides, tc.index) }) {
				return
			}
			if err != nil {
				t.Fatalf("%s: unexpected error %v", call, err)
			}
			if got != tc.want {
				t.Errorf("%s: want %d, got %d — %s", call, tc.want, got, tc.why)
			}
		})
	}
}

func TestB_OffsetErrors(t *testing.T) {
	tests := []struct {
		name                  string
		shape, strides, index []int
		why                   string
	}{
		{"index past the end", []int{2, 3}, []int{3, 1}, []int{1, 3}, "dimension 1 has size 3, so index 3 is out of range"},
		{"negative index", []int{2, 3}, []int{3, 1}, []int{-1, 0}, "negative indices are not allowed here"},
		{"index too short", []int{2, 3}, []int{3, 1}, []int{1}, "the index needs one entry per dimension"},
		{"index too long", []int{2, 3}, []int{3, 1}, []int{1, 1, 1}, "the index needs one entry per dimension"},
		{"strides too short", []int{2, 3}, []int{1}, []int{0, 0}, "strides need one entry per dimension"},
		{"zero-size dimension", []int{2, 0}, []int{1, 1}, []int{0, 0}, "a dimension of size 0 has no valid index at all"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got int
			var err error
			call := fmt.Sprintf("Offset(%v, %v, %v)", tc.shape, tc.strides, tc.index)
			if !exercisetest.Call(t, call, func() { got, err = Offset(tc.shape, tc.strides, tc.index) }) {
				return
			}
			if err == nil {
				t.Errorf("%s: want an error, got offset %d — %s", call, got, tc.why)
			}
		})
	}
}
