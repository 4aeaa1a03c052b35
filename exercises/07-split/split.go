//go:build !solution

package split

// ShouldSplit reports whether allocating size bytes from a free block of blockSize
// bytes in pool splits the block (should_split): in the small pool if at least 512
// bytes remain; in the large pool if size is below cfg.MaxSplitSize (0 = unlimited)
// and more than 1 MiB remains. size ≤ blockSize is a precondition.
func ShouldSplit(pool Pool, blockSize, size uint64, cfg Config) bool {
	panic("not implemented")
}

// Allocate allocates size bytes from the free block segment[i] of a segment whose
// blocks are listed in address order, and returns the new list of blocks. If
// ShouldSplit says so, the allocation takes the block's first size bytes and a free
// block with the rest follows it; otherwise the whole block becomes allocated.
// segment is not modified.
//
// It returns an error if i is out of range, segment[i] is allocated, size is not a
// rounded size (a multiple of 512, at least 512) or size exceeds the block.
func Allocate(segment []Block, i int, size uint64, pool Pool, cfg Config) ([]Block, error) {
	panic("not implemented")
}
