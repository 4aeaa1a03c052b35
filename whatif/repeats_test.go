package whatif

import (
	"path/filepath"
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
	shippedPath, err := reference.File(reference.Workloads211, prog+"__default.pickle")
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
