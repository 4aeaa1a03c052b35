package allocator

import "fmt"

// Memory is the device memory a caching allocator manages, as the CUDA driver
// offers it. device.Device implements it; tests use fakes.
type Memory interface {
	// Malloc allocates one segment of size bytes (cudaMalloc). When the device has
	// no room, the returned error has a method OutOfMemory() bool that returns true;
	// any other error is passed on to the caller of the allocator unchanged.
	Malloc(size uint64) (addr uint64, err error)
	// Free releases a segment made by Malloc (cudaFree).
	Free(addr uint64) error
	// MemGetInfo reports the driver's free and total bytes (cudaMemGetInfo).
	MemGetInfo() (free, total uint64, err error)
}

// VirtualMemory is what expandable segments need in addition: address ranges
// reserved up front and backed page by page. A Memory that does not implement it
// makes expandable_segments:True an error.
type VirtualMemory interface {
	Memory
	// Granularity is the physical page size of Map and Unmap.
	Granularity() uint64
	// ReserveAddress reserves size bytes of address space (cuMemAddressReserve).
	ReserveAddress(size uint64) (addr uint64, err error)
	// FreeAddress releases a reservation (cuMemAddressFree).
	FreeAddress(addr, size uint64) error
	// Map backs [addr, addr+size) with physical memory (cuMemCreate/Map/SetAccess).
	Map(addr, size uint64) error
	// Unmap releases the physical memory behind [addr, addr+size).
	Unmap(addr, size uint64) error
}

// DeviceOutOfMemory is the out-of-memory error a simulated Memory returns when it
// has no room: its OutOfMemory method tells the allocator to free cached blocks
// and retry, as a cudaMalloc failing with cudaErrorMemoryAllocation does.
type DeviceOutOfMemory struct {
	Device string // what ran out, such as "replay: device"
	Size   uint64 // the bytes asked for
}

// Error says what ran out and how much was asked for.
func (e *DeviceOutOfMemory) Error() string {
	return fmt.Sprintf("%s out of memory allocating %d bytes", e.Device, e.Size)
}

// OutOfMemory reports true.
func (e *DeviceOutOfMemory) OutOfMemory() bool { return true }
