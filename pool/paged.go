package pool

import (
	"errors"
	"fmt"
	"sort"
	"sync"

	"memlab.dev/memlab/tensor"
)

// PagedConfig sizes a PagedKVCache.
type PagedConfig struct {
	Layers, Heads, HeadDim int
	// BlockSize is the number of tokens per block (vLLM's block_size, often 16).
	BlockSize int
	// Blocks is the number of blocks in the arena.
	Blocks int
}

// PagedKVCache serves the key/value caches of many sequences of different
// lengths from one preallocated arena cut into fixed-size blocks of BlockSize
// tokens, as vLLM's PagedAttention does. Each sequence has a block table that
// maps its logical blocks to physical ones, taken from a free list only when
// its last block is full. Because every block has the same size, any free
// block serves any sequence: there is no external fragmentation by
// construction (a request for k blocks succeeds exactly when k blocks are
// free), and the only waste is the unfilled tail of each sequence's last
// block, at most BlockSize−1 tokens.
//
// The arena has shape [layers, 2, blocks, heads, blockSize, headDim]; one
// block table serves every layer of a sequence. Attention kernels that read
// blocks through the table are beyond memlab's kernels, so Gather copies a
// sequence's keys or values into one contiguous tensor.
//
// A PagedKVCache is safe for concurrent use.
type PagedKVCache struct {
	cfg   PagedConfig
	arena *tensor.Tensor

	mu       sync.Mutex
	free     []int // free block ids; the last is handed out next
	seqs     map[int]*pagedSeq
	released bool
}

type pagedSeq struct {
	table []int // physical block of each logical block
	lens  []int // tokens written per layer
}

// length is the sequence's length: the most tokens any layer holds.
func (s *pagedSeq) length() int {
	n := 0
	for _, l := range s.lens {
		n = max(n, l)
	}
	return n
}

// PagedStats describes a PagedKVCache's blocks.
type PagedStats struct {
	BlockSize int
	Blocks    int // in the arena
	Used      int // in some sequence's table
	Free      int
	Sequences int
	Tokens    int // cached tokens, summed over sequences (the longest layer of each)
	// Waste is the token slots allocated but unused: the tails of the
	// sequences' last blocks (internal fragmentation), at most BlockSize−1
	// per sequence.
	Waste int
}

// NewPagedKVCache allocates the arena of a paged cache on dev, in one
// allocation of Layers × 2 × Blocks × Heads × BlockSize × HeadDim elements.
func NewPagedKVCache(dev tensor.Device, dtype tensor.DType, cfg PagedConfig) (*PagedKVCache, error) {
	if err := positive("NewPagedKVCache", "Layers", cfg.Layers, "Heads", cfg.Heads, "HeadDim", cfg.HeadDim,
		"BlockSize", cfg.BlockSize, "Blocks", cfg.Blocks); err != nil {
		return nil, err
	}
	arena, err := tensor.Empty(dev, dtype, cfg.Layers, 2, cfg.Blocks, cfg.Heads, cfg.BlockSize, cfg.HeadDim)
	if err != nil {
		return nil, fmt.Errorf("pool: NewPagedKVCache: %w", err)
	}
	free := make([]int, cfg.Blocks)
	for i := range free {
		free[i] = cfg.Blocks - 1 - i // block 0 is handed out first
	}
	return &PagedKVCache{cfg: cfg, arena: arena, free: free, seqs: map[int]*pagedSeq{}}, nil
}

// Config returns the cache's sizes.
func (c *PagedKVCache) Config() PagedConfig { return c.cfg }

// Nbytes returns the device bytes of the arena.
func (c *PagedKVCache) Nbytes() int64 { return c.arena.Nbytes() }

// Allocate registers sequence seq, empty and holding no block.
func (c *PagedKVCache) Allocate(seq int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.released {
		return errors.New("pool: PagedKVCache.Allocate: cache is released")
	}
	if _, ok := c.seqs[seq]; ok {
		return fmt.Errorf("pool: PagedKVCache.Allocate: sequence %d already allocated", seq)
	}
	c.seqs[seq] = &pagedSeq{lens: make([]int, c.cfg.Layers)}
	return nil
}

