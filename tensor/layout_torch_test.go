package tensor

import (
	"errors"
	"slices"
	"testing"
)

// The expected shapes, strides, offsets and messages in this file are what
// PyTorch gives for the same calls: each case's name is the Python expression it
// mirrors, and TestLayoutCasesAgreeWithPyTorch checks every expectation against
// testdata/pytorch-layouts.json, recorded with PyTorch 2.11 by
// testdata/pytorch_layouts.py.

type layoutCase struct {
	name    string // the PyTorch expression
	in      Layout
	op      func(Layout) (Layout, error)
	shape   []int
	strides []int
	offset  int
	err     string // PyTorch's message; empty when the call succeeds
}

func contig(shape ...int) Layout { return ContiguousLayout(shape...) }

func mustLayout(l Layout, err error) Layout {
	if err != nil {
		panic(err)
	}
	return l
}

func view(s ...int) func(Layout) (Layout, error) {
	return func(l Layout) (Layout, error) { return l.View(s...) }
}

const viewErr = "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead."

var layoutCases = []layoutCase{
	// view
	{name: "empty(2,3,4).view(6,4)", in: contig(2, 3, 4), op: view(6, 4), shape: []int{6, 4}, strides: []int{4, 1}},
	{name: "empty(2,3,4).view(-1)", in: contig(2, 3, 4), op: view(-1), shape: []int{24}, strides: []int{1}},
	{name: "empty(2,3,4).view(4,-1,2)", in: contig(2, 3, 4), op: view(4, -1, 2), shape: []int{4, 3, 2}, strides: []int{6, 2, 1}},
	{name: "empty(2,3).view(-1,-1)", in: contig(2, 3), op: view(-1, -1), err: "only one dimension can be inferred"},
	{name: "empty(2,3).view(4,2)", in: contig(2, 3), op: view(4, 2), err: "shape '[4, 2]' is invalid for input of size 6"},
	{name: "empty(2,3).view(-1,4)", in: contig(2, 3), op: view(-1, 4), err: "shape '[-1, 4]' is invalid for input of size 6"},
	{name: "empty(2,3).view(-2,3)", in: contig(2, 3), op: view(-2, 3), err: "invalid shape dimension -2 at index 0 of shape [-2, 3]"},
	{name: "empty(3,4).t().view(12)", in: mustLayout(contig(3, 4).T()), op: view(12), err: viewErr},
	{name: "empty(3,4).t().view(4,3)", in: mustLayout(contig(3, 4).T()), op: view(4, 3), shape: []int{4, 3}, strides: []int{1, 4}},
	{name: "empty(3,4).t().view(2,2,3)", in: mustLayout(contig(3, 4).T()), op: view(2, 2, 3), shape: []int{2, 2, 3}, strides: []int{2, 1, 4}},
	{name: "empty(4,6)[:, :4].view(4,2,2)", in: mustLayout(contig(4, 6).Slice(1, 0, 4, 1)), op: view(4, 2, 2), shape: []int{4, 2, 2}, strides: []int{6, 2, 1}},
	{name: "empty(4,6)[:, :4].view(2,2,4)", in: mustLayout(contig(4, 6).Slice(1, 0, 4, 1)), op: view(2, 2, 4), shape: []int{2, 2, 4}, strides: []int{12, 6, 1}},
	{name: "empty(4,6)[:, :4].view(16)", in: mustLayout(contig(4, 6).Slice(1, 0, 4, 1)), op: view(16), err: viewErr},
	{name: "empty(4,6)[1:3].view(12)", in: mustLayout(contig(4, 6).Slice(0, 1, 3, 1)), op: view(12), shape: []int{12}, strides: []int{1}, offset: 6},
	{name: "empty(3,1).expand(3,4).view(12)", in: mustLayout(contig(3, 1).Expand(3, 4)), op: view(12), err: viewErr},
	{name: "empty(3,1).expand(3,4).view(3,2,2)", in: mustLayout(contig(3, 1).Expand(3, 4)), op: view(3, 2, 2), shape: []int{3, 2, 2}, strides: []int{1, 0, 0}},
	{name: "empty(2,1,3).view(2,3)", in: contig(2, 1, 3), op: view(2, 3), shape: []int{2, 3}, strides: []int{3, 1}},
	{name: "empty(2,3).view(2,1,3,1)", in: contig(2, 3), op: view(2, 1, 3, 1), shape: []int{2, 1, 3, 1}, strides: []int{3, 3, 1, 1}},
	{name: "tensor(5.).view(1,1)", in: contig(), op: view(1, 1), shape: []int{1, 1}, strides: []int{1, 1}},
	{name: "tensor(5.).view(-1)", in: contig(), op: view(-1), shape: []int{1}, strides: []int{1}},
	{name: "empty(1).view(())", in: contig(1), op: view(), shape: []int{}, strides: []int{}},
	{name: "empty(0,3).view(3,0)", in: contig(0, 3), op: view(3, 0), shape: []int{3, 0}, strides: []int{1, 1}},
	{name: "empty(0,3).view(-1)", in: contig(0, 3), op: view(-1), shape: []int{0}, strides: []int{1}},
	{name: "empty(0,3).view(-1,0)", in: contig(0, 3), op: view(-1, 0), err: "cannot reshape tensor of 0 elements into shape [-1, 0] because the unspecified dimension size -1 can be any value and is ambiguous"},

	// transpose, t, permute
	{name: "empty(2,3,4).transpose(0,2)", in: contig(2, 3, 4), op: func(l Layout) (Layout, error) { return l.Transpose(0, 2) }, shape: []int{4, 3, 2}, strides: []int{1, 4, 12}},
	{name: "empty(2,3).transpose(-1,-2)", in: contig(2, 3), op: func(l Layout) (Layout, error) { return l.Transpose(-1, -2) }, shape: []int{3, 2}, strides: []int{1, 3}},
	{name: "empty(2,3,4).transpose(0,3)", in: contig(2, 3, 4), op: func(l Layout) (Layout, error) { return l.Transpose(0, 3) }, err: "Dimension out of range (expected to be in range of [-3, 2], but got 3)"},
	{name: "empty(2,3).t()", in: contig(2, 3), op: Layout.T, shape: []int{3, 2}, strides: []int{1, 3}},
	{name: "empty(5).t()", in: contig(5), op: Layout.T, shape: []int{5}, strides: []int{1}},
	{name: "empty(2,3,4).t()", in: contig(2, 3, 4), op: Layout.T, err: "t() expects a tensor with <= 2 dimensions, but self is 3D"},
	{name: "empty(2,3,4).permute(2,0,1)", in: contig(2, 3, 4), op: func(l Layout) (Layout, error) { return l.Permute(2, 0, 1) }, shape: []int{4, 2, 3}, strides: []int{1, 12, 4}},
	{name: "empty(2,3,4).permute(-1,1,0)", in: contig(2, 3, 4), op: func(l Layout) (Layout, error) { return l.Permute(-1, 1, 0) }, shape: []int{4, 3, 2}, strides: []int{1, 4, 12}},
	{name: "empty(2,3,4).permute(0,1)", in: contig(2, 3, 4), op: func(l Layout) (Layout, error) { return l.Permute(0, 1) }, err: "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = 3 is not equal to len(dims) = 2"},
	{name: "empty(2,3,4).permute(0,0,1)", in: contig(2, 3, 4), op: func(l Layout) (Layout, error) { return l.Permute(0, 0, 1) }, err: "permute(): duplicate dims are not allowed."},
	{name: "empty(2,3).permute(0,2)", in: contig(2, 3), op: func(l Layout) (Layout, error) { return l.Permute(0, 2) }, err: "Dimension out of range (expected to be in range of [-2, 1], but got 2)"},

	// slice
	{name: "empty(5,4)[1:4:2]", in: contig(5, 4), op: func(l Layout) (Layout, error) { return l.Slice(0, 1, 4, 2) }, shape: []int{2, 4}, strides: []int{8, 1}, offset: 4},
	{name: "empty(5,4)[:, -3:100]", in: contig(5, 4), op: func(l Layout) (Layout, error) { return l.Slice(1, -3, 100, 1) }, shape: []int{5, 3}, strides: []int{4, 1}, offset: 1},
	{name: "empty(5,4)[10:20]", in: contig(5, 4), op: func(l Layout) (Layout, error) { return l.Slice(0, 10, 20, 1) }, shape: []int{0, 4}, strides: []int{4, 1}, offset: 20},
	{name: "empty(5,4)[3:1]", in: contig(5, 4), op: func(l Layout) (Layout, error) { return l.Slice(0, 3, 1, 1) }, shape: []int{0, 4}, strides: []int{4, 1}, offset: 12},
	{name: "empty(5,4)[-100:2]", in: contig(5, 4), op: func(l Layout) (Layout, error) { return l.Slice(0, -100, 2, 1) }, shape: []int{2, 4}, strides: []int{4, 1}},
	{name: "empty(10)[::3]", in: contig(10), op: func(l Layout) (Layout, error) { return l.Slice(0, 0, 10, 3) }, shape: []int{4}, strides: []int{3}},
	{name: "empty(5,4)[::0]", in: contig(5, 4), op: func(l Layout) (Layout, error) { return l.Slice(0, 0, 5, 0) }, err: "slice step cannot be zero"},
	{name: "empty(5,4)[::-1]", in: contig(5, 4), op: func(l Layout) (Layout, error) { return l.Slice(0, 0, 5, -1) }, err: "step must be greater than zero"},
	{name: "torch.ops.aten.slice(empty(5,4),2,0,1)", in: contig(5, 4), op: func(l Layout) (Layout, error) { return l.Slice(2, 0, 1, 1) }, err: "Dimension out of range (expected to be in range of [-2, 1], but got 2)"},

	// narrow
	{name: "empty(5,4).narrow(1,1,2)", in: contig(5, 4), op: func(l Layout) (Layout, error) { return l.Narrow(1, 1, 2) }, shape: []int{5, 2}, strides: []int{4, 1}, offset: 1},
	{name: "empty(5,4).narrow(0,-2,2)", in: contig(5, 4), op: func(l Layout) (Layout, error) { return l.Narrow(0, -2, 2) }, shape: []int{2, 4}, strides: []int{4, 1}, offset: 12},
	{name: "empty(5,4).narrow(0,4,2)", in: contig(5, 4), op: func(l Layout) (Layout, error) { return l.Narrow(0, 4, 2) }, err: "start (4) + length (2) exceeds dimension size (5)."},
	{name: "empty(5,4).narrow(0,6,1)", in: contig(5, 4), op: func(l Layout) (Layout, error) { return l.Narrow(0, 6, 1) }, err: "start out of range (expected to be in range of [-5, 5], but got 6)"},
	{name: "empty(5,4).narrow(0,0,-1)", in: contig(5, 4), op: func(l Layout) (Layout, error) { return l.Narrow(0, 0, -1) }, err: "narrow(): length must be non-negative."},

	// select
	{name: "empty(3,4).select(1,-1)", in: contig(3, 4), op: func(l Layout) (Layout, error) { return l.Select(1, -1) }, shape: []int{3}, strides: []int{4}, offset: 3},
	{name: "empty(3,4)[2]", in: contig(3, 4), op: func(l Layout) (Layout, error) { return l.Select(0, 2) }, shape: []int{4}, strides: []int{1}, offset: 8},
	{name: "empty(3,4).select(0,5)", in: contig(3, 4), op: func(l Layout) (Layout, error) { return l.Select(0, 5) }, err: "select(): index 5 out of range for tensor of size [3, 4] at dimension 0"},
	{name: "empty(3,4).select(-1,-5)", in: contig(3, 4), op: func(l Layout) (Layout, error) { return l.Select(-1, -5) }, err: "select(): index -5 out of range for tensor of size [3, 4] at dimension 1"},
	{name: "tensor(1.).select(0,0)", in: contig(), op: func(l Layout) (Layout, error) { return l.Select(0, 0) }, err: "select() cannot be applied to a 0-dim tensor."},

	// expand
	{name: "empty(3,1).expand(3,4)", in: contig(3, 1), op: func(l Layout) (Layout, error) { return l.Expand(3, 4) }, shape: []int{3, 4}, strides: []int{1, 0}},
	{name: "empty(3).expand(2,3)", in: contig(3), op: func(l Layout) (Layout, error) { return l.Expand(2, 3) }, shape: []int{2, 3}, strides: []int{0, 1}},
	{name: "empty(3,1).expand(2,-1,4)", in: contig(3, 1), op: func(l Layout) (Layout, error) { return l.Expand(2, -1, 4) }, shape: []int{2, 3, 4}, strides: []int{0, 1, 0}},
	{name: "empty(3).expand(1,3)", in: contig(3), op: func(l Layout) (Layout, error) { return l.Expand(1, 3) }, shape: []int{1, 3}, strides: []int{3, 1}},
	{name: "empty(2,3).expand(2,4)", in: contig(2, 3), op: func(l Layout) (Layout, error) { return l.Expand(2, 4) }, err: "The expanded size of the tensor (4) must match the existing size (3) at non-singleton dimension 1.  Target sizes: [2, 4].  Tensor sizes: [2, 3]"},
	{name: "empty(3).expand(-1,3)", in: contig(3), op: func(l Layout) (Layout, error) { return l.Expand(-1, 3) }, err: "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0"},

	// squeeze, unsqueeze
	{name: "empty(2,1,3,1).squeeze()", in: contig(2, 1, 3, 1), op: func(l Layout) (Layout, error) { return l.Squeeze() }, shape: []int{2, 3}, strides: []int{3, 1}},
	{name: "empty(2,1,3,1).squeeze(1)", in: contig(2, 1, 3, 1), op: func(l Layout) (Layout, error) { return l.Squeeze(1) }, shape: []int{2, 3, 1}, strides: []int{3, 1, 1}},
	{name: "empty(2,1,3,1).squeeze(0)", in: contig(2, 1, 3, 1), op: func(l Layout) (Layout, error) { return l.Squeeze(0) }, shape: []int{2, 1, 3, 1}, strides: []int{3, 3, 1, 1}},
	{name: "empty(2,1,3,1).squeeze(4)", in: contig(2, 1, 3, 1), op: func(l Layout) (Layout, error) { return l.Squeeze(4) }, err: "Dimension out of range (expected to be in range of [-4, 3], but got 4)"},
	{name: "empty(2,3).unsqueeze(0)", in: contig(2, 3), op: func(l Layout) (Layout, error) { return l.Unsqueeze(0) }, shape: []int{1, 2, 3}, strides: []int{6, 3, 1}},
	{name: "empty(2,3).unsqueeze(1)", in: contig(2, 3), op: func(l Layout) (Layout, error) { return l.Unsqueeze(1) }, shape: []int{2, 1, 3}, strides: []int{3, 3, 1}},
	{name: "empty(2,3).unsqueeze(-1)", in: contig(2, 3), op: func(l Layout) (Layout, error) { return l.Unsqueeze(-1) }, shape: []int{2, 3, 1}, strides: []int{3, 1, 1}},
	{name: "empty(2,3).unsqueeze(3)", in: contig(2, 3), op: func(l Layout) (Layout, error) { return l.Unsqueeze(3) }, err: "Dimension out of range (expected to be in range of [-3, 2], but got 3)"},
	{name: "empty(2,3).t().unsqueeze(1)", in: mustLayout(contig(2, 3).T()), op: func(l Layout) (Layout, error) { return l.Unsqueeze(1) }, shape: []int{3, 1, 2}, strides: []int{1, 6, 3}},
}

