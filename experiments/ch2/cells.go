package ch2

import (
	"errors"
	"fmt"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/tensor"
)

// TooFragmented reports what 2.3 calls fragmentation: the request of Request
// bytes failed out of memory (err) although the cache, as snap saw it before
// the request, held at least Request free bytes, none of its free blocks
// that large.
func TooFragmented(snap allocator.Snapshot, err error) bool {
	return memlab.IsOutOfMemory(err) && snap.TotalFree() >= Request && snap.LargestFreeBlock() < Request
}

// DeviceFree is mem_get_info()'s free bytes on l's device.
func DeviceFree(l *memlab.Lab) (int64, error) {
	free, _, err := l.MemGetInfo()
	if err != nil {
		return 0, fmt.Errorf("ch2: DeviceFree: %w", err)
	}
	return int64(free), nil
}

// DeviceBytes is what 2.1 watches on the device: memory_allocated,
// memory_reserved and the driver's count of used bytes, summed.
func DeviceBytes(l *memlab.Lab) (int64, error) {
	used, err := l.DriverUsed()
	if err != nil {
		return 0, fmt.Errorf("ch2: DeviceBytes: %w", err)
	}
	return l.MemoryAllocated() + l.MemoryReserved() + used, nil
}

// Steps runs n training steps of 2.4 on l, each allocating one activation of
// size bytes and freeing it.
func Steps(l *memlab.Lab, n, size int) error {
	for i := range n {
		act, err := tensor.Empty(l, tensor.Uint8, size)
		if err != nil {
			return fmt.Errorf("ch2: step %d: %w", i, err)
		}
		if err := act.Release(); err != nil {
			return errors.Join(fmt.Errorf("ch2: step %d", i), err)
		}
	}
	return nil
}

// HostBytesEach is how many bytes of host memory (the Go heap) f allocates,
// called for i from 0 to n-1: [HostBytes] of a loop.
func HostBytesEach(n int, f func(i int)) int64 {
	return HostBytes(func() {
		for i := range n {
			f(i)
		}
	})
}

// AllocTable is 2.2's table of requests: each request's block, pool and
// segment, then memory_stats()' byte and segment counters after it; rows
// come from [AllocRow].
func AllocTable() *memlab.Table {
	return memlab.NewTable("request", "block", "pool", "its segment", "allocated_bytes", "reserved_bytes",
		"small segments", "large segments")
}

// AllocRow adds t's row to tab, an [AllocTable]: the request's name, then
// the block, pool and segment that hold t on l and l's counters now.
func AllocRow(tab *memlab.Table, l *memlab.Lab, request string, t *tensor.Tensor) error {
	seg, b, ok := l.BlockOf(t)
	if !ok {
		return fmt.Errorf("ch2: AllocRow: no segment of the lab holds %s", request)
	}
	st := l.MemoryStats()
	tab.Row(request, memlab.FormatBytes(b.Size), seg.Pool, memlab.FormatBytes(seg.TotalSize), memlab.FormatBytes(st["allocated_bytes.all.current"]),
		memlab.FormatBytes(st["reserved_bytes.all.current"]), st["segment.small_pool.current"], st["segment.large_pool.current"])
	return nil
}

// GiBThenHalf is the probe of 2.2's PYTORCH_CUDA_ALLOC_CONF experiment, run
// on each lab: 1 GiB allocated and freed, then 512 MiB allocated and freed.
// Under the defaults the 512 MiB is cut from the cached GiB (1 GiB reserved
// after), under max_split_size_mb:128 it takes a segment of its own (1.5 GiB).
func GiBThenHalf(labs ...*memlab.Lab) error {
	for _, l := range labs {
		for _, n := range []int{1 << 30, 512 << 20} {
			t, err := tensor.Empty(l, tensor.Uint8, n)
			if err != nil {
				return fmt.Errorf("ch2: GiBThenHalf: %w", err)
			}
			if err := t.Release(); err != nil {
				return fmt.Errorf("ch2: GiBThenHalf: %w", err)
			}
		}
	}
	return nil
}
