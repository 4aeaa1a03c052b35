//go:build !solution

package merge

// Free frees the allocated block that starts at addr in segment, whose blocks are
// listed in address order, merges it with its previous and next blocks if they are
// free, and returns the new list of blocks. segment is not modified.
//
// It returns an error if no block starts at addr or the block there is already free.
//
// 中文：释放从 addr 开始的已分配块，把它和空闲的前一个和/或后一个块合并，
// 返回新的块列表；合并后的块保留最低的地址。不修改 segment。addr 不是某个块的起点，
// 或那里的块已经空闲（重复释放）时返回错误（不返回块）。
func Free(segment []Block, addr uint64) ([]Block, error) {
	panic("not implemented")
}

// Releasable reports whether empty_cache could return the segment to CUDA: it
// consists of exactly one block, and that block is free.
//
// 中文：报告 empty_cache() 能否释放这个段：它只有一个块，而且是空闲的。
func Releasable(segment []Block) bool {
	panic("not implemented")
}
