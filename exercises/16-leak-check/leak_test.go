package leak

import (
	"errors"
	"math"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
	"memlab.dev/memlab/exercises/internal/labtest"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/tensor"
)

// msg picks a failure message in the learner's language (MEMLAB_LANG).
var msg = exercisetest.Msg

const MiB = 1 << 20

func TestA_LeakCheck(t *testing.T) {
	tests := []struct {
		name               string
		keepMiB, tempMiB   int
		fail               bool
		wantLeak, wantPeak int64
	}{
		{"keeps nothing", 0, 30, false, 0, 30 * MiB},
		{"keeps 1 MiB of 5", 1, 4, false, 1 * MiB, 5 * MiB},
		{"keeps 12 MiB, no temporaries", 12, 0, false, 12 * MiB, 12 * MiB},
		{"fails after keeping 2 MiB", 2, 3, true, 2 * MiB, 5 * MiB},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lab := labtest.Open(t, "1GiB", "")
			// Something allocated (and a peak reached) before the check must not count.
			before, err := tensor.Empty(lab, tensor.Uint8, 3*MiB)
			if err != nil {
				t.Fatal(err)
			}
			spike, err := tensor.Empty(lab, tensor.Uint8, 64*MiB)
			if err != nil {
				t.Fatal(err)
			}
			if err := spike.Release(); err != nil {
				t.Fatal(err)
			}
			oops := errors.New("oops")
			f := func() error {
				if tc.keepMiB > 0 {
					if _, err := tensor.Empty(lab, tensor.Uint8, tc.keepMiB*MiB); err != nil {
						return err
					}
				}
				if tc.tempMiB > 0 {
					tmp, err := tensor.Empty(lab, tensor.Uint8, tc.tempMiB*MiB)
					if err != nil {
						return err
					}
					if err := tmp.Release(); err != nil {
						return err
					}
				}
				if tc.fail {
					return oops
				}
				return nil
			}
			var leaked, peak int64
			if !exercisetest.Call(t, "LeakCheck(a, f)", func() { leaked, peak, err = LeakCheck(lab.Allocator(), f) }) {
				return
			}
			if tc.fail != errors.Is(err, oops) || (!tc.fail && err != nil) {
				t.Errorf(msg("LeakCheck: error %v; want f's error (%v) and no other", "LeakCheck：错误 %v；期望 f 的错误（%v），而不是别的"), err, tc.fail)
			}
			if leaked != tc.wantLeak {
				t.Errorf(msg("LeakCheck: leaked %d bytes, want %d — memory_allocated after f, minus memory_allocated before it (what was allocated before the check does not count)", "LeakCheck：泄漏 %d 字节，期望 %d——f 之后的 memory_allocated 减去它之前的（检查之前已分配的不算）"), leaked, tc.wantLeak)
			}
			if peak != tc.wantPeak {
				t.Errorf(msg("LeakCheck: peak %d bytes, want %d — reset_peak_memory_stats first (the 64 MiB spike before the check is not f's), then max_memory_allocated minus the start", "LeakCheck：峰值 %d 字节，期望 %d——先 reset_peak_memory_stats（检查之前那个 64 MiB 的尖峰不是 f 的），再用 max_memory_allocated 减去开始时的值"), peak, tc.wantPeak)
			}
			if r := lab.MemoryReserved(); r >= 64*MiB {
				t.Errorf(msg("after LeakCheck %d MiB stay reserved; the idiom empties the cache (empty_cache) so that reserved memory shows only what is still in use", "LeakCheck 之后还有 %d MiB 处于已预留；这个惯用法会清空缓存（empty_cache），这样已预留的显存只反映仍在使用的部分"), r/MiB)
			}
			_ = before
		})
	}
}

// wantLosses computes TrainLoop's losses its own way.
func wantLosses(t *testing.T, dev tensor.Device, steps int) []float64 {
	t.Helper()
	s := tensor.NewScope()
	defer s.Release()
	w := memlab.Must(s.Track(tensor.Randn(dev, 1, tensor.Float32, 64, 64)))
	var out []float64
	for i := 0; i < steps; i++ {
		x := memlab.Must(s.Track(tensor.Randn(dev, uint64(100+i), tensor.Float32, 32, 64)))
		h := memlab.Must(x.Matmul(w))
		r := memlab.Must(h.Relu())
		v := memlab.Must(r.Float32s())
		sum := 0.0
		for _, f := range v {
			sum += float64(f)
		}
		out = append(out, sum)
	}
	return out
}

