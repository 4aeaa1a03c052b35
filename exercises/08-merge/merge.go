//go:build !solution

package merge

// Free frees the allocated block that starts at addr in segment, whose blocks are
// listed in address order, merges it with its previous and next blocks if they are
// free, and returns the new list of blocks. segment is not modified.
//
// It returns an error if no block starts at addr or the block there is already free.
func Free(segment []Block, addr uint64) ([]Block, error) {
	panic("not implemented")
}

// Releasable reports whether empty_cache could return the segment to CUDA: it
// consists of exactly one block, and that block is free.
func Releasable(segment []Block) bool {
	panic("not implemented")
}
