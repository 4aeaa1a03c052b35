// Package split is exercise 07 of the memlab course: when PyTorch's CUDA caching
// allocator splits a cached block for a request, and the layout that results.
// See README.md.
//
// 中文：练习 07：PyTorch 的 CUDA 缓存分配器何时分割最佳适配的块（should_split），
// 以及分割后段里的块是什么样子。题目见 README.zh-CN.md。
package split

// Pool is one of the caching allocator's two pools.
type Pool int

// The two pools: rounded sizes up to 1 MiB are small, larger ones large.
const (
	SmallPool Pool = iota
	LargePool
)

// String returns "small" or "large".
func (p Pool) String() string {
	if p == SmallPool {
		return "small"
	}
	return "large"
}

// Block is one block of a segment.
type Block struct {
	Addr      uint64 // device address of the first byte
	Size      uint64 // bytes
	Allocated bool   // true while a tensor uses it
}

// Config holds the setting that affects splitting. The zero value is PyTorch's
// default configuration.
type Config struct {
	// MaxSplitSize is max_split_size_mb in bytes; requests at least this large
	// are never split. 0 means unlimited.
	MaxSplitSize uint64
}
