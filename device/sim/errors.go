package sim

import (
	"errors"
	"fmt"

	"memlab.dev/memlab/units"
)

var (
	// ErrInvalidValue is wrapped by every error about a bad argument: an
	// unknown or misaligned address, a range outside a reservation, a page
	// mapped twice (CUDA_ERROR_INVALID_VALUE).
	ErrInvalidValue = errors.New("CUDA_ERROR_INVALID_VALUE: invalid argument")
	// ErrIllegalAddress is wrapped by errors of kernels and copies that touch
	// memory outside live allocations and mapped pages
	// (CUDA_ERROR_ILLEGAL_ADDRESS).
	ErrIllegalAddress = errors.New("CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered")
	// ErrClosed is returned by every method of a closed device.
	ErrClosed = errors.New("sim: device is closed")
)

// OutOfMemoryError is the error of a Malloc or Map that does not fit in the
// device's free memory.
type OutOfMemoryError struct {
	Op          string // "Malloc" or "Map"
	Size        uint64 // bytes requested, after rounding to whole pages
	Free, Total uint64 // the device's memory at the time, as MemGetInfo reports it
}

// Error reads like the driver's error, with the sizes involved.
func (e *OutOfMemoryError) Error() string {
	return fmt.Sprintf("sim: %s(%d): CUDA_ERROR_OUT_OF_MEMORY: out of memory (%s free of %s)",
		e.Op, e.Size, units.FormatBytes(e.Free), units.FormatBytes(e.Total))
}

// OutOfMemory reports true: the allocator's contract for recognising a
// device out of memory (see allocator.Memory).
func (e *OutOfMemoryError) OutOfMemory() bool { return true }

func invalid(op string, format string, args ...any) error {
	return fmt.Errorf("sim: %s: %w: %s", op, ErrInvalidValue, fmt.Sprintf(format, args...))
}
