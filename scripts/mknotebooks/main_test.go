package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNotebooksUpToDate fails when a committed notebook (or a notebook
// package's cells_gen.go) differs from what its source in notebooks/src
// generates, or when no source makes a committed notebook.
func TestNotebooksUpToDate(t *testing.T) {
	if err := run("../../notebooks/src", "../../notebooks", true); err != nil {
		t.Fatal(err)
	}
}

func TestReadGoNotebook(t *testing.T) {
	write := func(t *testing.T, files map[string]string) string {
		dir := filepath.Join(t.TempDir(), "07-x")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, src := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	good := "package nb07\n\nimport \"fmt\"\n\n/*md\n# Title\n\n## 7.1 First\n*/\n\n// helper says hi.\n//\n//nb:decl\nfunc helper() { fmt.Println(\"hi\") }\n\nfunc joined() {}\n\n//nb:cell plot\nfunc first() {\n\thelper()\n\tjoined()\n}\n"
	nb, err := readGoNotebook(write(t, map[string]string{"10-a.go": good, "doc.go": "package nb07\n", "a_test.go": "package nb07\n"}))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, c := range nb.editions["en"] {
		kinds = append(kinds, c.CellType+":"+strings.Join(c.Source, ""))
	}
	want := []string{
		"markdown:# Title\n\n## 7.1 First",
		"code:%env MEMLAB_LANG=en\n%noautoget\nimport (\n\t\"fmt\"\n)",
		"code:// helper says hi.\nfunc helper() { fmt.Println(\"hi\") }\n\nfunc joined() {}",
		"code:%%\nhelper()\njoined()",
	}
	if strings.Join(kinds, "|") != strings.Join(want, "|") {
		t.Errorf("cells:\n%q\nwant\n%q", kinds, want)
	}
	if len(nb.runs) != 1 || nb.runs[0].fn != "first" || nb.runs[0].section != "7.1 First" || nb.name != "07-x" {
		t.Errorf("runs %+v, name %q", nb.runs, nb.name)
	}
	if _, ok := nb.editions["zh-CN"]; ok {
		t.Error("a notebook with no /*md:zh-CN blocks got a Chinese edition")
	}
	gen, err := nb.cellsGo()
	if err != nil || !strings.Contains(string(gen), `{Notebook: "07-x", Section: "7.1 First", Name: "first", Plot: true, Func: first}`) {
		t.Errorf("cells_gen.go (%v):\n%s", err, gen)
	}
	for name, tt := range map[string]struct{ src, err string }{
		"not gofmt":      {"package nb07\nfunc  f() {}\n", "not gofmt-formatted"},
		"loose decl":     {"package nb07\n\nfunc f() {}\n", "declaration is in no notebook cell"},
		"md as doc":      {"package nb07\n\n/*md\nx\n*/\nfunc f() {}\n", "not gofmt-formatted"}, // gofmt would rewrite it as a doc comment
		"cell with args": {"package nb07\n\n//nb:cell\nfunc f(x int) {}\n", "no receiver, parameters or results"},
		"typed figure":   {"package nb07\n\n/*md\nit took 75 µs\n*/\n\n//nb:cell\nfunc f() { println() }\n", `markdown holds "75 µs"`},
		"typed size":     {"package nb07\n\n/*md\npeak 212.8 MiB\n*/\n\n//nb:cell\nfunc f() { println() }\n", `"212.8 MiB"`},
		"unknown marker": {"package nb07\n\n//nb:code\nfunc f() {}\n", "unknown marker //nb:code"},
		"no cells":       {"package nb07\n\n/*md\nx\n*/\n", "no //nb:cell functions"},
		"zh first":       {"package nb07\n\n/*md:zh-CN\n甲\n*/\n\n//nb:cell\nfunc f() { println() }\n", "must follow the /*md comment"},
		"zh twice":       {"package nb07\n\n/*md\na\n*/\n\n/*md:zh-CN\n甲\n*/\n\n/*md:zh-CN\n乙\n*/\n\n//nb:cell\nfunc f() { println() }\n", "must follow the /*md comment"},
		"zh missing":     {"package nb07\n\n/*md\na\n*/\n\n/*md:zh-CN\n甲\n*/\n\n//nb:cell\nfunc f() { println() }\n\n/*md\nb\n*/\n", "10-a.go: 1 of 2 markdown cells have no /*md:zh-CN block"},
		"untranslated":   {"package nb07\n\nimport \"memlab.dev/memlab/memlab\"\n\n/*md\na\n*/\n\n/*md:zh-CN\n甲\n*/\n\n//nb:cell\nfunc f() { memlab.Measured(\"no catalog has %d\", 1) }\n", `"no catalog has %d" has no zh-CN translation`},
		"decl draws":     {"package nb07\n\nimport \"memlab.dev/memlab/memplot\"\n\n/*md\na\n*/\n\n//nb:decl\nfunc curve() (*memplot.Figure, error) { return nil, nil }\n\n//nb:cell\nfunc f() { println() }\n", "a declaration uses memplot.Figure"},
		"format var":     {"package nb07\n\nimport \"memlab.dev/memlab/memlab\"\n\n/*md\na\n*/\n\n//nb:cell\nfunc f() {\n\tf := \"%d\"\n\tmemlab.Measured(f, 1)\n}\n", "must be a string constant"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := readGoNotebook(write(t, map[string]string{"10-a.go": tt.src})); err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("error %v, want %q", err, tt.err)
			}
		})
	}
}

