package sim

import "time"

// h200Pair are the measured cuMemAlloc_v2 + cuMemFree_v2 pair times on an
// NVIDIA H200 (driver 580, 2026-11-29; shared/docs/gpu-device.md).
var h200Pair = []struct {
	size uint64
	us   float64
}{
	{512, 74},
	{1 << 20, 74},
	{20 << 20, 86},
	{256 << 20, 218},
}

// H200Latency is the modelled time of one cuMemAlloc plus one cuMemFree of
// size bytes on an NVIDIA H200: 74 µs up to 1 MiB, then linear in the size
// through the measured 86 µs at 20 MiB and 218 µs at 256 MiB, and extrapolated
// beyond 256 MiB along the last segment (about 0.56 µs per MiB). With
// Config.ModelLatency the device charges half of it to each of the two calls
// (the measurement is of the pair), and the same to Map and Unmap of size
// bytes, for which no figure was measured.
func H200Latency(size uint64) time.Duration {
	pts := h200Pair
	if size <= pts[1].size {
		return micros(pts[0].us)
	}
	i := 2
	for i < len(pts)-1 && size > pts[i].size {
		i++
	}
	a, b := pts[i-1], pts[i]
	slope := (b.us - a.us) / float64(b.size-a.size)
	return micros(a.us + slope*(float64(size)-float64(a.size)))
}

func micros(us float64) time.Duration { return time.Duration(us * float64(time.Microsecond)) }

// spend waits for d by spinning on the clock: sleeping cannot resolve the
// tens of microseconds a driver call takes.
func spend(d time.Duration) {
	if d <= 0 {
		return
	}
	for start := time.Now(); time.Since(start) < d; {
	}
}
