package tensor_test

import (
	"testing"

	"memlab.dev/memlab/tensor"
)

func BenchmarkLayoutView(b *testing.B) {
	l, _ := tensor.ContiguousLayout(64, 128, 32).Transpose(0, 1)
	for b.Loop() {
		if _, err := l.View(128, 4, 16, 32); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSelectAndRelease(b *testing.B) {
	dev := newTestDevice()
	x, _ := tensor.Zeros(dev, tensor.Float32, 64, 64)
	defer x.Release()
	for b.Loop() {
		v, err := x.Select(0, 3)
		if err != nil {
			b.Fatal(err)
		}
		_ = v.Release()
	}
}

// BenchmarkContiguousTransposed is the copy x.t().contiguous() makes; bytes
// counted once read and once written.
func BenchmarkContiguousTransposed(b *testing.B) {
	dev := newTestDevice()
	x, _ := tensor.Zeros(dev, tensor.Float32, 1024, 1024)
	defer x.Release()
	xt, _ := x.T()
	defer xt.Release()
	b.SetBytes(2 * x.Nbytes())
	for b.Loop() {
		c, err := xt.Contiguous()
		if err != nil {
			b.Fatal(err)
		}
		_ = c.Release()
	}
}

func BenchmarkRelu(b *testing.B) {
	dev := newTestDevice()
	x, _ := tensor.Randn(dev, 1, tensor.Float32, 1<<20)
	defer x.Release()
	b.Run("out-of-place", func(b *testing.B) {
		b.SetBytes(2 * x.Nbytes())
		for b.Loop() {
			y, err := x.Relu()
			if err != nil {
				b.Fatal(err)
			}
			_ = y.Release()
		}
	})
	b.Run("in-place", func(b *testing.B) {
		b.SetBytes(2 * x.Nbytes())
		for b.Loop() {
			if err := x.Relu_(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
