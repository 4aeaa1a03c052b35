package allocator

import (
	"fmt"
	"math/bits"
)

// Constants of PyTorch's CUDA caching allocator (top of CUDACachingAllocator.cpp).
const (
	// MinBlockSize is the granularity of every block: sizes are rounded up to a multiple of it.
	MinBlockSize = 512
	// SmallSize is the largest rounded size served from the small pool (1 MiB).
	SmallSize = 1 << 20
	// SmallBuffer is the size of a small-pool segment and of a small expandable page (2 MiB).
	SmallBuffer = 2 << 20
	// LargeBuffer is the default segment size for 1–10 MiB requests, the default
	// oversize slack (max_non_split_rounding) and the default large expandable page (20 MiB).
	LargeBuffer = 20 << 20
	// MinLargeAlloc is the size from which a request gets a segment of its own size (10 MiB).
	MinLargeAlloc = 10 << 20
	// RoundLarge is the multiple that segments of MinLargeAlloc and more are rounded to (2 MiB).
	RoundLarge = 2 << 20
	// RoundupIntervals is the number of power-of-two intervals roundup_power2_divisions covers
	// (1 MiB up to 64 GiB).
	RoundupIntervals = 16
	// maxRequest is the first request size PyTorch refuses outright (1 EiB).
	maxRequest = 1 << 60
)

// roundupIndex returns the roundup_power2_divisions interval of size:
// floor(log2(size)) − 20, clamped to [0, RoundupIntervals-1].
func roundupIndex(size uint64) int {
	if size == 0 {
		return 0
	}
	l := 63 - bits.LeadingZeros64(size)
	idx := 0
	if l > 20 {
		idx = l - 20
	}
	if idx > RoundupIntervals-1 {
		idx = RoundupIntervals - 1
	}
	return idx
}

// roundupPower2NextDivision rounds size up to the next 1/divisions step of its octave.
func roundupPower2NextDivision(size, divisions uint64) uint64 {
	if size&(size-1) == 0 {
		return size
	}
	floor := uint64(1) << (63 - bits.LeadingZeros64(size))
	step := floor >> (63 - bits.LeadingZeros64(divisions))
	if step == 0 {
		return floor << 1
	}
	f := size &^ (step - 1)
	if f == size {
		return size
	}
	return f + step
}

// RoundSize is PyTorch's round_size: the size a request of n bytes occupies under cfg.
// It does not check n; n must be positive.
func RoundSize(n int64, cfg Config) int64 { return roundSize(n, &cfg.RoundupPower2Divisions) }

func roundSize(n int64, divs *[RoundupIntervals]int) int64 {
	size := uint64(n)
	if size < MinBlockSize {
		return MinBlockSize
	}
	d := uint64(divs[roundupIndex(size)])
	if d > 1 && size > MinBlockSize*d {
		return int64(roundupPower2NextDivision(size, d))
	}
	return int64(MinBlockSize * ((size + MinBlockSize - 1) / MinBlockSize))
}

// allocationSize is get_allocation_size: the segment size cudaMalloc is asked for
// when a rounded size finds no cached block.
func allocationSize(size int64, largeSegment int64) int64 {
	switch {
	case size <= SmallSize:
		return SmallBuffer
	case size < MinLargeAlloc:
		return largeSegment
	default:
		return RoundLarge * ((size + RoundLarge - 1) / RoundLarge)
	}
}

// FormatSize renders a byte count as PyTorch's C++ format_size does in OOM messages:
// "512 bytes", "1.50 KiB", "20.00 MiB", "1.00 GiB". Boundaries are inclusive, so
// exactly 1 MiB prints "1024.00 KiB".
func FormatSize(n int64) string {
	u := uint64(n)
	switch {
	case u <= 1024:
		return fmt.Sprintf("%d bytes", u)
	case u <= 1048576:
		return fmt.Sprintf("%.2f KiB", float64(u)/1024.0)
	case u <= 1073741824:
		return fmt.Sprintf("%.2f MiB", float64(u)/1048576.0)
	default:
		return fmt.Sprintf("%.2f GiB", float64(u)/1073741824.0)
	}
}