func TestBilingualNotebook(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "07-x")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := "package nb07\n\nimport \"fmt\"\n\n/*md\n## 7.1 First\n*/\n\n/*md:zh-CN\n## 7.1 第一节\n*/\n\n//nb:cell\nfunc first() { fmt.Println() }\n"
	if err := os.WriteFile(filepath.Join(dir, "10-a.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	nb, err := readGoNotebook(dir)
	if err != nil {
		t.Fatal(err)
	}
	zh := nb.editions["zh-CN"]
	if len(zh) != 3 || zh[0].Source[0] != "## 7.1 第一节" || zh[1].Source[0] != "%env MEMLAB_LANG=zh-CN\n" {
		t.Errorf("Chinese edition: %+v", zh)
	}
	if en := nb.editions["en"]; len(en) != 3 || en[0].Source[0] != "## 7.1 First" || strings.Join(en[2].Source, "") != strings.Join(zh[2].Source, "") {
		t.Errorf("English edition: %+v", en)
	}
	if nb.runs[0].section != "7.1 First" {
		t.Errorf("section %q, want the English heading", nb.runs[0].section)
	}
}

// TestEveryNotebookHasBothEditions: the workbook's notebooks are all
// translated; a source file added without its /*md:zh-CN blocks would
// silently drop a notebook's Chinese edition, and fails here instead.
func TestEveryNotebookHasBothEditions(t *testing.T) {
	dirs, err := filepath.Glob("../../notebooks/src/*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		nb, err := readGoNotebook(dir)
		if err != nil {
			t.Fatal(err)
		}
		n++
		for _, ed := range []string{"en", "zh-CN"} {
			if _, ok := nb.editions[ed]; !ok {
				t.Errorf("%s has no %s edition: every /*md block needs its /*md:zh-CN block", dir, ed)
			}
		}
	}
	if n < 4 {
		t.Errorf("found %d notebook sources under notebooks/src, want at least 4", n)
	}
}

func TestCheckLinks(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "notebooks", "en"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	from := filepath.Join(dir, "notebooks", "en")
	ok := []cell{newCell("markdown", nil, []string{"see [the README](../../README.md#top), [GoNB](https://github.com/janpfeifer/gonb) and [below](#x)"})}
	if err := checkLinks(ok, from); err != nil {
		t.Errorf("good links: %v", err)
	}
	bad := []cell{newCell("code", nil, []string{"[x](nowhere)"}), newCell("markdown", nil, []string{"see [the README](../README.md)"})}
	if err := checkLinks(bad, from); err == nil || !strings.Contains(err.Error(), "cell 1 links to ../README.md") {
		t.Errorf("a link one folder short: %v", err)
	}
}
