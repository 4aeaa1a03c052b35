package whatif

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/snapshot"
)

// TestRepeatedRuns checks the predictions against eight more recordings of
// multistream_branches under each setting (reference/workloads-2.11/repeats/, one
// process at a time on the H200), with the shipped default snapshot and with each
// repeat's own default snapshot as input: the acceptance of checkPair for every run.
//
// It also checks what the repeats show about PyTorch itself: some figures differ
// between runs of the same program under the same setting (GPU timing decides when
// cross-stream frees complete), so no replay can equal every run; every figure that
// differs between repeats must be one the replay flags as timing-dependent, and the
// replay's range must hold all of them (checkPair).
func TestRepeatedRuns(t *testing.T) {
	const prog = "multistream_branches"
	shippedPath, err := reference.Pickle(reference.Workloads211, prog+"__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	shipped, err := snapshot.ReadFile(shippedPath)
	if err != nil {
		t.Fatal(err)
	}
	files, err := reference.Glob(reference.Workloads211, "repeats/*/"+prog+"__*.facts.json")
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]map[string]map[int64]bool{} // setting → key → values measured
	flagged := map[string]map[string]bool{}          // setting → keys the replay flags
	repeats := map[string]bool{}
	for _, ff := range files {
		rep := filepath.Base(filepath.Dir(ff))
		repeats[rep] = true
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(ff), prog+"__"), ".facts.json")
		r, f := checkPair(t, shipped, prog, ff, " (repeat "+rep+")")
		own, err := snapshot.ReadFile(filepath.Join(filepath.Dir(ff), "stacks", prog+"__default.pickle"))
		if err != nil {
			t.Fatal(err)
		}
		checkPair(t, own, prog, ff, " (repeat "+rep+", its own default snapshot)")
		if values[name] == nil {
			values[name], flagged[name] = map[string]map[int64]bool{}, map[string]bool{}
		}
		for _, k := range acceptanceKeys {
			if values[name][k] == nil {
				values[name][k] = map[int64]bool{}
			}
			values[name][k][f.Stats[k]] = true
			if _, ok := r.TimingRange[k]; ok {
				flagged[name][k] = true
			}
		}
	}
	if len(repeats) < 8 || len(values) != 5 {
		t.Fatalf("%d repeats of %d settings, want 8 of 5", len(repeats), len(values))
	}
	varying := 0
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range values {
			if !yield(n) {
				return
			}
		}
	}) {
		for _, k := range acceptanceKeys {
			if n := len(values[name][k]); n > 1 {
				varying++
				t.Logf("%s under %s: %s took %d values in %d runs", prog, name, k, n, len(repeats))
				if !flagged[name][k] {
					t.Errorf("%s under %s: %s differs between runs of the same setting, but the replay does not flag it as timing-dependent", prog, name, k)
				}
			}
		}
	}
	if varying == 0 {
		t.Error("no figure differs between the repeats: the timing dependence this test is about is not in the data")
	}
}

// TestNeutralSettings backs what BENCHMARKS.md and notebook 05 say of the shipped runs:
// max_split_size_mb:128 and roundup_power2_divisions:4 change none of
// multistream_branches' allocator decisions (every request is a power of two and no
// block reaches 128 MiB), so under each completion timing the replays under them equal
// the default's in every figure and final segment — yet PyTorch's runs under them
// measured different fragmentation peaks: GPU timing, not the setting.
func TestNeutralSettings(t *testing.T) {
	s := multistream(t)
	sts := settings(t, "", "max_split_size_mb:128", "roundup_power2_divisions:4")
	for _, c := range []Completion{CompleteAsRecorded, CompleteEarliest, CompleteLatest} {
		res, err := Replay(s, sts, Options{Completion: c, NoTimingRange: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Runs[1:] {
			for k, v := range res.Runs[0].Stats {
				if k != "max_split_size" && r.Stats[k] != v {
					t.Errorf("%s, %s: %s = %d, default %d", c, r.Setting.Label(), k, r.Stats[k], v)
				}
			}
			if !reflect.DeepEqual(r.Final.Segments, res.Runs[0].Final.Segments) {
				t.Errorf("%s, %s: final segments differ from the default's", c, r.Setting.Label())
			}
		}
	}
	var measured []int64
	for _, tag := range []string{"max_split_size_mb_128", "roundup_power2_divisions_4"} {
		path, err := reference.File(reference.Workloads211, "multistream_branches__"+tag+".facts.json")
		if err != nil {
			t.Fatal(err)
		}
		measured = append(measured, readFacts(t, path).Stats["inactive_split_bytes.all.peak"])
	}
	if measured[0] == measured[1] {
		t.Errorf("PyTorch measured the same fragmentation peak under both (%d): the claim this test backs is gone", measured[0])
	}
}
