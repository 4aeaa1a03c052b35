package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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

// tryItLabel is the bold label that opens a Try it at the start of a line, in
// any form the notebooks use: "**Try it:**", "**Try it — predict first:**",
// "**动手试试：**", "**动手试试——先预测：**". The colon inside the bold keeps
// out the introductions' "**Try it**: a change to make …".
var tryItLabel = regexp.MustCompile("(?m)^\\*\\*(Try it|动手试试)[^*\\n]*[:：]\\*\\*")

// tryIt is one Try it of a notebook: the cell it follows, and the cells its
// question names.
type tryIt struct {
	at         string
	candidates []string
}

// notebookTryIts finds the Try its of one notebook source file, per edition
// ("en" from /*md blocks, "zh-CN" from /*md:zh-CN blocks); cells is the set of
// the notebooks' cell names. A Try it whose label is in the other edition's
// language is an error.
func notebookTryIts(src string, cells map[string]bool) (map[string][]tryIt, error) {
	item := regexp.MustCompile("(?s)/\\*md(:zh-CN)?\\n(.*?)\\*/|//nb:cell[^\\n]*\\nfunc (\\w+)\\(")
	named := regexp.MustCompile("`(\\w+)`")
	tries := map[string][]tryIt{}
	prev := ""
	for _, m := range item.FindAllStringSubmatch(src, -1) {
		if m[3] != "" {
			prev = m[3]
			continue
		}
		edition, want := "en", "Try it"
		if m[1] != "" {
			edition, want = "zh-CN", "动手试试"
		}
		for _, loc := range tryItLabel.FindAllStringSubmatchIndex(m[2], -1) {
			if label := m[2][loc[2]:loc[3]]; label != want {
				return nil, fmt.Errorf("a %q Try it in a %s block (after cell %s)", label, edition, prev)
			}
			rest, _, _ := strings.Cut(m[2][loc[1]:], "\n\n")
			c := []string{prev}
			for _, n := range named.FindAllStringSubmatch(rest, -1) {
				if cells[n[1]] && !slices.Contains(c, n[1]) {
					c = append(c, n[1])
				}
			}
			tries[edition] = append(tries[edition], tryIt{prev, c})
		}
	}
	return tries, nil
}

func TestNotebookTryIts(t *testing.T) {
	cells := map[string]bool{"first": true, "second": true}
	src := "//nb:cell\nfunc first() {}\n/*md\n**Try it — predict first:** make it `second`.\n\nno `first` here\n\n**Try it:** again.\n*/\n" +
		"/*md:zh-CN\n**动手试试——先预测：** 改。\n\n**动手试试：** 再改。\n*/\n" +
		"/*md\n**Try it**: a change to make (an introduction, not a Try it).\n*/\n//nb:cell\nfunc second() {}\n"
	got, err := notebookTryIts(src, cells)
	if err != nil {
		t.Fatal(err)
	}
	if len(got["en"]) != 2 || len(got["zh-CN"]) != 2 || strings.Join(got["en"][0].candidates, ",") != "first,second" || got["en"][1].at != "first" {
		t.Errorf("notebookTryIts: %+v", got)
	}
	if _, err := notebookTryIts("/*md:zh-CN\n**Try it:** x\n*/\n", cells); err == nil {
		t.Error("an English Try it in a zh-CN block was accepted")
	}
}

