package nb04

import (
	"errors"
	"fmt"

	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/tensor"
)

/*md
## 4.2 Views (视图)

A view is new metadata over the same storage; a copy is a new allocation. The chapter's
example: `y = x.view(3, 4)`, then `y[0, 0] = 999` — and `x` has changed too.
*/

//nb:cell
func viewWriteThrough() {
	l := memlab.MustOpen()
	defer l.Close()
	v := memlab.Must(tensor.Full(l, tensor.Float32, 999))        // the Python scalar
	x := memlab.Must(tensor.Arange(l, tensor.Float32, 0, 12, 1)) // x = torch.arange(12.)
	base := l.MemoryAllocated()
	y := memlab.Must(x.View(3, 4)) // y = x.view(3, 4)
	row := memlab.Must(y.Select(0, 0))
	y00 := memlab.Must(row.Select(0, 0)) // y[0, 0], a 0-d view
	memlab.Check(y00.CopyFrom(v))        // y[0, 0] = 999
	fmt.Println("x =", memlab.Must(x.Float32s()))
	fmt.Printf("y shares x's storage: %v; x._version %d, y._version %d\n", y.SharesStorage(x), x.Version(), y.Version())
	memlab.Measured("writing y[0, 0] changed x[0] to %v; the views allocated %s", first(x), memlab.FormatBytes(l.MemoryAllocated()-base))
	memlab.Check(tensor.ReleaseAll(v, y00, row, y, x))
}

/*md
Views share one version counter with their base, as in PyTorch: the write through `y`
bumps `x._version` too, which is how autograd notices an in-place change made through a
view.

**Try it:** take `y := x.Slice(0, 0, 12, 3)` (`x[::3]`, four elements) and write
`y[1] = 999`: it is `x[3]` that changes.

### Which operations copy

Whether an operation copies depends on the layout it is given, not on its name. Each row
below runs one operation on a 1024 × 1024 float32 `x` (4 MiB) and reads
`memory_allocated` before and after.
*/

// viewOp is one operation of the table: PyTorch's spelling and the calls.
//
//nb:decl
type viewOp struct {
	expr string
	f    func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error)
}

// viewOps are the operations 4.2 compares, on x of shape [n, n], n = 1024.
var viewOps = []viewOp{
	{"x.view(512, 2048)", func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error) { return x.View(512, 2048) }},
	{"x.reshape(2048, 512)", func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error) { return x.Reshape(2048, 512) }},
	{"x.flatten()", func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error) { return x.Flatten(0, -1) }},
	{"x[:256]", func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error) { return x.Narrow(0, 0, 256) }},
	{"x.t()", func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error) { return x.T() }},
	{"x.t().view(-1)", func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error) {
		return memlab.Must(s.Track(x.T())).View(-1)
	}},
	{"x.t().reshape(-1)", func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error) {
		return memlab.Must(s.Track(x.T())).Reshape(-1)
	}},
	{"x.t().contiguous()", func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error) {
		return memlab.Must(s.Track(x.T())).Contiguous()
	}},
	{"x[:, ::2]", func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error) { return x.Slice(1, 0, 1024, 2) }},
	{"x[:, ::2].view(1024, 256, 2)", func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error) {
		return memlab.Must(s.Track(x.Slice(1, 0, 1024, 2))).View(1024, 256, 2)
	}},
	{"x[:, ::2].contiguous()", func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error) {
		return memlab.Must(s.Track(x.Slice(1, 0, 1024, 2))).Contiguous()
	}},
	{"x.expand(4, n, n)", func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error) { return x.Expand(4, 1024, 1024) }},
	{"x.expand(4, n, n).contiguous()", func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error) {
		return memlab.Must(s.Track(x.Expand(4, 1024, 1024))).Contiguous()
	}},
}

//nb:cell plot
func viewCopies() {
	l := memlab.MustOpen()
	defer l.Close()
	x := memlab.Must(tensor.Randn(l, 1, tensor.Float32, 1024, 1024))
	tab := memlab.NewTable("operation", "allocated", "shares x's storage", "contiguous", "error")
	var names []string
	copied := memplot.BarSeries{Name: "allocated"}
	for _, op := range viewOps {
		s := tensor.NewScope()
		before := l.MemoryAllocated()
		y, err := op.f(x, s)
		grew := l.MemoryAllocated() - before
		var te *tensor.Error
		switch {
		case errors.As(err, &te):
			tab.Row(op.expr, memlab.FormatBytes(grew), "", "", te.Msg)
		case err != nil:
			panic(err)
		default:
			tab.Row(op.expr, memlab.FormatBytes(grew), y.SharesStorage(x), y.IsContiguous(), "")
			memlab.Check(y.Release())
		}
		memlab.Check(s.Release())
		names, copied.Values = append(names, op.expr), append(copied.Values, float64(grew)/(1<<20))
	}
	tab.Show()
	memlab.Show(memplot.Bars("4.2 memory each operation allocates (x is 4 MiB)", "MiB", names, copied))
	memlab.Check(x.Release())
}

/*md
Each copy is exactly one allocator call of the result's size; everything else, `t()`, the
strided slice and `expand` included, is metadata. `x.t().view(-1)` is refused with
PyTorch's message, and `reshape` copies instead.

**The chapter says** `view()` needs a contiguous tensor. **PyTorch does** something
finer: `view` succeeds whenever the new shape can be expressed with strides over the old
ones — `x[:, ::2]` is not contiguous, yet `x[:, ::2].view(1024, 256, 2)` succeeds in
PyTorch 2.11, and memlab's view follows the same rule. The next cell prints the strides.
*/

//nb:cell
func viewNonContiguous() {
	l := memlab.MustOpen()
	defer l.Close()
	x := memlab.Must(tensor.Randn(l, 1, tensor.Float32, 1024, 1024))
	half := memlab.Must(x.Slice(1, 0, 1024, 2)) // x[:, ::2]
	v, err := half.View(1024, 256, 2)
	memlab.Check(err)
	fmt.Printf("x[:, ::2]: shape %v strides %v contiguous %v\n", half.Shape(), half.Strides(), half.IsContiguous())
	fmt.Printf("x[:, ::2].view(1024, 256, 2): shape %v strides %v, shares storage %v\n", v.Shape(), v.Strides(), v.SharesStorage(x))
	t := memlab.Must(x.T())
	_, err = t.View(-1)
	memlab.Measured("view of the non-contiguous x[:, ::2] succeeded: %v; x.t().view(-1) refused: %v", v.SharesStorage(x), err != nil)
	fmt.Println("x.t().view(-1):", err)
	memlab.Check(tensor.ReleaseAll(t, v, half, x))
}

/*md
A view fails only when one new dimension would have to span old dimensions whose strides
do not line up — `x.t()`'s elements in row order are not at one stride.

**Try it:** `half.View(-1)` succeeds too: the rows of `x[:, ::2]` lie exactly one row
stride apart (1024 = 512 × 2), so the whole slice is one run of stride 2. Then take
`half := memlab.Must(x.Narrow(1, 0, 512))` (`x[:, :512]`) instead: its rows are not one
run, and `View(-1)` is refused with the message above.
*/
