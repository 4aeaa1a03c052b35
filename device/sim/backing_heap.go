//go:build !linux && !darwin

package sim

import "fmt"

// heapBackingLimit is the largest backing made on the Go heap, where an
// allocation larger than the host can provide would end the process.
const heapBackingLimit = 16 << 30

// newBacking returns size zeroed bytes on the Go heap.
func newBacking(size uint64) ([]byte, error) {
	if size > heapBackingLimit || size > maxBacking {
		return nil, fmt.Errorf("sim: cannot back %d bytes of device memory on this system (at most %d)", size, uint64(heapBackingLimit))
	}
	return make([]byte, size), nil
}

// releaseBacking drops a backing; the garbage collector frees it.
func releaseBacking([]byte) {}
