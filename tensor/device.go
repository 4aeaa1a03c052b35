package tensor

// Device is where a tensor's storage lives and its kernels run: the kernels of
// one accelerator plus an allocator for its memory. memlab's lab API backs
// Allocate and Deallocate with the caching allocator, so every tensor a lesson
// creates shows up in the allocator's statistics; tests may back them with the
// device's raw allocations.
//
// A Device must be safe for concurrent use. Tensors compare devices with ==, so
// an implementation should be a pointer type.
type Device interface {
	Kernels
	// String names the device as PyTorch does, such as "cuda:0".
	String() string
	// Allocate returns nbytes (> 0) of device memory.
	Allocate(nbytes int64) (Ptr, error)
	// Deallocate returns memory obtained from Allocate.
	Deallocate(p Ptr) error
}
