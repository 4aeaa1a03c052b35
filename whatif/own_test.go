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

// TestOwnSettingHasNoAddressRange: replayed under the setting it was recorded with, a
// snapshot whose replay guesses no device address is that run, at the driver's own
// addresses, and carries no address range; under another setting the same device
// calls can land elsewhere (the range permutes them), so gpt2_generate_12l's default
// snapshot under max_split_size_mb:128, which guesses none, carries one that holds
// what PyTorch measured there.
func TestOwnSettingHasNoAddressRange(t *testing.T) {
	s := referenceSnapshot(t, reference.Misses211, "gpt2_generate_12l__default.pickle")
	own, err := Replay(s, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := own.Runs[0]; r.Guessed != 0 || r.AddressPlacements != 0 || r.AddressRange != nil {
		t.Errorf("own setting: %d guessed, address range %v over %d placements; want none", r.Guessed, r.AddressRange, r.AddressPlacements)
	}
	ff, err := reference.File(reference.Misses211, "gpt2_generate_12l__max_split_size_mb_128.facts.json")
	if err != nil {
		t.Fatal(err)
	}
	f := readFacts(t, ff)
	cfg, err := allocator.ParseConfig(f.Conf)
	if err != nil {
		t.Fatal(err)
	}
	other, err := Replay(s, []Setting{{Conf: cfg}}, Options{TotalMemory: f.TotalMemory})
	if err != nil {
		t.Fatal(err)
	}
	const k = "inactive_split_bytes.all.peak"
	r := other.Runs[0]
	lr, ok := r.AddressRange[k]
	if r.Guessed != 0 || r.AddressPlacements < 1+minPlacements || !ok || f.Stats[k] < lr[0] || f.Stats[k] > lr[1] {
		t.Errorf("max_split_size_mb:128: %d guessed, %s range %v (flagged %v) over %d placements; want none guessed, PyTorch's %d inside a range over at least %d",
			r.Guessed, k, lr, ok, r.AddressPlacements, f.Stats[k], 1+minPlacements)
	}
}
