//go:build solution

package kvcache

import (
	"fmt"
	"slices"
)

// BlockTable is the reference solution; table.go documents the contract.
type BlockTable struct {
	blockSize int
	refs      []int // reference count of each physical block; 0 = free
	free      int   // number of blocks with refs 0
	tables    map[int][]int
	lens      map[int]int
}

// NewBlockTable is the reference solution; table.go documents the contract.
func NewBlockTable(numBlocks, blockSize int) (*BlockTable, error) {
	if numBlocks < 1 || blockSize < 1 {
		return nil, fmt.Errorf("kvcache: need at least one block of at least one token, got %d blocks of %d tokens", numBlocks, blockSize)
	}
	return &BlockTable{
		blockSize: blockSize,
		refs:      make([]int, numBlocks),
		free:      numBlocks,
		tables:    map[int][]int{},
		lens:      map[int]int{},
	}, nil
}

// take marks the lowest free block used and returns it. A block must be free.
func (bt *BlockTable) take() int {
	b := slices.Index(bt.refs, 0)
	bt.refs[b] = 1
	bt.free--
	return b
}

// release drops one reference to block b.
func (bt *BlockTable) release(b int) {
	bt.refs[b]--
	if bt.refs[b] == 0 {
		bt.free++
	}
}

// Append is the reference solution; table.go documents the contract.
func (bt *BlockTable) Append(seq, tokens int) ([]Copy, error) {
	if tokens < 1 {
		return nil, fmt.Errorf("kvcache: append of %d tokens to sequence %d, want at least 1", tokens, seq)
	}
	table, n := bt.tables[seq], bt.lens[seq]
	ceil := func(x int) int { return (x + bt.blockSize - 1) / bt.blockSize }
	need := ceil(n+tokens) - ceil(n)
	cow := n%bt.blockSize != 0 && bt.refs[table[len(table)-1]] > 1
	if cow {
		need++
	}
	if need > bt.free {
		return nil, fmt.Errorf("%w: sequence %d needs %d blocks for %d more tokens, %d are free", ErrOutOfBlocks, seq, need, tokens, bt.free)
	}
	table = slices.Clone(table)
	var copies []Copy
	if cow {
		old := table[len(table)-1]
		nb := bt.take()
		bt.release(old)
		table[len(table)-1] = nb
		copies = append(copies, Copy{From: old, To: nb})
		need--
	}
	for ; need > 0; need-- {
		table = append(table, bt.take())
	}
	bt.tables[seq] = table
	bt.lens[seq] = n + tokens
	return copies, nil
}

// Blocks is the reference solution; table.go documents the contract.
func (bt *BlockTable) Blocks(seq int) []int {
	t, ok := bt.tables[seq]
	if !ok {
		return nil
	}
	return slices.Clone(t)
}

// Len is the reference solution; table.go documents the contract.
func (bt *BlockTable) Len(seq int) int { return bt.lens[seq] }

// NumFree is the reference solution; table.go documents the contract.
func (bt *BlockTable) NumFree() int { return bt.free }

// Slot is the reference solution; table.go documents the contract.
func (bt *BlockTable) Slot(seq, pos int) (block, offset int, err error) {
	t, ok := bt.tables[seq]
	if !ok {
		return 0, 0, fmt.Errorf("kvcache: unknown sequence %d", seq)
	}
	if pos < 0 || pos >= bt.lens[seq] {
		return 0, 0, fmt.Errorf("kvcache: position %d out of range for sequence %d of %d tokens", pos, seq, bt.lens[seq])
	}
	return t[pos/bt.blockSize], pos % bt.blockSize, nil
}

// Fork is the reference solution; table.go documents the contract.
func (bt *BlockTable) Fork(parent, child int) error {
	t, ok := bt.tables[parent]
	if !ok {
		return fmt.Errorf("kvcache: fork of unknown sequence %d", parent)
	}
	if _, exists := bt.tables[child]; exists {
		return fmt.Errorf("kvcache: fork into existing sequence %d", child)
	}
	for _, b := range t {
		bt.refs[b]++
	}
	bt.tables[child] = slices.Clone(t)
	bt.lens[child] = bt.lens[parent]
	return nil
}

// Free is the reference solution; table.go documents the contract.
func (bt *BlockTable) Free(seq int) error {
	t, ok := bt.tables[seq]
	if !ok {
		return fmt.Errorf("kvcache: free of unknown sequence %d", seq)
	}
	for _, b := range t {
		bt.release(b)
	}
	delete(bt.tables, seq)
	delete(bt.lens, seq)
	return nil
}
