package stats

import (
	"fmt"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
)

const mib = 1 << 20

func TestA_Stat(t *testing.T) {
	type op struct {
		name string // "inc", "dec", "reset"
		n    uint64
	}
	tests := []struct {
		name    string
		ops     []op
		want    Stat
		wantErr bool
		why     string
	}{
		{"one increase", []op{{"inc", 100}}, Stat{100, 100, 100, 0}, false, "current, peak and allocated all become 100"},
		{"increase then decrease", []op{{"inc", 100}, {"dec", 40}}, Stat{60, 100, 100, 40}, false, "the peak remembers 100; freed counts the 40"},
		{"peak follows the highest", []op{{"inc", 100}, {"dec", 100}, {"inc", 30}}, Stat{30, 100, 130, 100}, false, "peak stays 100 although current is 30; allocated sums both increases"},
		{"reset peak", []op{{"inc", 100}, {"dec", 70}, {"reset", 0}}, Stat{30, 30, 100, 70}, false, "reset_peak_memory_stats sets peak to current and keeps the totals"},
		{"peak after reset", []op{{"inc", 100}, {"dec", 70}, {"reset", 0}, {"inc", 20}}, Stat{50, 50, 120, 70}, false, "after a reset the peak tracks new highs from the current value"},
		{"decrease below zero", []op{{"inc", 10}, {"dec", 11}}, Stat{10, 10, 10, 0}, true, "11 > 10: an error, and the Stat stays as it was"},
		{"decrease of zero stat", []op{{"dec", 1}}, Stat{}, true, "nothing to decrease"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s Stat
			var err error
			for _, o := range tc.ops {
				call := fmt.Sprintf("Stat.%s(%d)", map[string]string{"inc": "Increase", "dec": "Decrease", "reset": "ResetPeak"}[o.name], o.n)
				ok := exercisetest.Call(t, call, func() {
					switch o.name {
					case "inc":
						s.Increase(o.n)
					case "dec":
						err = s.Decrease(o.n)
					case "reset":
						s.ResetPeak()
					}
				})
				if !ok {
					return
				}
			}
			if (err != nil) != tc.wantErr {
				t.Errorf("%v: last error = %v, want error: %v — %s", tc.ops, err, tc.wantErr, tc.why)
			}
			if s != tc.want {
				t.Errorf("after %v: want %+v, got %+v — %s", tc.ops, tc.want, s, tc.why)
			}
		})
	}
}

type point struct{ allocated, reserved uint64 }

