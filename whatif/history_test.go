package whatif

import (
	"strings"
	"testing"

	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/snapshot"
)

// TestSeveralDevices: each device's history is replayed on its own allocator, one run
// per setting and device.
func TestSeveralDevices(t *testing.T) {
	s := &snapshot.Snapshot{Traces: [][]snapshot.TraceEntry{
		{alloc(0x7f0000000000, 30<<20), freeReq(0x7f0000000000, 30<<20), freeDone(0x7f0000000000, 30<<20)},
		{alloc(0x7f0000000000, 100<<20), alloc(0x7f0010000000, 512)},
	}}
	res, err := Replay(s, settings(t, "", "expandable_segments:True"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 4 {
		t.Fatalf("%d runs, want 2 settings × 2 devices", len(res.Runs))
	}
	for i, want := range []struct {
		device    int
		allocated int64
	}{{0, 30 << 20}, {1, 100<<20 + 512}, {0, 30 << 20}, {1, 100<<20 + 512}} {
		r := res.Runs[i]
		if r.Device != want.device || r.MaxAllocated != want.allocated {
			t.Errorf("run %d: device %d peak allocated %d, want device %d, %d", i, r.Device, r.MaxAllocated, want.device, want.allocated)
		}
	}
}

func settings(t *testing.T, confs ...string) []Setting {
	t.Helper()
	s, err := ParseSettings(confs...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestHistoryThatStartsLate: a snapshot whose history begins after the program
// allocated (recording started late, or the ring buffer wrapped) still replays: the
// blocks freed in it without an allocation in it, and those still allocated at its end,
// are re-made first, and a warning says how many and how much.
func TestHistoryThatStartsLate(t *testing.T) {
	s := referenceSnapshot(t, reference.Workloads211, "gpt2_train__default.pickle")
	full, err := Replay(s, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Warnings) != 0 {
		t.Errorf("a complete history warns: %q", full.Warnings)
	}
	cut := *s
	cut.Traces = [][]snapshot.TraceEntry{s.Traces[0][2000:]}
	res, err := Replay(&cut, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "were live before its first event") {
		t.Fatalf("warnings %q", res.Warnings)
	}
	r := res.Runs[0]
	if r.MaxAllocated <= 0 || r.MaxAllocated > full.Runs[0].MaxAllocated {
		t.Errorf("peak allocated %d of a tail, the whole history's %d", r.MaxAllocated, full.Runs[0].MaxAllocated)
	}
	if got, want := r.Stats["allocated_bytes.all.current"], full.Runs[0].Stats["allocated_bytes.all.current"]; got != want {
		t.Errorf("allocated at the end %d, the whole history ends with %d", got, want)
	}
}

// TestEmptyCacheIsReplayed: segment frees that no new segment follows are the
// program's torch.cuda.empty_cache(), replayed under every setting; segment frees
// followed by a new segment (the recorded allocator's own retry) are left to the
// replayed policy.
func TestEmptyCacheIsReplayed(t *testing.T) {
	const a, b = 0x7f0000000000, 0x7f0002000000
	seg := func(act snapshot.Action, addr uint64, size int64) snapshot.TraceEntry {
		return snapshot.TraceEntry{Action: act, Addr: addr, Size: size}
	}
	s := trace(seg(snapshot.ActionSegmentAlloc, a, 20<<20), alloc(a, 20<<20), freeReq(a, 20<<20), freeDone(a, 20<<20),
		seg(snapshot.ActionSegmentFree, a, 20<<20), alloc(a, 512), seg(snapshot.ActionSegmentAlloc, b, 2<<20))
	s.Traces[0] = s.Traces[0][:6] // alloc of 512 B after the empty_cache: a new small segment, not recorded
	res, err := Replay(s, settings(t, "", "expandable_segments:True"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Runs {
		if r.DeviceFrees != 1 || r.Stats["num_sync_all_streams"] != 1 {
			t.Errorf("%s: %d device frees, %d syncs; want the empty_cache's 1 and 1", r.Setting.Label(), r.DeviceFrees, r.Stats["num_sync_all_streams"])
		}
	}
	retry := trace(seg(snapshot.ActionSegmentAlloc, a, 20<<20), alloc(a, 20<<20), freeReq(a, 20<<20), freeDone(a, 20<<20),
		seg(snapshot.ActionSegmentFree, a, 20<<20), seg(snapshot.ActionSegmentAlloc, b, 40<<20), alloc(b, 40<<20))
	res, err = Replay(retry, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Runs[0]; r.DeviceFrees != 0 || r.Stats["num_sync_all_streams"] != 0 {
		t.Errorf("a release followed by a new segment was replayed as empty_cache: %d device frees, %d syncs", r.DeviceFrees, r.Stats["num_sync_all_streams"])
	}
}

// TestBlockIDsReused: a block whose free completes at once gives its id to a later
// allocation, so a replay's arrays by id (one set per placement replayed at once)
// are as long as the most blocks live at once, not as the history: gpt2_train's
// thousands of allocations need as many ids as the blocks it holds at its peak,
// and a deferred free keeps its id (multistream_branches' schedules name them).
func TestBlockIDsReused(t *testing.T) {
	for _, name := range []string{"gpt2_train", "multistream_branches"} {
		s := referenceSnapshot(t, reference.Workloads211, name+"__default.pickle")
		h, err := prepare(s, 0)
		if err != nil {
			t.Fatal(err)
		}
		allocs, live, most := 0, 0, 0
		deferred := map[int32]bool{}
		for _, o := range h.ops {
			switch o.kind {
			case opAlloc:
				allocs++
				live++
				most = max(most, live)
			case opFree:
				live--
				if o.deferred {
					if deferred[o.id] {
						t.Errorf("%s: two deferred frees share block id %d", name, o.id)
					}
					deferred[o.id] = true
				}
			}
		}
		t.Logf("%s: %d allocations, at most %d blocks live, %d deferred frees, %d initial blocks: %d ids",
			name, allocs, most, len(deferred), len(h.initial), h.ids)
		if limit := most + len(deferred) + len(h.initial); int(h.ids) > limit {
			t.Errorf("%s: %d block ids, want at most %d (the most blocks live at once, the deferred frees and the initial blocks)", name, h.ids, limit)
		}
	}
}
