package split

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
)

const mib = 1 << 20

func TestA_ShouldSplit(t *testing.T) {
	tests := []struct {
		pool            Pool
		blockSize, size uint64
		cfg             Config
		want            bool
		why             string
	}{
		{SmallPool, 2 * mib, 1024, Config{}, true, "small pool: 2 MiB − 1 KiB remains, far more than 512"},
		{SmallPool, 1024, 512, Config{}, true, "small pool: exactly 512 bytes remain, and the test is ≥ 512"},
		{SmallPool, 1024, 1024, Config{}, false, "nothing remains"},
		{SmallPool, 1536, 1024, Config{}, true, "small pool: 512 bytes remain"},
		{LargePool, 20 * mib, 5 * mib, Config{}, true, "large pool: 15 MiB remain, more than 1 MiB"},
		{LargePool, 20 * mib, 39 * mib / 2, Config{}, false, "large pool: only 0.5 MiB would remain, not more than 1 MiB — the slack stays in the allocation"},
		{LargePool, 20 * mib, 19 * mib, Config{}, false, "large pool: exactly 1 MiB remains; the test is strictly greater than 1 MiB"},
		{LargePool, 20 * mib, 19*mib - 512, Config{}, true, "large pool: 1 MiB + 512 remains, more than 1 MiB"},
		{LargePool, 1024 * mib, 512 * mib, Config{MaxSplitSize: 128 * mib}, false, "512 MiB ≥ max_split 128 MiB: oversize requests are never split"},
		{LargePool, 1024 * mib, 512 * mib, Config{}, true, "without max_split_size the 1 GiB block splits: 512 MiB remain"},
		{LargePool, 130 * mib, 100 * mib, Config{MaxSplitSize: 128 * mib}, true, "100 MiB is below max_split, and 30 MiB remain"},
		{SmallPool, 2 * mib, 1024, Config{MaxSplitSize: 1}, true, "max_split_size does not affect the small pool"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%v pool %d of %d", tc.pool, tc.size, tc.blockSize), func(t *testing.T) {
			var got bool
			call := fmt.Sprintf("ShouldSplit(%v, %d, %d, %+v)", tc.pool, tc.blockSize, tc.size, tc.cfg)
			if !exercisetest.Call(t, call, func() { got = ShouldSplit(tc.pool, tc.blockSize, tc.size, tc.cfg) }) {
				return
			}
			if got != tc.want {
				t.Errorf("%s: want %v, got %v — %s", call, tc.want, got, tc.why)
			}
		})
	}
}

func layout(seg []Block) string {
	parts := make([]string, len(seg))
	for i, b := range seg {
		state := "free"
		if b.Allocated {
			state = "A"
		}
		parts[i] = fmt.Sprintf("%#x:%d %s", b.Addr, b.Size, state)
	}
	return "[" + strings.Join(parts, " | ") + "]"
}

func TestB_Allocate(t *testing.T) {
	const base = 0x7f0000000000
	tests := []struct {
		name    string
		segment []Block
		i       int
		size    uint64
		pool    Pool
		cfg     Config
		want    []Block
		why     string
	}{
		{"fresh small segment", []Block{{base, 2 * mib, false}}, 0, 1024, SmallPool, Config{},
			[]Block{{base, 1024, true}, {base + 1024, 2*mib - 1024, false}},
			"the allocation takes the low addresses; the 2 MiB − 1 KiB remainder follows it, free"},
		{"first 5 MiB of a 20 MiB segment", []Block{{base, 20 * mib, false}}, 0, 5 * mib, LargePool, Config{},
			[]Block{{base, 5 * mib, true}, {base + 5*mib, 15 * mib, false}},
			"5 MiB allocated at the segment start, 15 MiB free after it"},
		{"second 5 MiB reuses the remainder", []Block{{base, 5 * mib, true}, {base + 5*mib, 15 * mib, false}}, 1, 5 * mib, LargePool, Config{},
			[]Block{{base, 5 * mib, true}, {base + 5*mib, 5 * mib, true}, {base + 10*mib, 10 * mib, false}},
			"the segment is carved from the bottom up: 5 A | 5 A | 10 free"},
		{"slack stays inside", []Block{{base, 20 * mib, false}}, 0, 39 * mib / 2, LargePool, Config{},
			[]Block{{base, 20 * mib, true}},
			"only 0.5 MiB would remain, so the whole 20 MiB block is allocated"},
		{"block in the middle", []Block{{base, 5 * mib, true}, {base + 5*mib, 10 * mib, false}, {base + 15*mib, 5 * mib, true}}, 1, 4 * mib, LargePool, Config{},
			[]Block{{base, 5 * mib, true}, {base + 5*mib, 4 * mib, true}, {base + 9*mib, 6 * mib, false}, {base + 15*mib, 5 * mib, true}},
			"the blocks before and after stay as they were"},
		{"exact fit", []Block{{base, 1024, true}, {base + 1024, 1024, false}}, 1, 1024, SmallPool, Config{},
			[]Block{{base, 1024, true}, {base + 1024, 1024, true}},
			"nothing remains: no new block"},
		{"oversize request is not split", []Block{{base, 1024 * mib, false}}, 0, 1000 * mib, LargePool, Config{MaxSplitSize: 128 * mib},
			[]Block{{base, 1024 * mib, true}},
			"requests ≥ max_split_size are never split: 24 MiB of slack stay in the allocation"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			seg := slices.Clone(tc.segment)
			var got []Block
			var err error
			call := fmt.Sprintf("Allocate(%s, %d, %d, %v, %+v)", layout(tc.segment), tc.i, tc.size, tc.pool, tc.cfg)
			if !exercisetest.Call(t, call, func() { got, err = Allocate(seg, tc.i, tc.size, tc.pool, tc.cfg) }) {
				return
			}
			if err != nil {
				t.Fatalf("%s: unexpected error %v", call, err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s:\nwant %s\n got %s\n— %s", call, layout(tc.want), layout(got), tc.why)
			}
			if !slices.Equal(seg, tc.segment) {
				t.Errorf("%s modified its input to %s — build a new slice", call, layout(seg))
			}
		})
	}
}

func TestB_AllocateErrors(t *testing.T) {
	seg := []Block{{0x1000, 1024, true}, {0x1400, 4096, false}}
	tests := []struct {
		name string
		i    int
		size uint64
		why  string
	}{
		{"allocated block", 0, 512, "block 0 is in use; only free blocks can be allocated"},
		{"index too large", 2, 512, "the segment has blocks 0 and 1 only"},
		{"negative index", -1, 512, "indices start at 0"},
		{"too big", 1, 8192, "8192 bytes do not fit in a 4096-byte block"},
		{"unrounded size", 1, 1000, "1000 is not a multiple of 512: round the request first"},
		{"zero size", 1, 0, "0 is not a rounded size"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []Block
			var err error
			call := fmt.Sprintf("Allocate(%s, %d, %d, small, {})", layout(seg), tc.i, tc.size)
			if !exercisetest.Call(t, call, func() { got, err = Allocate(seg, tc.i, tc.size, SmallPool, Config{}) }) {
				return
			}
			if err == nil {
				t.Errorf("%s: want an error, got %s — %s", call, layout(got), tc.why)
			}
		})
	}
}