func TestB_Replay(t *testing.T) {
	tests := []struct {
		name     string
		events   []Event
		timeline []point // memory_allocated, memory_reserved after each event
		final    Stats
		why      string
	}{
		{
			name: "one small tensor, then freed",
			events: []Event{
				{SegmentAlloc, 2 * mib, 0},
				{Alloc, 1024, 1000},
				{Free, 1024, 1000},
			},
			timeline: []point{{0, 2 * mib}, {1024, 2 * mib}, {0, 2 * mib}},
			final: Stats{
				Allocated:   Stat{0, 1024, 1024, 1024},
				Requested:   Stat{0, 1000, 1000, 1000},
				Reserved:    Stat{2 * mib, 2 * mib, 2 * mib, 0},
				Allocations: Stat{0, 1, 1, 1},
				Segments:    Stat{1, 1, 1, 0},
			},
			why: "allocated counts the rounded block (1024), requested the 1000 asked for; freeing the tensor does not give the 2 MiB segment back",
		},
		{
			name: "unsplit slack counts as allocated",
			events: []Event{
				{SegmentAlloc, 20 * mib, 0},
				{Alloc, 20 * mib, 39 * mib / 2},
			},
			timeline: []point{{0, 20 * mib}, {20 * mib, 20 * mib}},
			final: Stats{
				Allocated:   Stat{20 * mib, 20 * mib, 20 * mib, 0},
				Requested:   Stat{39 * mib / 2, 39 * mib / 2, 39 * mib / 2, 0},
				Reserved:    Stat{20 * mib, 20 * mib, 20 * mib, 0},
				Allocations: Stat{1, 1, 1, 0},
				Segments:    Stat{1, 1, 1, 0},
			},
			why: "a 19.5 MiB tensor gets the whole 20 MiB block (the 0.5 MiB rest is not split off), so memory_allocated grows by 20 MiB",
		},
		{
			name: "trace (a): one 1 GiB segment reused, then empty_cache",
			events: []Event{
				{SegmentAlloc, 1024 * mib, 0}, {Alloc, 1024 * mib, 1024 * mib}, {Free, 1024 * mib, 1024 * mib},
				{Alloc, 512 * mib, 512 * mib}, {Free, 512 * mib, 512 * mib},
				{Alloc, 256 * mib, 256 * mib}, {Free, 256 * mib, 256 * mib},
				{Alloc, 768 * mib, 768 * mib}, {Free, 768 * mib, 768 * mib},
				{SegmentFree, 1024 * mib, 0},
			},
			timeline: []point{
				{0, 1024 * mib}, {1024 * mib, 1024 * mib}, {0, 1024 * mib},
				{512 * mib, 1024 * mib}, {0, 1024 * mib},
				{256 * mib, 1024 * mib}, {0, 1024 * mib},
				{768 * mib, 1024 * mib}, {0, 1024 * mib},
				{0, 0},
			},
			final: Stats{
				Allocated:   Stat{0, 1024 * mib, 2560 * mib, 2560 * mib},
				Requested:   Stat{0, 1024 * mib, 2560 * mib, 2560 * mib},
				Reserved:    Stat{0, 1024 * mib, 1024 * mib, 1024 * mib},
				Allocations: Stat{0, 1, 4, 4},
				Segments:    Stat{0, 1, 1, 1},
			},
			why: "every later tensor is carved from the cached 1 GiB segment: reserved stays 1 GiB until empty_cache, while allocated totals 2560 MiB",
		},
		{
			name: "two segments",
			events: []Event{
				{SegmentAlloc, 2 * mib, 0}, {Alloc, 512, 4},
				{SegmentAlloc, 20 * mib, 0}, {Alloc, 5 * mib, 5 * mib},
				{Free, 512, 4}, {SegmentFree, 2 * mib, 0},
			},
			timeline: []point{
				{0, 2 * mib}, {512, 2 * mib},
				{512, 22 * mib}, {512 + 5*mib, 22 * mib},
				{5 * mib, 22 * mib}, {5 * mib, 20 * mib},
			},
			final: Stats{
				Allocated:   Stat{5 * mib, 512 + 5*mib, 512 + 5*mib, 512},
				Requested:   Stat{5 * mib, 4 + 5*mib, 4 + 5*mib, 4},
				Reserved:    Stat{20 * mib, 22 * mib, 22 * mib, 2 * mib},
				Allocations: Stat{1, 2, 2, 1},
				Segments:    Stat{1, 2, 2, 1},
			},
			why: "a small and a large segment; releasing the free small segment lowers reserved but not allocated",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var tr Tracker
			for i, e := range tc.events {
				var err error
				if !exercisetest.Call(t, fmt.Sprintf("Apply(%+v)", e), func() { err = tr.Apply(e) }) {
					return
				}
				if err != nil {
					t.Fatalf("event %d %+v: unexpected error %v", i, e, err)
				}
				got := point{tr.MemoryAllocated(), tr.MemoryReserved()}
				if got != tc.timeline[i] {
					t.Fatalf("after event %d (%v of %d bytes): want memory_allocated %d, memory_reserved %d; got %d, %d — %s",
						i, e.Kind, e.Size, tc.timeline[i].allocated, tc.timeline[i].reserved, got.allocated, got.reserved, tc.why)
				}
			}
			got := tr.Stats()
			for _, c := range []struct {
				key       string
				want, got Stat
			}{
				{"allocated_bytes", tc.final.Allocated, got.Allocated},
				{"requested_bytes", tc.final.Requested, got.Requested},
				{"reserved_bytes", tc.final.Reserved, got.Reserved},
				{"allocation", tc.final.Allocations, got.Allocations},
				{"segment", tc.final.Segments, got.Segments},
			} {
				if c.want != c.got {
					t.Errorf("%s at the end: want %+v, got %+v — %s", c.key, c.want, c.got, tc.why)
				}
			}
		})
	}
}

func TestC_ImpossibleEvents(t *testing.T) {
	setup := []Event{{SegmentAlloc, 2 * mib, 0}, {Alloc, 1024, 1000}}
	tests := []struct {
		name string
		e    Event
		why  string
	}{
		{"free more than allocated", Event{Free, 4096, 4000}, "only 1024 bytes are allocated"},
		{"alloc beyond reserved", Event{Alloc, 4 * mib, 4 * mib}, "a 4 MiB block cannot live in 2 MiB of segments; a SegmentAlloc must come first"},
		{"segment free under live blocks", Event{SegmentFree, 2 * mib, 0}, "the 1024-byte block still lives in the only segment: reserved would fall below allocated"},
		{"segment free of more than reserved", Event{SegmentFree, 4 * mib, 0}, "only 2 MiB are reserved"},
		{"request larger than block", Event{Alloc, 512, 513}, "the block is the rounded request, so it is never smaller than the request"},
		{"zero size", Event{SegmentAlloc, 0, 0}, "cudaMalloc of 0 bytes is not an allocator event"},
		{"zero request", Event{Alloc, 512, 0}, "torch.empty(0) never reaches the allocator"},
		{"unknown kind", Event{Kind(99), 512, 512}, "only the four kinds exist"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var tr Tracker
			for _, e := range setup {
				var err error
				if !exercisetest.Call(t, fmt.Sprintf("Apply(%+v)", e), func() { err = tr.Apply(e) }) {
					return
				}
				if err != nil {
					t.Fatalf("setup event %+v: unexpected error %v", e, err)
				}
			}
			before := tr.Stats()
			var err error
			if !exercisetest.Call(t, fmt.Sprintf("Apply(%+v)", tc.e), func() { err = tr.Apply(tc.e) }) {
				return
			}
			if err == nil {
				t.Errorf("Apply(%+v) after a 2 MiB segment and a 1024-byte block: want an error — %s", tc.e, tc.why)
			}
			if after := tr.Stats(); after != before {
				t.Errorf("Apply(%+v) failed but changed the stats from %+v to %+v — an impossible event must leave everything as it was", tc.e, before, after)
			}
		})
	}
}
