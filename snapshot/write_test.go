package snapshot_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/replay"
	"memlab.dev/memlab/snapshot"
)

const MiB = 1 << 20

// allocatorSnapshot runs a few operations, an OOM included, with history and
// stacks on, and returns the allocator's snapshot. The OOM first releases the
// cached 20 MiB segment (segment_free before oom), as PyTorch does.
func allocatorSnapshot(t *testing.T, conf string) allocator.Snapshot {
	t.Helper()
	cfg, err := allocator.ParseConfig(conf)
	if err != nil {
		t.Fatal(err)
	}
	a, err := allocator.New(replay.NewSimMemory(1<<30), cfg)
	if err != nil {
		t.Fatal(err)
	}
	a.RecordHistory(allocator.HistoryOptions{Enabled: true, Stacks: true})
	p, err := a.Malloc(5 * MiB)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Malloc(700); err != nil {
		t.Fatal(err)
	}
	if err := a.Free(p); err != nil {
		t.Fatal(err)
	}
	if err := a.SetPerProcessMemoryFraction(0.01); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Malloc(900 * MiB); err == nil {
		t.Fatal("expected OOM")
	}
	a.EmptyCache()
	return a.Snapshot()
}

// TestWriteRoundTrip: what Write makes of memlab's allocator, Read reads back as
// FromAllocator describes it, with PyTorch's actions, frames and settings.
func TestWriteRoundTrip(t *testing.T) {
	for _, conf := range []string{"", "expandable_segments:True", "max_split_size_mb:64,roundup_power2_divisions:[256:2,>:8],garbage_collection_threshold:0.5"} {
		as := allocatorSnapshot(t, conf)
		var buf bytes.Buffer
		if err := snapshot.Write(&buf, as); err != nil {
			t.Fatal(err)
		}
		s, err := snapshot.Read(&buf)
		if err != nil {
			t.Fatalf("%q: %v", conf, err)
		}
		if want := snapshot.FromAllocator(as); !reflect.DeepEqual(s, want) {
			t.Errorf("%q: read back\n  %+v\nwant\n  %+v", conf, s, want)
		}
		var actions []string
		for _, e := range s.Traces[0] {
			actions = append(actions, e.Action.String())
		}
		want := "segment_alloc alloc segment_alloc alloc free_requested free_completed segment_free oom"
		if conf == "expandable_segments:True" {
			want = "segment_map alloc segment_map alloc free_requested free_completed segment_unmap oom"
		}
		if got := strings.Join(actions, " "); got != want {
			t.Errorf("%q: actions %q, want %q", conf, got, want)
		}
		if fr := s.Traces[0][1].Frames; len(fr) == 0 || !strings.Contains(fr[0].Name, "allocatorSnapshot") && !strings.Contains(fr[len(fr)-1].Name, "allocatorSnapshot") {
			t.Errorf("%q: frames %v do not show the caller", conf, fr)
		}
		cfg, err := s.Settings.Config()
		if err != nil {
			t.Fatal(err)
		}
		if wantCfg, _ := allocator.ParseConfig(conf); cfg.String() != wantCfg.String() {
			t.Errorf("settings give %q, want %q", cfg.String(), wantCfg.String())
		}
		if cov := s.Coverage(0); !cov.Complete() {
			t.Errorf("%q: %+v", conf, cov)
		}
	}
}
