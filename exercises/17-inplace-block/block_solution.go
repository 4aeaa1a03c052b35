//go:build solution

package inplace

import (
	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/tensor"
)

// Block computes what NaiveBlock computes, relu((x + b) * s) + x, for inference:
// no tape watches x. It allocates at most one new tensor (the result) and leaves
// x unchanged.
func Block(x, b *tensor.Tensor, s float64) (*tensor.Tensor, error) {
	h, err := x.Add(b) // the one new tensor: x itself must not change
	if err != nil {
		return nil, err
	}
	for _, op := range []func() error{
		func() error { return h.Scale_(s) },
		h.Relu_,
		func() error { return h.Add_(x) },
	} {
		if err := op(); err != nil {
			return nil, release(h, err)
		}
	}
	return h, nil
}

// BlockTrain computes the same while a tape (autograd) watches x: the tape's
// saved tensors must still be intact afterwards (no version-counter error in
// Backward), x is unchanged, and the block allocates at most two tensors.
func BlockTrain(x, b *tensor.Tensor, s float64) (*tensor.Tensor, error) {
	h, err := x.Add(b)
	if err != nil {
		return nil, err
	}
	// Scaling by a constant saves nothing, and relu saves its output — which is
	// h itself, so nothing may change h after Relu_.
	if err := h.Scale_(s); err != nil {
		return nil, release(h, err)
	}
	if err := h.Relu_(); err != nil {
		return nil, release(h, err)
	}
	out, err := h.Add(x) // out of place: h is saved for backward
	return out, release(h, err)
}

// Saving measures what Block saves: it runs NaiveBlock and then Block on the
// same inputs, each from a fresh peak (reset_peak_memory_stats), and returns how
// far memory_allocated rose above its starting value during each. Both results
// are released before it returns.
func Saving(a *allocator.Allocator, x, b *tensor.Tensor, s float64) (naive, mine int64, err error) {
	measure := func(block func(x, b *tensor.Tensor, s float64) (*tensor.Tensor, error)) (int64, error) {
		a.ResetPeakMemoryStats()
		start := a.MemoryAllocated()
		out, err := block(x, b, s)
		if err != nil {
			return 0, err
		}
		return a.MaxMemoryAllocated() - start, out.Release()
	}
	if naive, err = measure(NaiveBlock); err != nil {
		return 0, 0, err
	}
	mine, err = measure(Block)
	return naive, mine, err
}