// Append copies the keys and values of n new tokens, k and v of shape [heads,
// n, headDim], after the tokens the sequence holds for layer, taking new
// blocks from the free list when they are needed. It is all or nothing: when
// too few blocks are free it fails with ErrCacheFull and changes nothing.
func (c *PagedKVCache) Append(seq, layer int, k, v *tensor.Tensor) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, err := c.sequence("Append", seq, layer)
	if err != nil {
		return err
	}
	n, err := tokens("PagedKVCache.Append", c.cfg.Heads, c.cfg.HeadDim, c.arena.DType(), k, v)
	if err != nil {
		return err
	}
	at, B := s.lens[layer], c.cfg.BlockSize
	need := (at+n+B-1)/B - len(s.table)
	if need > len(c.free) {
		return fmt.Errorf("pool: PagedKVCache.Append: sequence %d needs %d more blocks, %d free: %w", seq, need, len(c.free), ErrCacheFull)
	}
	for ; need > 0; need-- {
		b := c.free[len(c.free)-1]
		c.free = c.free[:len(c.free)-1]
		s.table = append(s.table, b)
	}
	for done := 0; done < n; {
		pos := at + done
		block, off := s.table[pos/B], pos%B
		m := min(B-off, n-done)
		for i, src := range []*tensor.Tensor{k, v} {
			if err := copyInto(c.arena, []int{layer, i, block}, off, src, done, m); err != nil {
				// The blocks stay in the table: the data is what failed, not the accounting.
				return fmt.Errorf("pool: PagedKVCache.Append: sequence %d, layer %d: %w", seq, layer, err)
			}
		}
		done += m
	}
	s.lens[layer] = at + n
	return nil
}

// Gather returns new contiguous tensors of shape [heads, len, headDim] with
// the keys and values sequence seq holds for layer, copied block by block
// (what a paged-attention kernel reads in place). The caller releases them.
func (c *PagedKVCache) Gather(seq, layer int) (k, v *tensor.Tensor, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, err := c.sequence("Gather", seq, layer)
	if err != nil {
		return nil, nil, err
	}
	n, B := s.lens[layer], c.cfg.BlockSize
	out := make([]*tensor.Tensor, 2)
	for i := range out {
		t, err := tensor.Empty(c.arena.Device(), c.arena.DType(), c.cfg.Heads, n, c.cfg.HeadDim)
		if err != nil {
			return nil, nil, errors.Join(fmt.Errorf("pool: PagedKVCache.Gather: %w", err), tensor.ReleaseAll(out[0]))
		}
		out[i] = t
		for j := 0; j*B < n; j++ {
			m := min(B, n-j*B)
			src, err := subview(c.arena, []int{layer, i, s.table[j]}, 0, m)
			if err == nil {
				var dst *tensor.Tensor
				if dst, err = t.Narrow(1, j*B, m); err == nil {
					err = errors.Join(dst.CopyFrom(src), dst.Release())
				}
				err = errors.Join(err, src.Release())
			}
			if err != nil {
				return nil, nil, errors.Join(fmt.Errorf("pool: PagedKVCache.Gather: sequence %d, layer %d: %w", seq, layer, err),
					tensor.ReleaseAll(out...))
			}
		}
	}
	return out[0], out[1], nil
}

// Len returns the length of sequence seq: the most tokens any of its layers
// holds.
func (c *PagedKVCache) Len(seq int) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, err := c.sequence("Len", seq, 0)
	if err != nil {
		return 0, err
	}
	return s.length(), nil
}

// Blocks returns a copy of sequence seq's block table: the physical block of
// each of its logical blocks, in order.
func (c *PagedKVCache) Blocks(seq int) ([]int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, err := c.sequence("Blocks", seq, 0)
	if err != nil {
		return nil, err
	}
	return append([]int(nil), s.table...), nil
}

// Free forgets sequence seq and returns its blocks to the free list.
func (c *PagedKVCache) Free(seq int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, err := c.sequence("Free", seq, 0)
	if err != nil {
		return err
	}
	for i := len(s.table) - 1; i >= 0; i-- {
		c.free = append(c.free, s.table[i])
	}
	delete(c.seqs, seq)
	return nil
}

// Sequences returns the ids of the allocated sequences, in increasing order.
func (c *PagedKVCache) Sequences() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := make([]int, 0, len(c.seqs))
	for id := range c.seqs {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

// Stats returns the block accounting.
func (c *PagedKVCache) Stats() PagedStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := PagedStats{BlockSize: c.cfg.BlockSize, Blocks: c.cfg.Blocks, Free: len(c.free), Sequences: len(c.seqs)}
	for _, s := range c.seqs {
		n := s.length()
		st.Used += len(s.table)
		st.Tokens += n
		st.Waste += len(s.table)*c.cfg.BlockSize - n
	}
	return st
}

// Release frees the arena; every method fails afterwards. Further calls do
// nothing.
func (c *PagedKVCache) Release() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.released {
		return nil
	}
	c.released = true
	c.seqs = nil
	c.free = nil
	return c.arena.Release()
}

func (c *PagedKVCache) sequence(op string, seq, layer int) (*pagedSeq, error) {
	if c.released {
		return nil, fmt.Errorf("pool: PagedKVCache.%s: cache is released", op)
	}
	s, ok := c.seqs[seq]
	if !ok {
		return nil, fmt.Errorf("pool: PagedKVCache.%s: sequence %d is not allocated", op, seq)
	}
	if layer < 0 || layer >= c.cfg.Layers {
		return nil, fmt.Errorf("pool: PagedKVCache.%s: layer %d out of range [0, %d)", op, layer, c.cfg.Layers)
	}
	return s, nil
}
