package view

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
)

func TestA_InferShape(t *testing.T) {
	tests := []struct {
		name  string
		numel int
		shape []int
		want  []int
		why   string
	}{
		{"infer last", 6, []int{2, -1}, []int{2, 3}, "6 elements / 2 = 3"},
		{"infer only", 6, []int{-1}, []int{6}, "flattening: -1 takes every element"},
		{"infer first", 24, []int{-1, 3, 4}, []int{2, 3, 4}, "24 / (3·4) = 2"},
		{"nothing to infer", 6, []int{3, 2}, []int{3, 2}, "a fully specified shape with the right count is returned as is"},
		{"empty tensor flattened", 0, []int{-1}, []int{0}, "0 elements / 1 = 0: the other sizes multiply to 1, so -1 is not ambiguous"},
		{"empty tensor, explicit", 0, []int{3, 0}, []int{3, 0}, "3·0 = 0 elements, as required"},
		{"scalar", 1, []int{}, []int{}, "an empty shape holds one element"},
		{"size-1 dims around -1", 8, []int{1, -1, 1}, []int{1, 8, 1}, "sizes of 1 do not change the count"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			shape := slices.Clone(tc.shape)
			var got []int
			var err error
			call := fmt.Sprintf("InferShape(%d, %v)", tc.numel, tc.shape)
			if !exercisetest.Call(t, call, func() { got, err = InferShape(tc.numel, shape) }) {
				return
			}
			if err != nil {
				t.Fatalf("%s: unexpected error %v — %s", call, err, tc.why)
			}
			if got == nil || !slices.Equal(got, tc.want) {
				t.Errorf("%s: want %v, got %#v — %s", call, tc.want, got, tc.why)
			}
			if !slices.Equal(shape, tc.shape) {
				t.Errorf("%s modified its input to %v — return a new slice", call, shape)
			}
		})
	}
}

func TestA_InferShapeErrors(t *testing.T) {
	tests := []struct {
		name  string
		numel int
		shape []int
		why   string
	}{
		{"not a multiple", 6, []int{4, -1}, "6 is not a multiple of 4, so no size fits"},
		{"two inferred", 6, []int{-1, -1}, "only one dimension can be inferred"},
		{"other negative", 6, []int{2, -3}, "-3 is not a size and not the -1 placeholder"},
		{"wrong count", 6, []int{2, 2}, "2·2 = 4 elements, but the tensor has 6"},
		{"ambiguous", 0, []int{0, -1}, "with a 0 elsewhere, any size for -1 gives 0 elements: ambiguous"},
		{"scalar into two", 1, []int{2}, "a scalar has one element, not 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			var err error
			call := fmt.Sprintf("InferShape(%d, %v)", tc.numel, tc.shape)
			if !exercisetest.Call(t, call, func() { got, err = InferShape(tc.numel, tc.shape) }) {
				return
			}
			if err == nil {
				t.Errorf("%s: want an error, got %v — %s", call, got, tc.why)
			}
		})
	}
}

