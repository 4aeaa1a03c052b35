// Package merge is exercise 08 of the memlab course: how PyTorch's CUDA caching
// allocator frees a block and merges it with free neighbours, and when a segment
// can be returned to CUDA. See README.md.
package merge

// Block is one block of a segment.
type Block struct {
	Addr      uint64 // device address of the first byte
	Size      uint64 // bytes
	Allocated bool   // true while a tensor uses it
}