func TestB_TrainLoopDoesNotLeak(t *testing.T) {
	for _, steps := range []int{1, 5, 20} {
		lab := labtest.Open(t, "1GiB", "")
		want := wantLosses(t, lab, steps)
		start := lab.MemoryAllocated()
		var losses []float64
		var err error
		if !exercisetest.Call(t, "TrainLoop(lab, steps)", func() { losses, err = TrainLoop(lab, steps) }) {
			return
		}
		if err != nil {
			t.Fatalf("TrainLoop(%d): %v", steps, err)
		}
		if len(losses) != steps {
			t.Fatalf(msg("TrainLoop(%d) returned %d losses", "TrainLoop(%d) 返回了 %d 个 loss"), steps, len(losses))
		}
		for i := range want {
			if math.Abs(losses[i]-want[i]) > 1e-3*math.Max(1, math.Abs(want[i])) {
				t.Errorf(msg("TrainLoop(%d): loss of step %d = %g, want %g (sum of relu(x @ w))", "TrainLoop(%d)：第 %d 步的 loss = %g，期望 %g（relu(x @ w) 之和）"), steps, i, losses[i], want[i])
			}
		}
		if err := lab.EmptyCache(); err != nil {
			t.Fatal(err)
		}
		if leaked := lab.MemoryAllocated() - start; leaked != 0 {
			t.Errorf(msg("TrainLoop(%d) leaks %d bytes (%d per step, if it grows with the steps): every tensor a step makes — x, x @ w, the relu, the sums — must be released, or tracked by a tensor.Scope that is released; Item() copies the loss to the host, so nothing needs to outlive the step", "TrainLoop(%d) 泄漏了 %d 字节（如果随步数增长，就是每步 %d 字节）：每一步创建的每个张量——x、x @ w、relu、求和——都必须释放，或者交给一个会被释放的 tensor.Scope 跟踪；Item() 把 loss 拷贝到主机，所以什么都不必活过这一步"), steps, leaked, leaked/int64(steps))
		}
	}
}

func TestC_CapTenants(t *testing.T) {
	for _, greedy := range []string{"first", "second"} {
		t.Run("the "+greedy+" tenant is greedy", func(t *testing.T) {
			a := labtest.Open(t, "1GiB", "")
			b, err := memlab.Open(memlab.SharedWith(a), memlab.NotCurrent())
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if !exercisetest.Call(t, "CapTenants(a, b)", func() { err = CapTenants(a.Allocator(), b.Allocator()) }) {
				return
			}
			if err != nil {
				t.Fatalf("CapTenants: %v", err)
			}
			hog, other := a, b
			if greedy == "second" {
				hog, other = b, a
			}
			var held []*tensor.Tensor
			defer func() { tensor.ReleaseAll(held...) }()
			for {
				x, err := tensor.Empty(hog, tensor.Uint8, 64*MiB)
				if err != nil {
					break
				}
				held = append(held, x)
			}
			if got := int64(len(held)) * 64 * MiB; got < 384*MiB {
				t.Errorf(msg("the greedy tenant got only %d MiB; a cap that low starves it (want at least 384 MiB)", "贪心的租户只拿到 %d MiB；上限这么低会饿死它（期望至少 384 MiB）"), got/MiB)
			}
			x, err := tensor.Empty(other, tensor.Uint8, 416*MiB)
			if err != nil {
				t.Fatalf(msg("after the greedy tenant took %d MiB, the other cannot get 416 MiB: %v — cap each tenant with SetPerProcessMemoryFraction so the two caps together fit in what is free (the CUDA context takes its share of the card first)", "贪心的租户拿走 %d MiB 之后，另一个拿不到 416 MiB：%v——用 SetPerProcessMemoryFraction 给每个租户设上限，让两个上限加起来装得进空闲的显存（CUDA 上下文先占了卡上的一份）"), int64(len(held))*64, err)
			}
			x.Release()
		})
	}
}
