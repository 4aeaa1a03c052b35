package round

import (
	"fmt"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
)

const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
)

type roundCase struct {
	size, divisions, want uint64
	why                   string
}

func checkRound(t *testing.T, tests []roundCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d with %d divisions", tc.size, tc.divisions), func(t *testing.T) {
			var got uint64
			var err error
			if !exercisetest.Call(t, fmt.Sprintf("RoundSize(%d, %d)", tc.size, tc.divisions), func() { got, err = RoundSize(tc.size, tc.divisions) }) {
				return
			}
			if err != nil {
				t.Fatalf("round_size(%d) with %d divisions: unexpected error %v", tc.size, tc.divisions, err)
			}
			if got != tc.want {
				t.Errorf("round_size(%d) with %d divisions: want %d, got %d — %s", tc.size, tc.divisions, tc.want, got, tc.why)
			}
		})
	}
}

func TestA_PlainRounding(t *testing.T) {
	checkRound(t, []roundCase{
		{1, 0, 512, "every size below 512 becomes 512 (kMinBlockSize)"},
		{0, 0, 512, "0 is below 512 too (PyTorch never asks, but round_size(0) is 512)"},
		{511, 0, 512, "below 512 becomes 512"},
		{512, 0, 512, "512 is already a multiple of 512"},
		{513, 0, 1024, "one byte over a multiple of 512 rounds up to the next one"},
		{1000, 0, 1024, "rounded up to a multiple of 512"},
		{1200, 0, 1536, "1200 rounds up to 3×512"},
		{mib, 0, mib, "1 MiB is a multiple of 512"},
		{mib + 1, 0, mib + 512, "1048577 rounds to 1049088 — just over 1 MiB, so it will go to the large pool"},
		{1200, 1, 1536, "1 division means no power-of-two rounding"},
		{5000, 1, 5120, "1 division means no power-of-two rounding: 10×512"},
	})
}

func TestB_PowerOfTwoDivisions(t *testing.T) {
	checkRound(t, []roundCase{
		{1200, 4, 1536, "1200 is not above 512×4, so plain 512-byte rounding applies"},
		{2048, 4, 2048, "2048 is not above 512×4 (the test is strictly greater), so plain rounding: 2048"},
		{2049, 4, 2560, "floor is 2048, the step is 2048/4 = 512, next multiple of 512 is 2560"},
		{3000, 4, 3072, "floor 2048, step 512: 3000 rounds up to 3072"},
		{1000000, 4, mib, "floor 524288, step 131072: 1000000 rounds up to 8 steps = 1048576"},
		{mib + 1, 4, 1310720, "floor 1 MiB, step 256 KiB: the next quarter-octave is 1.25 MiB"},
		{300*mib + 1, 4, 320 * mib, "floor 256 MiB, step 64 MiB: next multiple is 320 MiB"},
		{769 * mib, 4, 896 * mib, "floor 512 MiB, step 128 MiB: 769 MiB rounds up to 896 MiB"},
		{768 * mib, 4, 768 * mib, "768 MiB is already a multiple of the 128 MiB step"},
		{gib, 4, gib, "a power of two is kept as it is"},
		{5000, 2, 6144, "5000 > 512×2: floor 4096, step 2048, so 6144 (plain rounding would give 5120)"},
		{3*mib + 1, 2, 4 * mib, "floor 2 MiB, step 1 MiB: rounds up to 4 MiB"},
		{1025, 8, 1536, "1025 is not above 512×8 = 4096: plain rounding"},
		{9000, 16, 9216, "9000 > 512×16: floor 8192, step 512, so 9216"},
		{100, 4, 512, "small sizes still become 512"},
	})
}

