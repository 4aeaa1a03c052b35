//go:build solution

// Package round is exercise 04 of the memlab course: the size rounding PyTorch's
// CUDA caching allocator applies to every request (round_size), with and without
// roundup_power2_divisions. See README.md.
package round

import (
	"fmt"
	"math/bits"
)

// MinBlockSize is kMinBlockSize: every rounded size is a multiple of it.
const MinBlockSize = 512

// MaxRequest is the smallest request PyTorch refuses outright (1 EiB).
const MaxRequest = 1 << 60

// RoundSize is the reference solution; round.go documents the contract.
func RoundSize(size, divisions uint64) (uint64, error) {
	if divisions&(divisions-1) != 0 {
		return 0, fmt.Errorf("round: divisions must be 0, 1 or a power of two, got %d", divisions)
	}
	if size >= MaxRequest {
		return 0, fmt.Errorf("round: tried to allocate %d bytes, more than 1 EiB", size)
	}
	if size < MinBlockSize {
		return MinBlockSize, nil
	}
	if divisions > 1 && size > MinBlockSize*divisions {
		if size&(size-1) == 0 {
			return size, nil
		}
		floor := uint64(1) << (bits.Len64(size) - 1)
		step := floor / divisions
		return (size + step - 1) / step * step, nil
	}
	return (size + MinBlockSize - 1) / MinBlockSize * MinBlockSize, nil
}

// IntervalIndex is the reference solution; round.go documents the contract.
func IntervalIndex(size uint64) int {
	return min(max(bits.Len64(size)-1-20, 0), 15)
}

// RoundSizeTable is the reference solution; round.go documents the contract.
func RoundSizeTable(size uint64, table [16]uint64) (uint64, error) {
	return RoundSize(size, table[IntervalIndex(size)])
}
