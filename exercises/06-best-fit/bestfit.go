//go:build !solution

package bestfit

// BestFit returns the index in free of the block PyTorch's get_free_block would
// choose for a rounded request of size bytes, or -1 if it would find none.
//
// The candidate is the smallest block with Size ≥ size, ties broken by the lowest
// Addr. Then the oversize rules of cfg apply to that candidate alone: a request
// below cfg.MaxSplitSize may not take a block of at least MaxSplitSize, and a
// request of at least MaxSplitSize may not take a block of at least
// size + MaxNonSplitRounding. If the candidate is rejected the result is -1.
//
// free may be in any order and is not modified.
func BestFit(free []Block, size uint64, cfg Config) int {
	panic("not implemented")
}
