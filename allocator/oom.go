package allocator

import (
	"fmt"
	"strings"
)

// OutOfMemoryError is returned by Malloc when neither the cache nor the device can
// serve a request (torch.OutOfMemoryError). Its Error text follows PyTorch 2.11's.
// The allocator stays consistent and usable afterwards; cached segments released by
// the retry path are gone.
type OutOfMemoryError struct {
	Requested int64 // the request, in bytes
	Rounded   int64 // the request after round_size
	AllocSize int64 // the segment size that was tried ("Tried to allocate ...")
	Device    int   // device index
	Total     uint64
	Free      uint64 // device free bytes as MemGetInfo reported them
	Allowed   int64  // the per-process fraction cap in bytes, when Capped
	Capped    bool   // a per-process memory fraction was in force
	Allocated int64  // allocated bytes at the time
	Reserved  int64  // reserved bytes at the time
	// InPrivatePools is what PyTorch's message calls "allocated in private pools":
	// the bytes of the free (cached) blocks of every private pool. The message adds
	// it to Allocated and takes it off the unallocated reserve.
	InPrivatePools int64
	// ProcessInUse is what the driver reports this process uses (NVML), 0 if unknown.
	// The Memory provides it through an optional method
	// ProcessMemoryInUse() (bytes uint64, ok bool).
	ProcessInUse uint64
	tooLarge     bool
}

// Error renders PyTorch's message, all on one line.
func (e *OutOfMemoryError) Error() string {
	if e.tooLarge {
		return "CUDA out of memory. Tried to allocate more than 1EB memory."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "CUDA out of memory. Tried to allocate %s. GPU %d has a total capacity of %s of which %s is free. ",
		FormatSize(e.AllocSize), e.Device, FormatSize(int64(e.Total)), FormatSize(int64(e.Free)))
	if e.ProcessInUse > 0 {
		fmt.Fprintf(&b, "Including non-PyTorch memory, this process has %s memory in use. ", FormatSize(int64(e.ProcessInUse)))
	}
	if e.Capped {
		fmt.Fprintf(&b, "%s allowed; ", FormatSize(e.Allowed))
	}
	fmt.Fprintf(&b, "Of the allocated memory %s is allocated by PyTorch, ", FormatSize(e.Allocated+e.InPrivatePools))
	if e.InPrivatePools > 0 {
		fmt.Fprintf(&b, "with %s allocated in private pools (e.g., CUDA Graphs), ", FormatSize(e.InPrivatePools))
	}
	fmt.Fprintf(&b, "and %s is reserved by PyTorch but unallocated.", FormatSize(e.Reserved-e.Allocated-e.InPrivatePools))
	b.WriteString(" If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)")
	return b.String()
}

// OutOfMemory reports true, so callers can test errors the way Memory errors are tested.
func (e *OutOfMemoryError) OutOfMemory() bool { return true }

// outOfMemory builds the error after every attempt failed. Called with a.mu held.
func (a *Allocator) outOfMemory(req, rounded, allocSize int64, stream uint64, p *pool) error {
	free, total, err := a.mem.MemGetInfo()
	if err != nil {
		free, total = 0, uint64(a.total)
	}
	e := &OutOfMemoryError{
		Requested: req, Rounded: rounded, AllocSize: allocSize, Device: a.device,
		Total: total, Free: free,
		Allocated: a.stats.allocatedBytes[statAll].Current,
		Reserved:  a.stats.reservedBytes[statAll].Current,

		InPrivatePools: a.privatePoolFreeBytes(),
	}
	if a.setFraction {
		e.Capped, e.Allowed = true, a.allowed
	}
	if pm, ok := a.mem.(interface{ ProcessMemoryInUse() (uint64, bool) }); ok {
		if n, ok := pm.ProcessMemoryInUse(); ok {
			e.ProcessInUse = n
		}
	}
	a.stats.numOOMs++
	if a.tracing {
		a.emit(ActionOOM, free, rounded, stream, p, nil)
	}
	return e
}
