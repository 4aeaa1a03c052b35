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
func LeakCheck(a *allocator.Allocator, f func() error) (leaked, peak int64, err error) {
	panic("not implemented")
}

// TrainLoop runs steps training steps on dev and returns each step's loss. The
// model is one weight w = Randn(dev, seed 1, float32, [64, 64]); step s draws
// x = Randn(dev, seed 100+s, float32, [32, 64]) and its loss is the sum of all
// elements of relu(x @ w). Every tensor it makes is released before it returns:
// the leak check reports zero.
func TrainLoop(dev tensor.Device, steps int) ([]float64, error) {
	panic("not implemented")
}

// CapTenants caps two tenants that share one card, each with its own allocator,
// with set_per_process_memory_fraction, so that neither can starve the other:
// whatever one of them allocates, the other can still get at least 416 MiB of
// the 1 GiB card the tests use (896 MiB of which are free: the rest is the CUDA
// context).
func CapTenants(a, b *allocator.Allocator) error {
	panic("not implemented")
}
