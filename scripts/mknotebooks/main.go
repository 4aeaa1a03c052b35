// Command mknotebooks writes the course notebooks from their sources
// (unexecuted, GoNB kernel). Run it from the repository root after editing a
// source:
//
//	go run ./scripts/mknotebooks
//
// Each notebook is a Go package notebooks/src/NAME (see gosrc.go): the cells
// are Go code that `go test` compiles and runs and `memlab lab` runs without
// Jupyter, and the markdown sits in /*md comments between them, with the
// Chinese edition's in /*md:zh-CN comments. It becomes one notebook per
// edition, notebooks/en/NAME.ipynb and notebooks/zh-CN/NAME.ipynb (package
// lang names the editions), and the package's cells_gen.go. These are the
// pristine notebooks; learners open working copies of them (scripts/lab.sh).
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

func main() {
	if err := run("notebooks/src", "notebooks", false); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run converts every Go package goDir/NAME into dst/EDITION/NAME.ipynb (and
// goDir/NAME/cells_gen.go); with check set it writes nothing and reports the
// files that differ from what their sources make, and notebooks under dst
// that no source makes.
func run(goDir, dst string, check bool) error {
	pkgs, err := filepath.Glob(filepath.Join(goDir, "*", "[0-9]*.go"))
	if err != nil {
		return err
	}
	dirs := map[string]bool{}
	for _, p := range pkgs {
		dirs[filepath.Dir(p)] = true
	}
	if len(dirs) == 0 {
		return fmt.Errorf("mknotebooks: no notebook sources in %s", goDir)
	}
	want := map[string][]byte{} // output path → content
	for dir := range dirs {
		g, err := readGoNotebook(dir)
		if err != nil {
			return fmt.Errorf("mknotebooks: %w", err)
		}
		for ed, cells := range g.editions {
			meta := map[string]any{}
			for k, v := range g.meta {
				meta[k] = v
			}
			mm := map[string]any{"edition": ed}
			if m, ok := meta["memlab"].(map[string]any); ok {
				for k, v := range m {
					mm[k] = v
				}
			}
			meta["memlab"] = mm
			if _, ok := meta["rise"]; !ok {
				meta["rise"] = notebookRise()
			}
			if err := checkLinks(cells, filepath.Join(dst, ed)); err != nil {
				return fmt.Errorf("mknotebooks: %s (%s edition): %w", dir, ed, err)
			}
			if want[filepath.Join(dst, ed, g.name+".ipynb")], err = encode(cells, meta); err != nil {
				return fmt.Errorf("mknotebooks: %s: %w", dir, err)
			}
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
	// A pristine notebook no source makes any more (a renamed notebook, an
	// edition dropped) is stale too.
	extra, err := filepath.Glob(filepath.Join(dst, "*", "*.ipynb"))
	if err != nil {
		return err
	}
	for _, p := range extra {
		if _, ok := want[p]; !ok {
			if !check {
				if err := os.Remove(p); err != nil {
					return err
				}
				continue
			}
			stale = append(stale, p+" (no source)")
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

// parseMeta reads a "//nb:meta" JSON object.
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

// mdLink matches a markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// checkLinks fails on a markdown link to a file of the repository that does
// not exist, resolved from dir, the folder the notebook is in (a learner's
// working copy, workbook/EDITION/, is as deep, so the link works there too).
func checkLinks(cells []cell, dir string) error {
	for i, c := range cells {
		if c.CellType != "markdown" {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(strings.Join(c.Source, ""), -1) {
			target := m[1]
			if strings.HasPrefix(target, "#") || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(target))); err != nil {
				return fmt.Errorf("cell %d links to %s, which is not there from %s", i, m[1], dir)
			}
		}
	}
	return nil
}
