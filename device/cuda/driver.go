package cuda

import "unsafe"

// driver is the part of the CUDA driver API memlab uses, behind which sit the
// two bindings: purego (libcuda.so.1 loaded at run time, the default) and
// gorgonia.org/cu (cgo, with -tags cuda). Every method is called from the one
// OS thread that owns the device's context, after open.
type driver interface {
	// binding names the implementation: "purego" or "gorgonia.org/cu".
	binding() string
	// open retains ordinal's primary context and makes it current on the
	// calling thread.
	open(ordinal int) error
	// makeCurrent makes the context current on the calling thread.
	makeCurrent() error
	// close releases the primary context.
	close() error
	version() (int, error)
	deviceName() (string, error)
	attribute(attr int) (int, error)
	totalMem() (uint64, error)

	memAlloc(size uint64) (uint64, error)
	memFree(addr uint64) error
	memGetInfo() (free, total uint64, err error)
	memcpyHtoD(dst uint64, src unsafe.Pointer, n uint64) error
	memcpyDtoH(dst unsafe.Pointer, src uint64, n uint64) error
	memcpyDtoD(dst, src uint64, n uint64) error
	memsetD8(dst uint64, v uint8, n uint64) error
	memsetD16(dst uint64, v uint16, n uint64) error
	memsetD32(dst uint64, v uint32, n uint64) error

	moduleLoadData(image []byte) (uintptr, error)
	moduleFunction(mod uintptr, name string) (uintptr, error)
	moduleGlobal(mod uintptr, name string) (uint64, error)
	moduleUnload(mod uintptr) error
	// launch runs fn on the default stream with the given arguments.
	launch(fn uintptr, grid, block [3]uint32, shared uint32, args []karg) error
	synchronize() error

	eventCreate() (uintptr, error)
	eventRecord(ev uintptr) error
	eventSynchronize(ev uintptr) error
	eventElapsed(start, end uintptr) (float32, error)
	eventDestroy(ev uintptr) error
}

// vmm is the virtual-memory part of the driver API that expandable segments
// need. Only the purego binding has it; the cu build borrows purego's.
type vmm interface {
	granularity(ordinal int) (uint64, error)
	addressReserve(size, align uint64) (uint64, error)
	addressFree(addr, size uint64) error
	memCreate(ordinal int, size uint64) (uint64, error)
	memMap(addr, size uint64, handle uint64) error
	memSetAccess(ordinal int, addr, size uint64) error
	memUnmap(addr, size uint64) error
	memRelease(handle uint64) error
}

// Device attributes read at open.
const (
	attrMultiprocessorCount = 16
	attrCCMajor             = 75
	attrCCMinor             = 76
)

// karg is one kernel argument: a pointer to its value and the value's size.
type karg struct {
	p unsafe.Pointer
	n uintptr
}
