package sim

import "syscall"

// discard zeroes b (pages being unmapped) and gives its RAM back to the
// system: MADV_DONTNEED does both for a private anonymous mapping.
func discard(b []byte) {
	if syscall.Madvise(b, syscall.MADV_DONTNEED) != nil {
		clear(b)
	}
}
