//go:build !solution

package fragmentation

// Summarize returns the total free bytes, the largest free block and the
// fragmentation 1 − largest/total of segments, each a list of blocks in address
// order. With no free memory every field is 0.
func Summarize(segments [][]Block) Summary {
	panic("not implemented")
}

// Breakdown splits the bytes of segments into allocated bytes, bytes of segments
// with no allocated block (releasable by empty_cache), and free bytes in segments
// that also hold an allocated block (non-releasable, with their block count).
func Breakdown(segments [][]Block) Split {
	panic("not implemented")
}
