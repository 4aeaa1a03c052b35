package whatif

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/snapshot"
)

// TestCppFramesReplayAsPythonFrames: a practitioner's snapshot usually carries C++
// frames beside the Python ones (stacks="all", what `_record_memory_history()` records
// by default), where memlab's recordings carry Python frames only, and the replay reads
// frames (which releases destroy a private pool or are an empty_cache, what
// torch.distributed allocated). Every default run of reference/programs-2.11 recorded
// again with C++ frames (stacks-all/: a cuDNN benchmark, CUDA graph trees in training,
// a cold torch.compile) must replay exactly as PyTorch measured it, and give the replay
// under every setting its program was recorded under what the same snapshot with its
// C++ frames taken off gives: the same private pools, figures and ranges. (Its Python-
// frames twin in programs-2.11 is another run, whose requests differ in two of the
// three: cuDNN's timing, the graph trees' recording.)
func TestCppFramesReplayAsPythonFrames(t *testing.T) {
	files, err := reference.GlobPickles(reference.Programs211, filepath.Join("stacks-all", "*__default.pickle"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Fatalf("%d C++-frames snapshots in programs-2.11/stacks-all, want the 3 shipped", len(files))
	}
	for _, p := range files {
		name := filepath.Base(reference.TrimPickle(p))
		prog := strings.TrimSuffix(name, "__default")
		cpp := referenceSnapshot(t, reference.Programs211, filepath.Join("stacks-all", name+".pickle"))
		py := pythonFramesOnly(t, cpp)
		own := readFacts(t, reference.TrimPickle(p)+".facts.json")
		factFiles, err := reference.Glob(reference.Programs211, prog+"__*.facts.json")
		if err != nil || len(factFiles) == 0 {
			t.Fatalf("%s: %d facts files, %v", prog, len(factFiles), err)
		}
		var settings []Setting
		for _, ff := range factFiles {
			settings = append(settings, readFacts(t, ff).setting(t))
		}
		replay := func(s *snapshot.Snapshot, frames string) *Result {
			t.Helper()
			res, err := Replay(s, settings, Options{TotalMemory: own.TotalMemory})
			if err != nil {
				t.Fatalf("%s with %s frames: %v", prog, frames, err)
			}
			return res
		}
		rc, rp := replay(cpp, "C++"), replay(py, "only Python")
		if !slices.Equal(rc.Pools, rp.Pools) {
			t.Errorf("%s: pools with C++ frames %q, with Python frames only %q", prog, rc.Pools, rp.Pools)
		}
		for i, r := range rc.Runs {
			name := settingName(prog, factFiles[i])
			what := prog + " under " + name + " with C++ frames"
			if !maps.Equal(r.Stats, rp.Runs[i].Stats) || !maps.Equal(r.AddressRange, rp.Runs[i].AddressRange) ||
				!maps.Equal(r.TimingRange, rp.Runs[i].TimingRange) {
				for _, k := range acceptanceKeys {
					t.Logf("%s: %s = %d %v, with Python frames only %d %v", what, k, r.Stats[k], r.AddressRange[k], rp.Runs[i].Stats[k], rp.Runs[i].AddressRange[k])
				}
				t.Errorf("%s: figures or ranges other than with Python frames only", what)
			}
			if name == "default" {
				check(t, what+" (its own run)", r, own, acceptanceKeys)
			}
		}
		t.Logf("%s: %d settings, the same figures and ranges with C++ frames as without; pools %q", prog, len(rc.Runs), rc.Pools)
	}
}

// pythonFramesOnly is a copy of s whose trace entries keep their Python frames only, as
// memlab's recorder writes them.
func pythonFramesOnly(t *testing.T, s *snapshot.Snapshot) *snapshot.Snapshot {
	t.Helper()
	out := *s
	out.Traces = make([][]snapshot.TraceEntry, len(s.Traces))
	cut := 0
	for d, tr := range s.Traces {
		out.Traces[d] = slices.Clone(tr)
		for k := range out.Traces[d] {
			e := &out.Traces[d][k]
			n := len(e.Frames)
			e.Frames = slices.DeleteFunc(slices.Clone(e.Frames), func(f snapshot.Frame) bool {
				_, py := pythonFile(f)
				return !py
			})
			cut += n - len(e.Frames)
		}
	}
	if cut == 0 {
		t.Fatal("no C++ frame to take off")
	}
	return &out
}
