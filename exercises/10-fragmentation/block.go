// Package fragmentation is exercise 10 of the memlab course: measuring how the
// cached memory of PyTorch's CUDA caching allocator is broken into pieces, and which
// part of it empty_cache could give back. See README.md.
//
// 中文：练习 10：度量碎片化——空闲总量、最大空闲块，以及像 memory_summary() 那样把已预留的字节拆成已分配、
// 可释放和不可释放（非活跃分割块）。题目见 README.zh-CN.md。
package fragmentation

// Block is one block of a segment.
type Block struct {
	Size      uint64 // bytes
	Allocated bool   // true while a tensor uses it
}

// Summary describes the free (cached, unallocated) memory of a set of segments.
type Summary struct {
	TotalFree     uint64  // bytes in free blocks
	LargestFree   uint64  // size of the largest free block
	Fragmentation float64 // 1 − LargestFree/TotalFree, or 0 when TotalFree is 0
}

// Split divides the reserved memory of a set of segments as memory_summary does.
type Split struct {
	Allocated           uint64 // bytes in allocated blocks
	Releasable          uint64 // bytes of wholly free segments (empty_cache frees them)
	NonReleasable       uint64 // free bytes in segments with an allocated block (inactive_split_bytes)
	NonReleasableBlocks int    // number of those free blocks (inactive_split)
}
