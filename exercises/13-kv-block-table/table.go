//go:build !solution

package kvcache

// BlockTable maps the tokens of sequences to physical KV-cache blocks of a fixed
// number of tokens, shared between sequences with reference counts.
type BlockTable struct {
	// Add the fields you need.
}

// NewBlockTable returns a table over physical blocks 0 … numBlocks−1 of blockSize
// tokens each, all free.
//
// It returns an error if numBlocks or blockSize is less than 1.
//
// 中文：创建一个有 numBlocks 个物理块（全部空闲）、每块 blockSize 个词元的块表。
// 两者都至少为 1，否则返回错误。
func NewBlockTable(numBlocks, blockSize int) (*BlockTable, error) {
	panic("not implemented")
}

// Append adds tokens to sequence seq, creating it if it does not exist. It fills the
// sequence's last block before taking new blocks, lowest free id first. If the last
// block is shared with another sequence and partly filled, Append first replaces it
// with a new block and returns a Copy for the caller to perform; otherwise the
// result is empty.
//
// It returns an error if tokens < 1, and an error wrapping ErrOutOfBlocks if too
// few blocks are free; either way nothing changes.
//
// 中文：给序列 seq 追加 tokens 个词元（第一次用到时创建它）：
// 先填满最后一块，新块按 id 从小到大取；最后一块共享且未填满时先写时复制，
// 返回需要的拷贝。空闲块不够时返回包装 ErrOutOfBlocks 的错误，
// 什么都不改。
func (bt *BlockTable) Append(seq, tokens int) ([]Copy, error) {
	panic("not implemented")
}

// Blocks returns a copy of the block table of seq: its physical blocks in logical
// order. It returns nil for an unknown sequence.
//
// 中文：返回序列的块表的拷贝；未知序列返回 nil。
func (bt *BlockTable) Blocks(seq int) []int {
	panic("not implemented")
}

// Len returns the number of tokens of seq, 0 for an unknown sequence.
//
// 中文：返回序列的词元数；未知序列返回 0。
func (bt *BlockTable) Len(seq int) int {
	panic("not implemented")
}

// NumFree returns the number of physical blocks no sequence uses.
//
// 中文：返回空闲的物理块数。
func (bt *BlockTable) NumFree() int {
	panic("not implemented")
}

// Slot returns the physical block and the offset within it of token pos of seq.
//
// It returns an error if seq is unknown or pos is outside [0, Len(seq)).
//
// 中文：返回序列第 pos 个词元所在的物理块和块内偏移。位置越界或序列未知时返回错误。
func (bt *BlockTable) Slot(seq, pos int) (block, offset int, err error) {
	panic("not implemented")
}

// Fork creates sequence child sharing all blocks and the length of parent.
//
// It returns an error if parent does not exist or child already exists.
//
// 中文：创建 child，共享 parent 的所有块（引用计数加一）和长度。
// parent 不存在、child 已存在或二者相同时返回错误。
func (bt *BlockTable) Fork(parent, child int) error {
	panic("not implemented")
}

// Free removes seq, returning each of its blocks to the free list when no other
// sequence shares it.
//
// It returns an error if seq does not exist.
//
// 中文：把序列的块的引用计数减一，降到 0 的块回到空闲列表，然后删除这个序列。
// 序列不存在时返回错误。
func (bt *BlockTable) Free(seq int) error {
	panic("not implemented")
}
