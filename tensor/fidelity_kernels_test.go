package tensor_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/internal/fidelity"
	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/tensor"
)

// kernelCase is one case of scripts/record/fidelity_kernels.py: an operation
// on inputs made by chains of views over base tensors, and PyTorch's output
// (shape, strides, values) or error.
type kernelCase struct {
	ID      int           `json:"id"`
	Op      string        `json:"op"`
	Args    []any         `json:"args"`
	Inputs  []kernelInput `json:"inputs"`
	Shape   []int         `json:"shape"`
	Strides []int         `json:"strides"`
	Values  []any         `json:"values"` // numbers, or "nan", "inf", "-inf"
	Error   string        `json:"error"`
	Type    string        `json:"type"`
}

type kernelInput struct {
	Shape []int   `json:"shape"`
	Views [][]any `json:"views"` // [op, int args...]
}

// baseValue is element i of every base tensor (the recorder's base_value):
// multiples of 1/16, exact in float32.
func baseValue(i int) float32 { return float32((i*37)%101-48) / 16 }

// knownKernelMismatches lists recorded cases (by "case N") where memlab's
// kernels differ from PyTorch, with the reason.
var knownKernelMismatches = map[string]string{}

// TestKernelsMatchPyTorch runs every operation memlab's kernels implement on
// the odd layouts PyTorch 2.11 ran them on (reference/fidelity-2.11/
// kernels.jsonl.gz: transposed, stepped, expanded and zero-size inputs) and
// compares the output's shape, strides and values (to 1e-4 relative: float32
// kernels round differently) or the error's message.
func TestKernelsMatchPyTorch(t *testing.T) {
	path, err := reference.File(reference.Fidelity211, "kernels.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	h, cases, err := fidelity.Read[kernelCase](path)
	if err != nil {
		t.Fatal(err)
	}
	dev := newTestDevice()
	tally := fidelity.Tally{Suite: "kernels", Known: knownKernelMismatches}
	for _, c := range cases {
		diff := runKernelCase(dev, c)
		if diff != "" {
			diff += "\n reproducer: " + kernelRepro(c)
		}
		tally.Case(fmt.Sprintf("case %d", c.ID), diff)
	}
	tally.Check(t, h.Torch)
	if n := dev.live(); n != 0 {
		t.Errorf("%d allocations still live after every case released its tensors", n)
	}
}

// runKernelCase runs c on dev and returns what differs from PyTorch ("" when
// nothing does). It releases every tensor it made.
func runKernelCase(dev tensor.Device, c kernelCase) string {
	var made []*tensor.Tensor
	defer func() {
		for _, x := range made {
			x.Release()
		}
	}()
	keep := func(x *tensor.Tensor, err error) (*tensor.Tensor, error) {
		if x != nil {
			made = append(made, x)
		}
		return x, err
	}
	var ins []*tensor.Tensor
	for k, in := range c.Inputs {
		n := 1
		for _, s := range in.Shape {
			n *= s
		}
		data := make([]float32, n)
		for i := range data {
			data[i] = baseValue(i)
		}
		x, err := keep(tensor.FromFloat32(dev, data, append([]int{}, in.Shape...)...))
		if err != nil {
			return fmt.Sprintf("input %d: %v", k, err)
		}
		for _, v := range in.Views {
			if x, err = keep(applyView(x, v)); err != nil {
				return fmt.Sprintf("input %d: view %v: %v", k, v, err)
			}
		}
		ins = append(ins, x)
	}
	out, err := keep(runKernel(c.Op, c.Args, ins))
	if c.Error != "" {
		var te *tensor.Error
		switch {
		case err == nil:
			return fmt.Sprintf("PyTorch raised %s %q, memlab gave shape %v", c.Type, c.Error, out.Shape())
		case !errors.As(err, &te):
			return fmt.Sprintf("PyTorch raised %s %q, memlab failed otherwise: %v", c.Type, c.Error, err)
		case te.Msg != c.Error:
			return fmt.Sprintf("message\n   PyTorch: %s\n   memlab:  %s", c.Error, te.Msg)
		}
		return ""
	}
	if err != nil {
		return fmt.Sprintf("PyTorch gave shape %v, memlab failed: %v", c.Shape, err)
	}
	if !slices.Equal([]int(out.Shape()), c.Shape) || !slices.Equal(out.Strides(), c.Strides) {
		return fmt.Sprintf("layout: PyTorch shape %v strides %v, memlab shape %v strides %v", c.Shape, c.Strides, out.Shape(), out.Strides())
	}
	got, err := out.Float64s()
	if err != nil {
		return err.Error()
	}
	if len(got) != len(c.Values) {
		return fmt.Sprintf("%d values, PyTorch %d", len(got), len(c.Values))
	}
	for i, w := range c.Values {
		want, ok := w.(float64)
		if !ok {
			s, _ := w.(string)
			switch s {
			case "nan":
				want = math.NaN()
			case "inf":
				want = math.Inf(1)
			case "-inf":
				want = math.Inf(-1)
			default:
				return fmt.Sprintf("value %d: %v in the record", i, w)
			}
		}
		if !nearValue(got[i], want) {
			return fmt.Sprintf("value %d (of %d): PyTorch %v, memlab %v", i, len(got), want, got[i])
		}
	}
	return ""
}

func nearValue(got, want float64) bool {
	if math.IsNaN(want) || math.IsInf(want, 0) {
		return math.IsNaN(got) == math.IsNaN(want) && (math.IsNaN(want) || got == want)
	}
	return math.Abs(got-want) <= 1e-5+1e-4*math.Abs(want)
}

func ints(a []any) []int {
	out := make([]int, len(a))
	for i, v := range a {
		f, _ := v.(float64)
		out[i] = int(f)
	}
	return out
}

func applyView(x *tensor.Tensor, v []any) (*tensor.Tensor, error) {
	op, _ := v[0].(string)
	a := ints(v[1:])
	need := map[string]int{"transpose": 2, "slice": 4, "narrow": 3, "select": 2, "unsqueeze": 1}
	if n, ok := need[op]; ok && len(a) != n {
		return nil, fmt.Errorf("%s takes %d arguments, the record has %v", op, n, a)
	}
	switch op {
	case "transpose":
		return x.Transpose(a[0], a[1])
	case "permute":
		return x.Permute(a...)
	case "slice":
		return x.Slice(a[0], a[1], a[2], a[3])
	case "narrow":
		return x.Narrow(a[0], a[1], a[2])
	case "select":
		return x.Select(a[0], a[1])
	case "unsqueeze":
		return x.Unsqueeze(a[0])
	case "expand":
		return x.Expand(a...)
	}
	return nil, fmt.Errorf("unknown view %q in the record", op)
}

func runKernel(op string, args []any, in []*tensor.Tensor) (*tensor.Tensor, error) {
	num := func(i int) float64 {
		if i < len(args) {
			f, _ := args[i].(float64)
			return f
		}
		return 0
	}
	flag := func(i int) bool {
		if i < len(args) {
			b, _ := args[i].(bool)
			return b
		}
		return false
	}
	need := map[string]int{"add": 2, "sub": 2, "mul": 2, "div": 2, "matmul": 2, "cat": 2, "layer_norm": 3}
	if n := max(need[op], 1); len(in) != n {
		return nil, fmt.Errorf("%s takes %d inputs, the record has %d", op, n, len(in))
	}
	x := in[0]
	switch op {
	case "relu":
		return x.Relu()
	case "gelu":
		return x.Gelu()
	case "exp":
		return x.Exp()
	case "neg":
		return x.Neg()
	case "scale":
		return x.Scale(num(0))
	case "add":
		return x.Add(in[1])
	case "sub":
		return x.Sub(in[1])
	case "mul":
		return x.Mul(in[1])
	case "div":
		return x.Div(in[1])
	case "sum":
		return x.Sum(int(num(0)), flag(1))
	case "max":
		return x.Max(int(num(0)), flag(1))
	case "softmax":
		return x.Softmax(int(num(0)))
	case "layer_norm":
		return x.LayerNorm(in[1], in[2], num(0))
	case "matmul":
		return x.Matmul(in[1])
	case "clone":
		return x.Clone()
	case "contiguous":
		return x.Contiguous()
	case "cat":
		return tensor.Cat([]*tensor.Tensor{x, in[1]}, int(num(0)))
	}
	return nil, fmt.Errorf("unknown operation %q in the record", op)
}

// kernelRepro is the case as Python.
func kernelRepro(c kernelCase) string {
	var b strings.Builder
	b.WriteString("base = lambda *s: torch.tensor([((i*37)%101-48)/16 for i in range(math.prod(s))], device='cuda').reshape(s); ")
	for k, in := range c.Inputs {
		fmt.Fprintf(&b, "x%d = base(%s)", k, strings.Trim(fmt.Sprint(in.Shape), "[]"))
		for _, v := range in.Views {
			fmt.Fprintf(&b, ".%v(%s)", v[0], strings.Trim(fmt.Sprint(ints(v[1:])), "[]"))
		}
		b.WriteString("; ")
	}
	fmt.Fprintf(&b, "%s%v", c.Op, c.Args)
	return b.String()
}
