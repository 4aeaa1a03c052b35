//go:build solution

package split

import (
	"fmt"
	"math"
)

// ShouldSplit is the reference solution; split.go documents the contract.
func ShouldSplit(pool Pool, blockSize, size uint64, cfg Config) bool {
	remaining := blockSize - size
	if pool == SmallPool {
		return remaining >= 512
	}
	maxSplit := cfg.MaxSplitSize
	if maxSplit == 0 {
		maxSplit = math.MaxUint64
	}
	return size < maxSplit && remaining > 1<<20
}

// Allocate is the reference solution; split.go documents the contract.
func Allocate(segment []Block, i int, size uint64, pool Pool, cfg Config) ([]Block, error) {
	if i < 0 || i >= len(segment) {
		return nil, fmt.Errorf("split: block index %d out of range for a segment of %d blocks", i, len(segment))
	}
	b := segment[i]
	switch {
	case b.Allocated:
		return nil, fmt.Errorf("split: block %d (%d bytes at %#x) is already allocated", i, b.Size, b.Addr)
	case size < 512 || size%512 != 0:
		return nil, fmt.Errorf("split: %d is not a rounded size (a multiple of 512, at least 512)", size)
	case size > b.Size:
		return nil, fmt.Errorf("split: %d bytes do not fit in block %d of %d bytes", size, i, b.Size)
	}
	out := make([]Block, 0, len(segment)+1)
	out = append(out, segment[:i]...)
	if ShouldSplit(pool, b.Size, size, cfg) {
		out = append(out,
			Block{Addr: b.Addr, Size: size, Allocated: true},
			Block{Addr: b.Addr + size, Size: b.Size - size})
	} else {
		out = append(out, Block{Addr: b.Addr, Size: b.Size, Allocated: true})
	}
	return append(out, segment[i+1:]...), nil
}
