package nbtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"memlab.dev/memlab/memlab"
)

// The markers that open a predict-first "Try it" in each edition.
const (
	TryItEN = "**Try it — predict first:**"
	TryItZH = "**动手试试——先预测：**"
)

// MarkdownNamesNoCell fails when markdown in the package's sources (the
// [0-9]*.go files of the working directory) names one of cells by its function
// name: a cell's name never shows in the notebook (a code cell is its body),
// so no text may send the reader to a cell by it.
func MarkdownNamesNoCell(t *testing.T, cells []memlab.Cell) {
	t.Helper()
	files, err := filepath.Glob("[0-9]*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no sources: %v", err)
	}
	block := regexp.MustCompile(`(?s)/\*md(?::zh-CN)?\n(.*?)\*/`)
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range block.FindAllSubmatch(src, -1) {
			for _, c := range cells {
				if strings.Contains(string(m[1]), "`"+c.Name+"`") {
					t.Errorf("%s: markdown names cell %s, which the notebook does not show", f, c.Name)
				}
			}
		}
	}
}

// PredictFirstTryIts fails unless, in both editions of notebook name
// (../../en/NAME.ipynb and ../../zh-CN/NAME.ipynb, from its source package),
// every experiment cell is followed, before the next one, by a markdown cell
// with a predict-first Try it whose answer is in a collapsed <details> block.
// The ending's progress cell (progress.Show) is no experiment.
func PredictFirstTryIts(t *testing.T, name string) {
	t.Helper()
	for _, ed := range []struct{ file, marker string }{
		{filepath.Join("..", "..", "en", name+".ipynb"), TryItEN},
		{filepath.Join("..", "..", "zh-CN", name+".ipynb"), TryItZH},
	} {
		b, err := os.ReadFile(ed.file)
		if err != nil {
			t.Fatal(err)
		}
		var nb struct {
			Cells []struct {
				Type   string   `json:"cell_type"`
				Source []string `json:"source"`
			} `json:"cells"`
		}
		if err := json.Unmarshal(b, &nb); err != nil {
			t.Fatal(err)
		}
		cell := ""
		asked := true
		for _, c := range nb.Cells {
			src := strings.Join(c.Source, "")
			switch {
			case c.Type == "code" && strings.Contains(src, "progress.Show("):
			case c.Type == "code" && strings.HasPrefix(strings.TrimSpace(src), "%%"):
				if !asked {
					t.Errorf("%s: no predict-first Try it after the cell %.60q", ed.file, cell)
				}
				cell, asked = src, false
			case c.Type == "markdown" && strings.Contains(src, ed.marker):
				q := strings.Index(src, ed.marker)
				d := strings.Index(src[q:], "<details><summary>")
				if d < 0 || !strings.Contains(src[q+d:], "</details>") {
					t.Errorf("%s: a Try it without its collapsed answer: %.80q", ed.file, src[q:])
				}
				asked = true
			}
		}
		if !asked {
			t.Errorf("%s: no predict-first Try it after the last cell", ed.file)
		}
	}
}
