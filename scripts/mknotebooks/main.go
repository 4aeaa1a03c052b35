// Command mknotebooks writes the course notebooks from their plain-text
// sources: each scripts/notebooks/NAME.txt becomes notebooks/NAME.ipynb
// (unexecuted, GoNB kernel). Run it from the repository root after editing a
// source:
//
//	go run ./scripts/mknotebooks
//
// A source is a sequence of cells, each opened by a line
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
	"strings"
)

func main() {
	if err := run("scripts/notebooks", "notebooks", false); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run converts every NAME.txt in src into dst/NAME.ipynb; with check set it
// writes nothing and reports notebooks that differ from their source.
func run(src, dst string, check bool) error {
	files, err := filepath.Glob(filepath.Join(src, "*.txt"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("mknotebooks: no sources in %s", src)
	}
	if !check {
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
	}
	var stale []string
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		nb, err := build(string(text))
		if err != nil {
			return fmt.Errorf("mknotebooks: %s: %w", f, err)
		}
		out := filepath.Join(dst, strings.TrimSuffix(filepath.Base(f), ".txt")+".ipynb")
		if check {
			old, err := os.ReadFile(out)
			if err != nil || !bytes.Equal(old, nb) {
				stale = append(stale, out)
			}
			continue
		}
		if err := os.WriteFile(out, nb, 0o644); err != nil {
			return err
		}
	}
	if len(stale) > 0 {
		return fmt.Errorf("mknotebooks: %s out of date with scripts/notebooks; run go run ./scripts/mknotebooks", strings.Join(stale, ", "))
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

// build turns a source into notebook JSON.
func build(text string) ([]byte, error) {
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
			var m map[string]any
			if err := json.Unmarshal([]byte(strings.TrimSpace(line[len("%% meta"):])), &m); err != nil {
				return nil, fmt.Errorf("line %d: meta: %w", n+1, err)
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