// TestGuidesAnswerEveryTryIt checks that each guide answers every Try it of
// the notebooks: a "**`cell`**" entry for the cell the Try it follows, or for a
// cell its text names. Both editions of a notebook must have the same Try its,
// after the same cells.
func TestGuidesAnswerEveryTryIt(t *testing.T) {
	cells := map[string]bool{}
	for _, c := range memlab.Cells() {
		cells[c.Name] = true
	}
	files, err := filepath.Glob("../../notebooks/src/*/[0-9]*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no notebook sources (%v)", err)
	}
	// A notebook's files are one source, in order: a Try it at the top of a
	// file follows the previous file's last cell.
	sources := map[string]string{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources[filepath.Base(filepath.Dir(f))] += string(src) + "\n"
	}
	var tries []tryIt
	perNotebook := map[string]int{}
	for nb, src := range sources {
		byEdition, err := notebookTryIts(src, cells)
		if err != nil {
			t.Errorf("notebook %s: %v", nb, err)
			continue
		}
		var en, zh []string
		for _, tr := range byEdition["en"] {
			en = append(en, tr.at)
		}
		for _, tr := range byEdition["zh-CN"] {
			zh = append(zh, tr.at)
		}
		if strings.Join(en, " ") != strings.Join(zh, " ") {
			t.Errorf("notebook %s: the editions' Try its differ: en after %v, zh-CN after %v", nb, en, zh)
		}
		for _, tr := range byEdition["en"] {
			if tr.at == "" {
				t.Errorf("notebook %s: a Try it before the first cell", nb)
			}
			tries = append(tries, tryIt{nb + " after " + tr.at, tr.candidates})
			perNotebook[nb]++
		}
	}
	t.Logf("%d Try its in the notebooks: %v", len(tries), perNotebook)
	// Each notebook with lessons has Try its: one it lost means the label changed.
	for _, nb := range []string{"00-setup-and-tour", "02-memory-mechanics", "04-reuse-and-sharing", "05-what-if"} {
		if perNotebook[nb] < 3 {
			t.Errorf("found %d Try its in notebook %s; the parser is broken", perNotebook[nb], nb)
		}
	}
	if len(tries) < 50 {
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

// TestExecutedCopy: the English edition's executed copy, else the Chinese
// one's, else none.
func TestExecutedCopy(t *testing.T) {
	dir := t.TempDir()
	if got := executedCopy(dir, "00-x"); got != "" {
		t.Errorf("no copy: %q, want \"\"", got)
	}
	for _, ed := range []string{"zh-CN", "en"} {
		p := filepath.Join(dir, ed, "00-x.ipynb")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := executedCopy(dir, "00-x"); got != p {
			t.Errorf("with the %s copy made: %q, want %q", ed, got, p)
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

// TestGuideExerciseFacts: every figure the guides quote about the exercises
// (how many, which) is the exercises folder's, as instructor-timings writes
// it, and no count is typed outside its markers.
func TestGuideExerciseFacts(t *testing.T) {
	facts, err := exerciseFacts(filepath.Join("..", "..", "exercises"))
	if err != nil {
		t.Fatal(err)
	}
	if got := runs([]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 15, 16}); got != "1–11, 15, 16" {
		t.Errorf("runs = %q", got)
	}
	typed := regexp.MustCompile(`(?i)\ball [0-9]+ exercises|全部 [0-9]+ 道练习|table of (?:six|[0-9]+) exercises|[0-9一二三四五六七八九十]+道练习的表格`)
	for _, doc := range []string{"en.md", "zh-CN.md"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "docs", "instructor", doc))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		want, err := replaceFacts(text, facts)
		if err != nil {
			t.Errorf("%s: %v", doc, err)
			continue
		}
		if want != text {
			t.Errorf("%s: the exercises' figures differ from the exercises folder (%v): run go run ./scripts/instructor-timings", doc, facts)
		}
		if n := len(fact.FindAllString(text, -1)); n < 5 {
			t.Errorf("%s: %d exercise figures between markers, want at least 5", doc, n)
		}
		if m := typed.FindString(fact.ReplaceAllString(text, "")); m != "" {
			t.Errorf("%s: a count typed outside the markers: %q", doc, m)
		}
	}
}

// TestChineseTable checks that the Chinese guide's tables are Chinese: the
// section column takes the Chinese edition's headings, and the real
// notebooks' headings pair up.
func TestChineseTable(t *testing.T) {
	cells := []memlab.Cell{{Notebook: "02-x", Section: "2.1 Tensor storage and views", Name: "storageVsViews"}}
	m := meta{host: hostLine("zh-CN"), sections: map[string]string{"2.1 Tensor storage and views": "2.1 张量存储与视图"}}
	got := table("zh-CN", cells, map[string]time.Duration{}, map[string]time.Duration{}, map[string]time.Duration{}, nil, m)
	for _, w := range []string{"| 单元格 | 小节 |", "| `storageVsViews` | 2.1 张量存储与视图 |", "核", "**全部单元格**"} {
		if !strings.Contains(got, w) {
			t.Errorf("Chinese table lacks %q:\n%s", w, got)
		}
	}
	for _, nb := range []string{"00-setup-and-tour", "02-memory-mechanics", "04-reuse-and-sharing", "05-what-if"} {
		secs, err := sectionsZH("../../notebooks", nb)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range memlab.Cells() {
			if c.Notebook != nb {
				continue
			}
			zh, ok := secs[c.Section]
			if !ok || !strings.ContainsFunc(zh, func(r rune) bool { return r >= 0x4e00 && r <= 0x9fff }) {
				t.Errorf("%s cell %s: section %q has Chinese heading %q", nb, c.Name, c.Section, zh)
			}
		}
	}
}
