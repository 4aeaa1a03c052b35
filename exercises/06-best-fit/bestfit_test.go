package bestfit

import (
	"fmt"
	"slices"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
)

const mib = 1 << 20

type fitCase struct {
	name string
	free []Block
	size uint64
	cfg  Config
	want int
	why  string
}

func describe(free []Block, i int) string {
	if i < 0 || i >= len(free) {
		return fmt.Sprintf("%d (no block)", i)
	}
	return fmt.Sprintf("%d (%d MiB at %#x)", i, free[i].Size/mib, free[i].Addr)
}

func checkFit(t *testing.T, tests []fitCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			free := slices.Clone(tc.free)
			var got int
			call := fmt.Sprintf("BestFit(free, %d MiB, %+v)", tc.size/mib, tc.cfg)
			if !exercisetest.Call(t, call, func() { got = BestFit(free, tc.size, tc.cfg) }) {
				return
			}
			if got != tc.want {
				t.Errorf("%s with free blocks %v: want index %s, got %s — %s", call, tc.free, describe(tc.free, tc.want), describe(tc.free, got), tc.why)
			}
			if !slices.Equal(free, tc.free) {
				t.Errorf("%s reordered or changed its input: %v became %v — search without sorting the caller's slice", call, tc.free, free)
			}
		})
	}
}

func TestA_BestFit(t *testing.T) {
	pool := []Block{
		{Addr: 0x7f0000000000, Size: 4 * mib},
		{Addr: 0x7f0004000000, Size: 2 * mib},
		{Addr: 0x7f0000400000, Size: 2 * mib},
		{Addr: 0x7f0008000000, Size: 8 * mib},
	}
	checkFit(t, []fitCase{
		{"exact size, lowest address", pool, 2 * mib, Config{}, 2, "two 2 MiB blocks fit exactly; the one at the lower address wins"},
		{"smallest that fits", pool, 3 * mib, Config{}, 0, "the 4 MiB block is the smallest at least 3 MiB"},
		{"smaller request", pool, mib, Config{}, 2, "1 MiB fits everywhere; the smallest block is 2 MiB and the lower of those two wins"},
		{"largest block", pool, 8 * mib, Config{}, 3, "only the 8 MiB block is large enough"},
		{"nothing fits", pool, 9 * mib, Config{}, -1, "no cached block holds 9 MiB: the allocator will need a new segment"},
		{"empty pool", nil, 512, Config{}, -1, "with nothing cached there is nothing to find"},
		{"equal sizes listed high address first", []Block{{0x3000, 1024}, {0x2000, 1024}, {0x1000, 1024}}, 1024, Config{}, 2, "order by (size, address): 0x1000 is lowest"},
		{"huge block, default config", []Block{{0x1000, 1 << 30}}, 2 * mib, Config{}, 0, "without max_split_size no block is oversize: a 2 MiB request may take a 1 GiB block (and split it)"},
	})
}

func TestB_OversizeRules(t *testing.T) {
	cfg := Config{MaxSplitSize: 128 * mib}
	checkFit(t, []fitCase{
		{"oversize request, far bigger block", []Block{{0x1000, 1024 * mib}}, 512 * mib, cfg, -1, "512 MiB ≥ max_split 128 MiB, and 1024 MiB ≥ 512 + 20 MiB: the big block may not be used (PyTorch makes a new segment)"},
		{"oversize request, close fit", []Block{{0x1000, 140 * mib}, {0x9000000, 64 * mib}}, 130 * mib, cfg, 0, "140 MiB < 130 + 20 MiB: an oversize request may take a block at most 20 MiB bigger"},
		{"normal request, oversize block", []Block{{0x1000, 140 * mib}}, 100 * mib, cfg, -1, "100 MiB < 128 MiB is a normal request; it never takes an oversize (≥ 128 MiB) cached block"},
		{"normal request, normal block", []Block{{0x1000, 140 * mib}, {0x9000000, 64 * mib}}, 32 * mib, cfg, 1, "64 MiB is the best fit and is below max_split"},
		{"only the best candidate is tried", []Block{{0x1000, 200 * mib}, {0x9000000, 300 * mib}}, 150 * mib, cfg, -1, "the best fit 200 MiB is ≥ 150 + 20 MiB, so the search fails without looking further"},
		{"request equal to max_split is oversize", []Block{{0x1000, 148 * mib}}, 128 * mib, cfg, -1, "128 MiB ≥ max_split counts as oversize, and 148 MiB ≥ 128 + 20 MiB"},
		{"just under the slack", []Block{{0x1000, 148*mib - 512}}, 128 * mib, cfg, 0, "148 MiB − 512 is below 128 + 20 MiB: allowed"},
		{"block equal to max_split is oversize", []Block{{0x1000, 128 * mib}}, 64 * mib, cfg, -1, "a 128 MiB block is ≥ max_split: oversize, out of reach of a normal request"},
		{"custom non-split rounding", []Block{{0x1000, 560 * mib}}, 512 * mib, Config{MaxSplitSize: 128 * mib, MaxNonSplitRounding: 64 * mib}, 0, "with max_non_split_rounding 64 MiB, 560 MiB < 512 + 64 MiB is allowed"},
		{"oversize request, nothing big enough", []Block{{0x1000, 64 * mib}}, 256 * mib, cfg, -1, "no block is at least 256 MiB"},
	})
}
