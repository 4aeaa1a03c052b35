// Package kvcache is exercise 13 of the memlab course: a paged KV-cache block table
// in the style of vLLM's PagedAttention — blocks allocated on demand from a free
// list, shared between forked sequences with reference counts, and copied on
// write. See README.md.
//
// 中文：练习 13：分页 KV 缓存（vLLM 的 PagedAttention）
// 的块表——按需分配固定大小的块、按词元定位、fork 共享与写时复制。
// 题目见 README.zh-CN.md。
package kvcache

import "errors"

// ErrOutOfBlocks is returned (wrapped) by Append when too few physical blocks are
// free for the tokens to append.
var ErrOutOfBlocks = errors.New("kvcache: out of blocks")

// Copy asks the caller to copy the KV data of physical block From into block To,
// because To replaces the shared block From in one sequence (copy-on-write).
type Copy struct {
	From, To int
}
