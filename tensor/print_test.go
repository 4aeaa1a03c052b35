package tensor_test

import (
	_ "embed"
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"memlab.dev/memlab/tensor"
)

// The expected strings are what PyTorch prints for the same tensor on cuda:0
// (a non-default device, so the device suffix is always shown).
func TestStringMatchesPyTorch(t *testing.T) {
	dev := newTestDevice()
	f32 := func(v []float32, shape ...int) func() (*tensor.Tensor, error) {
		return func() (*tensor.Tensor, error) { return tensor.FromFloat32(dev, v, shape...) }
	}
	of := func(dt tensor.DType, v []float64, shape ...int) func() (*tensor.Tensor, error) {
		return func() (*tensor.Tensor, error) { return tensor.FromFloat64(dev, dt, v, shape...) }
	}
	cases := []struct {
		name string // the PyTorch expression
		make func() (*tensor.Tensor, error)
		want string
	}{
		{"tensor([[1., 2.], [3., 4.]])", f32([]float32{1, 2, 3, 4}, 2, 2), "tensor([[1., 2.],\n        [3., 4.]], device='cuda:0')"},
		{"tensor([0.1, 2.5])", f32([]float32{0.1, 2.5}), "tensor([0.1000, 2.5000], device='cuda:0')"},
		{"tensor([-1.5, 2.25])", f32([]float32{-1.5, 2.25}), "tensor([-1.5000,  2.2500], device='cuda:0')"},
		{"tensor([1e-5, 1.])", f32([]float32{1e-5, 1}), "tensor([1.0000e-05, 1.0000e+00], device='cuda:0')"},
		{"tensor([1., 1e9])", f32([]float32{1, 1e9}), "tensor([1.0000e+00, 1.0000e+09], device='cuda:0')"},
		{"tensor(3.5)", func() (*tensor.Tensor, error) { return tensor.Full(dev, tensor.Float32, 3.5) }, "tensor(3.5000, device='cuda:0')"},
		{"zeros(3)", of(tensor.Float32, []float64{0, 0, 0}), "tensor([0., 0., 0.], device='cuda:0')"},
		{"tensor([nan, inf, 1.])", of(tensor.Float32, []float64{nan(), posInf, 1}), "tensor([nan, inf, 1.], device='cuda:0')"},
		{"tensor([nan, 0.5])", of(tensor.Float32, []float64{nan(), 0.5}), "tensor([   nan, 0.5000], device='cuda:0')"},
		{"arange(10)", func() (*tensor.Tensor, error) { return tensor.Arange(dev, tensor.Int64, 0, 10, 1) }, "tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], device='cuda:0')"},
		{"tensor([1, -20, 3], dtype=int32)", of(tensor.Int32, []float64{1, -20, 3}), "tensor([  1, -20,   3], device='cuda:0', dtype=torch.int32)"},
		{"tensor([True, False])", of(tensor.Bool, []float64{1, 0}), "tensor([ True, False], device='cuda:0')"},
		{"tensor([1., 2.], dtype=float16)", of(tensor.Float16, []float64{1, 2}), "tensor([1., 2.], device='cuda:0', dtype=torch.float16)"},
		{"tensor([0.1], dtype=bfloat16)", of(tensor.BFloat16, []float64{0.1}), "tensor([0.1001], device='cuda:0', dtype=torch.bfloat16)"},
		{"empty(0)", func() (*tensor.Tensor, error) { return tensor.Empty(dev, tensor.Float32, 0) }, "tensor([], device='cuda:0')"},
		{"empty(2, 0)", func() (*tensor.Tensor, error) { return tensor.Empty(dev, tensor.Float32, 2, 0) }, "tensor([], device='cuda:0', size=(2, 0))"},
		{"empty(0, dtype=int64)", func() (*tensor.Tensor, error) { return tensor.Empty(dev, tensor.Int64, 0) }, "tensor([], device='cuda:0', dtype=torch.int64)"},
		{"arange(8.).view(2, 2, 2)", f32(seq(8), 2, 2, 2), "tensor([[[0., 1.],\n         [2., 3.]],\n\n        [[4., 5.],\n         [6., 7.]]], device='cuda:0')"},
		{"arange(6.).view(2, 3).t()", func() (*tensor.Tensor, error) {
			x := keep(t)(tensor.FromFloat32(dev, seq(6), 2, 3))
			return x.T()
		}, "tensor([[0., 3.],\n        [1., 4.],\n        [2., 5.]], device='cuda:0')"},
		{"arange(30.)", f32(seq(30)), "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n        14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25., 26., 27.,\n        28., 29.], device='cuda:0')"},
		{"arange(14.).half()", of(tensor.Float16, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}), "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.],\n       device='cuda:0', dtype=torch.float16)"},
		{"arange(2000)", func() (*tensor.Tensor, error) { return tensor.Arange(dev, tensor.Int64, 0, 2000, 1) }, "tensor([   0,    1,    2,  ..., 1997, 1998, 1999], device='cuda:0')"},
		{"tensor([1e-10, 1e10])", f32([]float32{1e-10, 1e10}), "tensor([1.0000e-10, 1.0000e+10], device='cuda:0')"},
		{"tensor([0.001, 1000.])", f32([]float32{0.001, 1000}), "tensor([1.0000e-03, 1.0000e+03], device='cuda:0')"},
		{"tensor([123456789.])", f32([]float32{123456789}), "tensor([1.2346e+08], device='cuda:0')"},
		{"tensor([-0., 1.])", of(tensor.Float32, []float64{negZero(), 1}), "tensor([-0., 1.], device='cuda:0')"},
		{"tensor([100000, -3], dtype=int32)", of(tensor.Int32, []float64{100000, -3}), "tensor([100000,     -3], device='cuda:0', dtype=torch.int32)"},
		{"tensor([[1, 2], [3, 4]], dtype=uint8)", of(tensor.Uint8, []float64{1, 2, 3, 4}, 2, 2), "tensor([[1, 2],\n        [3, 4]], device='cuda:0', dtype=torch.uint8)"},
		{"tensor([[True], [False]])", of(tensor.Bool, []float64{1, 0}, 2, 1), "tensor([[ True],\n        [False]], device='cuda:0')"},
		{"tensor([65504., -inf], dtype=float16)", of(tensor.Float16, []float64{65504, math.Inf(-1)}), "tensor([65504.,   -inf], device='cuda:0', dtype=torch.float16)"},
		{"arange(1001.)", f32(seq(1001)), "tensor([   0.,    1.,    2.,  ...,  998.,  999., 1000.], device='cuda:0')"},
		{"arange(12.).view(3, 4)[:, 1:3]", func() (*tensor.Tensor, error) {
			x := keep(t)(tensor.FromFloat32(dev, seq(12), 3, 4))
			return x.Slice(1, 1, 3, 1)
		}, "tensor([[ 1.,  2.],\n        [ 5.,  6.],\n        [ 9., 10.]], device='cuda:0')"},
		{"zeros(100, 100)", func() (*tensor.Tensor, error) { return tensor.Zeros(dev, tensor.Float32, 100, 100) }, "tensor([[0., 0., 0.,  ..., 0., 0., 0.],\n        [0., 0., 0.,  ..., 0., 0., 0.],\n        [0., 0., 0.,  ..., 0., 0., 0.],\n        ...,\n        [0., 0., 0.,  ..., 0., 0., 0.],\n        [0., 0., 0.,  ..., 0., 0., 0.],\n        [0., 0., 0.,  ..., 0., 0., 0.]], device='cuda:0')"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := keep(t)(c.make())
			allocs := dev.allocs()
			if got := x.String(); got != c.want {
				t.Fatalf("got\n%s\nwant\n%s", got, c.want)
			}
			if dev.allocs() != allocs {
				t.Fatal("printing allocated device memory")
			}
		})
	}
}

