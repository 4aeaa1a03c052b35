// Package labtest opens the memlab labs the exercises on memlab's own API are
// tested on: a simulated device with PyTorch's caching allocator in front of
// it, closed when the test ends, and a way to measure a function's peak.
package labtest

import (
	"testing"

	"memlab.dev/memlab/memlab"
)

// Open opens a lab on a simulated device of the given capacity (such as
// "1GiB") with the given allocator settings (PYTORCH_CUDA_ALLOC_CONF syntax,
// "" for the defaults). It is not made the current lab, and it is closed when
// the test ends. A bad setting fails the test with the allocator's error.
func Open(t testing.TB, capacity, conf string, more ...memlab.Option) *memlab.Lab {
	t.Helper()
	opts := append([]memlab.Option{memlab.Sim(capacity), memlab.NotCurrent()}, more...)
	if conf != "" {
		opts = append(opts, memlab.AllocConf(conf))
	}
	lab, err := memlab.Open(opts...)
	if err != nil {
		t.Fatalf("opening a lab (%s, %q): %v", capacity, conf, err)
	}
	t.Cleanup(func() {
		if err := lab.Close(); err != nil {
			t.Errorf("closing the lab: %v", err)
		}
	})
	return lab
}

// Peak runs f on lab and returns how far memory_allocated rose above its value
// before the call (max_memory_allocated after reset_peak_memory_stats, minus
// the start), and f's error.
func Peak(lab *memlab.Lab, f func() error) (int64, error) {
	lab.ResetPeakMemoryStats()
	start := lab.MemoryAllocated()
	err := f()
	return lab.MaxMemoryAllocated() - start, err
}

// Stat returns one of the allocator's memory_stats counters, such as
// "segment.all.allocated" (cudaMalloc calls so far).
func Stat(lab *memlab.Lab, key string) int64 {
	return lab.MemoryStats()[key]
}
