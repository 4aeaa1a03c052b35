//go:build !solution

package leak

import (
	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/tensor"
)

// LeakCheck is chapter 2.4's leak-check idiom on the allocator a: reset the peak
// statistics, note memory_allocated, run f, empty the cache, and return how many
// bytes are still allocated beyond the start (leaked) and how far allocated
// memory rose above the start while f ran (peak). f's error is returned as is,
// with both numbers still measured.
//
// 中文：按教材的顺序运行 f 并返回 leaked（之后减之前的已分配）和 peak（f 运行期间已分配比开始时最多高出多少），
// 检查之前的分配和峰值不算；f 的错误原样返回。
func LeakCheck(a *allocator.Allocator, f func() error) (leaked, peak int64, err error) {
	panic("not implemented")
}

// TrainLoop runs steps training steps on dev and returns each step's loss. The
// model is one weight w = Randn(dev, seed 1, float32, [64, 64]); step s draws
// x = Randn(dev, seed 100+s, float32, [32, 64]) and its loss is the sum of all
// elements of relu(x @ w). Every tensor it makes is released before it returns:
// the leak check reports zero.
//
// 中文：运行 README 里的训练循环 steps 步，返回同样的 loss，
// 处理每个错误，且不泄漏任何显存。
func TrainLoop(dev tensor.Device, steps int) ([]float64, error) {
	panic("not implemented")
}

// CapTenants caps two tenants that share one card, each with its own allocator,
// with set_per_process_memory_fraction, so that neither can starve the other:
// whatever one of them allocates, the other can still get at least 416 MiB of
// the 1 GiB card the tests use (896 MiB of which are free: the rest is the CUDA
// context).
//
// 中文：用 SetPerProcessMemoryFraction 给两个租户设上限，
// 使任何一个贪心时仍能拿到至少 384 MiB，另一个之后还能分配 416 MiB。
func CapTenants(a, b *allocator.Allocator) error {
	panic("not implemented")
}
