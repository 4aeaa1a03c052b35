//go:build !solution

// Package round is exercise 04 of the memlab course: the size rounding PyTorch's
// CUDA caching allocator applies to every request (round_size), with and without
// roundup_power2_divisions. See README.md.
package round

// MinBlockSize is kMinBlockSize: every rounded size is a multiple of it.
const MinBlockSize = 512

// MaxRequest is the smallest request PyTorch refuses outright (1 EiB).
const MaxRequest = 1 << 60

// RoundSize returns the size the allocator uses for a request of size bytes.
//
// With divisions 0 or 1, sizes below 512 become 512 and other sizes are rounded
// up to a multiple of 512. With divisions d > 1 and size > 512·d, a power of two is
// kept and any other size is rounded up to a multiple of floor/d, where floor is the
// largest power of two not above size; smaller sizes get plain rounding.
//
// It returns an error if divisions is not 0, 1 or a power of two, or if size is at
// least MaxRequest.
func RoundSize(size, divisions uint64) (uint64, error) {
	panic("not implemented")
}

// IntervalIndex returns the entry of the roundup_power2_divisions table that
// governs size: floor(log2(size)) − 20, clamped to [0, 15]. Sizes below 2 MiB
// (including 0) use entry 0 and sizes of 32 GiB or more use entry 15.
func IntervalIndex(size uint64) int {
	panic("not implemented")
}

// RoundSizeTable rounds size with the divisions of its interval,
// table[IntervalIndex(size)], exactly as RoundSize does; its errors are RoundSize's.
func RoundSizeTable(size uint64, table [16]uint64) (uint64, error) {
	panic("not implemented")
}