func TestB_RoundSizeErrors(t *testing.T) {
	tests := []struct {
		size, divisions uint64
		why             string
	}{
		{1000, 3, "3 divisions is not a power of two; PyTorch rejects it"},
		{1000, 6, "6 divisions is not a power of two"},
		{1 << 60, 0, "PyTorch refuses requests of 1 EiB or more"},
		{1<<64 - 1, 0, "the largest uint64 is far above 1 EiB (and rounding it would overflow)"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d with %d divisions", tc.size, tc.divisions), func(t *testing.T) {
			var got uint64
			var err error
			if !exercisetest.Call(t, fmt.Sprintf("RoundSize(%d, %d)", tc.size, tc.divisions), func() { got, err = RoundSize(tc.size, tc.divisions) }) {
				return
			}
			if err == nil {
				t.Errorf("round_size(%d) with %d divisions: want an error, got %d — %s", tc.size, tc.divisions, got, tc.why)
			}
		})
	}
}

func TestC_IntervalIndex(t *testing.T) {
	tests := []struct {
		size uint64
		want int
		why  string
	}{
		{1, 0, "everything below 2 MiB uses entry 0"},
		{0, 0, "0 is below 2 MiB"},
		{2*mib - 1, 0, "just below 2 MiB: entry 0"},
		{2 * mib, 1, "2 MiB starts interval 1 (log2 = 21, minus 20)"},
		{3 * mib, 1, "3 MiB is in [2 MiB, 4 MiB): entry 1"},
		{gib, 10, "log2(1 GiB) = 30, minus 20 = 10"},
		{32 * gib, 15, "32 GiB starts the last interval"},
		{1 << 40, 15, "1 TiB is clamped to the last entry, 15"},
		{700 * kib, 0, "700 KiB (a small-pool size) uses entry 0"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d", tc.size), func(t *testing.T) {
			var got int
			if !exercisetest.Call(t, fmt.Sprintf("IntervalIndex(%d)", tc.size), func() { got = IntervalIndex(tc.size) }) {
				return
			}
			if got != tc.want {
				t.Errorf("IntervalIndex(%d): want %d, got %d — %s", tc.size, tc.want, got, tc.why)
			}
		})
	}
}

func TestC_RoundSizeTable(t *testing.T) {
	// PYTORCH_CUDA_ALLOC_CONF=roundup_power2_divisions:[256:1,512:2,1024:4,>:8]
	// gives this table: the first entry fills every lower interval, ">" fills the rest.
	table := [16]uint64{1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 4, 8, 8, 8, 8, 8}
	tests := []struct {
		size, want uint64
		why        string
	}{
		{300*mib + 1, 300*mib + 512, "interval 8 ([256 MiB, 512 MiB)) has 1 division: plain 512-byte rounding"},
		{600*mib + 1, 768 * mib, "interval 9 has 2 divisions: floor 512 MiB, step 256 MiB"},
		{1536*mib + 1, 1792 * mib, "interval 10 has 4 divisions: floor 1 GiB, step 256 MiB"},
		{3*gib + 1, 3*gib + 256*mib, "interval 11 has 8 divisions: floor 2 GiB, step 256 MiB"},
		{1000, 1024, "interval 0 has 1 division: plain rounding"},
		{40 * gib, 40 * gib, "interval 15 has 8 divisions; 40 GiB is a multiple of 32 GiB/8 = 4 GiB"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d", tc.size), func(t *testing.T) {
			var got uint64
			var err error
			if !exercisetest.Call(t, fmt.Sprintf("RoundSizeTable(%d, table)", tc.size), func() { got, err = RoundSizeTable(tc.size, table) }) {
				return
			}
			if err != nil {
				t.Fatalf("RoundSizeTable(%d): unexpected error %v", tc.size, err)
			}
			if got != tc.want {
				t.Errorf("round_size(%d) with table %v: want %d, got %d — %s", tc.size, table, tc.want, got, tc.why)
			}
		})
	}
	t.Run("bad table entry", func(t *testing.T) {
		bad := [16]uint64{3}
		var err error
		if !exercisetest.Call(t, "RoundSizeTable(1000, [3 0 …])", func() { _, err = RoundSizeTable(1000, bad) }) {
			return
		}
		if err == nil {
			t.Errorf("RoundSizeTable(1000) with entry 0 = 3: want an error — 3 divisions is not a power of two")
		}
	})
}