func TestLayoutMatchesPyTorch(t *testing.T) {
	for _, c := range layoutCases {
		t.Run(c.name, func(t *testing.T) {
			before := c.in.clone()
			got, err := c.op(c.in)
			if !slices.Equal(c.in.Shape, before.Shape) || !slices.Equal(c.in.Strides, before.Strides) || c.in.Offset != before.Offset {
				t.Fatalf("the receiver changed: %v, was %v", c.in, before)
			}
			if c.err != "" {
				var te *Error
				if !errors.As(err, &te) {
					t.Fatalf("got %v, %v; want PyTorch's error %q", got, err, c.err)
				}
				if te.Msg != c.err {
					t.Fatalf("message\n got: %s\nwant: %s", te.Msg, c.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !slices.Equal(got.Shape, c.shape) || !slices.Equal(got.Strides, c.strides) || got.Offset != c.offset {
				t.Fatalf("got %v; want shape %v strides %v offset %d", got, c.shape, c.strides, c.offset)
			}
		})
	}
}

func TestBroadcastShapesMatchesPyTorch(t *testing.T) {
	cases := []struct {
		a, b, want []int
		err        string
	}{
		{a: []int{3, 1}, b: []int{4}, want: []int{3, 4}},
		{a: []int{2, 1, 5}, b: []int{3, 1}, want: []int{2, 3, 5}},
		{a: []int{}, b: []int{2}, want: []int{2}},
		{a: []int{0, 1}, b: []int{1, 3}, want: []int{0, 3}},
		{a: []int{2, 3}, b: []int{4}, err: "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"},
		{a: []int{2, 3, 4}, b: []int{5, 1, 1}, err: "The size of tensor a (2) must match the size of tensor b (5) at non-singleton dimension 0"},
	}
	for _, c := range cases {
		t.Run(formatInts(c.a)+"+"+formatInts(c.b), func(t *testing.T) {
			got, err := BroadcastShapes(c.a, c.b)
			checkShape(t, got, err, c.want, c.err)
		})
	}
}

// checkShape fails the test unless err is nil and got is want or, when
// wantErr is set, err is an *Error whose message is wantErr.
func checkShape(t *testing.T, got []int, err error, want []int, wantErr string) {
	t.Helper()
	if wantErr != "" {
		var te *Error
		if !errors.As(err, &te) || te.Msg != wantErr {
			t.Fatalf("got %v, %v; want error %q", got, err, wantErr)
		}
		return
	}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("got %v, %v; want %v", got, err, want)
	}
}

func TestLayoutPredicates(t *testing.T) {
	cases := []struct {
		name                  string
		l                     Layout
		contiguous, dense, ov bool
		lo, hi                int
	}{
		{"empty(2,3)", contig(2, 3), true, true, false, 0, 6},
		{"empty(2,3).t()", mustLayout(contig(2, 3).T()), false, true, false, 0, 6},
		{"size-1 dim with any stride", Layout{Shape: Shape{2, 1, 3}, Strides: []int{3, 100, 1}}, true, true, false, 0, 6},
		{"empty(4,6)[:, ::2]", mustLayout(contig(4, 6).Slice(1, 0, 6, 2)), false, false, false, 0, 23},
		{"empty(4,6)[1:3]", mustLayout(contig(4, 6).Slice(0, 1, 3, 1)), true, true, false, 6, 18},
		{"empty(3,1).expand(3,4)", mustLayout(contig(3, 1).Expand(3, 4)), false, false, true, 0, 3},
		{"empty(0,3)", contig(0, 3), true, true, false, 0, 0},
		{"tensor(1.)", contig(), true, true, false, 0, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.l.IsContiguous(); got != c.contiguous {
				t.Errorf("IsContiguous = %v, want %v", got, c.contiguous)
			}
			if got := c.l.IsNonOverlappingAndDense(); got != c.dense {
				t.Errorf("IsNonOverlappingAndDense = %v, want %v", got, c.dense)
			}
			if got := c.l.HasInternalOverlap(); got != c.ov {
				t.Errorf("HasInternalOverlap = %v, want %v", got, c.ov)
			}
			if lo, hi := c.l.Span(); lo != c.lo || hi != c.hi {
				t.Errorf("Span = %d, %d; want %d, %d", lo, hi, c.lo, c.hi)
			}
		})
	}
}

func TestReshapeCopiesOnlyWhenViewFails(t *testing.T) {
	cases := []struct {
		name    string
		in      Layout
		shape   []int
		copy    bool
		strides []int
		err     string
	}{
		{name: "empty(2,6).reshape(3,-1)", in: contig(2, 6), shape: []int{3, -1}, strides: []int{4, 1}},
		{name: "empty(3,4).t().reshape(12)", in: mustLayout(contig(3, 4).T()), shape: []int{12}, copy: true, strides: []int{1}},
		{name: "empty(3,4).t().reshape(2,2,3)", in: mustLayout(contig(3, 4).T()), shape: []int{2, 2, 3}, strides: []int{2, 1, 4}},
		{name: "empty(2,3).reshape(5)", in: contig(2, 3), shape: []int{5}, err: "shape '[5]' is invalid for input of size 6"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, cp, err := c.in.Reshape(c.shape...)
			if c.err != "" {
				var te *Error
				if !errors.As(err, &te) || te.Msg != c.err || te.Op != "reshape" {
					t.Fatalf("got %v, %v; want reshape error %q", got, err, c.err)
				}
				return
			}
			if err != nil || cp != c.copy || !slices.Equal(got.Strides, c.strides) {
				t.Fatalf("got %v copy=%v err=%v; want strides %v copy=%v", got, cp, err, c.strides, c.copy)
			}
		})
	}
}

