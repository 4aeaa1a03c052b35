//go:build !solution

package segment

// PoolFor returns the pool a rounded request of size bytes is served from: the
// small pool for sizes up to and including SmallSize (1 MiB), the large pool above.
//
// It returns an error if size is not a rounded size (a multiple of 512, at least 512).
//
// 中文：返回取整后 size 字节的请求由哪个池满足：不超过 SmallSize（1 MiB，
// 含）进小块池，更大的进大块池。size 不是取整后的大小（512 的倍数，至少 512）
// 时返回错误。
func PoolFor(size uint64) (Pool, error) {
	panic("not implemented")
}

// SegmentSize returns the size of the segment (one cudaMalloc) the allocator makes
// for a rounded request of size bytes when no cached block fits: SmallBuffer (2 MiB)
// for sizes up to 1 MiB, LargeBuffer (20 MiB) for sizes below MinLargeAlloc (10 MiB),
// and otherwise size rounded up to a multiple of RoundLarge (2 MiB).
//
// It returns an error if size is not a rounded size (a multiple of 512, at least 512).
//
// 中文：返回没有缓存块装得下时，分配器为取整后 size 字节的请求新建的段（一次 cudaMalloc）
// 的大小：不超过 1 MiB 用 SmallBuffer（2 MiB），小于 MinLargeAlloc（10 MiB）
// 用 LargeBuffer（20 MiB），否则把 size 向上取整到 RoundLarge（2 MiB）
// 的倍数。size 不是取整后的大小时返回错误。
func SegmentSize(size uint64) (uint64, error) {
	panic("not implemented")
}
