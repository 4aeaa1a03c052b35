//go:build !solution

package inplace

import (
	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/tensor"
)

// Block computes what NaiveBlock computes, relu((x + b) * s) + x, for inference:
// no tape watches x. It allocates at most one new tensor (the result) and leaves
// x unchanged.
//
// 中文：计算 relu((x + b) * s) + x，只分配一次；x 不变。
func Block(x, b *tensor.Tensor, s float64) (*tensor.Tensor, error) {
	panic("not implemented")
}

// BlockTrain computes the same while a tape (autograd) watches x: the tape's
// saved tensors must still be intact afterwards (no version-counter error in
// Backward), x is unchanged, and the block allocates at most two tensors.
//
// 中文：在 x 被计算图观察时计算同样的结果，最多分配两次，且计算图保存的张量完好（tape.CheckSaved() 不失败）；
// x 不变。
func BlockTrain(x, b *tensor.Tensor, s float64) (*tensor.Tensor, error) {
	panic("not implemented")
}

// Saving measures what Block saves: it runs NaiveBlock and then Block on the
// same inputs, each from a fresh peak (reset_peak_memory_stats), and returns how
// far memory_allocated rose above its starting value during each. Both results
// are released before it returns.
//
// 中文：依次运行 NaiveBlock 和 Block，各自从刚重置的峰值开始，
// 返回每次 memory_allocated 比开始时最多高出多少；两个结果都释放。
func Saving(a *allocator.Allocator, x, b *tensor.Tensor, s float64) (naive, mine int64, err error) {
	panic("not implemented")
}
