package main

import (
	"os"
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
