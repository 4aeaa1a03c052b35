package tensor_test

import (
	"math"
	"os"
	"strings"
	"testing"

	"memlab.dev/memlab/device"
	"memlab.dev/memlab/tensor"
)

// sameValues fails unless got and want hold the same values: exactly on the
// simulated device, within the kernels' tolerance on a GPU.
func sameValues(tb testing.TB, got, want *tensor.Tensor) {
	tb.Helper()
	g, w := values(tb, got), values(tb, want)
	if len(g) != len(w) {
		tb.Fatalf("got %d values, want %d", len(g), len(w))
	}
	// The simulator's CPU kernels give the same bits whatever the layout; on a
	// GPU, cuBLAS sums in an order that depends on the operands' layout, so the
	// product written into a transposed out may differ in the last bits.
	tol := 0.0
	if os.Getenv(device.EnvVar) != "" {
		tol = 1e-5
	}
	for i := range g {
		if g[i] == w[i] || (g[i] != g[i] && w[i] != w[i]) {
			continue
		}
		if d := math.Abs(g[i] - w[i]); d > tol*math.Max(1, math.Abs(w[i])) {
			tb.Fatalf("value %d: got %v, want %v (tolerance %g)", i, g[i], w[i], tol)
		}
	}
}

func TestMatmulIntoEqualsMatmul(t *testing.T) {
	dev := newTestDevice()
	rnd := func(seed uint64, shape ...int) *tensor.Tensor {
		return keep(t)(tensor.Randn(dev, seed, tensor.Float32, shape...))
	}
	big := rnd(9, 4, 6, 20) // a buffer whose prefix and slices serve as outs
	cases := []struct {
		name string
		a, b *tensor.Tensor
		out  func(shape tensor.Shape) *tensor.Tensor
	}{
		{"2-D", rnd(1, 5, 7), rnd(2, 7, 3), nil},
		{"batched heads", rnd(1, 4, 6, 8), keep(t)(rnd(2, 4, 10, 8).Transpose(1, 2)), nil},
		{"batch broadcast", rnd(1, 2, 1, 3, 4), rnd(2, 3, 4, 5), nil},
		{"vector @ matrix", rnd(1, 7), rnd(2, 7, 3), nil},
		{"dot", rnd(1, 7), rnd(2, 7), nil},
		{"out a view of a pooled buffer's prefix", rnd(1, 4, 6, 8), keep(t)(rnd(2, 4, 9, 8).Transpose(1, 2)), func(shape tensor.Shape) *tensor.Tensor {
			flat := keep(t)(big.View(-1))
			return keep(t)(keep(t)(flat.Narrow(0, 0, shape.Numel())).View(shape...))
		}},
		{"strided out (a slice of a wider buffer)", rnd(1, 4, 6, 8), keep(t)(rnd(2, 4, 9, 8).Transpose(1, 2)), func(shape tensor.Shape) *tensor.Tensor {
			return keep(t)(big.Narrow(2, 0, shape[2]))
		}},
		{"transposed out", rnd(1, 5, 7), rnd(2, 7, 3), func(shape tensor.Shape) *tensor.Tensor {
			o := keep(t)(tensor.Full(dev, tensor.Float32, 7, shape[1], shape[0]))
			return keep(t)(o.T())
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := keep(t)(c.a.Matmul(c.b))
			var out *tensor.Tensor
			if c.out != nil {
				out = c.out(want.Shape())
			} else {
				out = keep(t)(tensor.Full(dev, tensor.Float32, -3, want.Shape()...))
			}
			v := out.Version()
			if err := tensor.MatmulInto(out, c.a, c.b); err != nil {
				t.Fatal(err)
			}
			sameValues(t, out, want)
			if out.Version() == v {
				t.Errorf("version counter of out still %d after the write", v)
			}
		})
	}
}

func TestMatmulIntoAllocatesNothing(t *testing.T) {
	dev := newTestDevice()
	q := keep(t)(tensor.Randn(dev, 1, tensor.Float32, 4, 6, 8))
	k := keep(t)(tensor.Randn(dev, 2, tensor.Float32, 4, 10, 8))
	kt := keep(t)(k.Transpose(1, 2))
	out := keep(t)(tensor.Empty(dev, tensor.Float32, 4, 6, 10))
	probs := keep(t)(tensor.Empty(dev, tensor.Float32, 4, 6, 10))
	before := dev.allocs()
	if err := tensor.MatmulInto(out, q, kt); err != nil {
		t.Fatal(err)
	}
	if err := tensor.SoftmaxInto(probs, out, -1); err != nil {
		t.Fatal(err)
	}
	if n := dev.allocs() - before; n != 0 {
		t.Fatalf("MatmulInto and SoftmaxInto made %d allocations, want 0", n)
	}
}

