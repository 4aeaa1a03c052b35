package tensor

import (
	"slices"
	"testing"
)

// The expected strides are PyTorch's for the same expressions
// (x = torch.empty(...) unless stated).
func TestOutputLayoutsMatchPyTorch(t *testing.T) {
	tr := mustLayout(contig(3, 4).T())                                      // empty(3,4).t(): [4, 3] strides [1, 4]
	stepped := mustLayout(contig(4, 6).Slice(1, 0, 6, 2))                   // empty(4,6)[:, ::2]: [4, 3] strides [6, 2]
	trStepped := mustLayout(mustLayout(contig(6, 4).T()).Slice(1, 0, 6, 2)) // empty(6,4).t()[:, ::2]: [4, 3] strides [1, 8]
	cases := []struct {
		name    string
		got     Layout
		strides []int
	}{
		{"x.t().relu()", ElementwiseLayout(Shape{4, 3}, tr), []int{1, 4}},
		{"x[:, ::2].relu()", ElementwiseLayout(Shape{4, 3}, stepped), []int{3, 1}},
		{"x.t()[:, ::2].relu()", ElementwiseLayout(Shape{4, 3}, trStepped), []int{1, 4}},
		{"x.t() + y", ElementwiseLayout(Shape{4, 3}, tr, contig(4, 3)), []int{1, 4}},
		{"y + x.t()", ElementwiseLayout(Shape{4, 3}, contig(4, 3), tr), []int{3, 1}},
		{"x.t() + empty(3)", ElementwiseLayout(Shape{4, 3}, tr, contig(3)), []int{1, 4}},
		{"empty(3) + x.t()", ElementwiseLayout(Shape{4, 3}, contig(3), tr), []int{1, 4}},
		{"x.t() + x.t()", ElementwiseLayout(Shape{4, 3}, tr, tr), []int{1, 4}},
		{"empty(4,1) + empty(3)", ElementwiseLayout(Shape{4, 3}, contig(4, 1), contig(3)), []int{3, 1}},
		{"empty(2,1,3) with odd size-1 stride, relu", ElementwiseLayout(Shape{2, 1, 3}, Layout{Shape: Shape{2, 1, 3}, Strides: []int{3, 100, 1}}), []int{3, 3, 1}},
		{"x.t().clone()", CloneLayout(tr), []int{1, 4}},
		{"x[:, ::2].clone()", CloneLayout(stepped), []int{3, 1}},
		{"x.t()[:, ::2].clone()", CloneLayout(trStepped), []int{1, 4}},
		{"empty(2,1,3) with odd size-1 stride, clone", CloneLayout(Layout{Shape: Shape{2, 1, 3}, Strides: []int{3, 100, 1}}), []int{3, 100, 1}},
		{"empty(3,1).expand(3,4).clone()", CloneLayout(mustLayout(contig(3, 1).Expand(3, 4))), []int{4, 1}},
		{"empty(2,3,4).permute(2,0,1)[::2].clone()", CloneLayout(mustLayout(mustLayout(contig(2, 3, 4).Permute(2, 0, 1)).Slice(0, 0, 4, 2))), []int{1, 6, 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !slices.Equal(c.got.Strides, c.strides) || c.got.Offset != 0 {
				t.Fatalf("got %v, want strides %v", c.got, c.strides)
			}
		})
	}
}
