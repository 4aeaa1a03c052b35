package whatif

import (
	"testing"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/snapshot"
)

func multistream(t *testing.T) *snapshot.Snapshot {
	t.Helper()
	path, err := reference.File(reference.Workloads211, "multistream_branches__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
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
