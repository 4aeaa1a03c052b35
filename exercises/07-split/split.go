//go:build !solution

package split

// ShouldSplit reports whether allocating size bytes from a free block of blockSize
// bytes in pool splits the block (should_split): in the small pool if at least 512
// bytes remain; in the large pool if size is below cfg.MaxSplitSize (0 = unlimited)
// and more than 1 MiB remains. size ≤ blockSize is a precondition.
//
// 中文：报告从 blockSize 字节的块分配 size 字节时是否分割：小块池剩下至少 512 字节就分割；
// 大块池只在 size 小于 cfg.MaxSplitSize（0 表示不限）
// 且剩下的严格多于 1 MiB 时才分割。
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
//
// 中文：从段的空闲块 i 分配 size 字节，返回新的块列表：分割时分配占低地址，
// 空闲的剩余部分紧跟其后；不分割时整个块变成已分配（多余部分也算）。不修改 segment。
// i 越界、块 i 已分配、size 不是取整后的大小或比块大时返回错误。
func Allocate(segment []Block, i int, size uint64, pool Pool, cfg Config) ([]Block, error) {
	panic("not implemented")
}
