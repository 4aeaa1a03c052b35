//go:build !solution

package fragmentation

// Summarize returns the total free bytes, the largest free block and the
// fragmentation 1 − largest/total of segments, each a list of blocks in address
// order. With no free memory every field is 0.
//
// 中文：返回各段空闲块的总字节数 TotalFree、最大的空闲块 LargestFree，
// 以及 Fragmentation = 1 − LargestFree/TotalFree（没有空闲时为 0）。
func Summarize(segments [][]Block) Summary {
	panic("not implemented")
}

// Breakdown splits the bytes of segments into allocated bytes, bytes of segments
// with no allocated block (releasable by empty_cache), and free bytes in segments
// that also hold an allocated block (non-releasable, with their block count).
//
// 中文：像 memory_summary() 那样把已预留的字节分成：Allocated（已分配块）、
// Releasable（整段只有一个空闲块的段）、NonReleasable（同时有已分配块的段里的空闲字节，
// 即 inactive_split_bytes）及这样的空闲块个数 NonReleasableBlocks。
func Breakdown(segments [][]Block) Split {
	panic("not implemented")
}
