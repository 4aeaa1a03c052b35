package tensor_test

import (
	"errors"
	"math"
	"testing"

	"memlab.dev/memlab/tensor"
)

// keep returns a function that fails the test on err and otherwise returns t,
// registering its release at the end of the test: keep(t)(x.Relu()).
func keep(tb testing.TB) func(*tensor.Tensor, error) *tensor.Tensor {
	return func(x *tensor.Tensor, err error) *tensor.Tensor {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() {
			if !x.Released() {
				if err := x.Release(); err != nil {
					tb.Errorf("releasing %v: %v", x.Shape(), err)
				}
			}
		})
		return x
	}
}

func values(tb testing.TB, t *tensor.Tensor) []float64 {
	tb.Helper()
	v, err := t.Float64s()
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

func near(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	if a == b {
		return true
	}
	return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b))
}

func checkValues(tb testing.TB, t *tensor.Tensor, want []float64, tol float64) {
	tb.Helper()
	got := values(tb, t)
	if len(got) != len(want) {
		tb.Fatalf("got %d values %v, want %d %v", len(got), got, len(want), want)
	}
	for i := range got {
		if !near(got[i], want[i], tol) {
			tb.Fatalf("value %d: got %v, want %v (all: %v)", i, got[i], want[i], got)
		}
	}
}

// torchMsg returns PyTorch's message carried by err, or "" when err is not a
// *tensor.Error.
func torchMsg(err error) string {
	var te *tensor.Error
	if errors.As(err, &te) {
		return te.Msg
	}
	return ""
}

func seq(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i)
	}
	return v
}
