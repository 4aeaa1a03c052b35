package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
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
		{"cap with OOM", []string{snap, "--cap", "64MiB"}, 3, "first OOM at event", ""},
		{"cap with OOM: the replay stops", []string{snap, "--cap", "64MiB"}, 3, "the replay stops there", ""},
		{"keep going after the OOM", []string{snap, "--cap", "64MiB", "--keep-going"}, 3, "first OOM at event", ""},
		{"plot", []string{snap, "--conf", "", "--plot", filepath.Join(dir, "m.svg")}, 0, "wrote", ""},
		{"sweep", []string{snap, "--sweep", "--top", "3"}, 0, "lowest peak reserved first", ""},
		{"min cap", []string{snap, "--min-cap", "--conf", ""}, 0, "smallest cap without OOM", ""},
		{"min cap over the GPU timings", []string{snap, "--min-cap", "--conf", ""}, 0, "nor in any of 129 GPU timings of the 18 cross-stream frees; with the driver model's placement and the snapshot's GPU timing alone", ""},
		{"min cap of expandable segments: why one placement", []string{snap, "--min-cap", "--conf", "expandable_segments:True"}, 0, "the only one tried: expandable segments map pages into address ranges reserved up front, so no figure depends on where the driver places device memory", ""},
		{"min cap with a cap", []string{snap, "--min-cap", "--cap", "1GiB"}, 2, "", "--min-cap finds the cap itself; drop --cap and --fraction"},
		{"min cap with a plot", []string{snap, "--min-cap", "--plot", filepath.Join(dir, "c.png")}, 2, "", "--min-cap draws nothing; drop --plot"},
		{"header", []string{snap}, 0, "multistream_branches__default.pickle: PyTorch 2.10 or later · device 139.80 GiB (H200) assumed · 183 events · 3 streams · no private pool\n", ""},
		{"header with --total", []string{snap, "--total", "80GiB"}, 0, "· device 80.00 GiB assumed ·", ""},
		{"a cap that never engaged", []string{snap, "--cap", "20GiB", "--conf", "garbage_collection_threshold:0.6"}, 0, "the cap of 20.00 GiB never engaged: no device allocation reached it", ""},
		{"a GC threshold that never engaged", []string{snap, "--cap", "20GiB", "--conf", "garbage_collection_threshold:0.6"}, 0, "garbage_collection_threshold:0.6 never engaged: reserved memory never exceeded 0.6 × the cap (12.00 GiB)", ""},
		{"a GC threshold without a cap", []string{snap, "--conf", "garbage_collection_threshold:0.6"}, 0, "PyTorch collects only under a memory cap", ""},
		{"a cap that refused", []string{snap, "--cap", "250MiB", "--conf", ""}, 0, "the cap of 250.00 MiB refused 2 device allocations", ""},
		{"a GC that ran", []string{snap, "--cap", "250MiB", "--conf", "garbage_collection_threshold:0.5"}, 0, "garbage_collection_threshold:0.5: the collection ran 12 times and freed 8 segments (168.00 MiB)", ""},
		{"a cap above the device", []string{snap, "--cap", "500GiB"}, 0, "the cap of 500.00 GiB is not below the device's 139.80 GiB", ""},
		{"an OOM in one of several settings", []string{snap, "--conf", "", "--conf", "expandable_segments:True", "--cap", "64MiB"}, 3, "first OOM at event", ""},
		{"help", []string{"-h"}, 0, "", "Exit status: 0 when every replay ran"},
		{"no snapshot", nil, 2, "", "give one snapshot file, or one per rank"},
		{"missing file", []string{filepath.Join(dir, "nope.pickle")}, 1, "", "no such file"},
		{"not a pickle", []string{notPickle}, 1, "", "snapshot"},
		{"bad conf names the key", []string{snap, "--conf", "max_split_size_mb:abc"}, 2, "", "max_split_size_mb"},
		{"fraction and cap", []string{snap, "--fraction", "0.5", "--cap", "1GiB"}, 2, "", "not both"},
		{"bad fraction", []string{snap, "--fraction", "2"}, 2, "", "--fraction"},
		{"bad cap", []string{snap, "--cap", "lots"}, 2, "", "--cap"},
		{"bad plot extension", []string{snap, "--plot", filepath.Join(dir, "m.gif")}, 2, "", ".png or .svg"},
		{"sweep with conf", []string{snap, "--sweep", "--conf", ""}, 2, "", "drop --conf"},
		{"negative advise", []string{snap, "--sweep", "--advise", "-1"}, 2, "", "--advise -1"},
		{"json into a missing folder", []string{snap, "--json", filepath.Join(dir, "no", "such", "x.json")}, 2, "", "does not exist"},
	}
	runCLICases(t, "whatif", tests)
}

