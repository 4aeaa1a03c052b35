// Command mknotebooks writes the course notebooks from their sources
// (unexecuted, GoNB kernel). Run it from the repository root after editing a
// source:
//
//	go run ./scripts/mknotebooks
//
// A notebook has one of two kinds of source:
//
//   - a Go package notebooks/src/NAME (see gosrc.go): the cells are Go code
//     that `go test` compiles and runs and `memlab lab` runs without Jupyter,
//     and the markdown sits in /*md comments between them; it becomes
//     notebooks/NAME.ipynb and the package's cells_gen.go;
//   - a plain-text file scripts/notebooks/NAME.txt, described below; it
//     becomes notebooks/NAME.ipynb.
//
// A text source is a sequence of cells, each opened by a line
//
//	%% md            a markdown cell
//	%% code          a code cell
//	%% code plot     a code cell that must show an image (checked by nbcheck)
//
// An optional first line "%% meta {JSON}" is merged into the notebook's
// metadata, such as {"memlab": {"plot_per_section": true}}. Blank lines at the
// ends of a cell are dropped.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	if err := run("scripts/notebooks", "notebooks/src", "notebooks", false); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run converts every NAME.txt in txtDir and every Go package goDir/NAME into
// dst/NAME.ipynb (and goDir/NAME/cells_gen.go); with check set it writes
// nothing and reports the files that differ from what their sources make.
func run(txtDir, goDir, dst string, check bool) error {
	files, err := filepath.Glob(filepath.Join(txtDir, "*.txt"))
	if err != nil {
		return err
	}
	pkgs, err := filepath.Glob(filepath.Join(goDir, "*", "[0-9]*.go"))
	if err != nil {
		return err
	}
	dirs := map[string]bool{}
	for _, p := range pkgs {
		dirs[filepath.Dir(p)] = true
	}
	if len(files)+len(dirs) == 0 {
		return fmt.Errorf("mknotebooks: no sources in %s or %s", txtDir, goDir)
	}
	want := map[string][]byte{} // output path → content
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		nb, err := build(string(text))
		if err != nil {
			return fmt.Errorf("mknotebooks: %s: %w", f, err)
		}
		want[filepath.Join(dst, strings.TrimSuffix(filepath.Base(f), ".txt")+".ipynb")] = nb
	}
	for dir := range dirs {
		g, err := readGoNotebook(dir)
		if err != nil {
			return fmt.Errorf("mknotebooks: %w", err)
		}
		out := filepath.Join(dst, g.name+".ipynb")
		if _, dup := want[out]; dup {
			return fmt.Errorf("mknotebooks: %s has two sources: %s.txt and %s", out, filepath.Join(txtDir, g.name), dir)
		}
		if want[out], err = encode(g.cells, g.meta); err != nil {
			return fmt.Errorf("mknotebooks: %s: %w", dir, err)
		}
		if want[filepath.Join(dir, "cells_gen.go")], err = g.cellsGo(); err != nil {
			return fmt.Errorf("mknotebooks: %s: %w", dir, err)
		}
	}
	var paths []string
	for p := range want {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var stale []string
	for _, p := range paths {
		if check {
			old, err := os.ReadFile(p)
			if err != nil || !bytes.Equal(old, want[p]) {
				stale = append(stale, p)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, want[p], 0o644); err != nil {
			return err
		}
	}
	if len(stale) > 0 {
		return fmt.Errorf("mknotebooks: %s out of date with their sources; run go run ./scripts/mknotebooks", strings.Join(stale, ", "))
	}
	return nil
}

// cell is one notebook cell; code cells carry execution_count (null) and
// outputs (empty), as nbformat requires, markdown cells neither.
type cell struct {
	CellType string
	Metadata map[string]any
	Source   []string
}

func (c cell) MarshalJSON() ([]byte, error) {
	if c.CellType == "code" {
		return json.Marshal(struct {
			CellType       string         `json:"cell_type"`
			ExecutionCount *int           `json:"execution_count"`
			Metadata       map[string]any `json:"metadata"`
			Outputs        []any          `json:"outputs"`
			Source         []string       `json:"source"`
		}{c.CellType, nil, c.Metadata, []any{}, c.Source})
	}
	return json.Marshal(struct {
		CellType string         `json:"cell_type"`
		Metadata map[string]any `json:"metadata"`
		Source   []string       `json:"source"`
	}{c.CellType, c.Metadata, c.Source})
}

// parseMeta reads a "%% meta" / "//nb:meta" JSON object.
func parseMeta(text string) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(text)), &m); err != nil {
		return nil, fmt.Errorf("meta: %w", err)
	}
	return m, nil
}

// encode writes cells as notebook JSON, with extra merged into the metadata.
func encode(cells []cell, extra map[string]any) ([]byte, error) {
	meta := map[string]any{
		"kernelspec": map[string]any{
			"display_name": "Go (gonb)",
			"language":     "go",
			"name":         "gonb",
		},
		"language_info": map[string]any{
			"codemirror_mode":    "",
			"file_extension":     ".go",
			"mimetype":           "",
			"name":               "go",
			"nbconvert_exporter": "",
			"pygments_lexer":     "",
			"version":            "go1.26",
		},
	}
	for k, v := range extra {
		meta[k] = v
	}
	if len(cells) == 0 {
		return nil, fmt.Errorf("no cells")
	}
	nb := map[string]any{
		"cells":          cells,
		"metadata":       meta,
		"nbformat":       4,
		"nbformat_minor": 4,
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(nb); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// build turns a text source into notebook JSON.
func build(text string) ([]byte, error) {
	meta := map[string]any{}
	var cells []cell
	var cur *cell
	var lines []string
	flush := func() {
		if cur == nil {
			return
		}
		for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
			lines = lines[1:]
		}
		for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
			lines = lines[:len(lines)-1]
		}
		for i := range lines {
			if i < len(lines)-1 {
				lines[i] += "\n"
			}
		}
		cur.Source = append([]string{}, lines...)
		cells = append(cells, *cur)
		cur, lines = nil, nil
	}
	for n, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "%% ") {
			if cur == nil {
				if strings.TrimSpace(line) == "" {
					continue
				}
				return nil, fmt.Errorf("line %d: text before the first %%%% cell marker", n+1)
			}
			lines = append(lines, line)
			continue
		}
		flush()
		f := strings.Fields(line[3:])
		if len(f) == 0 {
			return nil, fmt.Errorf("line %d: empty cell marker", n+1)
		}
		switch f[0] {
		case "meta":
			m, err := parseMeta(line[len("%% meta"):])
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n+1, err)
			}
			for k, v := range m {
				meta[k] = v
			}
		case "md":
			cur = &cell{CellType: "markdown", Metadata: map[string]any{}}
		case "code":
			cur = &cell{CellType: "code", Metadata: map[string]any{}}
			if tags := f[1:]; len(tags) > 0 {
				cur.Metadata["tags"] = tags
			}
		default:
			return nil, fmt.Errorf("line %d: unknown cell kind %q (want md, code or meta)", n+1, f[0])
		}
	}
	flush()
	return encode(cells, meta)
}
