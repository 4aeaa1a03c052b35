package progress_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/internal/workbook"
	"memlab.dev/memlab/internal/workbook/workbooktest"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/progress"
	"memlab.dev/memlab/reference"
)

// TestOfAndText works on a scratch copy of notebook 04's three exercises, one
// of them solved and one with hints seen, as a learner's would be.
func TestOfAndText(t *testing.T) {
	root := workbooktest.Module(t, "12-tensor-pool", "13-kv-block-table", "14-version-counter")
	t.Setenv("MEMLAB_WORKBOOK", t.TempDir()) // no working copy: the folder itself
	workbooktest.SwapInSolution(t, filepath.Join(root, "12-tensor-pool"))
	hints := workbook.Progress{HintsRevealed: map[string]int{"13-kv-block-table": 2}}
	if err := hints.Save(root); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(root, "13-kv-block-table")) // found from below, as from a notebook's folder
	t.Setenv("MEMLAB_LANG", "en")

	exs, err := progress.Of("04")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ex := range exs {
		got = append(got, strings.Join([]string{ex.Slug, ex.State, ex.Readme}, " | "))
	}
	want := []string{
		"12-tensor-pool | passing | exercises/12-tensor-pool/README.md",
		"13-kv-block-table | not started | exercises/13-kv-block-table/README.md",
		"14-version-counter | not started | exercises/14-version-counter/README.md",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Of(\"04\"):\n%q\nwant\n%q", got, want)
	}
	if !exs[0].Passed || exs[1].Passed || exs[1].HintsSeen != 2 || exs[1].Hints == 0 {
		t.Errorf("Of(\"04\"): %+v", exs)
	}

	text := progress.Text("04")
	for _, w := range []string{
		"passing",
		"2/",
		"1 of 3 exercises pass. Next: exercise 13 — read exercises/13-kv-block-table/README.md,\nthen go run ./cmd/memlab exercises check 13\n",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("Text(\"04\") lacks %q:\n%s", w, text)
		}
	}
	// A notebook without exercises of its own shows all of them.
	if !regexp.MustCompile(`(?m)^12-tensor-pool +A fixed-shape tensor pool +passing`).MatchString(text) {
		t.Errorf("Text(\"04\") lacks exercise 12's row:\n%s", text)
	}
	if text := progress.Text("05"); !strings.Contains(text, "Notebook 05 has no exercises of its own") || !strings.Contains(text, "14-version-counter") {
		t.Errorf("Text(\"05\"):\n%s", text)
	}

	fits(t, text)
	fits(t, progress.Text("05"))

	t.Setenv("MEMLAB_LANG", "zh-CN")
	if text := progress.Text("04"); !strings.Contains(text, "已通过") || !strings.Contains(text, "3 道练习中已通过 1 道。下一道：练习 13") {
		t.Errorf("Text(\"04\") in Chinese:\n%s", text)
	}
	fits(t, progress.Text("04"))
	fits(t, progress.Text("05"))
}

// fits fails unless every line of text fits a notebook's output.
func fits(t *testing.T, text string) {
	t.Helper()
	if w := (memlab.Display{Text: text}).Width(); w > memlab.OutputWidth {
		t.Errorf("%d columns, more than a notebook's output holds (%d):\n%s", w, memlab.OutputWidth, text)
	}
}

func TestErrors(t *testing.T) {
	t.Setenv("MEMLAB_LANG", "en")
	if _, err := progress.Of("2"); err == nil || !strings.Contains(err.Error(), `notebook "2": want its two-digit number`) {
		t.Errorf("Of(\"2\"): %v", err)
	}
	// Without a Go toolchain (a GPU host running memlab lab): one plain line.
	t.Setenv("PATH", t.TempDir())
	if text := progress.Text("02"); !strings.HasPrefix(text, "This machine has no Go toolchain") {
		t.Errorf("without go on PATH: %q", text)
	}
	t.Chdir(t.TempDir())
	if text := progress.Text("02"); !strings.HasPrefix(text, "Progress is not available here: ") || !strings.Contains(text, "exercises folder not found") {
		t.Errorf("far from any exercises: %q", text)
	}
}

