package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// groundTruth is a ground-truth file kept in the repository (recorded on the H200).
var groundTruth = filepath.Join("..", "..", "replay", "testdata", "torch-2.11-extra", "oom_default.jsonl.gz")

func TestReplayCommand(t *testing.T) {
	dir := t.TempDir()
	bare := filepath.Join(dir, "bare.json")
	if err := os.WriteFile(bare, []byte(`[["a",1073741824],["f",0],["a",536870912],["f",1],["a",268435456],["f",2],["a",805306368],["e"]]`), 0o644); err != nil {
		t.Fatal(err)
	}
	badOps := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(badOps, []byte(`[["a",-5]]`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []cliCase{
		{"check matches PyTorch", []string{"--check", groundTruth}, 0, "25/25 ops matched", ""},
		{"check reports summary", []string{"--check", groundTruth}, 0, "summary: byte-identical", ""},
		{"check with another conf differs", []string{"--check", groundTruth, "--conf", "max_split_size_mb:128"}, 1, "first difference: op 0: stats.max_split_size", ""},
		{"bare list replays", []string{"--trace", bare}, 0, "", "8 ops, 0 OOMs"},
		{"bare list under a small capacity", []string{"--trace", bare, "--capacity", "512MiB"}, 0, "", "2 OOMs"},
		{"check of a bare list is refused", []string{"--check", bare}, 2, "", "bare op list"},
		{"no arguments", nil, 2, "", "exactly one of"},
		{"both modes", []string{"--trace", bare, "--check", groundTruth}, 2, "", "exactly one of"},
		{"bad conf names the key", []string{"--trace", bare, "--conf", "max_split_size_mb:abc"}, 1, "", `"max_split_size_mb"`},
		{"bad op", []string{"--trace", badOps}, 1, "", "negative"},
		{"missing file", []string{"--trace", filepath.Join(dir, "nope.json")}, 1, "", "no such file"},
		{"bad capacity", []string{"--trace", bare, "--capacity", "lots"}, 2, "", `--capacity: units: size "lots": not a number`},
		{"NaN capacity", []string{"--trace", bare, "--capacity", "NaN"}, 2, "", `--capacity: units: size "NaN": not a number`},
		{"fractional capacity", []string{"--trace", bare, "--capacity", "0.5"}, 2, "", `--capacity: units: size "0.5": not a whole number of bytes`},
		{"negative capacity", []string{"--trace", bare, "--capacity", "-1GiB"}, 2, "", `size "-1GiB": negative`},
		{"zero capacity", []string{"--trace", bare, "--capacity", "0"}, 2, "", `--capacity: size "0" is 0: it must be positive`},
		{"capacity past int64", []string{"--trace", bare, "--capacity", "9223372036854775808"}, 2, "", "--capacity: size \"9223372036854775808\" is more than 2^63-1 bytes"},
		{"overflowing capacity", []string{"--trace", bare, "--capacity", "1e30"}, 2, "", `--capacity: units: size "1e30"`},
		{"viz JSON", []string{"--trace", bare, "--viz", filepath.Join(dir, "snap.json")}, 0, "", "8 ops"},
		{"viz pickle", []string{"--trace", bare, "--viz", filepath.Join(dir, "snap.pickle")}, 0, "", "8 ops"},
		{"viz unwritable", []string{"--trace", bare, "--viz", filepath.Join(dir, "no", "such", "dir.json")}, 2, "", "--viz"},
	}
	runCLICases(t, "replay", tests)
	var snap struct {
		Segments     []map[string]any   `json:"segments"`
		DeviceTraces [][]map[string]any `json:"device_traces"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "snap.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &snap); err != nil {
		t.Fatal(err)
	}
	if len(snap.Segments) != 1 || len(snap.DeviceTraces) != 1 || len(snap.DeviceTraces[0]) != 11 {
		t.Errorf("viz snapshot: %d segments, traces %v", len(snap.Segments), snap.DeviceTraces)
	}
	if p, err := os.ReadFile(filepath.Join(dir, "snap.pickle")); err != nil || !bytes.HasPrefix(p, []byte{0x80, 4}) || p[len(p)-1] != '.' {
		t.Errorf("pickle snapshot: %v, %d bytes", err, len(p))
	}
}

func TestReplayWritesStatesAndSummary(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "state.jsonl")
	sum := filepath.Join(dir, "summary.txt")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"replay", "--trace", groundTruth, "--out", out, "--summary", sum}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 25 {
		t.Fatalf("%d state lines, want 25 (one per op)", len(lines))
	}
	var oomSeen bool
	for i, l := range lines {
		var s map[string]any
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		for _, k := range []string{"kind", "i", "op", "memory_allocated", "memory_reserved", "max_memory_allocated", "max_memory_reserved", "segments"} {
			if _, ok := s[k]; !ok {
				t.Fatalf("line %d lacks %q: %s", i, k, l)
			}
		}
		if _, ok := s["stats"]; ok {
			t.Fatalf("line %d of the default (compact) output has the full stats: %s", i, l)
		}
		if s["oom"] == true {
			oomSeen = true
			if !strings.HasPrefix(s["msg"].(string), "CUDA out of memory. Tried to allocate") {
				t.Errorf("line %d: msg %q", i, s["msg"])
			}
		}
	}
	if !oomSeen {
		t.Error("no OOM recorded, but the trace has one")
	}
	want, err := os.ReadFile(strings.TrimSuffix(groundTruth, ".jsonl.gz") + ".summary.txt")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(sum)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("summary differs from PyTorch's:\n%s\nwant:\n%s", got, want)
	}
}

// --out writes short lines by default, so that a long trace cannot fill a
// disk by accident (a full line is tens of KB once there are many segments);
// --full writes the whole state.
func TestReplayOutIsCompactUnlessFull(t *testing.T) {
	dir := t.TempDir()
	var ops []string
	for range 400 {
		ops = append(ops, `["a",20971520]`) // one 20 MiB segment each
	}
	bare := filepath.Join(dir, "many.json")
	if err := os.WriteFile(bare, []byte("["+strings.Join(ops, ",")+"]"), 0o644); err != nil {
		t.Fatal(err)
	}
	longest := func(args ...string) (int, string) {
		t.Helper()
		out := filepath.Join(dir, "out.jsonl")
		var stdout, stderr bytes.Buffer
		if code := run(append([]string{"replay", "--trace", bare, "--out", out}, args...), &stdout, &stderr); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		n, last := 0, ""
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			n, last = max(n, len(l)), l
		}
		return n, last
	}
	n, last := longest()
	if n > 400 || !strings.Contains(last, `"segments":400`) {
		t.Errorf("compact lines reach %d bytes; last %s", n, last)
	}
	full, last := longest("--full")
	if full < 20000 || !strings.Contains(last, `"stats"`) || !strings.Contains(last, `"blocks"`) {
		t.Errorf("--full lines reach only %d bytes; last starts %.200s", full, last)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"replay", "--trace", bare, "--full"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "--full needs --out") {
		t.Errorf("--full without --out: exit %d, %s", code, stderr.String())
	}
}
