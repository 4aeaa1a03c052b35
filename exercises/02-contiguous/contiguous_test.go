package contiguous

import (
	"fmt"
	"slices"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
)

func TestA_IsContiguous(t *testing.T) {
	tests := []struct {
		name           string
		shape, strides []int
		want           bool
		why            string
	}{
		{"row-major matrix", []int{2, 3}, []int{3, 1}, true, "strides are exactly the row-major ones"},
		{"transposed matrix", []int{3, 2}, []int{1, 3}, false, "the last dimension must have stride 1 (a transpose has stride 3 there)"},
		{"size-1 dimension with odd stride", []int{2, 1, 3}, []int{3, 99, 1}, true, "you never step along a size-1 dimension, so its stride does not matter"},
		{"empty tensor with odd strides", []int{0, 5}, []int{1, 7}, true, "a tensor with no elements is always contiguous"},
		{"scalar", []int{}, []int{}, true, "a scalar is a single element: contiguous"},
		{"every other column", []int{4, 3}, []int{6, 2}, false, "x[:, ::2] skips elements, so stride 2 is not 1"},
		{"row slice", []int{2, 5}, []int{10, 1}, false, "x[:, :5] of a 2×10 tensor: rows are 10 apart but only 5 long — there are gaps"},
		{"rows of a larger tensor", []int{3, 10}, []int{10, 1}, true, "x[2:5] of a 10-column tensor is contiguous (its storage offset does not matter)"},
		{"expanded (broadcast)", []int{4, 3}, []int{0, 1}, false, "stride 0 repeats a row; the elements are not laid out one after another"},
		{"all ones", []int{1, 1, 1}, []int{5, 9, 2}, true, "every dimension has size 1, so no stride is checked"},
		{"trailing size-1 dimension", []int{3, 4, 1}, []int{4, 1, 1}, true, "the size-1 dimension is skipped; then 4 and 1 are row-major for [3, 4]"},
		{"vector with stride 2", []int{5}, []int{2}, false, "x[::2] of a longer vector"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got bool
			var err error
			call := fmt.Sprintf("IsContiguous(%v, %v)", tc.shape, tc.strides)
			if !exercisetest.Call(t, call, func() { got, err = IsContiguous(tc.shape, tc.strides) }) {
				return
			}
			if err != nil {
				t.Fatalf("%s: unexpected error %v", call, err)
			}
			if got != tc.want {
				t.Errorf("%s: want %v, got %v — %s", call, tc.want, got, tc.why)
			}
		})
	}
}

func TestA_IsContiguousErrors(t *testing.T) {
	tests := []struct {
		name           string
		shape, strides []int
		why            string
	}{
		{"fewer strides", []int{2, 3}, []int{1}, "shape and strides must have the same length"},
		{"more strides", []int{2}, []int{2, 1}, "shape and strides must have the same length"},
		{"negative size", []int{2, -3}, []int{3, 1}, "a negative size is invalid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			call := fmt.Sprintf("IsContiguous(%v, %v)", tc.shape, tc.strides)
			if !exercisetest.Call(t, call, func() { _, err = IsContiguous(tc.shape, tc.strides) }) {
				return
			}
			if err == nil {
				t.Errorf("%s: want an error — %s", call, tc.why)
			}
		})
	}
}

func TestB_Transpose(t *testing.T) {
	tests := []struct {
		name                 string
		shape, strides       []int
		dim0, dim1           int
		wantShape, wantStrid []int
		why                  string
	}{
		{"matrix", []int{2, 3}, []int{3, 1}, 0, 1, []int{3, 2}, []int{1, 3}, "sizes and strides swap; no memory moves"},
		{"same dimension", []int{2, 3}, []int{3, 1}, 1, 1, []int{2, 3}, []int{3, 1}, "transposing a dimension with itself changes nothing"},
		{"negative dimensions", []int{2, 3, 4}, []int{12, 4, 1}, -1, -2, []int{2, 4, 3}, []int{12, 1, 4}, "-1 is the last dimension and -2 the one before"},
		{"outer and inner", []int{2, 3, 4}, []int{12, 4, 1}, 0, 2, []int{4, 3, 2}, []int{1, 4, 12}, "dimensions 0 and 2 trade places, dimension 1 stays"},
		{"of a non-contiguous tensor", []int{3, 2}, []int{1, 3}, 0, 1, []int{2, 3}, []int{3, 1}, "transposing a transpose gives back the original layout"},
		{"scalar", []int{}, []int{}, 0, -1, []int{}, []int{}, "PyTorch lets a scalar transpose dimensions 0 and -1; nothing changes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			shape, strides := slices.Clone(tc.shape), slices.Clone(tc.strides)
			var gotShape, gotStrides []int
			var err error
			call := fmt.Sprintf("Transpose(%v, %v, %d, %d)", tc.shape, tc.strides, tc.dim0, tc.dim1)
			if !exercisetest.Call(t, call, func() { gotShape, gotStrides, err = Transpose(shape, strides, tc.dim0, tc.dim1) }) {
				return
			}
			if err != nil {
				t.Fatalf("%s: unexpected error %v", call, err)
			}
			if !slices.Equal(gotShape, tc.wantShape) || !slices.Equal(gotStrides, tc.wantStrid) {
				t.Errorf("%s: want shape %v strides %v, got shape %v strides %v — %s", call, tc.wantShape, tc.wantStrid, gotShape, gotStrides, tc.why)
			}
			if !slices.Equal(shape, tc.shape) || !slices.Equal(strides, tc.strides) {
				t.Errorf("%s modified its input: shape is now %v, strides %v — copy the slices before swapping", call, shape, strides)
			}
		})
	}
}

func TestB_TransposeErrors(t *testing.T) {
	tests := []struct {
		name           string
		shape, strides []int
		dim0, dim1     int
		why            string
	}{
		{"dimension too large", []int{2, 3}, []int{3, 1}, 0, 2, "a 2-D tensor has dimensions 0 and 1 (or -2 and -1)"},
		{"dimension too negative", []int{2, 3}, []int{3, 1}, -3, 0, "-3 is before the first dimension of a 2-D tensor"},
		{"mismatched strides", []int{2, 3}, []int{1}, 0, 1, "shape and strides must have the same length"},
		{"scalar dimension 1", []int{}, []int{}, 0, 1, "a scalar only accepts dimensions 0 and -1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			call := fmt.Sprintf("Transpose(%v, %v, %d, %d)", tc.shape, tc.strides, tc.dim0, tc.dim1)
			if !exercisetest.Call(t, call, func() { _, _, err = Transpose(tc.shape, tc.strides, tc.dim0, tc.dim1) }) {
				return
			}
			if err == nil {
				t.Errorf("%s: want an error — %s", call, tc.why)
			}
		})
	}
}
