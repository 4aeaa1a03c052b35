package peak

import (
	"math"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
	"memlab.dev/memlab/exercises/internal/labtest"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/tensor"
)

// msg picks a failure message in the learner's language (MEMLAB_LANG).
var msg = exercisetest.Msg

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
		t.Fatalf(msg("%s: shape %v, want [%d %d %d]", "%s：形状 %v，期望 [%d %d %d]"), name, gs, batch, seq, hidden)
	}
	wv, gv := memlab.Must(want.Float32s()), memlab.Must(got.Float32s())
	for i := range wv {
		if math.Abs(float64(wv[i]-gv[i])) > 1e-4 {
			t.Fatalf(msg("%s: element %d = %g, want %g (gelu(x @ w + bias) * 0.5)", "%s：元素 %d = %g，期望 %g（gelu(x @ w + bias) * 0.5）"), name, i, gv[i], wv[i])
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
			t.Fatalf(msg("Forward changed its input x (element %d): the caller still needs it", "Forward 改动了它的输入 x（元素 %d）：调用者还要用它"), i)
		}
	}
	equal(t, "Forward", out, x, w, bias)
	if float64(peak) > 0.6*float64(naive) {
		t.Errorf(msg("Forward peaks at %d bytes above the start, NaiveForward at %d: want at most 60 %% of it (%d) — the copy of x is not needed to flatten it (a view is), and after x @ w every step can work in place on that one new tensor", "Forward 的峰值比开始时高 %d 字节，NaiveForward 高 %d：期望最多是它的 60 %%（%d）——展平 x 不需要拷贝（视图就行），x @ w 之后每一步都可以在那一个新张量上原地进行"), peak, naive, int64(0.6*float64(naive)))
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
			t.Fatalf(msg("ForwardInto (batch %d): %v", "ForwardInto（批次 %d）：%v"), step, err)
		}
		if n := labtest.Stat(lab, "allocation.all.allocated") - before; n != 0 {
			t.Fatalf(msg("ForwardInto (batch %d) asked the allocator for memory %d times; want 0 — write x @ w straight into (a view of) out with tensor.MatmulInto, then finish in place", "ForwardInto（批次 %d）向分配器要了 %d 次显存；期望 0 次——用 tensor.MatmulInto 把 x @ w 直接写进 out（的一个视图），然后原地完成"), step, n)
		}
		equal(t, "ForwardInto", out, x, w, bias)
	}
}
