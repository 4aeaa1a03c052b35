package inplace

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

const rows, cols = 256, 1024 // one [256, 1024] float32 tensor is 1 MiB

// inputs returns x and b on lab and x's values.
func inputs(t *testing.T, lab *memlab.Lab) (x, b *tensor.Tensor, xv []float32) {
	t.Helper()
	x = memlab.Must(tensor.Randn(lab, 7, tensor.Float32, rows, cols))
	b = memlab.Must(tensor.Randn(lab, 8, tensor.Float32, cols))
	t.Cleanup(func() { tensor.ReleaseLive(x, b) })
	return x, b, memlab.Must(x.Float32s())
}

// same checks that got holds relu((x + b) * s) + x.
func same(t *testing.T, name string, got *tensor.Tensor, x, b *tensor.Tensor, s float64) {
	t.Helper()
	want := memlab.Must(NaiveBlock(x, b, s))
	defer want.Release()
	wv, gv := memlab.Must(want.Float32s()), memlab.Must(got.Float32s())
	if sh := got.Shape(); len(sh) != 2 || sh[0] != rows || sh[1] != cols {
		t.Fatalf(msg("%s: shape %v, want [%d %d]", "%s：形状 %v，期望 [%d %d]"), name, sh, rows, cols)
	}
	for i := range wv {
		if math.Abs(float64(wv[i]-gv[i])) > 1e-5 {
			t.Fatalf(msg("%s: element %d = %g, want %g (relu((x + b) * s) + x)", "%s：元素 %d = %g，期望 %g（relu((x + b) * s) + x）"), name, i, gv[i], wv[i])
		}
	}
}

func unchanged(t *testing.T, name string, x *tensor.Tensor, before []float32) {
	t.Helper()
	now := memlab.Must(x.Float32s())
	for i := range before {
		if now[i] != before[i] {
			t.Fatalf(msg("%s changed its input x (element %d: %g → %g): the caller still needs x — an in-place op on x is not yours to make", "%s 改动了它的输入 x（元素 %d：%g → %g）：调用者还要用 x——轮不到你对 x 做原地操作"), name, i, before[i], now[i])
		}
	}
}

func TestA_Block(t *testing.T) {
	for _, s := range []float64{0.5, -2} {
		lab := labtest.Open(t, "1GiB", "")
		x, b, xv := inputs(t, lab)
		var out *tensor.Tensor
		var err error
		before := labtest.Stat(lab, "allocation.all.allocated")
		if !exercisetest.Call(t, "Block(x, b, s)", func() { out, err = Block(x, b, s) }) {
			return
		}
		if err != nil {
			t.Fatalf("Block: %v", err)
		}
		n := labtest.Stat(lab, "allocation.all.allocated") - before
		unchanged(t, "Block", x, xv)
		same(t, "Block", out, x, b, s)
		if n > 1 {
			t.Errorf(msg("Block(s=%g) made %d allocations; want 1 — the result of x + b is the only new tensor you need: scale, relu and add the residual in place on it (Scale_, Relu_, Add_)", "Block(s=%g) 分配了 %d 次；期望 1 次——x + b 的结果是你唯一需要的新张量：在它上面原地做缩放、relu 和残差相加（Scale_、Relu_、Add_）"), s, n)
		}
		out.Release()
	}
}

func TestB_BlockTrain(t *testing.T) {
	lab := labtest.Open(t, "1GiB", "")
	x, b, xv := inputs(t, lab)
	tape := tensor.NewTape()
	defer tape.Release()
	if err := tape.Watch(x); err != nil {
		t.Fatal(err)
	}
	var out *tensor.Tensor
	var err error
	before := labtest.Stat(lab, "allocation.all.allocated")
	if !exercisetest.Call(t, "BlockTrain(x, b, s)", func() { out, err = BlockTrain(x, b, 0.5) }) {
		return
	}
	if err != nil {
		t.Fatalf("BlockTrain: %v", err)
	}
	defer out.Release()
	n := labtest.Stat(lab, "allocation.all.allocated") - before
	if err := tape.CheckSaved(); err != nil {
		t.Fatalf(msg("BlockTrain broke a tensor autograd saved: %v — relu saves its output for backward, so nothing may change that output in place afterwards; the residual add has to make a new tensor", "BlockTrain 破坏了一个自动求导保存的张量：%v——relu 为反向传播保存它的输出，所以之后什么都不能原地改动这个输出；残差相加必须产生一个新张量"), err)
	}
	unchanged(t, "BlockTrain", x, xv)
	same(t, "BlockTrain", out, x, b, 0.5)
	if n > 2 {
		t.Errorf(msg("BlockTrain made %d allocations; want at most 2 — x + b, then scale and relu in place (multiplying by a constant saves nothing for backward), and a new tensor only for the residual add", "BlockTrain 分配了 %d 次；期望最多 2 次——x + b，然后原地缩放和 relu（乘一个常数不为反向传播保存任何东西），只有残差相加才需要新张量"), n)
	}
}

func TestC_Saving(t *testing.T) {
	lab := labtest.Open(t, "1GiB", "")
	x, b, _ := inputs(t, lab)
	var naive, mine int64
	var err error
	if !exercisetest.Call(t, "Saving(a, x, b, s)", func() { naive, mine, err = Saving(lab.Allocator(), x, b, 1.5) }) {
		return
	}
	if err != nil {
		t.Fatalf("Saving: %v", err)
	}
	wantNaive, _ := labtest.Peak(lab, func() error {
		out, err := NaiveBlock(x, b, 1.5)
		if err == nil {
			err = out.Release()
		}
		return err
	})
	wantMine, _ := labtest.Peak(lab, func() error {
		out, err := Block(x, b, 1.5)
		if err == nil {
			err = out.Release()
		}
		return err
	})
	if naive != wantNaive || mine != wantMine {
		t.Errorf(msg("Saving = %d, %d bytes; want %d, %d — reset the peak before each block and read max_memory_allocated minus memory_allocated at its start", "Saving = %d、%d 字节；期望 %d、%d——每个模块之前重置峰值，读 max_memory_allocated 减去它开始时的 memory_allocated"), naive, mine, wantNaive, wantMine)
	}
	if lab.MemoryAllocated() != x.StorageNbytes()+b.StorageNbytes() {
		t.Errorf(msg("after Saving %d bytes are allocated; want only x and b (%d) — release both results", "Saving 之后还有 %d 字节处于已分配；期望只有 x 和 b（%d）——两个结果都要释放"), lab.MemoryAllocated(), x.StorageNbytes()+b.StorageNbytes())
	}
}
