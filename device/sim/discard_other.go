//go:build !linux

package sim

// discard zeroes b (pages being unmapped).
func discard(b []byte) { clear(b) }
