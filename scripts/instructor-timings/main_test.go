package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"memlab.dev/memlab/memlab"
)

func TestParseLabLog(t *testing.T) {
	f, err := os.Open("../../notebooks/recorded/h200-lab.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	times, err := parseLabLog(f)
	if err != nil {
		t.Fatal(err)
	}
	if got := times["00-setup-and-tour/whichDevice"]; got != 307*time.Millisecond {
		t.Errorf("whichDevice took %v, want 307ms (the log's first cell)", got)
	}
	if _, err := parseLabLog(strings.NewReader("no cells here\n")); err == nil {
		t.Error("a log without cells parsed")
	}
}

func TestReplaceBlocks(t *testing.T) {
	doc := "a\n<!-- timings 00: begin (go run ./scripts/instructor-timings) -->\nold\n<!-- timings 00: end -->\nb\n"
	out, err := replaceBlocks(doc, map[string]string{"00": "new\n"})
	if err != nil || out != "a\n<!-- timings 00: begin (go run ./scripts/instructor-timings) -->\nnew\n<!-- timings 00: end -->\nb\n" {
		t.Errorf("replaceBlocks: %v\n%s", err, out)
	}
	if _, err := replaceBlocks(doc, map[string]string{"00": "x", "02": "y"}); err == nil || !strings.Contains(err.Error(), "no timing markers for notebooks 02") {
		t.Errorf("a table without markers: %v", err)
	}
	bad := strings.Replace(doc, "timings 00: end", "timings 02: end", 1)
	if _, err := replaceBlocks(bad, map[string]string{"00": "x"}); err == nil {
		t.Error("a block closed by another notebook's marker was accepted")
	}
}

func TestSpan(t *testing.T) {
	s, e, err := span(map[string]string{"iopub.status.busy": "2026-12-01T16:00:00.000000Z", "iopub.status.idle": "2026-12-01T16:00:02.500000Z"})
	if err != nil || e.Sub(s) != 2500*time.Millisecond {
		t.Errorf("span: %v %v", e.Sub(s), err)
	}
	if _, _, err := span(map[string]string{}); err == nil {
		t.Error("no timestamps: no error")
	}
}

// TestGuidesCoverEveryCell keeps the instructor guides in step with the
// notebooks: each guide has a filled timing table for every notebook, and names
// every cell (a new cell fails this until the guide is regenerated and its demo
// path says where the cell goes).
func TestGuidesCoverEveryCell(t *testing.T) {
	for _, doc := range []string{"../../docs/instructor/en.md", "../../docs/instructor/zh-CN.md"} {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		for _, m := range block.FindAllStringSubmatch(text, -1) {
			if !strings.Contains(m[0], "| `") {
				t.Errorf("%s: the timing table of notebook %s is empty: run make notebooks, then go run ./scripts/instructor-timings", doc, m[2])
			}
		}
		for _, c := range memlab.Cells() {
			name := regexp.QuoteMeta("`" + c.Name + "`")
			if !regexp.MustCompile(name).MatchString(text) {
				t.Errorf("%s does not name cell %s of notebook %s", doc, c.Name, c.Notebook)
			}
		}
		if got := len(block.FindAllString(text, -1)); got != 4 {
			t.Errorf("%s has %d timing blocks, want one per notebook (4)", doc, got)
		}
	}
}

// TestGuidesAnswerEveryTryIt checks that each guide answers every Try it of
// the notebooks: a "**`cell`**" entry for the cell the Try it follows, or for a
// cell its text names.
func TestGuidesAnswerEveryTryIt(t *testing.T) {
	cells := map[string]bool{}
	for _, c := range memlab.Cells() {
		cells[c.Name] = true
	}
	item := regexp.MustCompile("(?s)/\\*md\\n(.*?)\\*/|//nb:cell[^\\n]*\\nfunc (\\w+)\\(")
	named := regexp.MustCompile("`(\\w+)`")
	files, err := filepath.Glob("../../notebooks/src/*/[0-9]*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no notebook sources (%v)", err)
	}
	type tryIt struct {
		at         string
		candidates []string
	}
	var tries []tryIt
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		prev := ""
		for _, m := range item.FindAllStringSubmatch(string(src), -1) {
			if m[2] != "" {
				prev = m[2]
				continue
			}
			_, rest, ok := strings.Cut(m[1], "**Try it:**")
			if !ok {
				continue
			}
			rest, _, _ = strings.Cut(rest, "\n\n")
			c := []string{prev}
			for _, n := range named.FindAllStringSubmatch(rest, -1) {
				if cells[n[1]] {
					c = append(c, n[1])
				}
			}
			tries = append(tries, tryIt{filepath.Base(filepath.Dir(f)) + " after " + prev, c})
		}
	}
	t.Logf("%d Try its in the notebooks", len(tries))
	if len(tries) < 30 {
		t.Fatalf("found %d Try its in the notebooks; the parser is broken", len(tries))
	}
	for _, doc := range []string{"../../docs/instructor/en.md", "../../docs/instructor/zh-CN.md"} {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range tries {
			found := false
			for _, c := range tr.candidates {
				found = found || strings.Contains(string(data), "**`"+c+"`**")
			}
			if !found {
				t.Errorf("%s answers no Try it of %s (want a **`%s`** entry)", doc, tr.at, strings.Join(tr.candidates, "`** or **`"))
			}
		}
	}
}

func TestKeptTimes(t *testing.T) {
	dir := t.TempDir()
	if k, err := keptTimes(dir, "00-x"); k != nil || err != nil {
		t.Errorf("no kept copy: %v, %v", k, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "en"), 0o755); err != nil {
		t.Fatal(err)
	}
	nb := `{"metadata": {"memlab": {"executed": {"command": "memlab lab -ipynb x", "date": "2026-12-01T15:53:23Z", "device": "cuda:0, NVIDIA H200"}}},
	 "cells": [{"metadata": {"memlab": {"source_sha256": "a"}}}, {"metadata": {"memlab": {"cell": "firstCurve", "elapsed_s": 0.026124}}}]}`
	if err := os.WriteFile(filepath.Join(dir, "en", "00-x.ipynb"), []byte(nb), 0o644); err != nil {
		t.Fatal(err)
	}
	k, err := keptTimes(dir, "00-x")
	if err != nil || k.device != "cuda:0, NVIDIA H200" || k.times["firstCurve"] != 26124*time.Microsecond || len(k.times) != 1 {
		t.Fatalf("keptTimes: %+v, %v", k, err)
	}
	cells := []memlab.Cell{{Notebook: "00-x", Section: "S", Name: "firstCurve"}, {Notebook: "00-x", Section: "S", Name: "newCell"}}
	got := table("en", cells, map[string]time.Duration{"firstCurve": 3 * time.Second}, map[string]time.Duration{}, map[string]time.Duration{}, k, meta{})
	for _, w := range []string{"| kept executed copy |", "| `firstCurve` | S | 3 s | — | — | 26 ms |", "| `newCell` | S | — | — | — | — |", "cuda:0, NVIDIA H200"} {
		if !strings.Contains(got, w) {
			t.Errorf("table lacks %q:\n%s", w, got)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "en", "00-x.ipynb"), []byte(`{"metadata": {}, "cells": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := keptTimes(dir, "00-x"); err == nil || !strings.Contains(err.Error(), "no metadata memlab.executed") {
		t.Errorf("a copy without its stamp: %v", err)
	}
}
