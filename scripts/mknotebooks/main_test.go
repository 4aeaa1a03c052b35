package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuild(t *testing.T) {
	src := "%% meta {\"memlab\": {\"plot_per_section\": true}}\n%% md\n# Title\n\ntext\n\n%% code plot\nx := 1\n%% code\n\n%%\n"
	tests := []struct {
		name string
		src  string
		err  string
	}{
		{"text before marker", "hello\n%% md\n", "line 1: text before the first"},
		{"unknown kind", "%% python\n", `unknown cell kind "python"`},
		{"bad meta", "%% meta {\n", "line 1: meta"},
		{"empty", "\n\n", "no cells"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := build(tt.src); err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("build(%q) = %v, want error containing %q", tt.src, err, tt.err)
			}
		})
	}
	out, err := build(strings.TrimSuffix(src, "%%\n"))
	if err != nil {
		t.Fatal(err)
	}
	var nb struct {
		Metadata map[string]any
		Cells    []map[string]any
	}
	if err := json.Unmarshal(out, &nb); err != nil {
		t.Fatal(err)
	}
	if len(nb.Cells) != 3 {
		t.Fatalf("got %d cells, want 3", len(nb.Cells))
	}
	md, code := nb.Cells[0], nb.Cells[1]
	if got := md["source"].([]any); len(got) != 3 || got[0] != "# Title\n" || got[2] != "text" {
		t.Errorf("markdown source = %q", got)
	}
	if _, ok := md["outputs"]; ok {
		t.Error("markdown cell has outputs")
	}
	if v, ok := code["execution_count"]; !ok || v != nil {
		t.Errorf("code cell execution_count = %v, %v; want present and null", v, ok)
	}
	if tags := code["metadata"].(map[string]any)["tags"].([]any); len(tags) != 1 || tags[0] != "plot" {
		t.Errorf("tags = %v", tags)
	}
	if nb.Metadata["kernelspec"].(map[string]any)["name"] != "gonb" {
		t.Error("kernelspec is not gonb")
	}
	if nb.Metadata["memlab"] == nil {
		t.Error("meta line not merged")
	}
}

// TestNotebooksUpToDate fails when a committed notebook (or a notebook
// package's cells_gen.go) differs from what its source in scripts/notebooks or
// notebooks/src generates.
func TestNotebooksUpToDate(t *testing.T) {
	if err := run("../notebooks", "../../notebooks/src", "../../notebooks", true); err != nil {
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
	for _, c := range nb.cells {
		kinds = append(kinds, c.CellType+":"+strings.Join(c.Source, ""))
	}
	want := []string{
		"markdown:# Title\n\n## 7.1 First",
		"code:import (\n\t\"fmt\"\n)",
		"code:// helper says hi.\nfunc helper() { fmt.Println(\"hi\") }\n\nfunc joined() {}",
		"code:%%\nhelper()\njoined()",
	}
	if strings.Join(kinds, "|") != strings.Join(want, "|") {
		t.Errorf("cells:\n%q\nwant\n%q", kinds, want)
	}
	if len(nb.runs) != 1 || nb.runs[0].fn != "first" || nb.runs[0].section != "7.1 First" || nb.name != "07-x" {
		t.Errorf("runs %+v, name %q", nb.runs, nb.name)
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
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := readGoNotebook(write(t, map[string]string{"10-a.go": tt.src})); err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("error %v, want %q", err, tt.err)
			}
		})
	}
}
