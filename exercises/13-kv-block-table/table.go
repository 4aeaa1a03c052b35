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
func (bt *BlockTable) Append(seq, tokens int) ([]Copy, error) {
	panic("not implemented")
}

// Blocks returns a copy of the block table of seq: its physical blocks in logical
// order. It returns nil for an unknown sequence.
func (bt *BlockTable) Blocks(seq int) []int {
	panic("not implemented")
}

// Len returns the number of tokens of seq, 0 for an unknown sequence.
func (bt *BlockTable) Len(seq int) int {
	panic("not implemented")
}

// NumFree returns the number of physical blocks no sequence uses.
func (bt *BlockTable) NumFree() int {
	panic("not implemented")
}

// Slot returns the physical block and the offset within it of token pos of seq.
//
// It returns an error if seq is unknown or pos is outside [0, Len(seq)).
func (bt *BlockTable) Slot(seq, pos int) (block, offset int, err error) {
	panic("not implemented")
}

// Fork creates sequence child sharing all blocks and the length of parent.
//
// It returns an error if parent does not exist or child already exists.
func (bt *BlockTable) Fork(parent, child int) error {
	panic("not implemented")
}

// Free removes seq, returning each of its blocks to the free list when no other
// sequence shares it.
//
// It returns an error if seq does not exist.
func (bt *BlockTable) Free(seq int) error {
	panic("not implemented")
}
