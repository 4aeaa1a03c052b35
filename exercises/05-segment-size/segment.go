//go:build !solution

package segment

// PoolFor returns the pool a rounded request of size bytes is served from: the
// small pool for sizes up to and including SmallSize (1 MiB), the large pool above.
//
// It returns an error if size is not a rounded size (a multiple of 512, at least 512).
func PoolFor(size uint64) (Pool, error) {
	panic("not implemented")
}

// SegmentSize returns the size of the segment (one cudaMalloc) the allocator makes
// for a rounded request of size bytes when no cached block fits: SmallBuffer (2 MiB)
// for sizes up to 1 MiB, LargeBuffer (20 MiB) for sizes below MinLargeAlloc (10 MiB),
// and otherwise size rounded up to a multiple of RoundLarge (2 MiB).
//
// It returns an error if size is not a rounded size (a multiple of 512, at least 512).
func SegmentSize(size uint64) (uint64, error) {
	panic("not implemented")
}