func TestFlattenShape(t *testing.T) {
	cases := []struct {
		name       string
		in         Layout
		start, end int
		want       []int
		err        string
	}{
		{name: "empty(2,3,4).flatten(1,2)", in: contig(2, 3, 4), start: 1, end: 2, want: []int{2, 12}},
		{name: "empty(2,3,4).flatten()", in: contig(2, 3, 4), start: 0, end: -1, want: []int{24}},
		{name: "empty(2,3,4).flatten(1,1)", in: contig(2, 3, 4), start: 1, end: 1, want: []int{2, 3, 4}},
		{name: "tensor(1.).flatten()", in: contig(), start: 0, end: -1, want: []int{1}},
		{name: "empty(2,3,4).flatten(2,1)", in: contig(2, 3, 4), start: 2, end: 1, err: "flatten() has invalid args: start_dim cannot come after end_dim"},
		{name: "empty(2,3,4).flatten(0,3)", in: contig(2, 3, 4), start: 0, end: 3, err: "Dimension out of range (expected to be in range of [-3, 2], but got 3)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.in.FlattenShape(c.start, c.end)
			checkShape(t, got, err, c.want, c.err)
		})
	}
}

func TestContiguousStrides(t *testing.T) {
	cases := []struct{ shape, want []int }{
		{[]int{}, []int{}},
		{[]int{5}, []int{1}},
		{[]int{2, 3, 4}, []int{12, 4, 1}},
		{[]int{2, 0, 4}, []int{4, 4, 1}},
	}
	for _, c := range cases {
		if got := ContiguousStrides(c.shape); !slices.Equal(got, c.want) {
			t.Errorf("ContiguousStrides(%v) = %v, want %v", c.shape, got, c.want)
		}
	}
}

func TestErrorsNameTheirOperation(t *testing.T) {
	_, err := contig(2, 3).Transpose(0, 5)
	if err == nil || err.Error() != "tensor: transpose: Dimension out of range (expected to be in range of [-2, 1], but got 5)" {
		t.Fatalf("got %v", err)
	}
	var te *Error
	if !errors.As(err, &te) || !te.Index {
		t.Fatalf("a dimension out of range is an IndexError in PyTorch: %#v", te)
	}
	if _, err := contig(2, 3).Slice(0, 0, 1, 0); !errors.As(err, &te) || te.Op != "slice" || te.Index {
		t.Fatalf("slice step: %v", err)
	}
}
