//go:build solution

package budget

import (
	"errors"
	"fmt"
	"slices"

	"memlab.dev/memlab/tensor"
)

// AllocConf returns the allocator settings, in PYTORCH_CUDA_ALLOC_CONF syntax
// (such as "max_split_size_mb:512"), under which the fragmenting workload of
// part A fits in its 1 GiB card. "" means PyTorch's defaults — which run out of
// memory.
func AllocConf() string {
	// Blocks of 64 MiB and more are never split, so the 60 MiB tensors stop
	// carving up the cached 100 MiB segments (expandable_segments:True works too).
	return "max_split_size_mb:64"
}

// RunSteps runs one step per entry of sizes. Step i needs a contiguous float32
// feature map of exactly sizes[i] elements (a 1-D tensor on dev), which it
// receives through step(i, featureMap); RunSteps owns the memory and must
// release everything it allocated before it returns. It stops at the first
// error (of the allocator or of step) and returns it.
//
// Part B's rule: the whole run may ask the device for memory once — one
// buffer, allocated before the first step, serves every step.
func RunSteps(dev tensor.Device, sizes []int, step func(i int, featureMap *tensor.Tensor) error) (err error) {
	if len(sizes) == 0 {
		return nil
	}
	for i, n := range sizes {
		if n < 1 {
			return fmt.Errorf("RunSteps: sizes[%d] = %d, want at least 1", i, n)
		}
	}
	buf, err := tensor.Empty(dev, tensor.Float32, slices.Max(sizes))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, buf.Release()) }()
	for i, n := range sizes {
		fm, err := buf.Narrow(0, 0, n)
		if err != nil {
			return err
		}
		err = step(i, fm)
		if rerr := fm.Release(); err == nil {
			err = rerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}
