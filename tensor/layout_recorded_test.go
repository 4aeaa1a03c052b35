package tensor

import (
	_ "embed"
	"encoding/json"
	"slices"
	"testing"
)

// pytorchLayouts is embedded so that the test binary also runs where the
// source tree is not, such as on the GPU machine.
//
//go:embed testdata/pytorch-layouts.json
var pytorchLayouts []byte

// recordedLayout is what real PyTorch answered for one case of layoutCases,
// as tensor/testdata/pytorch_layouts.py recorded it.
type recordedLayout struct {
	Shape   []int  `json:"shape"`
	Strides []int  `json:"strides"`
	Offset  int    `json:"offset"`
	Error   string `json:"error"`
	Skip    string `json:"skip"`
}

// TestLayoutCasesAgreeWithPyTorch checks the expectations of layoutCases against
// what PyTorch 2.11 answered for the same expressions, so that the table cannot
// drift from PyTorch: shapes, strides, offsets, and error messages.
func TestLayoutCasesAgreeWithPyTorch(t *testing.T) {
	var rec struct {
		Torch string                    `json:"torch"`
		Cases map[string]recordedLayout `json:"cases"`
	}
	if err := json.Unmarshal(pytorchLayouts, &rec); err != nil {
		t.Fatal(err)
	}
	for _, c := range layoutCases {
		r, ok := rec.Cases[c.name]
		if !ok {
			t.Errorf("%s: not recorded: run tensor/testdata/pytorch_layouts.py where torch is installed", c.name)
			continue
		}
		switch {
		case r.Skip != "":
			t.Errorf("%s: PyTorch could not evaluate it (%s): name the case by a Python expression", c.name, r.Skip)
		case c.err != "" && r.Error == "":
			t.Errorf("%s: the table expects the error %q, PyTorch %s returned shape %v strides %v offset %d", c.name, c.err, rec.Torch, r.Shape, r.Strides, r.Offset)
		case c.err != "" && r.Error != c.err:
			t.Errorf("%s: message\n table:   %s\n PyTorch: %s", c.name, c.err, r.Error)
		case c.err == "" && r.Error != "":
			t.Errorf("%s: the table expects success, PyTorch %s raised %q", c.name, rec.Torch, r.Error)
		case c.err == "" && (!slices.Equal(c.shape, r.Shape) || !slices.Equal(c.strides, r.Strides) || c.offset != r.Offset):
			t.Errorf("%s: table shape %v strides %v offset %d, PyTorch shape %v strides %v offset %d", c.name, c.shape, c.strides, c.offset, r.Shape, r.Strides, r.Offset)
		}
	}
}
