package allocator

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

const (
	kiB = int64(1) << 10
	miB = int64(1) << 20
	giB = int64(1) << 30
)

func newTestAllocator(t *testing.T, conf string, capacity uint64) (*Allocator, *fakeMemory) {
	t.Helper()
	cfg, err := ParseConfig(conf)
	if err != nil {
		t.Fatal(err)
	}
	mem := newFakeMemory(capacity)
	a, err := New(mem, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a, mem
}

func mustMalloc(t *testing.T, a *Allocator, n int64) uint64 {
	t.Helper()
	addr, err := a.Malloc(n)
	if err != nil {
		t.Fatalf("Malloc(%d): %v", n, err)
	}
	return addr
}

func mustFree(t *testing.T, a *Allocator, addr uint64) {
	t.Helper()
	if err := a.Free(addr); err != nil {
		t.Fatalf("Free(%#x): %v", addr, err)
	}
}

// layout renders the segments as "size+state" lists in MiB, e.g. "[512A 512I]".
func layout(a *Allocator) []string {
	var out []string
	for _, s := range a.Snapshot().Segments {
		var parts []string
		for _, b := range s.Blocks {
			st := "I"
			if b.State == StateActiveAllocated {
				st = "A"
			}
			parts = append(parts, strings.TrimSuffix(strings.TrimSuffix(FormatSize(b.Size), ".00 MiB"), " bytes")+st)
		}
		out = append(out, "["+strings.Join(parts, " ")+"]")
	}
	return out
}

// TestFragmentationStory is the chapter's trace (a) under three configurations, with the
// layouts and counters PyTorch 2.11 produced (shared/reference/torch-2.11/a__*.jsonl.gz).
func TestFragmentationStory(t *testing.T) {
	type step struct {
		op        string // "a N" (MiB), "f i", "e"
		allocated int64  // MiB
		reserved  int64  // MiB
		layout    []string
	}
	trace := []string{"a 1024", "f 0", "a 512", "f 1", "a 256", "f 2", "a 768", "e", "f 3", "e"}
	tests := []struct {
		conf  string
		steps []step
		stats map[string]int64
	}{
		{"", []step{
			{"", 1024, 1024, []string{"[1024A]"}},
			{"", 0, 1024, []string{"[1024I]"}},
			{"", 512, 1024, []string{"[512A 512I]"}},
			{"", 0, 1024, []string{"[1024I]"}},
			{"", 256, 1024, []string{"[256A 768I]"}},
			{"", 0, 1024, []string{"[1024I]"}},
			{"", 768, 1024, []string{"[768A 256I]"}},
			{"", 768, 1024, []string{"[768A 256I]"}},
			{"", 0, 1024, []string{"[1024I]"}},
			{"", 0, 0, nil},
		}, map[string]int64{"num_device_alloc": 1, "num_device_free": 1, "num_sync_all_streams": 2,
			"allocated_bytes.all.allocated": 2560 * miB, "inactive_split.all.allocated": 3, "inactive_split_bytes.all.peak": 768 * miB}},
		{"max_split_size_mb:128", []step{
			{"", 1024, 1024, []string{"[1024A]"}},
			{"", 0, 1024, []string{"[1024I]"}},
			{"", 512, 1536, nil},
			{"", 0, 1536, nil},
			{"", 256, 1792, nil},
			{"", 0, 1792, nil},
			{"", 768, 2560, nil},
			{"", 768, 768, []string{"[768A]"}},
			{"", 0, 768, []string{"[768I]"}},
			{"", 0, 0, nil},
		}, map[string]int64{"num_device_alloc": 4, "num_device_free": 4, "oversize_segments.peak": 4, "oversize_allocations.allocated": 4, "max_split_size": 128 * miB}},
	}
	for _, tc := range tests {
		t.Run("conf="+tc.conf, func(t *testing.T) {
			a, mem := newTestAllocator(t, tc.conf, uint64(8*giB))
			var ids []uint64
			for i, op := range trace {
				var n int64
				switch op[0] {
				case 'a':
					fmtSscan(op[2:], &n)
					ids = append(ids, mustMalloc(t, a, n*miB))
				case 'f':
					fmtSscan(op[2:], &n)
					mustFree(t, a, ids[n])
				case 'e':
					if err := a.EmptyCache(); err != nil {
						t.Fatal(err)
					}
				}
				st := tc.steps[i]
				if got := a.MemoryAllocated(); got != st.allocated*miB {
					t.Fatalf("after %q: allocated %d MiB, want %d", op, got/miB, st.allocated)
				}
				if got := a.MemoryReserved(); got != st.reserved*miB {
					t.Fatalf("after %q: reserved %d MiB, want %d", op, got/miB, st.reserved)
				}
				if st.layout != nil && !reflect.DeepEqual(layout(a), st.layout) {
					t.Fatalf("after %q: layout %v, want %v", op, layout(a), st.layout)
				}
				if err := checkInvariants(a, mem); err != nil {
					t.Fatalf("after %q: %v", op, err)
				}
			}
			stats := a.MemoryStats()
			for k, v := range tc.stats {
				if stats[k] != v {
					t.Errorf("%s = %d, want %d", k, stats[k], v)
				}
			}
		})
	}
}

func fmtSscan(s string, n *int64) {
	var v int64
	for _, c := range s {
		v = v*10 + int64(c-'0')
	}
	*n = v
}

// TestSmallThings checks the spec's worked examples (§14.4).
func TestSmallThings(t *testing.T) {
	t.Run("1000 bytes take a split 2 MiB small segment", func(t *testing.T) {
		a, _ := newTestAllocator(t, "", uint64(giB))
		mustMalloc(t, a, 1000)
		s := a.MemoryStats()
		want := map[string]int64{"allocated_bytes.all.current": 1024, "requested_bytes.all.current": 1000,
			"inactive_split_bytes.all.current": 2096128, "segment.small_pool.current": 1, "reserved_bytes.small_pool.current": 2 * miB}
		for k, v := range want {
			if s[k] != v {
				t.Errorf("%s = %d, want %d", k, s[k], v)
			}
		}
	})
	t.Run("two 5 MiB requests share a 20 MiB segment", func(t *testing.T) {
		a, _ := newTestAllocator(t, "", uint64(giB))
		mustMalloc(t, a, 5*miB)
		if got := layout(a); !reflect.DeepEqual(got, []string{"[5A 15I]"}) {
			t.Fatalf("layout %v", got)
		}
		mustMalloc(t, a, 5*miB)
		if got := layout(a); !reflect.DeepEqual(got, []string{"[5A 5A 10I]"}) {
			t.Fatalf("layout %v", got)
		}
		s := a.MemoryStats()
		if s["inactive_split.all.current"] != 1 || s["inactive_split_bytes.all.current"] != 10*miB {
			t.Errorf("inactive_split %d / %d bytes", s["inactive_split.all.current"], s["inactive_split_bytes.all.current"])
		}
	})
	t.Run("19.5 MiB keeps the 0.5 MiB slack", func(t *testing.T) {
		a, _ := newTestAllocator(t, "", uint64(giB))
		mustMalloc(t, a, 19*miB+miB/2)
		s := a.MemoryStats()
		if s["allocated_bytes.all.current"] != 20*miB || s["requested_bytes.all.current"] != 19*miB+miB/2 {
			t.Errorf("allocated %d, requested %d", s["allocated_bytes.all.current"], s["requested_bytes.all.current"])
		}
	})
	t.Run("expandable: 8 x 16 MiB map 20 MiB pages", func(t *testing.T) {
		a, _ := newTestAllocator(t, "expandable_segments:True", uint64(4*giB))
		want := []int64{20, 40, 60, 80, 80, 100, 120, 140}
		for i, w := range want {
			mustMalloc(t, a, 16*miB)
			if got := a.MemoryReserved(); got != w*miB {
				t.Fatalf("after %d allocations reserved %d MiB, want %d", i+1, got/miB, w)
			}
		}
		s := a.MemoryStats()
		if s["segment.all.current"] != 0 || s["num_device_alloc"] != 7 {
			t.Errorf("segment %d, num_device_alloc %d", s["segment.all.current"], s["num_device_alloc"])
		}
		if segs := a.Snapshot().Segments; len(segs) != 1 || !segs[0].Expandable || segs[0].TotalSize != 140*miB {
			t.Errorf("snapshot %+v", segs)
		}
	})
}

func TestMallocInput(t *testing.T) {
	tests := []struct {
		name    string
		size    int64
		wantErr error
		wantOOM bool
		text    string
	}{
		{"zero is no allocation", 0, nil, false, ""},
		{"negative", -1, ErrInvalidSize, false, "negative size -1"},
		{"1 EiB", 1 << 60, nil, true, "Tried to allocate more than 1EB memory."},
		{"absurd", 1<<63 - 1, nil, true, "more than 1EB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, mem := newTestAllocator(t, "", uint64(giB))
			before := a.MemoryStats()
			addr, err := a.Malloc(tc.size)
			if addr != 0 {
				t.Errorf("address %#x", addr)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("err %v, want %v", err, tc.wantErr)
			}
			var oom *OutOfMemoryError
			if errors.As(err, &oom) != tc.wantOOM {
				t.Errorf("err %v: OOM %v, want %v", err, !tc.wantOOM, tc.wantOOM)
			}
			if tc.text != "" && (err == nil || !strings.Contains(err.Error(), tc.text)) {
				t.Errorf("err %v, want text %q", err, tc.text)
			}
			if tc.wantErr == nil && !tc.wantOOM && err != nil {
				t.Errorf("unexpected error %v", err)
			}
			if after := a.MemoryStats(); !reflect.DeepEqual(before, after) {
				t.Error("statistics changed")
			}
			if err := checkInvariants(a, mem); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestFreeErrors(t *testing.T) {
	a, mem := newTestAllocator(t, "", uint64(giB))
	p := mustMalloc(t, a, 4096)
	q := mustMalloc(t, a, 4096)
	mustFree(t, a, p)
	tests := []struct {
		name string
		addr uint64
	}{
		{"double free", p},
		{"interior pointer", q + 512},
		{"never allocated", 0xdeadbeef000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := a.MemoryStats()
			snap := a.Snapshot()
			err := a.Free(tc.addr)
			if !errors.Is(err, ErrInvalidPointer) {
				t.Fatalf("Free(%#x) = %v, want ErrInvalidPointer", tc.addr, err)
			}
			if !strings.HasPrefix(err.Error(), "allocator: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
			if !reflect.DeepEqual(before, a.MemoryStats()) || !reflect.DeepEqual(snap.Segments, a.Snapshot().Segments) {
				t.Error("state changed")
			}
			if err := checkInvariants(a, mem); err != nil {
				t.Fatal(err)
			}
		})
	}
	if err := a.Free(0); err != nil {
		t.Errorf("Free(0) = %v, want nil (empty tensor)", err)
	}
	mustFree(t, a, q)
}

func TestOutOfMemory(t *testing.T) {
	a, mem := newTestAllocator(t, "", uint64(giB))
	x := mustMalloc(t, a, 512*miB)
	y := mustMalloc(t, a, 256*miB)
	mustFree(t, a, y) // 256 MiB cached
	_, err := a.Malloc(600 * miB)
	var oom *OutOfMemoryError
	if !errors.As(err, &oom) {
		t.Fatalf("Malloc beyond capacity: %v", err)
	}
	want := "CUDA out of memory. Tried to allocate 600.00 MiB. GPU 0 has a total capacity of 1024.00 MiB of which 512.00 MiB is free. " +
		"Of the allocated memory 512.00 MiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated. " +
		"If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  " +
		"See documentation for Memory Management  (https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)"
	if err.Error() != want {
		t.Errorf("message\n%s\nwant\n%s", err, want)
	}
	if !oom.OutOfMemory() || oom.Requested != 600*miB || oom.AllocSize != 600*miB {
		t.Errorf("error fields %+v", oom)
	}
	s := a.MemoryStats()
	if s["num_ooms"] != 1 || s["num_alloc_retries"] != 1 || s["num_sync_all_streams"] != 1 || s["num_device_free"] != 1 {
		t.Errorf("ooms %d retries %d syncs %d device frees %d", s["num_ooms"], s["num_alloc_retries"], s["num_sync_all_streams"], s["num_device_free"])
	}
	if err := checkInvariants(a, mem); err != nil {
		t.Fatal(err)
	}
	// Still usable.
	z := mustMalloc(t, a, 400*miB)
	mustFree(t, a, z)
	mustFree(t, a, x)

	t.Run("fraction cap", func(t *testing.T) {
		a, _ := newTestAllocator(t, "", uint64(giB))
		if err := a.SetPerProcessMemoryFraction(0.5); err != nil {
			t.Fatal(err)
		}
		if f := a.PerProcessMemoryFraction(); f != 0.5 {
			t.Errorf("fraction %v", f)
		}
		_, err := a.Malloc(600 * miB)
		if !errors.As(err, &oom) || !oom.Capped || !strings.Contains(err.Error(), "512.00 MiB allowed; ") {
			t.Fatalf("err %v", err)
		}
		if err := a.SetPerProcessMemoryFraction(1); err != nil {
			t.Fatal(err)
		}
		mustMalloc(t, a, 600*miB)
	})
}

func TestDeviceErrorsPropagate(t *testing.T) {
	for _, conf := range []string{"", "expandable_segments:True"} {
		t.Run(conf, func(t *testing.T) {
			a, mem := newTestAllocator(t, conf, uint64(giB))
			mem.failNext = errInjected
			_, err := a.Malloc(miB)
			if !errors.Is(err, errInjected) {
				t.Fatalf("err %v, want the device's error", err)
			}
			var oom *OutOfMemoryError
			if errors.As(err, &oom) {
				t.Fatal("a device failure is not an OOM")
			}
			if err := checkInvariants(a, mem); err != nil {
				t.Fatal(err)
			}
			mustFree(t, a, mustMalloc(t, a, miB))
		})
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := New(nil, DefaultConfig()); err == nil {
		t.Error("New(nil) succeeded")
	}
	cfg, _ := ParseConfig("expandable_segments:True")
	if _, err := New(plainMemory{newFakeMemory(uint64(giB))}, cfg); !errors.Is(err, errNoVirtualMemory) {
		t.Errorf("expandable segments without VirtualMemory: %v", err)
	}
	a, _ := newTestAllocator(t, "", uint64(giB))
	for _, f := range []float64{-0.1, 1.5} {
		if err := a.SetPerProcessMemoryFraction(f); err == nil {
			t.Errorf("fraction %v accepted", f)
		}
	}
}

func TestHistoryAndSubscribe(t *testing.T) {
	a, _ := newTestAllocator(t, "", uint64(giB))
	var got []Action
	cancel := a.Subscribe(func(e Event) { got = append(got, e.Action) })
	a.RecordHistory(HistoryOptions{Enabled: true, MaxEntries: 4, Stacks: true})
	p := mustMalloc(t, a, 5*miB)
	mustFree(t, a, p)
	if err := a.EmptyCache(); err != nil {
		t.Fatal(err)
	}
	want := []Action{ActionSegmentAlloc, ActionAlloc, ActionFreeRequested, ActionFreeCompleted, ActionSegmentFree, ActionEmptyCache}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
	cancel()
	cancel() // idempotent
	mustMalloc(t, a, 5*miB)
	if len(got) != len(want) {
		t.Errorf("cancelled subscriber still called: %v", got)
	}
	snap := a.Snapshot()
	if len(snap.Trace) != 4 {
		t.Fatalf("history holds %d entries, want the newest 4", len(snap.Trace))
	}
	if snap.Trace[3].Action != ActionAlloc || snap.Trace[0].Action != ActionSegmentFree {
		t.Errorf("ring order %v..%v", snap.Trace[0].Action, snap.Trace[3].Action)
	}
	last := snap.Trace[3]
	if last.Allocated != 5*miB || last.Reserved != 20*miB || last.Size != 5*miB {
		t.Errorf("alloc event %+v", last)
	}
	if len(last.Frames) < 2 || !strings.HasSuffix(last.Frames[0].Function, ".mustMalloc") || !strings.HasSuffix(last.Frames[1].Function, ".TestHistoryAndSubscribe") {
		t.Errorf("frames %v do not start at the caller", last.Frames)
	}
	a.RecordHistory(HistoryOptions{})
	if n := len(a.Snapshot().Trace); n != 0 {
		t.Errorf("history not cleared: %d entries", n)
	}
}

func TestSnapshotAndMemoryViz(t *testing.T) {
	a, _ := newTestAllocator(t, "max_split_size_mb:64", uint64(giB))
	a.RecordHistory(HistoryOptions{Enabled: true})
	p := mustMalloc(t, a, 1000)
	q := mustMalloc(t, a, 3*miB)
	mustMalloc(t, a, 100*miB)
	mustFree(t, a, q)
	_ = p
	s := a.Snapshot()
	if len(s.Segments) != 3 {
		t.Fatalf("%d segments", len(s.Segments))
	}
	for i := 1; i < len(s.Segments); i++ {
		if s.Segments[i-1].Address >= s.Segments[i].Address {
			t.Fatal("segments not in address order")
		}
	}
	if s.TotalFree() != (2*miB-1024)+20*miB {
		t.Errorf("TotalFree %d", s.TotalFree())
	}
	if s.LargestFreeBlock() != 20*miB {
		t.Errorf("LargestFreeBlock %d", s.LargestFreeBlock())
	}
	if f := s.Fragmentation("large"); f != 0 {
		t.Errorf("large pool fragmentation %v (one free block)", f)
	}
	if f := s.Fragmentation(""); f <= 0 || f >= 1 {
		t.Errorf("fragmentation %v", f)
	}
	var buf bytes.Buffer
	if err := s.WriteMemoryVizJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Segments []struct {
			Address     uint64 `json:"address"`
			TotalSize   int64  `json:"total_size"`
			SegmentType string `json:"segment_type"`
			Blocks      []struct {
				State string `json:"state"`
			} `json:"blocks"`
		} `json:"segments"`
		DeviceTraces      [][]map[string]any `json:"device_traces"`
		AllocatorSettings map[string]any     `json:"allocator_settings"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Segments) != 3 || doc.Segments[0].SegmentType == "" || len(doc.Segments[0].Blocks) == 0 {
		t.Errorf("segments %+v", doc.Segments)
	}
	if len(doc.DeviceTraces) != 1 || len(doc.DeviceTraces[0]) != 8 {
		t.Fatalf("device_traces %v", doc.DeviceTraces)
	}
	if doc.DeviceTraces[0][0]["action"] != "segment_alloc" {
		t.Errorf("first trace entry %v", doc.DeviceTraces[0][0])
	}
	if doc.AllocatorSettings["max_split_size"] != float64(64*miB) || doc.AllocatorSettings["PYTORCH_CUDA_ALLOC_CONF"] != "max_split_size_mb:64" {
		t.Errorf("settings %v", doc.AllocatorSettings)
	}
}

func TestMemorySummaryLayout(t *testing.T) {
	a, _ := newTestAllocator(t, "", uint64(giB))
	mustMalloc(t, a, 700*miB)
	full := a.MemorySummary(false)
	abbr := a.MemorySummary(true)
	for _, s := range []string{full, abbr} {
		for i, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
			if len(l) != 77 {
				t.Fatalf("line %d is %d characters: %q", i, len(l), l)
			}
		}
	}
	if n := strings.Count(full, "\n"); n != 47 {
		t.Errorf("full summary has %d lines", n)
	}
	if n := strings.Count(abbr, "\n"); n != 29 {
		t.Errorf("abbreviated summary has %d lines", n)
	}
	// 700 MiB is below 768 MiB, so it is shown in KiB (PyTorch's unit rule).
	if !strings.Contains(full, "| Allocated memory      | 716800 KiB | 716800 KiB | 716800 KiB |      0 B   |") {
		t.Errorf("allocated row:\n%s", full)
	}
}

func TestInvariantCheckerCatchesCorruption(t *testing.T) {
	corruptions := []struct {
		name string
		f    func(a *Allocator)
	}{
		{"stat drift", func(a *Allocator) { a.stats.allocatedBytes[statAll].Current += 512 }},
		{"block size", func(a *Allocator) { a.active.each(func(b *block) { b.size += 512 }) }},
		{"lost free block", func(a *Allocator) { a.large.blocks.remove(a.large.blocks.last()) }},
		{"reserved drift", func(a *Allocator) { a.totalAllocated++ }},
	}
	for _, c := range corruptions {
		t.Run(c.name, func(t *testing.T) {
			a, mem := newTestAllocator(t, "", uint64(giB))
			mustMalloc(t, a, 3*miB)
			if err := checkInvariants(a, mem); err != nil {
				t.Fatal(err)
			}
			c.f(a)
			if err := checkInvariants(a, mem); err == nil {
				t.Fatal("corruption not detected")
			}
		})
	}
}
