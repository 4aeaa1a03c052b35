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
	files, err := reference.Glob(reference.Workloads211, "*.pickle")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range files {
		name := strings.TrimSuffix(filepath.Base(p), ".pickle")
		f := readFacts(t, strings.TrimSuffix(p, ".pickle")+".facts.json")
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
