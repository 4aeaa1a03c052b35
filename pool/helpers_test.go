package pool_test

import (
	"testing"

	"memlab.dev/memlab/internal/labtest"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/tensor"
)

// newLab opens a small simulated device with the caching allocator, closed at
// the end of the test.
func newLab(t testing.TB) *memlab.Lab { return labtest.Open(t, "1GiB") }

// seqTensor returns a float32 tensor of shape whose elements are base, base+1, ….
func seqTensor(t testing.TB, dev tensor.Device, base float32, shape ...int) *tensor.Tensor {
	t.Helper()
	n := tensor.Shape(shape).Numel()
	data := make([]float32, n)
	for i := range data {
		data[i] = base + float32(i)
	}
	x, err := tensor.FromFloat32(dev, data, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func values(t testing.TB, x *tensor.Tensor) []float32 {
	t.Helper()
	v, err := x.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mustRelease(t testing.TB, xs ...*tensor.Tensor) {
	t.Helper()
	for _, x := range xs {
		if err := x.Release(); err != nil {
			t.Fatal(err)
		}
	}
}
