package budget

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/exercises/internal/exercisetest"
	"memlab.dev/memlab/exercises/internal/labtest"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/tensor"
)

// msg picks a failure message in the learner's language (MEMLAB_LANG).
var msg = exercisetest.Msg

const MiB = 1 << 20

// fragment is the workload of part A on a 1 GiB card (128 MiB of it the CUDA
// context): nine times, a 100 MiB tensor is made and freed, then a 60 MiB one
// is made and kept. It returns the first allocation error.
func fragment(lab *memlab.Lab) error {
	var keep []*tensor.Tensor
	defer func() { tensor.ReleaseAll(keep...) }()
	for i := 0; i < 9; i++ {
		big, err := tensor.Empty(lab, tensor.Uint8, 100*MiB)
		if err != nil {
			return fmt.Errorf("round %d, the 100 MiB tensor: %w", i+1, err)
		}
		if err := big.Release(); err != nil {
			return err
		}
		small, err := tensor.Empty(lab, tensor.Uint8, 60*MiB)
		if err != nil {
			return fmt.Errorf("round %d, the 60 MiB tensor: %w", i+1, err)
		}
		keep = append(keep, small)
	}
	x, err := tensor.Empty(lab, tensor.Uint8, 200*MiB)
	if err != nil {
		return fmt.Errorf("the final 200 MiB tensor: %w", err)
	}
	return x.Release()
}

func TestA_AllocConf(t *testing.T) {
	if err := fragment(labtest.Open(t, "1GiB", "")); err == nil || !strings.HasPrefix(err.Error(), "round 9, the 100 MiB tensor:") {
		t.Fatalf(exercisetest.Msg("under the default settings the workload gives %v; README.md says it runs out of memory in round 9 of 9, at the 100 MiB tensor",
			"默认设置下这个负载的结果是 %v；README 说它在第 9 轮（共 9 轮）的 100 MiB 张量处显存不足"), err)
	}
	var conf string
	if !exercisetest.Call(t, "AllocConf()", func() { conf = AllocConf() }) {
		return
	}
	if _, err := allocator.ParseConfig(conf); err != nil {
		t.Fatalf(msg("AllocConf() = %q: the allocator rejects it: %v", "AllocConf() = %q：分配器拒绝了它：%v"), conf, err)
	}
	lab := labtest.Open(t, "1GiB", conf)
	if err := fragment(lab); err != nil {
		t.Fatalf(msg("under %q the workload still runs out of memory: %v — with the defaults, each 60 MiB tensor is split off a cached 100 MiB segment, leaving a 40 MiB tail that nothing else fits and that cannot be released while the 60 MiB part lives; pick a setting that stops large cached blocks from being split, or that lets segments grow instead", "在 %q 下这个负载仍然显存不足：%v——默认设置下，每个 60 MiB 的张量都从一个缓存的 100 MiB 段里分割出来，留下一条 40 MiB 的尾巴，别的什么都装不进去，而且只要那 60 MiB 的部分还活着它就释放不了；选一个不让大的缓存块被分割的设置，或者让段能够增长的设置"), conf, err)
	}
	if peak := lab.MaxMemoryReserved(); peak > 1024*MiB {
		t.Errorf(msg("under %q the peak reserved memory is %d MiB, above the card", "在 %q 下已预留的峰值是 %d MiB，超过了这张卡"), conf, peak/MiB)
	}
}

