package whatif

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/snapshot"
)

func multistream(t *testing.T) *snapshot.Snapshot {
	t.Helper()
	s := referenceSnapshot(t, reference.Workloads211, "multistream_branches__default.pickle")
	return s
}

// TestCompletionPolicies: each policy's figures lie inside the timing range the other
// replays report, the earliest and latest differ from the recorded timing somewhere,
// and an unknown policy is an error.
func TestCompletionPolicies(t *testing.T) {
	s := multistream(t)
	st := Setting{Conf: allocator.DefaultConfig()}
	rec, err := Replay(s, []Setting{st}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := rec.Runs[0].TimingRange
	if len(want) == 0 || rec.Runs[0].CrossStreamFrees == 0 {
		t.Fatalf("multistream_branches: no timing range (%d cross-stream frees)", rec.Runs[0].CrossStreamFrees)
	}
	for _, c := range []Completion{CompleteEarliest, CompleteLatest} {
		res, err := Replay(s, []Setting{st}, Options{Completion: c})
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		r := res.Runs[0]
		differs := false
		for k, v := range r.Stats {
			if v != rec.Runs[0].Stats[k] {
				differs = true
				lr, ok := want[k]
				if !ok || v < lr[0] || v > lr[1] {
					t.Errorf("%s: %s = %d, outside the reported range %v", c, k, v, lr)
				}
			}
		}
		if !differs {
			t.Errorf("%s: every figure equals the recorded timing's", c)
		}
		if len(r.TimingRange) != len(want) {
			t.Errorf("%s: %d timing-dependent keys, %d with the recorded timing", c, len(r.TimingRange), len(want))
		}
	}
	if _, err := Replay(s, []Setting{st}, Options{Completion: CompleteLatest + 1}); err == nil {
		t.Error("an unknown completion policy: no error")
	}
}

// TestTimingUnderCaps: under caps that make the retry path synchronise (and fail), the
// replays of every policy keep their pending frees consistent with the allocator's.
func TestTimingUnderCaps(t *testing.T) {
	s := multistream(t)
	for _, mib := range []int64{64, 128, 186, 200, 256} {
		st := Setting{Conf: allocator.DefaultConfig(), Cap: mib << 20}
		res, err := Replay(s, []Setting{st}, Options{})
		if err != nil {
			t.Fatalf("cap %d MiB: %v", mib, err)
		}
		if r := res.Runs[0]; r.OOMs > 0 && r.FirstOOM == nil {
			t.Errorf("cap %d MiB: %d OOMs and no first OOM", mib, r.OOMs)
		}
	}
}

// TestNoTimingRange: the option skips the range and keeps the count.
func TestNoTimingRange(t *testing.T) {
	res, err := Replay(multistream(t), nil, Options{NoTimingRange: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Runs[0]; r.TimingRange != nil || r.CrossStreamFrees == 0 {
		t.Errorf("NoTimingRange: range %v, %d cross-stream frees", r.TimingRange, r.CrossStreamFrees)
	}
}

// TestBoundDelays: the recording bounds when a cross-stream free may complete. In
// multistream_branches's default snapshot every free that completed by timing may wait
// at least as long as it did, and a free that never completed is unbounded; the
// bounds keep the timing range's reserved peak below what completing every free only
// at a synchronisation gives (an outcome no recorded run of the program reached,
// TestRepeatedRuns); and a trace without time stamps bounds nothing.
func TestBoundDelays(t *testing.T) {
	s := multistream(t)
	h, err := prepare(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	bounded, unbounded := 0, 0
	for _, f := range h.deferredFrees() {
		switch {
		case f.lag < 0 && f.latest != never:
			t.Errorf("free %d never completed in the recording, but its latest delay is %d", f.id, f.latest)
		case f.lag >= 0 && f.latest < f.lag:
			t.Errorf("free %d waited %d allocations in the recording, but its latest delay is %d", f.id, f.lag, f.latest)
		case f.latest == never:
			unbounded++
		default:
			bounded++
		}
	}
	if bounded == 0 || unbounded == 0 {
		t.Fatalf("%d frees bounded, %d unbounded: want both", bounded, unbounded)
	}
	st := Setting{Conf: allocator.DefaultConfig()}
	r, err := replayTimings(h, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sync, err := replaySchedule(h, st, Options{}, h.uniform(never))
	if err != nil {
		t.Fatal(err)
	}
	const k = "reserved_bytes.all.peak"
	if lr, ok := r.TimingRange[k]; !ok || lr[1] >= sync.Stats[k] {
		t.Errorf("%s: timing range %v, want one whose top is below %d (every free at a synchronisation)", k, lr, sync.Stats[k])
	}
	bare := *s
	bare.Traces = [][]snapshot.TraceEntry{slices.Clone(s.Traces[0])}
	for i := range bare.Traces[0] {
		bare.Traces[0][i].TimeUS = 0
	}
	hb, err := prepare(&bare, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(hb.latest) != 0 {
		t.Errorf("a trace without time stamps: %d frees bounded", len(hb.latest))
	}
}

// TestDDPBucketsEarly: the second recording of ddp_accum_train_bf16's default setting
// (reference/programs-2.11/rerun) let go of DDP's first gradient buckets only during
// the next backward, 910 allocations after their rebuild; the runs under the default,
// expandable_segments and max_split_size_mb:128 let go of them at the rebuild. The
// late snapshot's replay under each of those settings keeps its own point, which gives
// other figures than PyTorch measured there, and its timing range, which lets go of the
// buckets at the rebuild too, holds each of them; letting go at the rebuild
// (CompleteEarliest) gives PyTorch's figures; the warning says so.
func TestDDPBucketsEarly(t *testing.T) {
	const prog = "ddp_accum_train_bf16"
	s := referenceSnapshot(t, reference.Programs211, "rerun/"+prog+"__default.pickle")
	differs := 0
	for _, set := range []string{"default", "expandable_segments_True", "max_split_size_mb_128"} {
		ff, err := reference.File(reference.Programs211, prog+"__"+set+".facts.json")
		if err != nil {
			t.Fatal(err)
		}
		f := readFacts(t, ff)
		res, err := Replay(s, []Setting{f.setting(t)}, Options{TotalMemory: f.TotalMemory, NoAddressRange: true})
		if err != nil {
			t.Fatal(err)
		}
		r := res.Runs[0]
		for _, k := range acceptanceKeys {
			if r.Stats[k] == f.Stats[k] {
				continue
			}
			differs++
			lr, ok := r.TimingRange[k]
			if !ok || f.Stats[k] < lr[0] || f.Stats[k] > lr[1] {
				t.Errorf("%s: %s: PyTorch's run that let go at the rebuild measured %d, outside the late snapshot's timing range %v (its point: %d)", set, k, f.Stats[k], lr, r.Stats[k])
			}
			t.Logf("%s: %s: PyTorch %d, the late snapshot's point %d, its timing range %v", set, k, f.Stats[k], r.Stats[k], lr)
		}
		early, err := Replay(s, []Setting{f.setting(t)}, Options{TotalMemory: f.TotalMemory, NoAddressRange: true, Completion: CompleteEarliest})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range acceptanceKeys {
			if v := early.Runs[0].Stats[k]; v != f.Stats[k] {
				t.Errorf("%s: %s: the buckets let go of at the rebuild (CompleteEarliest): %d, PyTorch's run that did so measured %d", set, k, v, f.Stats[k])
			}
		}
		if r.EarlierHeldFrees != 1 {
			t.Errorf("%s: %d held frees made earlier, want the first buckets' 1", set, r.EarlierHeldFrees)
		}
		var table strings.Builder
		if err := res.WriteTable(&table); err != nil {
			t.Fatal(err)
		}
		if want := "or the buckets' rebuild for the 1 free your run made after it"; !strings.Contains(table.String(), want) {
			t.Errorf("%s: the table's timing note does not name the rebuild as the earliest point (%q):\n%s", set, want, table.String())
		}
		if w := "makes 1 free of DDP's first buckets, which this run made only after the buckets' rebuild, at the rebuild too"; !slices.ContainsFunc(res.Warnings, func(s string) bool { return strings.Contains(s, w) }) {
			t.Errorf("%s: no warning says %q: %q", set, w, res.Warnings)
		}
	}
	if differs < 3 {
		t.Errorf("%d figures of the runs at the rebuild differ from the late snapshot's point: the test no longer tells the points apart", differs)
	}
}

// TestDDPBucketsHeld: DDP's first gradient buckets were freed at their rebuild in the
// default run of reference/programs-2.11's ddp_accum_train_bf16 and only during the
// next backward in its run under roundup_power2_divisions:4 (programsKnown). The
// replay of the default snapshot under that setting keeps the default run's point, and
// its timing range, which frees the buckets later too, holds every figure PyTorch
// measured in that run; holding them to the end (CompleteLatest) lies inside it and
// above the recorded point; the table explains the range. Without the frames that name DDP's Reducer, nothing is
// held and nothing is timed.
func TestDDPBucketsHeld(t *testing.T) {
	const prog = "ddp_accum_train_bf16"
	s := referenceSnapshot(t, reference.Programs211, prog+"__default.pickle")
	ff, err := reference.File(reference.Programs211, prog+"__roundup_power2_divisions_4.facts.json")
	if err != nil {
		t.Fatal(err)
	}
	f := readFacts(t, ff)
	st := f.setting(t)
	opts := Options{TotalMemory: f.TotalMemory, NoAddressRange: true}
	res, err := Replay(s, []Setting{st}, opts)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Runs[0]
	if r.HeldFrees == 0 || r.CrossStreamFrees != 0 {
		t.Fatalf("%d held frees, %d cross-stream frees; want DDP's buckets held and no cross-stream free", r.HeldFrees, r.CrossStreamFrees)
	}
	for _, k := range []string{"allocated_bytes.all.peak", "reserved_bytes.all.peak", "num_device_alloc", "segment.all.peak", "inactive_split_bytes.all.peak"} {
		lr, ok := r.TimingRange[k]
		if r.Stats[k] == f.Stats[k] {
			t.Errorf("%s: the replay's %d is the late run's: the test no longer tells the points apart", k, r.Stats[k])
		}
		if !ok || f.Stats[k] < lr[0] || f.Stats[k] > lr[1] {
			t.Errorf("%s: PyTorch's late run measured %d, outside the timing range %v (the replay: %d)", k, f.Stats[k], lr, r.Stats[k])
		}
	}
	var table strings.Builder
	if err := res.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("Timing of frees, device 0: %d frees of DDP's gradient buckets come when the last holder of each lets go", r.HeldFrees); !strings.Contains(table.String(), want) {
		t.Errorf("the table does not explain the buckets' timing range (%q):\n%s", want, table.String())
	}
	opts.Completion = CompleteLatest
	late, err := Replay(s, []Setting{st}, opts)
	if err != nil {
		t.Fatal(err)
	}
	k := "allocated_bytes.all.peak"
	if v, lr := late.Runs[0].Stats[k], r.TimingRange[k]; v <= r.Stats[k] || v > lr[1] {
		t.Errorf("buckets held to the end: %s %d, want above the recorded point's %d and inside %v", k, v, r.Stats[k], lr)
	}

	bare := *s
	bare.Traces = [][]snapshot.TraceEntry{slices.Clone(s.Traces[0])}
	for i := range bare.Traces[0] {
		if e := &bare.Traces[0][i]; ddpBucket(e.Frames) != notBucket {
			e.Frames = nil
		}
	}
	res, err = Replay(&bare, []Setting{st}, Options{TotalMemory: f.TotalMemory, NoAddressRange: true})
	if err != nil {
		t.Fatal(err)
	}
	if b := res.Runs[0]; b.HeldFrees != 0 || b.TimingRange != nil {
		t.Errorf("without DDP's frames: %d held frees, timing range %v", b.HeldFrees, b.TimingRange)
	}
}
