package stats

import (
	"fmt"
	"testing"

	"memlab.dev/memlab/exercises/internal/exercisetest"
)

// msg picks a failure message in the learner's language (MEMLAB_LANG).
var msg = exercisetest.Msg

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
		{"one increase", []op{{"inc", 100}}, Stat{100, 100, 100, 0}, false, msg("current, peak and allocated all become 100", "current、peak 和 allocated 都变成 100")},
		{"increase then decrease", []op{{"inc", 100}, {"dec", 40}}, Stat{60, 100, 100, 40}, false, msg("the peak remembers 100; freed counts the 40", "peak 记住了 100；freed 记下这 40")},
		{"peak follows the highest", []op{{"inc", 100}, {"dec", 100}, {"inc", 30}}, Stat{30, 100, 130, 100}, false, msg("peak stays 100 although current is 30; allocated sums both increases", "current 是 30，peak 仍是 100；allocated 是两次增加之和")},
		{"reset peak", []op{{"inc", 100}, {"dec", 70}, {"reset", 0}}, Stat{30, 30, 100, 70}, false, msg("reset_peak_memory_stats sets peak to current and keeps the totals", "reset_peak_memory_stats 把 peak 设为 current，总量保留")},
		{"peak after reset", []op{{"inc", 100}, {"dec", 70}, {"reset", 0}, {"inc", 20}}, Stat{50, 50, 120, 70}, false, msg("after a reset the peak tracks new highs from the current value", "重置之后，peak 从当前值开始跟踪新的最高点")},
		{"decrease below zero", []op{{"inc", 10}, {"dec", 11}}, Stat{10, 10, 10, 0}, true, msg("11 > 10: an error, and the Stat stays as it was", "11 > 10：报错，Stat 保持原样")},
		{"decrease of zero stat", []op{{"dec", 1}}, Stat{}, true, msg("nothing to decrease", "没有可减少的")},
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
				t.Errorf(msg("%v: last error = %v, want error: %v — %s", "%v：最后的错误 = %v，是否期望错误：%v——%s"), tc.ops, err, tc.wantErr, tc.why)
			}
			if s != tc.want {
				t.Errorf(msg("after %v: want %+v, got %+v — %s", "%v 之后：期望 %+v，得到 %+v——%s"), tc.ops, tc.want, s, tc.why)
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
			name: msg("one small tensor, then freed", "一个小张量，然后释放"),
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
			why: msg("allocated counts the rounded block (1024), requested the 1000 asked for; freeing the tensor does not give the 2 MiB segment back", "allocated 统计取整后的块（1024），requested 统计请求的 1000；释放张量不会把 2 MiB 的段还回去"),
		},
		{
			name: msg("unsplit slack counts as allocated", "没分割出去的多余部分算作已分配"),
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
			why: msg("a 19.5 MiB tensor gets the whole 20 MiB block (the 0.5 MiB rest is not split off), so memory_allocated grows by 20 MiB", "19.5 MiB 的张量拿到整个 20 MiB 的块（剩下的 0.5 MiB 不分割出去），所以 memory_allocated 增加 20 MiB"),
		},
		{
			name: msg("trace (a): one 1 GiB segment reused, then empty_cache", "轨迹 (a)：一个 1 GiB 的段被复用，然后 empty_cache"),
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
			why: msg("every later tensor is carved from the cached 1 GiB segment: reserved stays 1 GiB until empty_cache, while allocated totals 2560 MiB", "之后的每个张量都从缓存的 1 GiB 段里切出来：empty_cache 之前已预留一直是 1 GiB，而已分配累计 2560 MiB"),
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
			why: msg("a small and a large segment; releasing the free small segment lowers reserved but not allocated", "一个小段和一个大段；释放空闲的小段降低已预留，但不降低已分配"),
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
					t.Fatalf(msg("event %d %+v: unexpected error %v", "事件 %d %+v：意外的错误 %v"), i, e, err)
				}
				got := point{tr.MemoryAllocated(), tr.MemoryReserved()}
				if got != tc.timeline[i] {
					t.Fatalf(msg("after event %d (%v of %d bytes): want memory_allocated %d, memory_reserved %d; got %d, %d — %s", "事件 %d（%v，%d 字节）之后：期望 memory_allocated %d、memory_reserved %d；得到 %d、%d——%s"),
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
					t.Errorf(msg("%s at the end: want %+v, got %+v — %s", "%s 结束时：期望 %+v，得到 %+v——%s"), c.key, c.want, c.got, tc.why)
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
		{"free more than allocated", Event{Free, 4096, 4000}, msg("only 1024 bytes are allocated", "只分配了 1024 字节")},
		{"alloc beyond reserved", Event{Alloc, 4 * mib, 4 * mib}, msg("a 4 MiB block cannot live in 2 MiB of segments; a SegmentAlloc must come first", "4 MiB 的块不能住在 2 MiB 的段里；必须先有 SegmentAlloc")},
		{"segment free under live blocks", Event{SegmentFree, 2 * mib, 0}, msg("the 1024-byte block still lives in the only segment: reserved would fall below allocated", "1024 字节的块还在唯一的段里：已预留会低于已分配")},
		{"segment free of more than reserved", Event{SegmentFree, 4 * mib, 0}, msg("only 2 MiB are reserved", "只预留了 2 MiB")},
		{"request larger than block", Event{Alloc, 512, 513}, msg("the block is the rounded request, so it is never smaller than the request", "块是取整后的请求，所以从不比请求小")},
		{"zero size", Event{SegmentAlloc, 0, 0}, msg("cudaMalloc of 0 bytes is not an allocator event", "0 字节的 cudaMalloc 不是分配器事件")},
		{"zero request", Event{Alloc, 512, 0}, msg("torch.empty(0) never reaches the allocator", "torch.empty(0) 根本到不了分配器")},
		{"unknown kind", Event{Kind(99), 512, 512}, msg("only the four kinds exist", "只有这四种事件")},
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
					t.Fatalf(msg("setup event %+v: unexpected error %v", "准备事件 %+v：意外的错误 %v"), e, err)
				}
			}
			before := tr.Stats()
			var err error
			if !exercisetest.Call(t, fmt.Sprintf("Apply(%+v)", tc.e), func() { err = tr.Apply(tc.e) }) {
				return
			}
			if err == nil {
				t.Errorf(msg("Apply(%+v) after a 2 MiB segment and a 1024-byte block: want an error — %s", "在一个 2 MiB 段和一个 1024 字节块之后 Apply(%+v)：期望一个错误——%s"), tc.e, tc.why)
			}
			if after := tr.Stats(); after != before {
				t.Errorf(msg("Apply(%+v) failed but changed the stats from %+v to %+v — an impossible event must leave everything as it was", "Apply(%+v) 失败了，却把统计从 %+v 改成了 %+v——不可能的事件必须让一切保持原样"), tc.e, before, after)
			}
		})
	}
}
