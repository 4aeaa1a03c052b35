package snapshot_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/snapshot"
)

// referenceFacts are counts pickle.load gave for each reference snapshot
// (testdata/gen.py), keyed by "folder/file".
type referenceFacts struct {
	Segments     int            `json:"segments"`
	Reserved     int64          `json:"reserved"`
	Allocated    int64          `json:"allocated"`
	Blocks       map[string]int `json:"blocks"`
	Traces       []int          `json:"traces"`
	Actions      map[string]int `json:"actions"`
	AllocBytes   int64          `json:"alloc_bytes"`
	TraceFrames  int            `json:"trace_frames"`
	Streams      int            `json:"streams"`
	Annotations  int            `json:"annotations"`
	Conf         string         `json:"conf"`
	MaxSplitSize int64          `json:"max_split_size"`
}

func loadFacts(t *testing.T) map[string]referenceFacts {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "reference_facts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var facts map[string]referenceFacts
	if err := json.Unmarshal(data, &facts); err != nil {
		t.Fatal(err)
	}
	return facts
}

// referencePickles returns every snapshot pickle shipped under reference/.
func referencePickles(t *testing.T) []string {
	t.Helper()
	a, err := reference.GlobPickles(reference.Torch211, "snapshot_*.pickle")
	if err != nil {
		t.Fatal(err)
	}
	b, err := reference.GlobPickles(reference.Workloads211, "*.pickle")
	if err != nil {
		t.Fatal(err)
	}
	return append(a, b...)
}

// factsKey names a shipped pickle in testdata/reference_facts.json: its folder and
// its name as a plain pickle (a P__S.pickle.gz has P__S.pickle's facts).
func factsKey(path string) string {
	return filepath.Base(filepath.Dir(path)) + "/" + filepath.Base(reference.TrimPickle(path)) + ".pickle"
}

// TestReadReference reads every PyTorch 2.11 snapshot in reference/ and checks
// what it holds against the counts Python's pickle.load gave.
func TestReadReference(t *testing.T) {
	facts := loadFacts(t)
	files := referencePickles(t)
	if len(files) != len(facts) {
		t.Errorf("%d reference pickles, %d with facts: regenerate testdata/reference_facts.json (testdata/gen.py)", len(files), len(facts))
	}
	for _, path := range files {
		key := factsKey(path)
		t.Run(key, func(t *testing.T) {
			want, ok := facts[key]
			if !ok {
				t.Fatalf("no facts for %s: regenerate testdata/reference_facts.json", key)
			}
			s, err := snapshot.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got := referenceFacts{Segments: len(s.Segments), Blocks: map[string]int{}, Actions: map[string]int{},
				Annotations: len(s.Annotations), Conf: s.Settings.Conf, MaxSplitSize: s.Settings.MaxSplitSize}
			streams := map[uint64]bool{}
			for _, seg := range s.Segments {
				got.Reserved += seg.TotalSize
				got.Allocated += seg.AllocatedSize
				streams[seg.Stream] = true
				for _, b := range seg.Blocks {
					got.Blocks[b.State]++
				}
			}
			for _, tr := range s.Traces {
				got.Traces = append(got.Traces, len(tr))
				for _, e := range tr {
					got.Actions[e.Action.String()]++
					streams[e.Stream] = true
					got.TraceFrames += len(e.Frames)
					if e.Action == snapshot.ActionAlloc {
						got.AllocBytes += e.Size
					}
				}
			}
			got.Streams = len(streams)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("read\n  %+v\npickle.load\n  %+v", got, want)
			}
			if !s.HasSettings || !s.HasHistory() {
				t.Errorf("HasSettings %v, HasHistory %v", s.HasSettings, s.HasHistory())
			}
		})
	}
}

