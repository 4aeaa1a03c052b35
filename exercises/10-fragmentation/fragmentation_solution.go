//go:build solution

package fragmentation

import "slices"

// Summarize is the reference solution; fragmentation.go documents the contract.
func Summarize(segments [][]Block) Summary {
	var s Summary
	for _, seg := range segments {
		for _, b := range seg {
			if !b.Allocated {
				s.TotalFree += b.Size
				s.LargestFree = max(s.LargestFree, b.Size)
			}
		}
	}
	if s.TotalFree > 0 {
		s.Fragmentation = 1 - float64(s.LargestFree)/float64(s.TotalFree)
	}
	return s
}

// Breakdown is the reference solution; fragmentation.go documents the contract.
func Breakdown(segments [][]Block) Split {
	var s Split
	for _, seg := range segments {
		inUse := slices.ContainsFunc(seg, func(b Block) bool { return b.Allocated })
		for _, b := range seg {
			switch {
			case b.Allocated:
				s.Allocated += b.Size
			case inUse:
				s.NonReleasable += b.Size
				s.NonReleasableBlocks++
			default:
				s.Releasable += b.Size
			}
		}
	}
	return s
}