func TestB_RunSteps(t *testing.T) {
	tests := []struct {
		name  string
		sizes []int
	}{
		{"growing scales", []int{3 << 20, 5 << 20, 7 << 20, 9 << 20}},
		{"shrinking scales", []int{9 << 20, 4 << 20, 1 << 20}},
		{"mixed scales", []int{4 << 20, 8 << 20, 2 << 20, 8 << 20, 6 << 20}},
		{"one step", []int{5 << 20}},
		{"no steps", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lab := labtest.Open(t, "1GiB", "")
			startAlloc := lab.MemoryAllocated()
			startSegs := labtest.Stat(lab, "segment.large_pool.allocated")
			var seen []int
			step := func(i int, fm *tensor.Tensor) error {
				if fm == nil || fm.Released() {
					return fmt.Errorf(msg("step %d got no live feature map", "第 %d 步没有拿到存活的特征图"), i)
				}
				if got := fm.Shape(); len(got) != 1 || got[0] != tc.sizes[i] || !fm.IsContiguous() || fm.DType() != tensor.Float32 {
					return fmt.Errorf(msg("step %d: feature map %v %v (contiguous %v); want a contiguous float32 [%d]", "第 %d 步：特征图 %v %v（连续 %v）；期望一个连续的 float32 [%d]"), i, fm.DType(), got, fm.IsContiguous(), tc.sizes[i])
				}
				if err := fm.Scale_(0); err != nil {
					return err
				}
				seen = append(seen, i)
				return nil
			}
			var err error
			if !exercisetest.Call(t, "RunSteps(lab, sizes, step)", func() { err = RunSteps(lab, tc.sizes, step) }) {
				return
			}
			if err != nil {
				t.Fatalf("RunSteps(%v): %v", tc.sizes, err)
			}
			if len(seen) != len(tc.sizes) {
				t.Fatalf(msg("RunSteps(%v) ran steps %v; want each step once, in order", "RunSteps(%v) 运行的步骤是 %v；期望每一步按顺序各运行一次"), tc.sizes, seen)
			}
			if left := lab.MemoryAllocated() - startAlloc; left != 0 {
				t.Errorf(msg("RunSteps(%v) left %d bytes allocated; release the buffer before returning", "RunSteps(%v) 留下了 %d 字节的已分配显存；返回之前请释放缓冲区"), tc.sizes, left)
			}
			segs := labtest.Stat(lab, "segment.large_pool.allocated") - startSegs
			want := int64(min(len(tc.sizes), 1))
			if segs != want {
				t.Errorf(msg("RunSteps(%v) asked the device for memory %d times (cudaMalloc of large segments); want %d — a new tensor per step lets every larger scale miss the cache: allocate one buffer of the largest size first and give each step a view (Narrow) of it, the chapter's \"预分配固定大小的缓冲区\"", "RunSteps(%v) 向设备要了 %d 次显存（大段的 cudaMalloc）；期望 %d 次——每一步新建一个张量，会让每个更大的尺度都错过缓存：先分配一个最大尺寸的缓冲区，再给每一步它的一个视图（Narrow），也就是教材的\"预分配固定大小的缓冲区\""), tc.sizes, segs, want)
			}
		})
	}
	t.Run("bad size", func(t *testing.T) {
		lab := labtest.Open(t, "1GiB", "")
		var err error
		if !exercisetest.Call(t, "RunSteps(lab, [4 0], step)", func() {
			err = RunSteps(lab, []int{4, 0}, func(int, *tensor.Tensor) error { return nil })
		}) {
			return
		}
		if err == nil {
			t.Error(msg("RunSteps with a size of 0: want an error", "RunSteps 的大小为 0：期望一个错误"))
		}
	})
	t.Run("step error", func(t *testing.T) {
		lab := labtest.Open(t, "1GiB", "")
		stop := errors.New("stop")
		var err error
		if !exercisetest.Call(t, "RunSteps(lab, sizes, failing step)", func() {
			err = RunSteps(lab, []int{8, 16}, func(i int, _ *tensor.Tensor) error { return stop })
		}) {
			return
		}
		if !errors.Is(err, stop) {
			t.Errorf(msg("RunSteps with a failing step: error %v; want the step's error", "RunSteps 的某一步失败：错误是 %v；期望那一步的错误"), err)
		}
		if left := lab.MemoryAllocated(); left != 0 {
			t.Errorf(msg("RunSteps with a failing step left %d bytes allocated; release on every path", "RunSteps 的某一步失败后留下了 %d 字节的已分配显存；每条路径上都要释放"), left)
		}
	})
}
