package keepalive

import (
	"fmt"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
)

func TestA_Span(t *testing.T) {
	tests := []struct {
		name           string
		v              View
		elemSize       int
		wantLo, wantHi int
		why            string
	}{
		{"first ten floats", View{0, []int{10}, []int{1}}, 4, 0, 40, "x[:10] of float32: elements 0..9, bytes [0, 40)"},
		{"last ten floats", View{990, []int{10}, []int{1}}, 4, 3960, 4000, "x[990:] starts at element 990 = byte 3960"},
		{"column of a matrix", View{0, []int{10}, []int{100}}, 4, 0, 3604, "x.view(10, 100)[:, 0]: the last element is at 9·100 = 900, so bytes [0, 3604)"},
		{"transposed", View{0, []int{100, 10}, []int{1, 100}}, 4, 0, 4000, "a transpose touches the same bytes as its base"},
		{"broadcast", View{7, []int{5, 3}, []int{0, 1}}, 4, 28, 40, "stride 0 repeats elements 7..9: bytes [28, 40)"},
		{"empty view", View{5, []int{0}, []int{1}}, 4, 20, 20, "x[5:5] has no elements: an empty span at its offset"},
		{"scalar view", View{3, []int{}, []int{}}, 8, 24, 32, "x[3] of a float64 tensor is one element at byte 24"},
		{"half precision", View{2, []int{2, 3}, []int{6, 1}}, 2, 4, 22, "float16: last element 2 + 6 + 2 = 10, so bytes [4, 22)"},
		{"size-1 dimension with big stride", View{0, []int{1, 4}, []int{1000, 1}}, 4, 0, 16, "a size-1 dimension adds (1−1)·stride = 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var lo, hi int
			var err error
			call := fmt.Sprintf("Span(%+v, %d)", tc.v, tc.elemSize)
			if !exercisetest.Call(t, call, func() { lo, hi, err = Span(tc.v, tc.elemSize) }) {
				return
			}
			if err != nil {
				t.Fatalf("%s: unexpected error %v", call, err)
			}
			if lo != tc.wantLo || hi != tc.wantHi {
				t.Errorf("%s: want [%d, %d), got [%d, %d) — %s", call, tc.wantLo, tc.wantHi, lo, hi, tc.why)
			}
		})
	}
}

func TestA_SpanErrors(t *testing.T) {
	tests := []struct {
		name     string
		v        View
		elemSize int
		why      string
	}{
		{"negative stride", View{10, []int{5}, []int{-1}}, 4, "PyTorch has no negative strides (x.flip copies)"},
		{"negative offset", View{-1, []int{5}, []int{1}}, 4, "a storage offset cannot be negative"},
		{"negative size", View{0, []int{-5}, []int{1}}, 4, "a size cannot be negative"},
		{"mismatched strides", View{0, []int{5, 2}, []int{1}}, 4, "one stride per dimension"},
		{"zero element size", View{0, []int{5}, []int{1}}, 0, "every dtype has at least 1 byte"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			call := fmt.Sprintf("Span(%+v, %d)", tc.v, tc.elemSize)
			if !exercisetest.Call(t, call, func() { _, _, err = Span(tc.v, tc.elemSize) }) {
				return
			}
			if err == nil {
				t.Errorf("%s: want an error — %s", call, tc.why)
			}
		})
	}
}

func TestB_KeptAlive(t *testing.T) {
	head := View{0, []int{10}, []int{1}}
	tests := []struct {
		name  string
		bytes int
		elem  int
		views []View
		want  Report
		why   string
	}{
		{"small view of a big tensor", 4000, 4, []View{head}, Report{4000, 40, 3960}, "y = x[:10]; del x — 4000 bytes stay allocated for 40 reachable ones"},
		{"overlapping views", 4000, 4, []View{head, {5, []int{15}, []int{1}}}, Report{4000, 80, 3920}, "x[:10] and x[5:20] overlap; the union is elements 0..19 = 80 bytes"},
		{"disjoint views", 4000, 4, []View{head, {100, []int{10}, []int{1}}}, Report{4000, 80, 3920}, "two separate 40-byte spans"},
		{"touching views", 4000, 4, []View{head, {10, []int{10}, []int{1}}}, Report{4000, 80, 3920}, "x[:10] and x[10:20] touch; count each byte once"},
		{"whole tensor", 4000, 4, []View{{0, []int{1000}, []int{1}}, head}, Report{4000, 4000, 0}, "a view of everything reaches everything"},
		{"only an empty view", 4000, 4, []View{{5, []int{0}, []int{1}}}, Report{4000, 0, 4000}, "even x[5:5] holds a reference to the storage: all 4000 bytes stay allocated"},
		{"no views", 4000, 4, nil, Report{0, 0, 0}, "when no tensor uses the storage it is freed"},
		{"unsorted", 4000, 4, []View{{900, []int{100}, []int{1}}, head, {950, []int{10}, []int{1}}}, Report{4000, 440, 3560}, "the spans [3600, 4000), [0, 40) and [3800, 3840) in any order: 400 + 40 bytes"},
		{"column keeps most of it", 4000, 4, []View{{0, []int{10}, []int{100}}}, Report{4000, 3604, 396}, "the span of a strided column covers everything between its first and last element"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got Report
			var err error
			call := fmt.Sprintf("KeptAlive(%d, %d, %+v)", tc.bytes, tc.elem, tc.views)
			if !exercisetest.Call(t, call, func() { got, err = KeptAlive(tc.bytes, tc.elem, tc.views) }) {
				return
			}
			if err != nil {
				t.Fatalf("%s: unexpected error %v", call, err)
			}
			if got != tc.want {
				t.Errorf("%s: want %+v, got %+v — %s", call, tc.want, got, tc.why)
			}
		})
	}
}

func TestB_KeptAliveErrors(t *testing.T) {
	tests := []struct {
		name  string
		bytes int
		views []View
		why   string
	}{
		{"past the end", 4000, []View{{995, []int{10}, []int{1}}}, "elements 995..1004 do not fit in 1000 elements"},
		{"second view invalid", 4000, []View{{0, []int{1}, []int{1}}, {0, []int{2}, []int{-1}}}, "view 1 has a negative stride"},
		{"negative storage", -4, nil, "a storage cannot have a negative size"},
		{"empty view past the end", 40, []View{{20, []int{0}, []int{1}}}, "offset 20 (byte 80) is past a 40-byte storage even with no elements"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got Report
			var err error
			call := fmt.Sprintf("KeptAlive(%d, 4, %+v)", tc.bytes, tc.views)
			if !exercisetest.Call(t, call, func() { got, err = KeptAlive(tc.bytes, 4, tc.views) }) {
				return
			}
			if err == nil {
				t.Errorf("%s: want an error, got %+v — %s", call, got, tc.why)
			}
		})
	}
}
