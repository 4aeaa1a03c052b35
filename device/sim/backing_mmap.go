//go:build linux || darwin

package sim

import (
	"fmt"
	"syscall"
)

// newBacking returns size bytes of zeroed host memory that takes no RAM until
// touched: an anonymous private mapping reserved without swap, so that even a
// reservation larger than the host's RAM can be backed.
func newBacking(size uint64) ([]byte, error) {
	if size > maxBacking {
		return nil, fmt.Errorf("sim: cannot back %d bytes on this host", size)
	}
	b, err := syscall.Mmap(-1, 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE|syscall.MAP_NORESERVE)
	if err != nil {
		return nil, fmt.Errorf("sim: backing %d bytes of device memory: %w", size, err)
	}
	return b, nil
}

// releaseBacking returns a backing made by newBacking to the system. No slice
// of it may be used afterwards.
func releaseBacking(b []byte) { _ = syscall.Munmap(b) }
