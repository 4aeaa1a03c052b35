package tensor_test

import (
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

func nan() float64 { z := 0.0; return z / z }

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
