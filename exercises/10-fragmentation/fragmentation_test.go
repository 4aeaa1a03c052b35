package fragmentation

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
)

const mib = 1 << 20

func a(n uint64) Block { return Block{n * mib, true} }
func f(n uint64) Block { return Block{n * mib, false} }

func show(segments [][]Block) string {
	var sb strings.Builder
	for i, seg := range segments {
		if i > 0 {
			sb.WriteString(" ")
		}
		sb.WriteString("[")
		for j, b := range seg {
			if j > 0 {
				sb.WriteString(" | ")
			}
			state := "free"
			if b.Allocated {
				state = "A"
			}
			if b.Size%mib == 0 {
				fmt.Fprintf(&sb, "%d MiB %s", b.Size/mib, state)
			} else {
				fmt.Fprintf(&sb, "%d B %s", b.Size, state)
			}
		}
		sb.WriteString("]")
	}
	return sb.String()
}

func TestA_Summarize(t *testing.T) {
	tests := []struct {
		name     string
		segments [][]Block
		want     Summary
		why      string
	}{
		{"nothing", nil, Summary{}, "no segments: nothing free, fragmentation 0"},
		{"one free piece", [][]Block{{a(5), f(15)}}, Summary{15 * mib, 15 * mib, 0}, "all free memory is one block: fragmentation 0"},
		{"pieces in two segments", [][]Block{{a(5), f(5), a(5), f(5)}, {f(20)}}, Summary{30 * mib, 20 * mib, 1.0 / 3}, "30 MiB free, but the largest request that fits without cudaMalloc is 20 MiB"},
		{"crumbs", [][]Block{{a(1), f(1), a(1), f(1), a(1), f(1)}}, Summary{3 * mib, mib, 2.0 / 3}, "three 1 MiB holes: a 2 MiB request needs a new segment although 3 MiB are free"},
		{"all allocated", [][]Block{{a(20)}, {a(2)}}, Summary{}, "no free memory at all: fragmentation is defined as 0"},
		{"small and large pools", [][]Block{{{1024, true}, {2*mib - 1024, false}}, {f(20)}}, Summary{22*mib - 1024, 20 * mib, 1 - float64(20*mib)/float64(22*mib-1024)}, "free blocks of both pools count"},
		{"equal holes", [][]Block{{f(10)}, {f(10)}}, Summary{20 * mib, 10 * mib, 0.5}, "two separate 10 MiB segments are two blocks, never one: they cannot merge across segments"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got Summary
			call := fmt.Sprintf("Summarize(%s)", show(tc.segments))
			if !exercisetest.Call(t, call, func() { got = Summarize(tc.segments) }) {
				return
			}
			if got.TotalFree != tc.want.TotalFree || got.LargestFree != tc.want.LargestFree || math.Abs(got.Fragmentation-tc.want.Fragmentation) > 1e-9 {
				t.Errorf("%s: want total %d, largest %d, fragmentation %.4f; got %d, %d, %.4f — %s",
					call, tc.want.TotalFree, tc.want.LargestFree, tc.want.Fragmentation, got.TotalFree, got.LargestFree, got.Fragmentation, tc.why)
			}
		})
	}
}

func TestB_Breakdown(t *testing.T) {
	tests := []struct {
		name     string
		segments [][]Block
		want     Split
		why      string
	}{
		{"whole free segment", [][]Block{{f(20)}}, Split{0, 20 * mib, 0, 0}, "nothing uses the segment: empty_cache can cudaFree all 20 MiB"},
		{"split segment", [][]Block{{a(5), f(15)}}, Split{5 * mib, 0, 15 * mib, 1}, "the 15 MiB are stuck until the 5 MiB tensor dies (inactive_split)"},
		{"two holes in one segment", [][]Block{{a(5), f(5), a(5), f(5)}}, Split{10 * mib, 0, 10 * mib, 2}, "each free block of a used segment counts once in inactive_split"},
		{"mixed", [][]Block{{a(5), f(5), a(5), f(5)}, {f(20)}, {a(2)}}, Split{12 * mib, 20 * mib, 10 * mib, 2}, "reserved 42 MiB = 12 allocated + 20 releasable + 10 non-releasable"},
		{"nothing", nil, Split{}, "no segments, nothing reserved"},
		{"small segment", [][]Block{{{1024, true}, {2*mib - 1024, false}}}, Split{1024, 0, 2*mib - 1024, 1}, "torch.empty(1000) pins its whole 2 MiB small segment: 2096128 bytes non-releasable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got Split
			call := fmt.Sprintf("Breakdown(%s)", show(tc.segments))
			if !exercisetest.Call(t, call, func() { got = Breakdown(tc.segments) }) {
				return
			}
			if got != tc.want {
				t.Errorf("%s: want %+v, got %+v — %s", call, tc.want, got, tc.why)
			}
		})
	}
}
