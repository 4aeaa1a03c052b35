package ch4

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/tensor"
)

// ViewRow is one operation of [ViewCopies] and what it cost.
type ViewRow struct {
	Op         string // PyTorch's spelling, on x of shape [n, n]
	Copied     bool   // the result has storage of its own
	Bytes      int64  // growth of memory_allocated
	Allocs     int64  // allocator calls
	Shape      tensor.Shape
	Contiguous bool   // the result's is_contiguous()
	Err        string // the error, for an operation PyTorch refuses
}

// ViewResult is the table of [ViewCopies].
type ViewResult struct {
	N    int   // x is N × N float32
	Base int64 // x's bytes
	Rows []ViewRow
}

// viewOps are the operations ViewCopies tries, on x of shape [n, n].
var viewOps = []struct {
	op string
	f  func(x *tensor.Tensor, n int) ([]*tensor.Tensor, error)
}{
	{"x.view(n/2, 2n)", func(x *tensor.Tensor, n int) ([]*tensor.Tensor, error) { return one(x.View(n/2, 2*n)) }},
	{"x.reshape(2n, n/2)", func(x *tensor.Tensor, n int) ([]*tensor.Tensor, error) { return one(x.Reshape(2*n, n/2)) }},
	{"x.flatten()", func(x *tensor.Tensor, n int) ([]*tensor.Tensor, error) { return one(x.Flatten(0, -1)) }},
	{"x.contiguous()", func(x *tensor.Tensor, n int) ([]*tensor.Tensor, error) { return one(x.Contiguous()) }},
	{"x[:n/4]", func(x *tensor.Tensor, n int) ([]*tensor.Tensor, error) { return one(x.Narrow(0, 0, n/4)) }},
	{"x.t()", func(x *tensor.Tensor, n int) ([]*tensor.Tensor, error) { return one(x.T()) }},
	{"x.t().view(-1)", func(x *tensor.Tensor, n int) ([]*tensor.Tensor, error) {
		return chain(x.T, func(t *tensor.Tensor) (*tensor.Tensor, error) { return t.View(-1) })
	}},
	{"x.t().reshape(-1)", func(x *tensor.Tensor, n int) ([]*tensor.Tensor, error) {
		return chain(x.T, func(t *tensor.Tensor) (*tensor.Tensor, error) { return t.Reshape(-1) })
	}},
	{"x.t().contiguous()", func(x *tensor.Tensor, n int) ([]*tensor.Tensor, error) {
		return chain(x.T, (*tensor.Tensor).Contiguous)
	}},
	{"x[:, ::2]", func(x *tensor.Tensor, n int) ([]*tensor.Tensor, error) { return one(x.Slice(1, 0, n, 2)) }},
	{"x[:, ::2].contiguous()", func(x *tensor.Tensor, n int) ([]*tensor.Tensor, error) {
		return chain(func() (*tensor.Tensor, error) { return x.Slice(1, 0, n, 2) }, (*tensor.Tensor).Contiguous)
	}},
	{"x.expand(4, n, n)", func(x *tensor.Tensor, n int) ([]*tensor.Tensor, error) { return one(x.Expand(4, n, n)) }},
	{"x.expand(4, n, n).contiguous()", func(x *tensor.Tensor, n int) ([]*tensor.Tensor, error) {
		return chain(func() (*tensor.Tensor, error) { return x.Expand(4, n, n) }, (*tensor.Tensor).Contiguous)
	}},
	{"x.view(4, n/4, n).permute(1, 0, 2).reshape(n/4, 4n)", func(x *tensor.Tensor, n int) ([]*tensor.Tensor, error) {
		return chain(func() (*tensor.Tensor, error) { return x.View(4, n/4, n) },
			func(t *tensor.Tensor) (*tensor.Tensor, error) { return t.Permute(1, 0, 2) },
			func(t *tensor.Tensor) (*tensor.Tensor, error) { return t.Reshape(n/4, 4*n) })
	}},
}

