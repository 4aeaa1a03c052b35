package memlab

import (
	"fmt"

	"memlab.dev/memlab/allocator"
)

// The torch.cuda memory API, as methods of a Lab and as package-level
// functions on the current lab ([Current]). With no lab open, a package-level
// function that returns an error returns [ErrNoLab]; one that returns only a
// value panics with it (a silent 0 would read as a measurement).

// MemoryAllocated is torch.cuda.memory_allocated: bytes in blocks held by live
// tensors, each rounded up to a multiple of 512 bytes (and, in the large pool,
// possibly a whole unsplit block).
func (l *Lab) MemoryAllocated() int64 { return l.alloc.MemoryAllocated() }

// MemoryReserved is torch.cuda.memory_reserved: bytes in all segments the
// allocator holds from the device, allocated or cached.
func (l *Lab) MemoryReserved() int64 { return l.alloc.MemoryReserved() }

// MaxMemoryAllocated is torch.cuda.max_memory_allocated: the peak of
// MemoryAllocated since the lab opened or the last ResetPeakMemoryStats.
func (l *Lab) MaxMemoryAllocated() int64 { return l.alloc.MaxMemoryAllocated() }

// MaxMemoryReserved is torch.cuda.max_memory_reserved: the peak of MemoryReserved.
func (l *Lab) MaxMemoryReserved() int64 { return l.alloc.MaxMemoryReserved() }

// EmptyCache is torch.cuda.empty_cache: every cached segment that is entirely
// free goes back to the device. Segments with any live block stay, with
// their free pieces; allocated bytes do not change.
func (l *Lab) EmptyCache() error { return l.alloc.EmptyCache() }

// MemoryStats is torch.cuda.memory_stats: every counter under PyTorch's key,
// such as "allocated_bytes.all.current" or "num_alloc_retries".
func (l *Lab) MemoryStats() map[string]int64 { return l.alloc.MemoryStats() }

// ResetPeakMemoryStats is torch.cuda.reset_peak_memory_stats: every peak
// becomes its current value.
func (l *Lab) ResetPeakMemoryStats() { l.alloc.ResetPeakMemoryStats() }

// SetPerProcessMemoryFraction is torch.cuda.set_per_process_memory_fraction:
// it caps the lab's reserved memory at fraction × the device's total memory
// (1 removes the cap). Only reserved memory counts, not the CUDA context.
func (l *Lab) SetPerProcessMemoryFraction(fraction float64) error {
	return l.alloc.SetPerProcessMemoryFraction(fraction)
}

// MemGetInfo is torch.cuda.mem_get_info: the driver's free and total bytes of
// the device, counting every process and the CUDA context — what nvidia-smi
// shows.
func (l *Lab) MemGetInfo() (free, total uint64, err error) { return l.alloc.MemGetInfo() }

// DriverUsed is total − free from [Lab.MemGetInfo]: the device memory in use
// as nvidia-smi reports it.
func (l *Lab) DriverUsed() (int64, error) { return l.driverUsed() }

// Snapshot is torch.cuda.memory_snapshot: the allocator's segments and blocks
// in address order (and its event history, when recorded).
func (l *Lab) Snapshot() allocator.Snapshot { return l.alloc.Snapshot() }

// MemoryAllocated is [Lab.MemoryAllocated] on the current lab.
func MemoryAllocated() int64 { return with("MemoryAllocated()", (*Lab).MemoryAllocated) }

// MemoryReserved is [Lab.MemoryReserved] on the current lab.
func MemoryReserved() int64 { return with("MemoryReserved()", (*Lab).MemoryReserved) }

// MaxMemoryAllocated is [Lab.MaxMemoryAllocated] on the current lab.
func MaxMemoryAllocated() int64 { return with("MaxMemoryAllocated()", (*Lab).MaxMemoryAllocated) }

// MaxMemoryReserved is [Lab.MaxMemoryReserved] on the current lab.
func MaxMemoryReserved() int64 { return with("MaxMemoryReserved()", (*Lab).MaxMemoryReserved) }

// MemoryStats is [Lab.MemoryStats] on the current lab.
func MemoryStats() map[string]int64 { return with("MemoryStats()", (*Lab).MemoryStats) }

// MemorySummary is [Lab.MemorySummary] on the current lab.
func MemorySummary() string { return with("MemorySummary()", (*Lab).MemorySummary) }

// Snapshot is [Lab.Snapshot] on the current lab.
func Snapshot() allocator.Snapshot { return with("Snapshot()", (*Lab).Snapshot) }

// EmptyCache is [Lab.EmptyCache] on the current lab.
func EmptyCache() error {
	l, err := Current()
	if err != nil {
		return err
	}
	return l.EmptyCache()
}

// ResetPeakMemoryStats is [Lab.ResetPeakMemoryStats] on the current lab.
func ResetPeakMemoryStats() {
	with("ResetPeakMemoryStats()", func(l *Lab) struct{} { l.ResetPeakMemoryStats(); return struct{}{} })
}

// SetPerProcessMemoryFraction is [Lab.SetPerProcessMemoryFraction] on the current lab.
func SetPerProcessMemoryFraction(fraction float64) error {
	l, err := Current()
	if err != nil {
		return err
	}
	return l.SetPerProcessMemoryFraction(fraction)
}

// MemGetInfo is [Lab.MemGetInfo] on the current lab.
func MemGetInfo() (free, total uint64, err error) {
	l, err := Current()
	if err != nil {
		return 0, 0, err
	}
	return l.MemGetInfo()
}

// DriverUsed is [Lab.DriverUsed] on the current lab.
func DriverUsed() (int64, error) {
	l, err := Current()
	if err != nil {
		return -1, err
	}
	return l.DriverUsed()
}

// with calls f on the current lab; with none it panics with ErrNoLab, named
// after the function called.
func with[T any](name string, f func(*Lab) T) T {
	l, err := Current()
	if err != nil {
		panic(fmt.Errorf("memlab.%s: %w", name, err))
	}
	return f(l)
}
