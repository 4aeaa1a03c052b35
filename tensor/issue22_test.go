package tensor

import (
	"errors"
	"slices"
	"testing"
)

// The two families issue 22's random differential run found, with PyTorch
// 2.11's answers (torch 2.11.0+cu130; reference/fidelity-2.11/layouts.jsonl.gz,
// recorded on the H200, has both families among its random chains, which
// TestLayoutChainsMatchPyTorch replays):
//
//	>>> torch.empty(2,3).squeeze((-2,0))
//	RuntimeError: dim 0 appears multiple times in the list of dims
//	>>> torch.empty(4,5)[::2, :0].clone().stride()
//	(10, 1)
//
// A zero-element tensor is contiguous, hence non-overlapping and dense to
// PyTorch (TensorImpl's is_non_overlapping_and_dense_ is is_contiguous_ or
// …), and clone() keeps the strides of a non-overlapping and dense tensor.
func TestIssue22SqueezeRejectsARepeatedDim(t *testing.T) {
	for _, c := range []struct {
		in   Layout
		dims []int
		msg  string
	}{
		{contig(2, 3), []int{-2, 0}, "dim 0 appears multiple times in the list of dims"},
		{contig(2, 1, 3), []int{1, -2}, "dim 1 appears multiple times in the list of dims"},
		{contig(2, 1, 3), []int{0, 2, -1}, "dim 2 appears multiple times in the list of dims"},
		{contig(), []int{0, -1}, "dim 0 appears multiple times in the list of dims"},
	} {
		_, err := c.in.Squeeze(c.dims...)
		var te *Error
		if !errors.As(err, &te) || te.Msg != c.msg || te.Index {
			t.Errorf("%v.Squeeze(%v) = %v, want RuntimeError %q", c.in, c.dims, err, c.msg)
		}
	}
}

func TestIssue22ZeroElementCloneKeepsStrides(t *testing.T) {
	x := mustLayout(mustLayout(contig(4, 5).Slice(0, 0, 4, 2)).Slice(1, 0, 0, 1)) // empty(4,5)[::2, :0]
	for _, c := range []struct {
		name    string
		got     Layout
		strides []int
	}{
		{"empty(4,5)[::2, :0].clone()", CloneLayout(x), []int{10, 1}},
		{"empty(4,5)[::2, :0].clone().t()", mustLayout(CloneLayout(x).T()), []int{1, 10}},
		{"empty(3,0).expand(2,3,0).clone()", CloneLayout(mustLayout(contig(3, 0).Expand(2, 3, 0))), []int{0, 1, 1}},
	} {
		if !slices.Equal(c.got.Strides, c.strides) || c.got.Offset != 0 {
			t.Errorf("%s: got %v, want strides %v offset 0", c.name, c.got, c.strides)
		}
	}
	if !x.IsNonOverlappingAndDense() || x.HasInternalOverlap() {
		t.Errorf("%v: a zero-element layout is non-overlapping and dense", x)
	}
}