// one wraps a single result.
func one(t *tensor.Tensor, err error) ([]*tensor.Tensor, error) {
	if err != nil {
		return nil, err
	}
	return []*tensor.Tensor{t}, nil
}

// chain applies steps in turn and returns every intermediate, the result
// last, so that the caller measures before releasing them.
func chain(first func() (*tensor.Tensor, error), steps ...func(*tensor.Tensor) (*tensor.Tensor, error)) ([]*tensor.Tensor, error) {
	t, err := first()
	if err != nil {
		return nil, err
	}
	out := []*tensor.Tensor{t}
	for _, step := range steps {
		if t, err = step(t); err != nil {
			return out, err
		}
		out = append(out, t)
	}
	return out, nil
}

// ViewCopies applies view, reshape, flatten, contiguous, slicing, transpose,
// expand and permute to an n × n float32 tensor x (n a multiple of 4) and
// records for each whether it copied: the bytes and allocator calls it cost
// and whether the result still shares x's storage.
func ViewCopies(s Setup, n int) (res ViewResult, err error) {
	if n < 4 || n%4 != 0 {
		return res, fmt.Errorf("ch4: ViewCopies: n = %d, need a positive multiple of 4", n)
	}
	b, err := s.Open()
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, b.Close()) }()
	x, err := tensor.Randn(b, 1, tensor.Float32, n, n)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, x.Release()) }()
	res.N, res.Base = n, x.Nbytes()
	for _, v := range viewOps {
		before, c0 := b.MemoryAllocated(), b.counters()
		ts, opErr := v.f(x, n)
		row := ViewRow{Op: v.op, Bytes: b.MemoryAllocated() - before, Allocs: b.counters().since(c0).allocs}
		if opErr != nil {
			var te *tensor.Error
			if !errors.As(opErr, &te) {
				return res, errors.Join(fmt.Errorf("ch4: ViewCopies: %s: %w", v.op, opErr), tensor.ReleaseLive(ts...))
			}
			row.Err = te.Msg
		} else {
			t := ts[len(ts)-1]
			row.Copied = !t.SharesStorage(x)
			row.Shape = t.Shape()
			row.Contiguous = t.IsContiguous()
		}
		res.Rows = append(res.Rows, row)
		if err := tensor.ReleaseLive(ts...); err != nil {
			return res, err
		}
	}
	return res, nil
}

// Row returns the row of op, or false.
func (r ViewResult) Row(op string) (ViewRow, bool) {
	for _, row := range r.Rows {
		if row.Op == op {
			return row, true
		}
	}
	return ViewRow{}, false
}

// String prints the table.
func (r ViewResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "x = torch.randn(n, n), n = %d: %s\n", r.N, mib(r.Base))
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "operation\tcopies?\tallocated\tallocs\tresult\t")
	for _, row := range r.Rows {
		if row.Err != "" {
			msg := row.Err
			if len(msg) > 70 {
				msg = msg[:70] + "…"
			}
			fmt.Fprintf(w, "%s\terror\t-\t-\t%s\t\n", row.Op, msg)
			continue
		}
		what := "view"
		if row.Copied {
			what = "COPY"
		}
		layout := "contiguous"
		if !row.Contiguous {
			layout = "strided"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%v %s\t\n", row.Op, what, mib(row.Bytes), row.Allocs, row.Shape, layout)
	}
	w.Flush()
	return b.String()
}

// Plot draws the bytes each operation allocated.
func (r ViewResult) Plot() (*memplot.Figure, error) {
	var groups []string
	vals := memplot.BarSeries{Name: "allocated"}
	for _, row := range r.Rows {
		if row.Err != "" {
			continue
		}
		groups = append(groups, row.Op)
		vals.Values = append(vals.Values, float64(row.Bytes)/MiB)
	}
	f, err := memplot.Bars("4.2 which operations copy: MiB allocated per operation", "MiB allocated", groups, vals)
	if err != nil {
		return nil, err
	}
	f.LabelX(groups...)
	return f, nil
}
