// Package bestfit is exercise 06 of the memlab course: how PyTorch's CUDA caching
// allocator picks a cached block for a request — best fit ordered by (size,
// address) — and the oversize rules of max_split_size_mb. See README.md.
//
// 中文：练习 06：PyTorch 的 CUDA 缓存分配器如何为请求挑选缓存块——按 (大小, 地址) 排序的最佳适配——以及 max_split_size_mb 的超大块规则。
// 题目见 README.zh-CN.md。
package bestfit

// DefaultMaxNonSplitRounding is the default of max_non_split_rounding_mb (20 MiB).
const DefaultMaxNonSplitRounding = 20 << 20

// Block is a free (cached) block of one pool.
type Block struct {
	Addr uint64 // device address of the block's first byte
	Size uint64 // size in bytes (a rounded size)
}

// Config holds the allocator settings that affect the search. The zero value is
// PyTorch's default configuration.
type Config struct {
	// MaxSplitSize is max_split_size_mb in bytes: blocks at least this large are
	// oversize. 0 means unlimited (no block is oversize), PyTorch's default.
	MaxSplitSize uint64
	// MaxNonSplitRounding is max_non_split_rounding_mb in bytes: how much larger
	// than an oversize request a cached block may be. 0 means the 20 MiB default.
	MaxNonSplitRounding uint64
}
