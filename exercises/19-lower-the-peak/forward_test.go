package peak

import (
	"math"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
	"memlab.dev/memlab/exercises/internal/labtest"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/tensor"
)

const batch, seq, hidden = 4, 128, 512 // x and the output are 1 MiB each

func weights(t *testing.T, lab *memlab.Lab, seed uint64) (x, w, bias *tensor.Tensor) {
	t.Helper()
	x = memlab.Must(tensor.Randn(lab, seed, tensor.Float32, batch, seq, hidden))
	w = memlab.Must(tensor.Randn(lab, 1, tensor.Float32, hidden, hidden))
	bias = memlab.Must(tensor.Randn(lab, 2, tensor.Float32, hidden))
	memlab.Check(w.Scale_(1 / math.Sqrt(hidden)))
	t.Cleanup(func() { tensor.ReleaseLive(x, w, bias) })
	return x, w, bias
}

func equal(t *testing.T, name string, got *tensor.Tensor, x, w, bias *tensor.Tensor) {
	t.Helper()
	want := memlab.Must(NaiveForward(x, w, bias))
	defer want.Release()
	if gs := got.Shape(); len(gs) != 3 || gs[0] != batch || gs[1] != seq || gs[2] != hidden {
		t.Fatalf("%s: shape %v, want [%d %d %d]", name, gs, batch, seq, hidden)
	}
	wv, gv := memlab.Must(want.Float32s()), memlab.Must(got.Float32s())
	for i := range wv {
		if math.Abs(float64(wv[i]-gv[i])) > 1e-4 {
			t.Fatalf("%s: element %d = %g, want %g (gelu(x @ w + bias) * 0.5)", name, i, gv[i], wv[i])
		}
	}
}

func TestA_Forward(t *testing.T) {
	lab := labtest.Open(t, "1GiB", "")
	x, w, bias := weights(t, lab, 7)
	xv := memlab.Must(x.Float32s())
	naive, err := labtest.Peak(lab, func() error {
		out, err := NaiveForward(x, w, bias)
		if err == nil {
			err = out.Release()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var out *tensor.Tensor
	var peak int64
	if !exercisetest.Call(t, "Forward(x, w, bias)", func() {
		peak, err = labtest.Peak(lab, func() error {
			var err error
			out, err = Forward(x, w, bias)
			return err
		})
	}) {
		return
	}
	if err != nil {
		t.Fatalf("Forward: %v", err)
	}
	defer out.Release()
	for i, v := range memlab.Must(x.Float32s()) {
		if v != xv[i] {
			t.Fatalf("Forward changed its input x (element %d): the caller still needs it", i)
		}
	}
	equal(t, "Forward", out, x, w, bias)
	if float64(peak) > 0.6*float64(naive) {
		t.Errorf("Forward peaks at %d bytes above the start, NaiveForward at %d: want at most 60 %% of it (%d) — the copy of x is not needed to flatten it (a view is), and after x @ w every step can work in place on that one new tensor", peak, naive, int64(0.6*float64(naive)))
	}
}

func TestB_ForwardInto(t *testing.T) {
	lab := labtest.Open(t, "1GiB", "")
	out := memlab.Must(tensor.Empty(lab, tensor.Float32, batch, seq, hidden))
	defer out.Release()
	for step := uint64(0); step < 5; step++ {
		x, w, bias := weights(t, lab, 10+step)
		before := labtest.Stat(lab, "allocation.all.allocated")
		var err error
		if !exercisetest.Call(t, "ForwardInto(out, x, w, bias)", func() { err = ForwardInto(out, x, w, bias) }) {
			return
		}
		if err != nil {
			t.Fatalf("ForwardInto (batch %d): %v", step, err)
		}
		if n := labtest.Stat(lab, "allocation.all.allocated") - before; n != 0 {
			t.Fatalf("ForwardInto (batch %d) asked the allocator for memory %d times; want 0 — write x @ w straight into (a view of) out with tensor.MatmulInto, then finish in place", step, n)
		}
		equal(t, "ForwardInto", out, x, w, bias)
	}
}
