package tensor

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/internal/fidelity"
	"memlab.dev/memlab/reference"
)

// layoutChain is one random chain of view operations and PyTorch's answer at
// every step, as scripts/record/fidelity_layouts.py recorded them.
type layoutChain struct {
	ID    int `json:"id"`
	Start struct {
		Shape   []int `json:"shape"`
		Strides []int `json:"strides"`
		Offset  int   `json:"offset"`
	} `json:"start"`
	Steps []layoutStep `json:"steps"`
}

type layoutStep struct {
	Op         string `json:"op"`
	Args       []int  `json:"args"`
	Expr       string `json:"expr"`
	Shape      []int  `json:"shape"`
	Strides    []int  `json:"strides"`
	Offset     int    `json:"offset"`
	Contiguous bool   `json:"contiguous"`
	View       bool   `json:"view"`
	Error      string `json:"error"`
	Type       string `json:"type"`
}

// knownLayoutMismatches lists the recorded steps where tensor.Layout
// deliberately differs from PyTorch, by "chain N step K", with the reason.
var knownLayoutMismatches = map[string]string{
	// x[::2**40][::2**40] on a dimension of at most one element: the stride
	// times the step overflows int64; PyTorch keeps the wrapped product (here
	// 0), memlab the old stride (Layout.Slice: a stride that addresses nothing,
	// and never a negative one).
	"chain 2324 step 3": "stride × step overflows int64 on a dimension of at most one element",
}

// applyLayoutOp runs one recorded step on l: the result, whether it is a view
// of l (false: a copy in new memory), or the error.
// typeName is how PyTorch's expand message names the recorded tensors' type
// (uint8 on the recording's device).
func applyLayoutOp(l Layout, typeName, op string, a []int) (Layout, bool, error) {
	arg := func(n int) error {
		if len(a) != n {
			return fmt.Errorf("%s takes %d arguments, the record has %v", op, n, a)
		}
		return nil
	}
	view := func(out Layout, err error) (Layout, bool, error) { return out, true, err }
	switch op {
	case "view":
		return view(l.View(a...))
	case "reshape":
		out, cp, err := l.Reshape(a...)
		return out, !cp, err
	case "flatten":
		if err := arg(2); err != nil {
			return Layout{}, false, err
		}
		out, cp, err := l.Flatten(a[0], a[1])
		return out, !cp, err
	case "transpose":
		if err := arg(2); err != nil {
			return Layout{}, false, err
		}
		return view(l.Transpose(a[0], a[1]))
	case "t":
		return view(l.T())
	case "permute":
		return view(l.Permute(a...))
	case "narrow":
		if err := arg(3); err != nil {
			return Layout{}, false, err
		}
		return view(l.Narrow(a[0], a[1], a[2]))
	case "slice":
		if err := arg(4); err != nil {
			return Layout{}, false, err
		}
		return view(l.Slice(a[0], a[1], a[2], a[3]))
	case "select":
		if err := arg(2); err != nil {
			return Layout{}, false, err
		}
		return view(l.Select(a[0], a[1]))
	case "squeeze":
		return view(l.Squeeze(a...))
	case "unsqueeze":
		if err := arg(1); err != nil {
			return Layout{}, false, err
		}
		return view(l.Unsqueeze(a[0]))
	case "expand":
		return view(l.expand(typeName+"{"+l.Shape.String()+"}", a))
	case "contiguous":
		if l.IsContiguous() {
			return l, true, nil
		}
		return ContiguousLayout(l.Shape...), false, nil
	case "clone":
		return CloneLayout(l), false, nil
	}
	return Layout{}, false, fmt.Errorf("unknown op %q in the record", op)
}

// TestLayoutChainsMatchPyTorch replays every random chain of view operations
// PyTorch 2.11 answered (reference/fidelity-2.11/layouts.jsonl.gz) through
// tensor.Layout: shape, strides, offset, contiguity, view or copy, and for a
// rejected step the error's text and kind (IndexError or not).
func TestLayoutChainsMatchPyTorch(t *testing.T) {
	path, err := reference.File(reference.Fidelity211, "layouts.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	h, chains, err := fidelity.Read[layoutChain](path)
	if err != nil {
		t.Fatal(err)
	}
	tally := fidelity.Tally{Suite: "layouts", Known: knownLayoutMismatches}
	typeName := torchTypeName(Uint8)
	if h.Device == "cpu" { // a dry run of the recorder on a machine without a GPU
		typeName = "torch.ByteTensor"
	}
	for _, c := range chains {
		l := Layout{Shape: c.Start.Shape, Strides: c.Start.Strides, Offset: c.Start.Offset}
		repro := []string{fmt.Sprintf("x = torch.empty(1 << 24, dtype=torch.uint8).as_strided(%s, %s, %d)", pyTuple(c.Start.Shape), pyTuple(c.Start.Strides), c.Start.Offset)}
		for k, s := range c.Steps {
			out, isView, err := applyLayoutOp(l, typeName, s.Op, s.Args)
			diff := compareLayoutStep(s, out, isView, err)
			key := fmt.Sprintf("chain %d step %d", c.ID, k)
			if diff != "" {
				diff += "\n reproducer:\n   " + strings.Join(append(repro, s.Expr), "\n   ")
			}
			tally.Case(key, diff)
			if err == nil && s.Error == "" {
				repro = append(repro, "x = "+s.Expr)
				l = Layout{Shape: s.Shape, Strides: s.Strides, Offset: s.Offset} // go on from PyTorch's
			}
		}
	}
	tally.Check(t, h.Torch)
}

func compareLayoutStep(s layoutStep, out Layout, isView bool, err error) string {
	if s.Error != "" {
		var te *Error
		switch {
		case err == nil:
			return fmt.Sprintf("PyTorch raised %s %q, memlab gave %v", s.Type, s.Error, out)
		case !errors.As(err, &te):
			return fmt.Sprintf("PyTorch raised %s %q, memlab failed otherwise: %v", s.Type, s.Error, err)
		case te.Msg != s.Error || te.Index != (s.Type == "IndexError"):
			kind := "RuntimeError"
			if te.Index {
				kind = "IndexError"
			}
			return fmt.Sprintf("message\n   PyTorch: %s %s\n   memlab:  %s %s", s.Type, s.Error, kind, te.Msg)
		}
		return ""
	}
	if err != nil {
		return fmt.Sprintf("PyTorch gave shape %v strides %v offset %d, memlab failed: %v", s.Shape, s.Strides, s.Offset, err)
	}
	if !slices.Equal(out.Shape, s.Shape) || !slices.Equal(out.Strides, s.Strides) || out.Offset != s.Offset || out.IsContiguous() != s.Contiguous || isView != s.View {
		return fmt.Sprintf("\n   PyTorch: shape %v strides %v offset %d contiguous %v view %v\n   memlab:  shape %v strides %v offset %d contiguous %v view %v",
			s.Shape, s.Strides, s.Offset, s.Contiguous, s.View, []int(out.Shape), out.Strides, out.Offset, out.IsContiguous(), isView)
	}
	return ""
}

// pyTuple writes v as a Python tuple: (2,) for one element.
func pyTuple(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	if len(v) == 1 {
		return "(" + s[0] + ",)"
	}
	return "(" + strings.Join(s, ", ") + ")"
}
