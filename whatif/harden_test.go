package whatif

import (
	"testing"

	"memlab.dev/memlab/internal/robusttest"
	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/snapshot"
)

// TestSparseDeviceIDs: a segment on device 2^31−1 costs nothing: devices are not
// allocated or counted densely by id.
func TestSparseDeviceIDs(t *testing.T) {
	const a = 0x7f0000000000
	s := trace(alloc(a, 512), freeReq(a, 512), freeDone(a, 512))
	s.Segments = []snapshot.Segment{{Device: 1<<31 - 1, Address: 1 << 40, TotalSize: 2 << 20, SegmentType: "small",
		Blocks: []snapshot.Block{{Address: 1 << 40, Size: 2 << 20, State: "inactive"}}}}
	res, err := Replay(s, nil, Options{NoTimingRange: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 1 || res.Runs[0].Device != 0 || res.Runs[0].MaxAllocated != 512 {
		t.Errorf("runs %+v", res.Runs)
	}
}

// TestStreamMaxUint64: a real stream whose id is 2^64−1 (the largest) is replayed
// like any other, also with a free that waits for other streams: the replay's own
// stand-in for "another stream" is one the history does not use.
func TestStreamMaxUint64(t *testing.T) {
	const a, b = 0x7f0000000000, 0x7f0000100000
	const st = ^uint64(0)
	e := func(x snapshot.TraceEntry) snapshot.TraceEntry { x.Stream = st; return x }
	s := trace(e(alloc(a, 512)), e(freeReq(a, 512)), e(alloc(b, 1024)), e(freeDone(a, 512)), e(alloc(a, 512)))
	res, err := Replay(s, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Runs[0]; r.MaxAllocated != 1536 || r.CrossStreamFrees != 1 {
		t.Errorf("peak allocated %d, cross-stream frees %d; want 1536 (1024 + the second 512) and 1", r.MaxAllocated, r.CrossStreamFrees)
	}
}

// TestInconsistentHistories: what a PyTorch trace cannot hold is an error naming the
// device, the entry and the field.
func TestInconsistentHistories(t *testing.T) {
	const a = 0x7f0000000000
	seg := func(size int64) snapshot.TraceEntry {
		return snapshot.TraceEntry{Action: snapshot.ActionSegmentAlloc, Addr: a, Size: size}
	}
	for _, c := range []struct {
		name  string
		s     *snapshot.Snapshot
		words []string
	}{
		{"free of another size", trace(alloc(a, 512), freeReq(a, 1024)), []string{"device 0 event 1 (free_requested)", "size 1024", "event 0 allocated 512"}},
		{"completion of another size", trace(alloc(a, 512), freeReq(a, 512), alloc(a+512, 8), freeDone(a, 4096)), []string{"device 0 event 3 (free_completed)", "size 4096", "event 0 allocated 512"}},
		{"a 1 EiB segment", trace(seg(1<<60), alloc(a, 512)), []string{"device 0 event 0 (segment_alloc)", "size 1152921504606846976", "more than the device's memory"}},
		{"a 1 EiB final segment", func() *snapshot.Snapshot {
			s := trace(alloc(a, 512))
			s.Segments = []snapshot.Segment{{Address: a, TotalSize: 1 << 60, SegmentType: "large"}}
			return s
		}(), []string{"device 0", "segment at 0x7f0000000000", "size 1152921504606846976", "more than the device's memory"}},
	} {
		var err error
		robusttest.NoPanic(t, c.name, func() { _, err = Replay(c.s, nil, Options{}) })
		robusttest.WantErr(t, c.name, err, c.words...)
	}
}

// TestManyUntracedSegmentFrees: a history of 160,000 releases of segments made
// before it began is prepared in linear time (it took 21 s when each release
// searched the others).
func TestManyUntracedSegmentFrees(t *testing.T) {
	const n = 160000
	es := make([]snapshot.TraceEntry, 0, n+1)
	for i := range n {
		es = append(es, snapshot.TraceEntry{Action: snapshot.ActionSegmentFree, Addr: uint64(1<<40 + i<<21), Size: 2 << 20})
	}
	es = append(es, snapshot.TraceEntry{Action: snapshot.ActionSegmentAlloc, Addr: 1 << 39, Size: 2 << 20}, alloc(1<<39, 4<<20))
	// and releases interleaved with new segments and frees inside the old ones
	for i := range n / 2 {
		old := uint64(1<<41 + i<<21)
		es = append(es, snapshot.TraceEntry{Action: snapshot.ActionSegmentAlloc, Addr: uint64(1<<42 + i<<21), Size: 2 << 20},
			freeReq(old, 512), freeDone(old, 512),
			snapshot.TraceEntry{Action: snapshot.ActionSegmentFree, Addr: old, Size: 2 << 20})
	}
	if _, err := Replay(trace(es...), nil, Options{}); err != nil {
		t.Fatal(err)
	}
}

// TestFilesRanks: several ranks' snapshots are replayed under the same settings, in
// the order given; Worst names, per setting, the rank with the highest peak reserved
// and counts the ranks with an OOM; a bad rank is an error naming it.
func TestFilesRanks(t *testing.T) {
	var paths []string
	for _, n := range []string{"multistream_branches__default.pickle", "lstm_train__default.pickle", "multistream_branches__default.pickle"} {
		p, err := reference.File(reference.Workloads211, n)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	sts := settings(t, "", "expandable_segments:True")
	for i := range sts {
		sts[i].Cap = 150 << 20 // below what each allocates at its peak
	}
	ranks, err := Files(paths, sts, Options{NoTimingRange: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(ranks) != 3 || ranks[1].Path != paths[1] {
		t.Fatalf("ranks %v", ranks)
	}
	for _, w := range ranks.Worst() {
		hi := int64(-1)
		for _, r := range ranks {
			for _, run := range r.Result.Runs {
				if run.Setting.Label() == w.Setting.Label() {
					hi = max(hi, run.MaxReserved)
				}
			}
		}
		if w.Run.MaxReserved != hi {
			t.Errorf("%s: worst %d, want the highest %d", w.Setting.Label(), w.Run.MaxReserved, hi)
		}
		oomRanks := 0
		for _, r := range ranks {
			for _, run := range r.Result.Runs {
				if run.Setting.Label() == w.Setting.Label() && run.FirstOOM != nil {
					oomRanks++
				}
			}
		}
		if w.OOMRanks != oomRanks {
			t.Errorf("%s: %d ranks with an OOM, counted %d", w.Setting.Label(), w.OOMRanks, oomRanks)
		}
	}
	if w := ranks.Worst(); len(w) != 2 || w[0].OOMRanks == 0 {
		t.Errorf("worst rows %+v: want 2, with an OOM under the cap", w)
	}
	_, err = Files(append(paths, "/nonexistent.pickle"), sts, Options{})
	robusttest.WantErr(t, "missing rank", err, "rank 3 (/nonexistent.pickle)")
	_, err = Files(nil, sts, Options{})
	robusttest.WantErr(t, "no ranks", err, "no snapshots")
}
