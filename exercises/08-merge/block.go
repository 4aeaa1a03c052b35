// Package merge is exercise 08 of the memlab course: how PyTorch's CUDA caching
// allocator frees a block and merges it with free neighbours, and when a segment
// can be returned to CUDA. See README.md.
//
// 中文：练习 08：释放一个块，并把它和同一段里地址相邻的空闲块合并（free_block、
// try_merge_blocks），以及段什么时候能被 empty_cache 释放。
// 题目见 README.zh-CN.md。
package merge

// Block is one block of a segment.
type Block struct {
	Addr      uint64 // device address of the first byte
	Size      uint64 // bytes
	Allocated bool   // true while a tensor uses it
}