func TestNotebookOf(t *testing.T) {
	for in, want := range map[string]string{
		"Notebook 02, §2.1 Tensor storage and views": "02",
		"Notebook 4, §4.1":                           "",
		"notebook 02":                                "",
		"":                                           "",
	} {
		if got := progress.NotebookOf(in); got != want {
			t.Errorf("NotebookOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// exerciseLink is a link from a notebook to an exercise's instructions.
var exerciseLink = regexp.MustCompile(`\]\(\.\./\.\./exercises/([0-9]{2}-[a-z0-9-]+)/README\.md\)`)

// TestNotebookEndings checks the last section of every committed notebook, in
// each edition: it links exactly the exercises whose Section: line names the
// notebook (all the course's exercises through exercises/README.md when it has
// none), gives the command that checks one, links the glossary, and its code
// cell shows the progress on this notebook's exercises.
func TestNotebookEndings(t *testing.T) {
	repo, err := reference.Root()
	if err != nil {
		t.Fatal(err)
	}
	exs, err := workbook.Load(filepath.Join(repo, "exercises"))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(repo, "notebooks", "*", "[0-9][0-9]-*.ipynb"))
	if len(files) == 0 {
		t.Fatal("no notebooks/*/NN-*.ipynb")
	}
	for _, f := range files {
		name := filepath.Base(f)
		nn := name[:2]
		where := filepath.Base(filepath.Dir(f)) + "/" + name
		cells := readCells(t, f)
		// The last markdown cell that opens with "## ", and the cells after it.
		last := -1
		for i, c := range cells {
			if c.kind == "markdown" && strings.HasPrefix(c.text, "## ") {
				last = i
			}
		}
		if last < 0 || !strings.Contains(strings.SplitN(cells[last].text, "\n", 2)[0], "练习与进度") ||
			!strings.Contains(strings.SplitN(cells[last].text, "\n", 2)[0], "Exercises and progress") {
			t.Errorf("%s: its last section is not \"Exercises and progress / 练习与进度\"", where)
			continue
		}
		md := cells[last].text
		var linked, want []string
		for _, m := range exerciseLink.FindAllStringSubmatch(md, -1) {
			linked = append(linked, m[1])
		}
		for _, ex := range exs {
			if progress.NotebookOf(ex.Section) == nn {
				want = append(want, ex.Slug)
			}
		}
		slices.Sort(linked)
		slices.Sort(want)
		if !slices.Equal(linked, want) {
			t.Errorf("%s links the exercises %q; their Section: lines name %q", where, linked, want)
		}
		if len(want) == 0 && !strings.Contains(md, "](../../exercises/README.md)") {
			t.Errorf("%s has no exercises of its own and does not link exercises/README.md", where)
		}
		if !strings.Contains(md, "go run ./cmd/memlab exercises check ") || !strings.Contains(md, "](../../notebooks/GLOSSARY.md)") {
			t.Errorf("%s: the ending lacks the check command or the glossary link", where)
		}
		if checksInline(cells) {
			// A notebook that checks every exercise in its own cells (06)
			// shows the verdicts there: its ending has no progress cell.
			if last+1 < len(cells) {
				t.Errorf("%s: cells after its ending; the exercise checks above are its progress", where)
			}
			continue
		}
		call := `progress.Show("` + nn + `")`
		if last+1 >= len(cells) || cells[last+1].kind != "code" || !strings.Contains(cells[last+1].text, call) {
			t.Errorf("%s: the cell after its ending does not call %s", where, call)
		}
	}
}

type nbCell struct{ kind, text string }

// checksInline reports whether a notebook runs exercise checks in its own cells
// (`memlab exercises check N --student …`).
func checksInline(cells []nbCell) bool {
	for _, c := range cells {
		if c.kind == "code" && strings.Contains(c.text, "go run ./cmd/memlab exercises check ") && strings.Contains(c.text, "--student") {
			return true
		}
	}
	return false
}

func readCells(t *testing.T, path string) []nbCell {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var nb struct {
		Cells []struct {
			CellType string   `json:"cell_type"`
			Source   []string `json:"source"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(data, &nb); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []nbCell
	for _, c := range nb.Cells {
		out = append(out, nbCell{c.CellType, strings.Join(c.Source, "")})
	}
	return out
}
