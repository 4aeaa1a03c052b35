// Package device gives memlab the memory and kernels of one accelerator: a real
// CUDA GPU reached through the driver API, or a simulated device backed by host
// memory that behaves the same way for every lesson.
package device

import (
	"time"

	"memlab.dev/memlab/tensor"
)

// The kinds of device, as returned by Device.Kind.
const (
	CUDA      = "cuda"
	Simulated = "sim"
)

// Device is one accelerator's memory and kernels, as the CUDA driver offers them:
// raw device allocations (what the caching allocator calls cudaMalloc), the
// virtual-memory calls expandable segments need, and the kernels tensors run.
// A Device is safe for concurrent use.
type Device interface {
	tensor.Kernels

	// String names the device as PyTorch does: "cuda:0", or "sim:0" for the simulated one.
	String() string
	// Kind says what the device is backed by.
	Kind() string
	// Name is the hardware name, such as "NVIDIA H200" or "memlab simulated GPU (80 GiB)".
	Name() string
	// Index is the device ordinal.
	Index() int

	// Malloc allocates size bytes of device memory (cuMemAlloc). When the device
	// has no room the error has a method OutOfMemory() bool that returns true.
	Malloc(size uint64) (addr uint64, err error)
	// Free returns an allocation made by Malloc (cuMemFree).
	Free(addr uint64) error
	// MemGetInfo reports the driver's view of the device (cuMemGetInfo): bytes free
	// and total, counting every allocation of every process and the context itself.
	MemGetInfo() (free, total uint64, err error)

	// Granularity is the page size of Map and Unmap (cuMemGetAllocationGranularity).
	Granularity() uint64
	// ReserveAddress reserves size bytes of address space (cuMemAddressReserve)
	// without backing memory.
	ReserveAddress(size uint64) (addr uint64, err error)
	// FreeAddress releases a reservation made by ReserveAddress (cuMemAddressFree);
	// nothing in it may still be mapped.
	FreeAddress(addr, size uint64) error
	// Map backs [addr, addr+size) of a reservation with new physical memory and makes
	// it accessible (cuMemCreate + cuMemMap + cuMemSetAccess). addr and size are
	// multiples of Granularity. Out of memory is reported as by Malloc.
	Map(addr, size uint64) error
	// Unmap unmaps [addr, addr+size) and releases its physical memory
	// (cuMemUnmap + cuMemRelease). The range must consist of whole earlier Map
	// calls: a physical allocation cannot be split, so a caller that will unmap
	// page by page maps page by page, as PyTorch's expandable segments do.
	Unmap(addr, size uint64) error

	// Time runs f and returns the device time it took, measured with events on
	// the device's stream (CUDA events on a GPU, the wall clock on the simulator).
	Time(f func() error) (time.Duration, error)

	// Close releases the device's context. Memory still allocated is freed.
	Close() error
}
