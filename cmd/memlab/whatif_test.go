package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"memlab.dev/memlab/reference"
)

func TestWhatifCommand(t *testing.T) {
	snap, err := reference.File(reference.Workloads211, "multistream_branches__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	notPickle := filepath.Join(dir, "x.pickle")
	if err := os.WriteFile(notPickle, []byte("not a pickle"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []cliCase{
		// PyTorch measured 306184192 bytes reserved at the peak (the facts file).
		{"own settings", []string{snap}, 0, "292.00 MiB", ""},
		{"flags after and before", []string{"--conf", "expandable_segments:True", snap, "--conf", ""}, 0, "expandable", ""},
		{"cap with OOM", []string{snap, "--cap", "64MiB"}, 0, "first OOM at event", ""},
		{"cap with OOM: the replay stops", []string{snap, "--cap", "64MiB"}, 0, "the replay stops there", ""},
		{"keep going after the OOM", []string{snap, "--cap", "64MiB", "--keep-going"}, 0, "first OOM at event", ""},
		{"plot", []string{snap, "--conf", "", "--plot", filepath.Join(dir, "m.svg")}, 0, "wrote", ""},
		{"sweep", []string{snap, "--sweep", "--top", "3"}, 0, "lowest peak reserved first", ""},
		{"min cap", []string{snap, "--min-cap", "--conf", ""}, 0, "smallest cap without OOM", ""},
		{"no snapshot", nil, 2, "", "give one snapshot file, or one per rank"},
		{"missing file", []string{filepath.Join(dir, "nope.pickle")}, 1, "", "no such file"},
		{"not a pickle", []string{notPickle}, 1, "", "snapshot"},
		{"bad conf names the key", []string{snap, "--conf", "max_split_size_mb:abc"}, 2, "", "max_split_size_mb"},
		{"fraction and cap", []string{snap, "--fraction", "0.5", "--cap", "1GiB"}, 2, "", "not both"},
		{"bad fraction", []string{snap, "--fraction", "2"}, 2, "", "--fraction"},
		{"bad cap", []string{snap, "--cap", "lots"}, 2, "", "--cap"},
		{"bad plot extension", []string{snap, "--plot", filepath.Join(dir, "m.gif")}, 2, "", ".png or .svg"},
		{"sweep with conf", []string{snap, "--sweep", "--conf", ""}, 2, "", "drop --conf"},
		{"json into a missing folder", []string{snap, "--json", filepath.Join(dir, "no", "such", "x.json")}, 2, "", "does not exist"},
	}
	runCLICases(t, "whatif", tests)
}

// TestWhatifJSON checks the shape of --json: the keys, every memory_stats key,
// and PyTorch's own peaks for the snapshot's own settings.
func TestWhatifJSON(t *testing.T) {
	snap, err := reference.File(reference.Workloads211, "gpt2_train__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "out.json")
	var out, errb bytes.Buffer
	if code := run([]string{"whatif", snap, "--conf", "", "--conf", "max_split_size_mb:128", "--json", path}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Runs []struct {
			Conf         *string          `json:"conf"`
			Fraction     *float64         `json:"fraction"`
			MaxAllocated int64            `json:"max_memory_allocated"`
			MaxReserved  int64            `json:"max_memory_reserved"`
			Stats        map[string]int64 `json:"memory_stats"`
			OOM          *json.RawMessage `json:"oom"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(got.Runs))
	}
	factsPath, err := reference.File(reference.Workloads211, "gpt2_train__max_split_size_mb_128.facts.json")
	if err != nil {
		t.Fatal(err)
	}
	var facts struct {
		MaxAlloc    int64            `json:"max_memory_allocated"`
		MaxReserved int64            `json:"max_memory_reserved"`
		Stats       map[string]int64 `json:"memory_stats"`
	}
	fd, err := os.ReadFile(factsPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(fd, &facts); err != nil {
		t.Fatal(err)
	}
	r := got.Runs[1]
	if r.Conf == nil || *r.Conf != "max_split_size_mb:128" || r.Fraction != nil || r.OOM != nil {
		t.Errorf("run 1: conf %v fraction %v oom %v", r.Conf, r.Fraction, r.OOM)
	}
	if r.MaxAllocated != facts.MaxAlloc || r.MaxReserved != facts.MaxReserved {
		t.Errorf("peaks %d/%d, PyTorch measured %d/%d", r.MaxAllocated, r.MaxReserved, facts.MaxAlloc, facts.MaxReserved)
	}
	for k := range facts.Stats {
		if _, ok := r.Stats[k]; !ok {
			t.Errorf("memory_stats lacks %q", k)
		}
	}
}
