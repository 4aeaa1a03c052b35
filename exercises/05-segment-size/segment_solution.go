//go:build solution

package segment

import "fmt"

// PoolFor is the reference solution; segment.go documents the contract.
func PoolFor(size uint64) (Pool, error) {
	if err := checkRounded(size); err != nil {
		return 0, err
	}
	if size <= SmallSize {
		return SmallPool, nil
	}
	return LargePool, nil
}

// SegmentSize is the reference solution; segment.go documents the contract.
func SegmentSize(size uint64) (uint64, error) {
	if err := checkRounded(size); err != nil {
		return 0, err
	}
	switch {
	case size <= SmallSize:
		return SmallBuffer, nil
	case size < MinLargeAlloc:
		return LargeBuffer, nil
	default:
		return (size + RoundLarge - 1) / RoundLarge * RoundLarge, nil
	}
}

// checkRounded rejects sizes that round_size could not have produced.
func checkRounded(size uint64) error {
	if size < MinBlockSize || size%MinBlockSize != 0 {
		return fmt.Errorf("segment: %d is not a rounded size (a multiple of %d, at least %d); round the request first", size, MinBlockSize, MinBlockSize)
	}
	return nil
}