func TestSoftmaxIntoEqualsSoftmax(t *testing.T) {
	dev := newTestDevice()
	x := keep(t)(tensor.Randn(dev, 3, tensor.Float32, 3, 5, 7))
	for _, dim := range []int{-1, 1, 0} {
		want := keep(t)(x.Softmax(dim))
		out := keep(t)(tensor.Full(dev, tensor.Float32, 9, 3, 5, 7))
		if err := tensor.SoftmaxInto(out, x, dim); err != nil {
			t.Fatal(err)
		}
		sameValues(t, out, want)
	}
	wide := keep(t)(tensor.Empty(dev, tensor.Float32, 3, 5, 12))
	out := keep(t)(wide.Narrow(2, 2, 7)) // a strided out
	if err := tensor.SoftmaxInto(out, x, -1); err != nil {
		t.Fatal(err)
	}
	sameValues(t, out, keep(t)(x.Softmax(-1)))
}

func TestOutFormsRefuseBadOut(t *testing.T) {
	dev := newTestDevice()
	a := keep(t)(tensor.Randn(dev, 1, tensor.Float32, 4, 6))
	b := keep(t)(tensor.Randn(dev, 2, tensor.Float32, 6, 5))
	sq := keep(t)(tensor.Randn(dev, 3, tensor.Float32, 6, 6))
	good := func() *tensor.Tensor { return keep(t)(tensor.Empty(dev, tensor.Float32, 4, 5)) }
	released := keep(t)(tensor.Empty(dev, tensor.Float32, 4, 5))
	if err := released.Release(); err != nil {
		t.Fatal(err)
	}
	watched := func() *tensor.Tensor {
		w := keep(t)(a.Clone())
		tp := tensor.NewTape()
		t.Cleanup(func() { _ = tp.Release() })
		if err := tp.Watch(w); err != nil {
			t.Fatal(err)
		}
		return w
	}
	other := newTestDevice()
	cases := []struct {
		name    string
		call    func() error
		want    string
		outKept *tensor.Tensor // must be unchanged after the refusal
	}{
		{"nil out", func() error { return tensor.MatmulInto(nil, a, b) }, "nil tensor", nil},
		{"out of another dtype", func() error { return tensor.MatmulInto(keep(t)(tensor.Empty(dev, tensor.Int64, 4, 5)), a, b) }, "Expected out tensor to have dtype float, but got long int instead", nil},
		{"out of another shape", func() error { return tensor.MatmulInto(keep(t)(tensor.Empty(dev, tensor.Float32, 5, 4)), a, b) }, "out has shape [5, 4], the result has shape [4, 5]", nil},
		{"out of more elements", func() error { return tensor.MatmulInto(keep(t)(tensor.Empty(dev, tensor.Float32, 4, 6)), a, b) }, "PyTorch would resize out", nil},
		{"out is an input", func() error { return tensor.MatmulInto(sq, sq, sq) }, "some elements of the input tensor and the written-to tensor refer to a single memory location", sq},
		{"out overlaps an input", func() error {
			return tensor.MatmulInto(keep(t)(keep(t)(sq.Narrow(0, 0, 4)).Narrow(1, 0, 5)), keep(t)(sq.Narrow(0, 2, 4)), b)
		}, "refer to a single memory location", sq},
		{"out with overlapping elements", func() error {
			row := keep(t)(tensor.Empty(dev, tensor.Float32, 1, 5))
			return tensor.MatmulInto(keep(t)(row.Expand(4, 5)), a, b)
		}, "more than one element of the written-to tensor refers to a single memory location", nil},
		{"released out", func() error { return tensor.MatmulInto(released, a, b) }, "released", nil},
		{"out on another device", func() error { return tensor.MatmulInto(keep(t)(tensor.Empty(other, tensor.Float32, 4, 5)), a, b) }, "Expected all tensors to be on the same device", nil},
		{"mismatched inputs", func() error { return tensor.MatmulInto(good(), a, a) }, "mat1 and mat2 shapes cannot be multiplied (4x6 and 4x6)", nil},
		{"a watched input", func() error { return tensor.MatmulInto(good(), watched(), b) }, "functions with out=... arguments don't support automatic differentiation", nil},
		{"softmax: out of another shape", func() error { return tensor.SoftmaxInto(good(), a, -1) }, "out has shape [4, 5], the result has shape [4, 6]", nil},
		{"softmax: out is the input", func() error { return tensor.SoftmaxInto(sq, sq, -1) }, "refer to a single memory location", sq},
		{"softmax: out of another dtype", func() error { return tensor.SoftmaxInto(keep(t)(tensor.Empty(dev, tensor.Float16, 4, 6)), a, -1) }, "Expected out tensor to have dtype float, but got c10::Half instead", nil},
		{"softmax: bad dim", func() error { return tensor.SoftmaxInto(keep(t)(tensor.Empty(dev, tensor.Float32, 4, 6)), a, 2) }, "Dimension out of range", nil},
		{"softmax: nil", func() error { return tensor.SoftmaxInto(nil, a, -1) }, "nil tensor", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var before []float64
			if c.outKept != nil {
				before = values(t, c.outKept)
			}
			err := c.call()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
			if c.outKept != nil {
				after := values(t, c.outKept)
				for i := range before {
					if before[i] != after[i] {
						t.Fatalf("a refused call changed element %d of out", i)
					}
				}
			}
		})
	}
}
