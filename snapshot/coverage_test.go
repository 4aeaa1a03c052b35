package snapshot

import (
	"math/rand"
	"testing"
)

// TestRanges checks the range set against a byte map under random adds and removes.
func TestRanges(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var r ranges
	var mem [256]bool
	for step := 0; step < 20000; step++ {
		lo := uint64(rng.Intn(256))
		hi := lo + uint64(rng.Intn(40))
		hi = min(hi, 256)
		add := rng.Intn(2) == 0
		if add {
			r.add(lo, hi)
		} else {
			r.remove(lo, hi)
		}
		for b := lo; b < hi; b++ {
			mem[b] = add
		}
		for i := range r {
			if r[i][0] >= r[i][1] || (i > 0 && r[i-1][1] >= r[i][0]) {
				t.Fatalf("step %d: ranges not disjoint, sorted and merged: %v", step, r)
			}
		}
		qlo := uint64(rng.Intn(256))
		qhi := min(qlo+uint64(rng.Intn(64)), 256)
		var want int64
		for b := qlo; b < qhi; b++ {
			if mem[b] {
				want++
			}
		}
		if got := r.overlap(qlo, qhi); got != want {
			t.Fatalf("step %d: overlap(%d, %d) = %d, want %d (%v)", step, qlo, qhi, got, want, r)
		}
		if r.covers(qlo, qhi) != (want == int64(qhi-qlo)) {
			t.Fatalf("step %d: covers(%d, %d) wrong", step, qlo, qhi)
		}
	}
}
