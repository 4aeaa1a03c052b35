package main

import (
	"encoding/json"
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
