// Package segment is exercise 05 of the memlab course: which pool of PyTorch's CUDA
// caching allocator a rounded request goes to, and how large a segment the
// allocator asks CUDA for when nothing cached fits. See README.md.
//
// 中文：练习 05：取整后的请求进 PyTorch CUDA 缓存分配器的哪个池，
// 以及没有缓存块装得下时分配器向 CUDA 申请多大的段。题目见 README.zh-CN.md。
package segment

// Sizes used by the caching allocator (c10/cuda/CUDACachingAllocator.cpp).
const (
	MinBlockSize  = 512      // kMinBlockSize: rounded sizes are multiples of this
	SmallSize     = 1 << 20  // kSmallSize: rounded sizes up to this go to the small pool
	SmallBuffer   = 2 << 20  // kSmallBuffer: the segment size of the small pool
	LargeBuffer   = 20 << 20 // kLargeBuffer: the segment size for sizes in (1 MiB, 10 MiB)
	MinLargeAlloc = 10 << 20 // kMinLargeAlloc: from this size, segments fit the request
	RoundLarge    = 2 << 20  // kRoundLarge: large segments are multiples of this
)

// Pool is one of the caching allocator's two pools of cached blocks.
type Pool int

// The two pools. Blocks never move between them.
const (
	SmallPool Pool = iota // rounded sizes ≤ 1 MiB, carved from 2 MiB segments
	LargePool             // rounded sizes > 1 MiB
)

// String returns "small" or "large", the segment_type names of memory_snapshot().
func (p Pool) String() string {
	switch p {
	case SmallPool:
		return "small"
	case LargePool:
		return "large"
	}
	return "Pool(?)"
}
