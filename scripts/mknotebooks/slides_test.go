package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSlideTypes checks the slide rule on a notebook with every kind of cell,
// in both editions, and that every cell of every committed notebook has a slide
// type.
func TestSlideTypes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "07-x")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := "package nb07\n\nimport \"fmt\"\n\n" +
		"/*md\n# 07 · Title\n*/\n\n/*md:zh-CN\n# 07 · 标题\n*/\n\n" +
		"/*md\n## 7.1 First\n*/\n\n/*md:zh-CN\n## 7.1 第一节\n*/\n\n" +
		"//nb:cell\nfunc first() { fmt.Println() }\n\n" +
		"/*md\nWhat it showed.\n*/\n\n/*md:zh-CN\n结果。\n*/\n\n" +
		"/*md\nMore of it.\n*/\n\n/*md:zh-CN\n还有。\n*/\n\n" +
		"// a is a helper.\n//\n//nb:decl\nfunc a() {}\n\n// b is another.\n//\n//nb:decl\nfunc b() {}\n\n" +
		"//nb:cell\nfunc second() { a(); b() }\n\n//nb:cell\nfunc third() { fmt.Println() }\n\n" +
		"/*md\n### A part\n*/\n\n/*md:zh-CN\n### 一部分\n*/\n\n" +
		"/*md\n**Try it:** this.\n\n## 7.2 Second\n\n```sh\n# not a heading\n```\n*/\n\n/*md:zh-CN\n试试。\n\n## 7.2 第二节\n*/\n\n" +
		"// c follows markdown.\n//\n//nb:decl\nfunc c() {}\n"
	if err := os.WriteFile(filepath.Join(dir, "10-a.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	nb, err := readGoNotebook(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"slide",    // # title
		"slide",    // ## 7.1
		"skip",     // %env and imports
		"fragment", // first, right after markdown
		"subslide", // what it showed (after code)
		"-",        // more of it (after markdown)
		"subslide", // decl a
		"-",        // decl b joins a's page
		"subslide", // second, after a declaration
		"subslide", // third, after an experiment
		"subslide", // ### A part
		"slide",    // a Try it, then ## 7.2 in the same cell
		"subslide", // decl c
	}
	for _, ed := range []string{"en", "zh-CN"} {
		var got []string
		for _, c := range nb.editions[ed] {
			got = append(got, c.Metadata["slideshow"].(map[string]any)["slide_type"].(string))
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s slide types:\n%q\nwant\n%q", ed, got, want)
		}
	}

	// Every committed notebook: every cell has a slide type, the first cell
	// starts a slide, and RISE may scroll.
	files, err := filepath.Glob("../../notebooks/*/*.ipynb")
	if err != nil || len(files) == 0 {
		t.Fatalf("no committed notebooks (%v)", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Metadata struct {
				Rise map[string]any `json:"rise"`
			} `json:"metadata"`
			Cells []struct {
				Metadata struct {
					Slideshow struct {
						SlideType string `json:"slide_type"`
					} `json:"slideshow"`
				} `json:"metadata"`
			} `json:"cells"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if doc.Metadata.Rise["scroll"] != true {
			t.Errorf("%s: notebook metadata rise = %v, want scroll true", f, doc.Metadata.Rise)
		}
		for i, c := range doc.Cells {
			if st := c.Metadata.Slideshow.SlideType; st == "" || (i == 0 && st != "slide") {
				t.Errorf("%s cell %d: slide type %q", f, i, st)
			}
		}
	}
}
