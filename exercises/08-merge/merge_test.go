package merge

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
)

const (
	mib  = 1 << 20
	base = 0x7f0000000000
)

func layout(seg []Block) string {
	parts := make([]string, len(seg))
	for i, b := range seg {
		state := "free"
		if b.Allocated {
			state = "A"
		}
		parts[i] = fmt.Sprintf("+%d MiB:%d MiB %s", (b.Addr-base)/mib, b.Size/mib, state)
	}
	return "[" + strings.Join(parts, " | ") + "]"
}

func TestA_Free(t *testing.T) {
	tests := []struct {
		name    string
		segment []Block
		addr    uint64
		want    []Block
		why     string
	}{
		{"merge with next", []Block{{base, 5 * mib, true}, {base + 5*mib, 5 * mib, true}, {base + 10*mib, 10 * mib, false}}, base + 5*mib,
			[]Block{{base, 5 * mib, true}, {base + 5*mib, 15 * mib, false}},
			"the freed 5 MiB joins the free 10 MiB after it"},
		{"no free neighbour", []Block{{base, 5 * mib, true}, {base + 5*mib, 5 * mib, true}, {base + 10*mib, 10 * mib, false}}, base,
			[]Block{{base, 5 * mib, false}, {base + 5*mib, 5 * mib, true}, {base + 10*mib, 10 * mib, false}},
			"the next block is allocated, so nothing merges"},
		{"merge both sides", []Block{{base, 5 * mib, false}, {base + 5*mib, 5 * mib, true}, {base + 10*mib, 10 * mib, false}}, base + 5*mib,
			[]Block{{base, 20 * mib, false}},
			"free on both sides: the three blocks become the whole 20 MiB segment again"},
		{"merge with previous", []Block{{base, 5 * mib, false}, {base + 5*mib, 5 * mib, true}, {base + 10*mib, 10 * mib, true}}, base + 5*mib,
			[]Block{{base, 10 * mib, false}, {base + 10*mib, 10 * mib, true}},
			"the merged block starts at the previous block's (lower) address"},
		{"whole segment", []Block{{base, 20 * mib, true}}, base,
			[]Block{{base, 20 * mib, false}},
			"an unsplit segment simply becomes free"},
		{"small segment", []Block{{base, 1024, true}, {base + 1024, 2*mib - 1024, false}}, base,
			[]Block{{base, 2 * mib, false}},
			"torch.empty(1000) freed: the 2 MiB small segment is whole again"},
		{"middle of many", []Block{{base, mib, true}, {base + mib, mib, false}, {base + 2*mib, mib, true}, {base + 3*mib, mib, false}, {base + 4*mib, mib, true}}, base + 2*mib,
			[]Block{{base, mib, true}, {base + mib, 3 * mib, false}, {base + 4*mib, mib, true}},
			"only the direct neighbours merge; the blocks beyond them stay"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			seg := slices.Clone(tc.segment)
			var got []Block
			var err error
			call := fmt.Sprintf("Free(%s, +%d MiB)", layout(tc.segment), (tc.addr-base)/mib)
			if !exercisetest.Call(t, call, func() { got, err = Free(seg, tc.addr) }) {
				return
			}
			if err != nil {
				t.Fatalf("%s: unexpected error %v", call, err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s:\nwant %s\n got %s\n— %s", call, layout(tc.want), layout(got), tc.why)
			}
			if !slices.Equal(seg, tc.segment) {
				t.Errorf("%s modified its input to %s — work on a copy", call, layout(seg))
			}
		})
	}
}

func TestB_BadFrees(t *testing.T) {
	seg := []Block{{base, 5 * mib, true}, {base + 5*mib, 15 * mib, false}}
	tests := []struct {
		name string
		addr uint64
		why  string
	}{
		{"double free", base + 5*mib, "the block at +5 MiB is already free"},
		{"inside a block", base + mib, "+1 MiB is inside the first block, not the start of one"},
		{"outside the segment", base + 40*mib, "no block starts at +40 MiB"},
		{"below the segment", base - 512, "the segment starts at +0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []Block
			var err error
			call := fmt.Sprintf("Free(%s, %#x)", layout(seg), tc.addr)
			if !exercisetest.Call(t, call, func() { got, err = Free(seg, tc.addr) }) {
				return
			}
			if err == nil {
				t.Errorf("%s: want an error, got %s — %s", call, layout(got), tc.why)
			}
		})
	}
	t.Run("empty segment", func(t *testing.T) {
		var err error
		if !exercisetest.Call(t, "Free([], base)", func() { _, err = Free(nil, base) }) {
			return
		}
		if err == nil {
			t.Errorf("Free of an empty segment: want an error — there is no block to free")
		}
	})
}

func TestC_Releasable(t *testing.T) {
	tests := []struct {
		name    string
		segment []Block
		want    bool
		why     string
	}{
		{"whole free segment", []Block{{base, 20 * mib, false}}, true, "one free block: empty_cache can cudaFree it"},
		{"whole allocated segment", []Block{{base, 20 * mib, true}}, false, "a tensor still uses it"},
		{"split with a live block", []Block{{base, 5 * mib, true}, {base + 5*mib, 15 * mib, false}}, false, "the 15 MiB free piece is non-releasable while the 5 MiB block lives"},
		{"split, all free", []Block{{base, 5 * mib, false}, {base + 5*mib, 15 * mib, false}}, false, "two free blocks means merging was skipped — not a whole segment (cannot happen after correct merging)"},
		{"empty", nil, false, "no blocks at all is not a segment"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got bool
			call := fmt.Sprintf("Releasable(%s)", layout(tc.segment))
			if !exercisetest.Call(t, call, func() { got = Releasable(tc.segment) }) {
				return
			}
			if got != tc.want {
				t.Errorf("%s: want %v, got %v — %s", call, tc.want, got, tc.why)
			}
		})
	}
}
