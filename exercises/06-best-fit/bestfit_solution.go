//go:build solution

package bestfit

import "math"

// BestFit is the reference solution; bestfit.go documents the contract.
func BestFit(free []Block, size uint64, cfg Config) int {
	best := -1
	for i, b := range free {
		if b.Size < size {
			continue
		}
		if best < 0 || b.Size < free[best].Size || (b.Size == free[best].Size && b.Addr < free[best].Addr) {
			best = i
		}
	}
	if best < 0 {
		return -1
	}
	maxSplit := cfg.MaxSplitSize
	if maxSplit == 0 {
		maxSplit = math.MaxUint64
	}
	slack := cfg.MaxNonSplitRounding
	if slack == 0 {
		slack = DefaultMaxNonSplitRounding
	}
	b := free[best]
	if size < maxSplit && b.Size >= maxSplit {
		return -1
	}
	if size >= maxSplit && b.Size >= size+slack {
		return -1
	}
	return best
}