func TestB_ViewStrides(t *testing.T) {
	tests := []struct {
		name                     string
		shape, strides, newShape []int
		want                     []int
		why                      string
	}{
		{"contiguous merge", []int{2, 3, 4}, []int{12, 4, 1}, []int{6, 4}, []int{4, 1}, "a contiguous tensor is one chunk: any new shape gets row-major strides"},
		{"contiguous flatten", []int{2, 3, 4}, []int{12, 4, 1}, []int{24}, []int{1}, "one chunk of 24 elements"},
		{"contiguous split", []int{6}, []int{1}, []int{2, 3}, []int{3, 1}, "splitting a dimension is always possible inside a chunk"},
		{"sliced columns, split inner", []int{4, 4}, []int{6, 1}, []int{4, 2, 2}, []int{6, 2, 1}, "x[:, :4] of a 4×6 tensor has two chunks ([4] stride 6, [4] stride 1); splitting the inner one is fine"},
		{"sliced columns, split outer", []int{4, 4}, []int{6, 1}, []int{2, 2, 4}, []int{12, 6, 1}, "the outer chunk [4] with stride 6 splits into [2, 2] with strides 12, 6"},
		{"transpose with a new size-1 dim", []int{3, 2}, []int{1, 3}, []int{3, 2, 1}, []int{1, 3, 3}, "a new size-1 dimension joins the chunk: its stride is viewNumel·chunkBase = 3"},
		{"broadcast split inner", []int{3, 4}, []int{0, 1}, []int{3, 2, 2}, []int{0, 2, 1}, "an expanded dimension (stride 0) is its own chunk and keeps stride 0"},
		{"drop size-1 dims", []int{1, 5, 1}, []int{7, 1, 3}, []int{5}, []int{1}, "size-1 dimensions never break a chunk and can disappear"},
		{"scalar to [1, 1]", []int{}, []int{}, []int{1, 1}, []int{1, 1}, "a scalar views as all-ones strides"},
		{"[1] to scalar", []int{1}, []int{1}, []int{}, []int{}, "a one-element tensor views as a scalar: no strides"},
		{"empty, same shape", []int{0, 3}, []int{7, 2}, []int{0, 3}, []int{7, 2}, "a tensor with no elements and an unchanged shape keeps its strides"},
		{"empty, new shape", []int{0, 3}, []int{3, 1}, []int{3, 0}, []int{1, 1}, "no elements: row-major strides of [3, 0], counting the 0 as 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			var err error
			call := fmt.Sprintf("ViewStrides(%v, %v, %v)", tc.shape, tc.strides, tc.newShape)
			if !exercisetest.Call(t, call, func() { got, err = ViewStrides(tc.shape, tc.strides, tc.newShape) }) {
				return
			}
			if err != nil {
				t.Fatalf("%s: unexpected error %v — %s", call, err, tc.why)
			}
			if got == nil || !slices.Equal(got, tc.want) {
				t.Errorf("%s: want %v, got %#v — %s", call, tc.want, got, tc.why)
			}
		})
	}
}

func TestB_ViewStridesErrors(t *testing.T) {
	tests := []struct {
		name                     string
		shape, strides, newShape []int
		notViewable              bool
		why                      string
	}{
		{"transpose flattened", []int{3, 2}, []int{1, 3}, []int{6}, true, "a transpose has two chunks; [6] would need both in one"},
		{"sliced columns flattened", []int{4, 4}, []int{6, 1}, []int{16}, true, "x[:, :4] of a 4×6 tensor has gaps between rows, so [16] spans two chunks"},
		{"chunks regrouped", []int{4, 4}, []int{6, 1}, []int{2, 8}, true, "[2, 8] would merge half of the outer chunk with the inner one"},
		{"broadcast flattened", []int{3, 4}, []int{0, 1}, []int{12}, true, "stride 0 repeats a row: no single stride walks all 12 elements"},
		{"wrong element count", []int{2, 3}, []int{3, 1}, []int{4}, false, "6 elements cannot become 4 — a count error, not ErrNotViewable"},
		{"negative new size", []int{2, 3}, []int{3, 1}, []int{-1, 6}, false, "ViewStrides takes a resolved shape; -1 must go through InferShape first"},
		{"mismatched strides", []int{2, 3}, []int{1}, []int{6}, false, "shape and strides must have the same length"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			var err error
			call := fmt.Sprintf("ViewStrides(%v, %v, %v)", tc.shape, tc.strides, tc.newShape)
			if !exercisetest.Call(t, call, func() { got, err = ViewStrides(tc.shape, tc.strides, tc.newShape) }) {
				return
			}
			if err == nil {
				t.Fatalf("%s: want an error, got strides %v — %s", call, got, tc.why)
			}
			if errors.Is(err, ErrNotViewable) != tc.notViewable {
				t.Errorf("%s: errors.Is(err, ErrNotViewable) = %v, want %v (err: %v) — %s", call, !tc.notViewable, tc.notViewable, err, tc.why)
			}
		})
	}
}
