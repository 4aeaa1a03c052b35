package nbtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExecutedChineseSpeaksChinese reads the kept executed copies of the
// Chinese edition (recorded on the H200, notebooks/executed/zh-CN) and fails
// on any English prose word in their outputs, read as ChineseEdition reads
// the simulator's: the GPU's outputs, which the simulator's test does not
// see, carry no English of memlab's own either.
func TestExecutedChineseSpeaksChinese(t *testing.T) {
	keep, err := KeptTerms("../../notebooks/GLOSSARY.md")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("../../notebooks/executed/zh-CN/*.ipynb")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("%d executed copies of the Chinese edition, want the five notebooks'", len(files))
	}
	for _, f := range files {
		lines, err := outputLines(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(lines) == 0 {
			t.Errorf("%s: no outputs", f)
		}
		for _, l := range lines {
			if w := ProseWords(l, keep); len(w) > 0 {
				t.Errorf("%s prints English %q: %s", filepath.Base(f), w, l)
			}
		}
	}
	if w := ProseWords("实测：每个 epoch 的 free memory", keep); len(w) != 3 {
		t.Errorf("ProseWords finds %q in a line with three English words", w)
	}
}

// outputLines are the lines of a notebook's outputs: streams and the text of
// displayed data.
func outputLines(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var nb struct {
		Cells []struct {
			Outputs []struct {
				Text json.RawMessage            `json:"text"`
				Data map[string]json.RawMessage `json:"data"`
			} `json:"outputs"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(b, &nb); err != nil {
		return nil, err
	}
	var lines []string
	for _, c := range nb.Cells {
		for _, o := range c.Outputs {
			for _, raw := range []json.RawMessage{o.Text, o.Data["text/plain"]} {
				if len(raw) == 0 {
					continue
				}
				var parts []string
				if err := json.Unmarshal(raw, &parts); err != nil {
					var one string
					if err := json.Unmarshal(raw, &one); err != nil {
						return nil, err
					}
					parts = []string{one}
				}
				lines = append(lines, strings.Split(strings.Join(parts, ""), "\n")...)
			}
		}
	}
	return lines, nil
}