// pytorchPrint is what PyTorch 2.11 printed for each case of
// TestStringMatchesPyTorch, as tensor/testdata/pytorch_print.py recorded it on
// the H200; embedded so that the test binary runs where the source is not.
//
//go:embed testdata/pytorch-print.json
var pytorchPrint []byte

// printTestSource is this file, embedded so that the test binary also runs
// away from the source tree (on the GPU machine).
//
//go:embed print_test.go
var printTestSource []byte

// TestStringCasesAgreeWithPyTorch checks the expected strings of
// TestStringMatchesPyTorch against what PyTorch printed, so that the table
// cannot drift from PyTorch.
func TestStringCasesAgreeWithPyTorch(t *testing.T) {
	var rec struct {
		Torch string
		Cases map[string]struct{ Str, Error string }
	}
	if err := json.Unmarshal(pytorchPrint, &rec); err != nil {
		t.Fatalf("testdata/pytorch-print.json: %v", err)
	}
	if !strings.HasPrefix(rec.Torch, "2.11") {
		t.Fatalf("testdata/pytorch-print.json records torch %q, want 2.11", rec.Torch)
	}
	src := printTestSource
	n := 0
	for _, m := range stringCase.FindAllSubmatch(src, -1) {
		name, err := strconv.Unquote(string(m[1]))
		if err != nil {
			t.Fatal(err)
		}
		want, err := strconv.Unquote(string(m[2]))
		if err != nil {
			t.Fatal(err)
		}
		n++
		r, ok := rec.Cases[name]
		switch {
		case !ok:
			t.Errorf("%s: not recorded: run tensor/testdata/pytorch_print.py where torch and a GPU are", name)
		case r.Error != "":
			t.Errorf("%s: PyTorch could not evaluate it: %s", name, r.Error)
		case r.Str != want:
			t.Errorf("%s: table expects\n%s\nPyTorch %s printed\n%s", name, want, rec.Torch, r.Str)
		}
	}
	if n != len(rec.Cases) {
		t.Errorf("found %d cases in print_test.go, the record has %d", n, len(rec.Cases))
	}
}

// stringCase matches a case of TestStringMatchesPyTorch: its name and, at the
// end of the case, its expected string.
var stringCase = regexp.MustCompile(`(?ms)^\t\t\{("(?:[^"\\]|\\.)*"), .*?, ("(?:[^"\\]|\\.)*")\},$`)

func nan() float64 { z := 0.0; return z / z }

func negZero() float64 { return math.Copysign(0, -1) }

// A few elements scattered over a large storage are read one by one; the
// result must equal the printout of a contiguous copy.
func TestStringOfAColumnOfALargeMatrix(t *testing.T) {
	dev := newTestDevice()
	x := keep(t)(tensor.Rand(dev, 3, tensor.Float32, 1024, 1024))
	col := keep(t)(x.Select(1, 5))
	part := keep(t)(col.Slice(0, 0, 999, 1)) // below the summarising threshold
	for _, v := range []*tensor.Tensor{col, part} {
		c := keep(t)(v.Contiguous())
		if got, want := v.String(), c.String(); got != want {
			t.Fatalf("strided:\n%s\ncontiguous copy:\n%s", got, want)
		}
	}
}
