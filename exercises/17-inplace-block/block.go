//go:build !solution

package inplace

import (
	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/tensor"
)

// Block computes what NaiveBlock computes, relu((x + b) * s) + x, for inference:
// no tape watches x. It allocates at most one new tensor (the result) and leaves
// x unchanged.
func Block(x, b *tensor.Tensor, s float64) (*tensor.Tensor, error) {
	panic("not implemented")
}

// BlockTrain computes the same while a tape (autograd) watches x: the tape's
// saved tensors must still be intact afterwards (no version-counter error in
// Backward), x is unchanged, and the block allocates at most two tensors.
func BlockTrain(x, b *tensor.Tensor, s float64) (*tensor.Tensor, error) {
	panic("not implemented")
}

// Saving measures what Block saves: it runs NaiveBlock and then Block on the
// same inputs, each from a fresh peak (reset_peak_memory_stats), and returns how
// far memory_allocated rose above its starting value during each. Both results
// are released before it returns.
func Saving(a *allocator.Allocator, x, b *tensor.Tensor, s float64) (naive, mine int64, err error) {
	panic("not implemented")
}
