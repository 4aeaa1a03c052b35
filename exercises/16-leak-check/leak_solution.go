//go:build solution

package leak

import (
	"errors"
	"fmt"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/tensor"
)

// LeakCheck is chapter 2.4's leak-check idiom on the allocator a: reset the peak
// statistics, note memory_allocated, run f, empty the cache, and return how many
// bytes are still allocated beyond the start (leaked) and how far allocated
// memory rose above the start while f ran (peak). f's error is returned as is,
// with both numbers still measured.
func LeakCheck(a *allocator.Allocator, f func() error) (leaked, peak int64, err error) {
	a.ResetPeakMemoryStats()
	start := a.MemoryAllocated()
	err = f()
	peak = a.MaxMemoryAllocated() - start
	if cerr := a.EmptyCache(); err == nil {
		err = cerr
	}
	return a.MemoryAllocated() - start, peak, err
}

// TrainLoop runs steps training steps on dev and returns each step's loss. The
// model is one weight w = Randn(dev, seed 1, float32, [64, 64]); step s draws
// x = Randn(dev, seed 100+s, float32, [32, 64]) and its loss is the sum of all
// elements of relu(x @ w). Every tensor it makes is released before it returns:
// the leak check reports zero.
func TrainLoop(dev tensor.Device, steps int) ([]float64, error) {
	if steps < 0 {
		return nil, fmt.Errorf("TrainLoop: steps = %d, want at least 0", steps)
	}
	var losses []float64
	err := tensor.WithScope(func(s *tensor.Scope) error {
		w, err := s.Track(tensor.Randn(dev, 1, tensor.Float32, 64, 64))
		if err != nil {
			return err
		}
		for i := 0; i < steps; i++ {
			loss, err := step(dev, w, i)
			if err != nil {
				return err
			}
			losses = append(losses, loss)
		}
		return nil
	})
	return losses, err
}

// step runs training step i and releases everything it made.
func step(dev tensor.Device, w *tensor.Tensor, i int) (loss float64, err error) {
	err = tensor.WithScope(func(s *tensor.Scope) error {
		x, err := s.Track(tensor.Randn(dev, uint64(100+i), tensor.Float32, 32, 64))
		if err != nil {
			return err
		}
		h, err := x.Matmul(w)
		if err != nil {
			return err
		}
		if err := h.Relu_(); err != nil {
			return err
		}
		rows, err := h.Sum(1, false)
		if err != nil {
			return err
		}
		total, err := rows.Sum(0, false)
		if err != nil {
			return err
		}
		loss, err = total.Item()
		return err
	})
	return loss, err
}

// CapTenants caps two tenants that share one card, each with its own allocator,
// with set_per_process_memory_fraction, so that neither can starve the other:
// whatever one of them allocates, the other can still get at least 416 MiB of
// the 1 GiB card the tests use (896 MiB of which are free: the rest is the CUDA
// context).
func CapTenants(a, b *allocator.Allocator) error {
	if a == nil || b == nil {
		return errors.New("CapTenants: a nil allocator")
	}
	free, total, err := a.MemGetInfo()
	if err != nil {
		return err
	}
	// Half of what is free each, as a fraction of the whole card.
	f := float64(free) / 2 / float64(total)
	return errors.Join(a.SetPerProcessMemoryFraction(f), b.SetPerProcessMemoryFraction(f))
}