// TestSettingsConfig: each workload's settings give the allocator.Config its name
// says it was recorded under (workload__max_split_size_mb_128.pickle: max_split_size_mb:128).
func TestSettingsConfig(t *testing.T) {
	files, err := reference.GlobPickles(reference.Workloads211, "*.pickle")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		s, err := snapshot.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		_, setting, _ := strings.Cut(filepath.Base(reference.TrimPickle(path)), "__")
		conf := ""
		if setting != "default" {
			// max_split_size_mb_64__garbage_collection_threshold_0p6 -> max_split_size_mb:64,garbage_collection_threshold:0.6
			var parts []string
			for _, kv := range strings.Split(setting, "__") {
				i := strings.LastIndex(kv, "_")
				parts = append(parts, kv[:i]+":"+strings.ReplaceAll(kv[i+1:], "p", "."))
			}
			conf = strings.Join(parts, ",")
		}
		want, err := allocator.ParseConfig(conf)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Settings.Config()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if got.String() != want.String() || got.Source() != conf {
			t.Errorf("%s: Config %q (source %q), want %q", filepath.Base(path), got.String(), got.Source(), want.String())
		}
	}
}

// TestRewriteReference: what Write makes of a PyTorch snapshot, Read reads back
// equal, for every reference snapshot.
func TestRewriteReference(t *testing.T) {
	for _, path := range referencePickles(t) {
		s, err := snapshot.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := s.Write(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := snapshot.Read(&buf)
		if err != nil {
			t.Fatalf("%s: reading what Write wrote: %v", factsKey(path), err)
		}
		if !reflect.DeepEqual(back, s) {
			t.Errorf("%s: rewritten snapshot reads back different", factsKey(path))
		}
	}
}

// TestCoverageReference: the workload snapshots were recorded from the start of
// each program, so their traces are complete; dropping the start of one shows.
func TestCoverageReference(t *testing.T) {
	files, err := reference.GlobPickles(reference.Workloads211, "*__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		s, err := snapshot.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		c := s.Coverage(0)
		if !c.Complete() || c.Entries != len(s.Traces[0]) || c.FirstUnknownFree != -1 {
			t.Errorf("%s: %+v", factsKey(path), c)
		}
		if strings.Contains(path, "multistream") && len(c.Streams) < 2 {
			t.Errorf("%s: streams %v, want several", factsKey(path), c.Streams)
		}
		// Drop the first half of the trace, as a ring buffer would.
		half := len(s.Traces[0]) / 2
		s.Traces[0] = s.Traces[0][half:]
		cut := s.Coverage(0)
		// a program that gave every segment back (empty_cache) shows it by the
		// frees of segments the cut trace never made instead
		if cut.Complete() || (cut.UntracedSegments == 0 || cut.UntracedSegmentBytes == 0) && cut.UnknownSegmentFrees == 0 {
			t.Errorf("%s without its first %d events: %+v", factsKey(path), half, cut)
		}
	}
}

// TestSettingsConfigEdges: no settings (an old snapshot) are PyTorch's defaults;
// values the allocator cannot run with are an error, not a silent change.
func TestSettingsConfigEdges(t *testing.T) {
	def, err := snapshot.Settings{}.Config()
	if err != nil || def.String() != allocator.DefaultConfig().String() {
		t.Errorf("zero Settings: %q, %v", def.String(), err)
	}
	// Set with torch.cuda.memory._set_allocator_settings: the dict has the value
	// even when PYTORCH_CUDA_ALLOC_CONF is empty.
	c, err := snapshot.Settings{MaxSplitSize: 256 << 20, ExpandableSegments: true}.Config()
	if err != nil || c.MaxSplitSize != 256<<20 || !c.ExpandableSegments {
		t.Errorf("typed values: %+v, %v", c, err)
	}
	for _, bad := range []snapshot.Settings{
		{MaxSplitSize: 1 << 20},
		{GarbageCollectionThreshold: 1.5},
		{RoundupPower2Divisions: [allocator.RoundupIntervals]int{3}},
		{Conf: "max_split_size_mb:abc"},
	} {
		if _, err := bad.Config(); err == nil || !strings.HasPrefix(err.Error(), "snapshot: allocator_settings") {
			t.Errorf("%+v: got %v, want an allocator_settings error", bad, err)
		}
	}
}
