package whatif

import (
	"path/filepath"
	"strings"
	"testing"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/snapshot"
)

// TestOwnSnapshotsReproduceThemselves replays every recorded snapshot (each program
// under each setting) under the setting it was recorded with: the figures equal that
// run's facts and the final segments equal the snapshot's own, block by block.
func TestOwnSnapshotsReproduceThemselves(t *testing.T) {
	files, err := reference.GlobPickles(reference.Workloads211, "*.pickle")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range files {
		name := filepath.Base(reference.TrimPickle(p))
		f := readFacts(t, reference.TrimPickle(p)+".facts.json")
		s, err := snapshot.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		st, err := SnapshotSetting(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cfg, err := allocator.ParseConfig(f.Conf)
		if err != nil {
			t.Fatal(err)
		}
		if st.Conf.String() != cfg.String() {
			t.Errorf("%s: snapshot settings %q, facts conf %q", name, st.Conf.String(), cfg.String())
		}
		if f.Frac != nil {
			st.Fraction = *f.Frac
		}
		res, err := Replay(s, []Setting{st}, Options{TotalMemory: f.TotalMemory})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		r := res.Runs[0]
		for _, k := range acceptanceKeys {
			if got, w := r.Stats[k], f.Stats[k]; got != w {
				t.Errorf("%s: %s = %d, PyTorch measured %d (guessed %d)", name, k, got, w, r.Guessed)
			}
		}
		if err := SameSegments(r.Final, s.DeviceSegments(0)); err != nil {
			t.Errorf("%s: final segments: %v", name, err)
		}
	}
}

// TestEmptyCacheWithoutFrames: without frames (a snapshot recorded with context=None)
// the replay takes a release followed by a new segment for an empty_cache() call only
// when the trace proves no malloc released it, so it never mistakes the allocator's own
// release for one: on every shipped snapshot with frames, the calls it finds with the
// frames removed are calls its frames show, and phases_empty_cache's first call is
// found; the shipped programs that never call empty_cache show none without frames,
// and a release left undecided is warned about.
func TestEmptyCacheWithoutFrames(t *testing.T) {
	files, err := reference.GlobPickles(reference.Workloads211, "*.pickle")
	if err != nil {
		t.Fatal(err)
	}
	calls := func(h *history) map[int32]bool {
		out := map[int32]bool{}
		for _, o := range h.ops {
			if o.kind == opEmptyCache {
				out[o.event] = true
			}
		}
		return out
	}
	found := 0
	for _, p := range files {
		name := filepath.Base(reference.TrimPickle(p))
		s, err := snapshot.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		h, err := prepare(s, 0)
		if err != nil {
			t.Fatal(err)
		}
		framed := calls(h)
		for i := range s.Traces[0] {
			s.Traces[0][i].Frames = nil
		}
		if h, err = prepare(s, 0); err != nil {
			t.Fatal(err)
		}
		bare := calls(h)
		for ev := range bare {
			if !framed[ev] && strings.HasPrefix(name, "phases_empty_cache") {
				t.Errorf("%s without frames: event %d taken for empty_cache(), its frames say the allocator's", name, ev)
			}
		}
		if !strings.HasPrefix(name, "phases_empty_cache") && len(bare) > 0 {
			t.Errorf("%s without frames: %d empty_cache() calls found, the program makes none", name, len(bare))
		}
		if strings.HasPrefix(name, "phases_empty_cache") {
			if len(framed) != 2 {
				t.Errorf("%s: %d empty_cache() calls told by their frames, the program makes 2", name, len(framed))
			}
			if len(bare) < len(framed) && !strings.Contains(strings.Join(h.warnings, "\n"), "cannot be told from the allocator's own release") {
				t.Errorf("%s without frames: %d of %d calls told, and no warning", name, len(bare), len(framed))
			}
			if name == "phases_empty_cache__default" {
				found = len(bare)
			}
		}
	}
	if found == 0 {
		t.Error("phases_empty_cache__default without frames: its first empty_cache() call (a released 600 MB block could serve the next request) not found")
	}
}
