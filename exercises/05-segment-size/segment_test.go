package segment

import (
	"fmt"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
)

const mib = 1 << 20

func TestA_PoolFor(t *testing.T) {
	tests := []struct {
		size uint64
		want Pool
		why  string
	}{
		{512, SmallPool, "the smallest block is small"},
		{1024, SmallPool, "torch.empty(1000, dtype=torch.uint8) rounds to 1024: small pool"},
		{mib, SmallPool, "exactly 1 MiB is still small (the test is ≤ 1 MiB)"},
		{mib + 512, LargePool, "one step above 1 MiB is large — 1048577 bytes rounds here"},
		{20 * mib, LargePool, "anything above 1 MiB is large"},
		{700 * 1024, SmallPool, "700 KiB ≤ 1 MiB"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.size), func(t *testing.T) {
			var got Pool
			var err error
			if !exercisetest.Call(t, fmt.Sprintf("PoolFor(%d)", tc.size), func() { got, err = PoolFor(tc.size) }) {
				return
			}
			if err != nil {
				t.Fatalf("PoolFor(%d): unexpected error %v", tc.size, err)
			}
			if got != tc.want {
				t.Errorf("PoolFor(%d): want the %v pool, got the %v pool — %s", tc.size, tc.want, got, tc.why)
			}
		})
	}
}

func TestB_SegmentSize(t *testing.T) {
	tests := []struct {
		size, want uint64
		why        string
	}{
		{512, 2 * mib, "small requests share 2 MiB segments"},
		{mib, 2 * mib, "1 MiB is still small: a 2 MiB segment"},
		{mib + 512, 20 * mib, "just above 1 MiB: a 20 MiB segment (kLargeBuffer) to share with later requests"},
		{3 * mib / 2, 20 * mib, "1.5 MiB is between 1 and 10 MiB: 20 MiB"},
		{10*mib - 512, 20 * mib, "just below 10 MiB still gets kLargeBuffer"},
		{10 * mib, 10 * mib, "from 10 MiB the segment fits the request, rounded to 2 MiB: 10 MiB"},
		{10*mib + 512, 12 * mib, "10 MiB + 512 rounds up to the next multiple of 2 MiB"},
		{39 * mib / 2, 20 * mib, "19.5 MiB rounds up to a 20 MiB segment"},
		{21 * mib, 22 * mib, "21 MiB is not a multiple of 2 MiB: 22 MiB"},
		{1 << 30, 1 << 30, "1 GiB is a multiple of 2 MiB: a 1 GiB segment"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.size), func(t *testing.T) {
			var got uint64
			var err error
			if !exercisetest.Call(t, fmt.Sprintf("SegmentSize(%d)", tc.size), func() { got, err = SegmentSize(tc.size) }) {
				return
			}
			if err != nil {
				t.Fatalf("SegmentSize(%d): unexpected error %v", tc.size, err)
			}
			if got != tc.want {
				t.Errorf("SegmentSize(%d): want %d (%.1f MiB), got %d (%.1f MiB) — %s", tc.size, tc.want, float64(tc.want)/mib, got, float64(got)/mib, tc.why)
			}
		})
	}
}

func TestA_PoolForUnrounded(t *testing.T) {
	for _, size := range []uint64{0, 1, 511, 1000, mib + 1} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			var err error
			if !exercisetest.Call(t, fmt.Sprintf("PoolFor(%d)", size), func() { _, err = PoolFor(size) }) {
				return
			}
			if err == nil {
				t.Errorf("PoolFor(%d): want an error — %d is not a multiple of 512 (at least 512), so it was never rounded", size, size)
			}
		})
	}
}

func TestB_SegmentSizeUnrounded(t *testing.T) {
	for _, size := range []uint64{0, 1, 511, 1000, 10*mib + 1} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			var err error
			if !exercisetest.Call(t, fmt.Sprintf("SegmentSize(%d)", size), func() { _, err = SegmentSize(size) }) {
				return
			}
			if err == nil {
				t.Errorf("SegmentSize(%d): want an error — %d is not a multiple of 512 (at least 512), so it was never rounded", size, size)
			}
		})
	}
}
