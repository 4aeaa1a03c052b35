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
		t.Fatalf("AllocConf() = %q: the allocator rejects it: %v", conf, err)
	}
	lab := labtest.Open(t, "1GiB", conf)
	if err := fragment(lab); err != nil {
		t.Fatalf("under %q the workload still runs out of memory: %v — with the defaults, each 60 MiB tensor is split off a cached 100 MiB segment, leaving a 40 MiB tail that nothing else fits and that cannot be released while the 60 MiB part lives; pick a setting that stops large cached blocks from being split, or that lets segments grow instead", conf, err)
	}
	if peak := lab.MaxMemoryReserved(); peak > 1024*MiB {
		t.Errorf("under %q the peak reserved memory is %d MiB, above the card", conf, peak/MiB)
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
					return fmt.Errorf("step %d got no live feature map", i)
				}
				if got := fm.Shape(); len(got) != 1 || got[0] != tc.sizes[i] || !fm.IsContiguous() || fm.DType() != tensor.Float32 {
					return fmt.Errorf("step %d: feature map %v %v (contiguous %v); want a contiguous float32 [%d]", i, fm.DType(), got, fm.IsContiguous(), tc.sizes[i])
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
				t.Fatalf("RunSteps(%v) ran steps %v; want each step once, in order", tc.sizes, seen)
			}
			if left := lab.MemoryAllocated() - startAlloc; left != 0 {
				t.Errorf("RunSteps(%v) left %d bytes allocated; release the buffer before returning", tc.sizes, left)
			}
			segs := labtest.Stat(lab, "segment.large_pool.allocated") - startSegs
			want := int64(min(len(tc.sizes), 1))
			if segs != want {
				t.Errorf("RunSteps(%v) asked the device for memory %d times (cudaMalloc of large segments); want %d — a new tensor per step lets every larger scale miss the cache: allocate one buffer of the largest size first and give each step a view (Narrow) of it, the chapter's \"预分配固定大小的缓冲区\"", tc.sizes, segs, want)
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
			t.Error("RunSteps with a size of 0: want an error")
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
			t.Errorf("RunSteps with a failing step: error %v; want the step's error", err)
		}
		if left := lab.MemoryAllocated(); left != 0 {
			t.Errorf("RunSteps with a failing step left %d bytes allocated; release on every path", left)
		}
	})
}