// TestWhatifMinCapJSON: --min-cap --json writes, per setting, the cap the table
// prints, the model's, and what was tried (placements, GPU timings), and --json -
// writes that JSON alone on stdout.
func TestWhatifMinCapJSON(t *testing.T) {
	snap, err := reference.File(reference.Workloads211, "multistream_branches__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		Conf             *string `json:"conf"`
		Cap              int64   `json:"cap"`
		ModelCap         int64   `json:"model_cap"`
		Placements       int     `json:"placements"`
		Timings          int     `json:"timings"`
		CrossStreamFrees int     `json:"cross_stream_frees"`
	}
	var got struct {
		Snapshot string  `json:"snapshot"`
		MinCap   []entry `json:"min_cap"`
	}
	out, _ := whatifJSON(t, &got, snap, "--min-cap", "--conf", "", "--conf", "expandable_segments:True")
	if got.Snapshot != snap || len(got.MinCap) != 2 {
		t.Fatalf("snapshot %q, %d entries; want %q and 2", got.Snapshot, len(got.MinCap), snap)
	}
	for _, e := range got.MinCap {
		if e.Conf == nil || e.Cap < e.ModelCap || e.ModelCap <= 0 || e.Placements < 1 || e.Timings == 0 || e.CrossStreamFrees != 18 {
			t.Errorf("%+v: want a conf, a cap at least the model's, and the timings of the 18 cross-stream frees", e)
		}
		if !strings.Contains(out, fmt.Sprintf("(%d bytes)", e.Cap)) {
			t.Errorf("the table does not print the JSON's cap %d:\n%s", e.Cap, out)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"whatif", snap, "--min-cap", "--json", "-"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil || len(got.MinCap) != 1 {
		t.Errorf("--json - wrote %q (%v), want the JSON alone", stdout.String(), err)
	}
	if !strings.Contains(stderr.String(), "smallest cap") {
		t.Errorf("--json -: the table is not on stderr: %q", stderr.String())
	}
}

// TestWhatifJSON checks the shape of --json: the keys, every memory_stats key,
// and PyTorch's own peaks for the snapshot's own settings.
func TestWhatifJSON(t *testing.T) {
	snap, err := reference.File(reference.Workloads211, "gpt2_train__default.pickle")
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
	whatifJSON(t, &got, snap, "--conf", "", "--conf", "max_split_size_mb:128")
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

// TestWhatifPlotPNG: --plot writes a PNG wide enough for the key beside the
// curves, at 192 dots per inch (2112 × 960 pixels for 11 × 5 inches).
func TestWhatifPlotPNG(t *testing.T) {
	snap, err := reference.File(reference.Workloads211, "multistream_branches__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.png")
	var out, errb bytes.Buffer
	if code := run([]string{"whatif", snap, "--conf", "", "--conf", "expandable_segments:True", "--plot", path}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Width != 2112 || cfg.Height != 960 {
		t.Errorf("PNG of %d × %d pixels, want 2112 × 960", cfg.Width, cfg.Height)
	}
}

// TestWhatifAdvice: with several settings the output ends with the advice and marks
// the recorded run's row; --json - writes JSON alone on stdout (with "advice"), the
// table on stderr; several ranks list the files of the ranks that run out.
func TestWhatifAdvice(t *testing.T) {
	snap, err := reference.File(reference.Workloads211, "bert_encode__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	confs := []string{"--conf", "", "--conf", "expandable_segments:True", "--conf", "max_split_size_mb:128"}
	runCLICases(t, "whatif", []cliCase{
		{"advice", append([]string{snap}, confs...), 0, "advice: expandable lowers peak reserved most without an OOM", ""},
		{"the recorded run's row", append([]string{snap}, confs...), 0, "default (recorded run)", ""},
		{"the table on stderr under --json -", append([]string{snap, "--json", "-"}, confs...), 0, "", "advice: expandable lowers"},
	})
	var out, errb bytes.Buffer
	if code := run(append([]string{"whatif", snap}, confs[:2]...), &out, &errb); code != 0 || strings.Contains(out.String(), "advice") {
		t.Errorf("one setting: exit %d, advice printed: %q", code, out.String())
	}
	out.Reset()
	errb.Reset()
	if code := run(append([]string{"whatif", snap, "--json", "-"}, confs...), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var got struct {
		Runs   []json.RawMessage `json:"runs"`
		Advice struct {
			Conf     *string  `json:"conf"`
			Saves    [3]int64 `json:"saves_bytes"`
			Recorded bool     `json:"baseline_is_recorded_run"`
		} `json:"advice"`
	}
	dec := json.NewDecoder(&out)
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("stdout is not JSON alone: %v\n%s", err, out.String())
	}
	if dec.More() {
		t.Errorf("stdout holds more than one JSON value")
	}
	if len(got.Runs) != 3 || got.Advice.Conf == nil || *got.Advice.Conf != "expandable_segments:True" || got.Advice.Saves[0] <= 0 || !got.Advice.Recorded {
		t.Errorf("JSON: %d runs, advice %+v", len(got.Runs), got.Advice)
	}
	if !strings.Contains(errb.String(), "peak reserved") {
		t.Errorf("stderr lacks the table:\n%s", errb.String())
	}

	// several ranks: the files of those that run out are listed, JSON alone on stdout
	lstm, err := reference.File(reference.Workloads211, "lstm_train__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	code := run([]string{"whatif", snap, lstm, "--conf", "", "--conf", "expandable_segments:True", "--cap", "200MiB", "--json", "-"}, &out, &errb)
	if code != exitOOM {
		t.Fatalf("exit %d, want %d: %s", code, exitOOM, errb.String())
	}
	var ranks struct {
		Worst []struct {
			File     string   `json:"file"`
			OOMFiles []string `json:"files_with_oom"`
		} `json:"worst"`
		Advice json.RawMessage `json:"advice"`
	}
	if err := json.Unmarshal(out.Bytes(), &ranks); err != nil {
		t.Fatalf("stdout is not JSON alone: %v", err)
	}
	if len(ranks.Worst) != 2 || len(ranks.Advice) == 0 {
		t.Fatalf("worst %+v, advice %s", ranks.Worst, ranks.Advice)
	}
	listed := false
	for _, w := range ranks.Worst {
		for _, f := range w.OOMFiles {
			listed = true
			if f != snap && f != lstm {
				t.Errorf("OOM file %q is no rank's", f)
			}
			if !strings.Contains(errb.String(), "out of memory on ") || !strings.Contains(errb.String(), f) {
				t.Errorf("summary does not list %s:\n%s", f, errb.String())
			}
		}
	}
	if !listed {
		t.Errorf("no rank ran out under a 200 MiB cap: %+v", ranks.Worst)
	}
}

// TestWhatifSweepAdvice checks that --sweep ends with advice judged on ranges: the
// first settings replayed again beside the recorded run, the advice naming the one
// that lowers peak reserved most (on bert_encode, expandable segments: 238 MiB
// measured by PyTorch under the default against 222 MiB), carried into --json; and
// that --advise 0 gives none.
func TestWhatifSweepAdvice(t *testing.T) {
	snap, err := reference.File(reference.Workloads211, "bert_encode__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Advice *struct {
			Conf             *string `json:"conf"`
			BaselineRecorded bool    `json:"baseline_is_recorded_run"`
		} `json:"advice"`
	}
	out, data := whatifJSON(t, &got, snap, "--sweep", "--top", "3")
	wantAll(t, out,
		"with their ranges over placements, beside the snapshot's own setting (--advise 3)",
		"default (recorded run)",
		"advice: expandable lowers peak reserved most without an OOM",
		"against 238.00 MiB under default (the recorded run)")
	if got.Advice == nil || got.Advice.Conf == nil || *got.Advice.Conf != "expandable_segments:True" || !got.Advice.BaselineRecorded {
		t.Errorf("--json advice = %s", data)
	}

	if out := whatifOK(t, snap, "--sweep", "--top", "3", "--advise", "0"); strings.Contains(out, "advice:") || strings.Contains(out, "--advise") {
		t.Errorf("--advise 0 still advises:\n%s", out)
	}
}

// TestWhatifSweepOneRowPerResult checks that --sweep prints one row per result, says
// how many settings the rows stand for and which settings share a row's figures
// (gpt2_train: no block reaches 512 MiB, so max_split_size_mb 512 and 1024 are the
// defaults' row), and that --json lists them under same_figures_as.
func TestWhatifSweepOneRowPerResult(t *testing.T) {
	snap, err := reference.File(reference.Workloads211, "gpt2_train__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Runs []struct {
			Conf  string   `json:"conf"`
			Alike []string `json:"same_figures_as"`
		} `json:"runs"`
	}
	out, _ := whatifJSON(t, &got, snap, "--sweep", "--advise", "0")
	wantAll(t, out,
		"60 settings without OOM, 46 different results; lowest peak reserved first",
		"\ndefault: the same figures whatever its max_split_size_mb (none, 512 or 1024) (one row: the setting with the fewest options)\n")
	if strings.Contains(out, "  max_split 512  ") {
		t.Errorf("max_split 512 has a row of its own:\n%s", out)
	}
	for _, r := range got.Runs {
		if r.Conf == "" && strings.Join(r.Alike, " ") != "max_split_size_mb:512 max_split_size_mb:1024" {
			t.Errorf("--json: the defaults' row has same_figures_as %q", r.Alike)
		}
	}
}

// TestWhatifSweepOfAnOOMSnapshot checks --sweep on a snapshot whose program ran out of
// memory and went on (it halves a batch that raised torch.OutOfMemoryError): it ranks
// the setting that runs through, failing what the recorded run failed, names the
// settings that serve a failed request or run out anew (--json: stopped_settings),
// keeps the replay's warnings with --advise 0, and advises among the first that serve
// the failed request, which it cannot rank.
func TestWhatifSweepOfAnOOMSnapshot(t *testing.T) {
	snap, err := reference.Pickle(reference.Programs211, "oom_split_batch_serve_fp16__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Runs []struct {
			NewOOMs int64            `json:"new_ooms"`
			Stats   map[string]int64 `json:"memory_stats"`
		} `json:"runs"`
		Stopped []struct {
			Conf   string `json:"conf"`
			At     int    `json:"stopped_at_event"`
			Served bool   `json:"stopped_at_served_oom"`
		} `json:"stopped_settings"`
	}
	out, _ := whatifJSON(t, &got, snap, "--sweep", "--advise", "0")
	wantAll(t, out,
		"1 of 60 settings runs through, failing the requests the recorded run failed, as it did, and no other; 1 result",
		"57 settings (every one tried but default, roundup 8 and roundup 16) serve the request the recorded run failed at event 2193",
		"2 settings (roundup 8 and roundup 16) run out of memory at event 4810, where the recorded run did not",
		"warning: device 0: the recorded OOMs say the program could reserve at most")
	if len(got.Runs) != 1 || got.Runs[0].NewOOMs != 0 || got.Runs[0].Stats["num_ooms"] != 19 {
		t.Errorf("--json runs: %+v; want the default alone, its 19 OOMs the recorded run's (new_ooms 0)", got.Runs)
	}
	if len(got.Stopped) != 59 || got.Stopped[0].Conf != "expandable_segments:True" || got.Stopped[0].At != 2193 || !got.Stopped[0].Served {
		t.Errorf("--json stopped_settings: %d, the first %+v; want 59, expandable serving the request at event 2193 first", len(got.Stopped), got.Stopped)
	}

	out = whatifOK(t, snap, "--sweep", "--advise", "2")
	wantAll(t, out, "advice: none for sure: default (the recorded run) runs out of memory; expandable, roundup 2 serve a request it failed (the first at event 2193)")
	if n := strings.Count(out, "warning: device 0: the recorded OOMs say"); n != 1 {
		t.Errorf("the warning printed %d times; want once", n)
	}
}

// whatifOK runs memlab whatif with args, fails t unless it exits 0, and returns what
// it printed on stdout.
func whatifOK(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(append([]string{"whatif"}, args...), &out, &errb); code != 0 {
		t.Fatalf("whatif %q: exit %d: %s", args, code, errb.String())
	}
	return out.String()
}

// whatifJSON is whatifOK with --json FILE added: it decodes that file into v and
// returns stdout and the file.
func whatifJSON(t *testing.T, v any, args ...string) (out string, data []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "whatif.json")
	out = whatifOK(t, append(args, "--json", path)...)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
	return out, data
}

// wantAll fails t for each of wants that out lacks.
func wantAll(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}
