package workbook_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"memlab.dev/memlab/internal/workbook"
	"memlab.dev/memlab/internal/workbook/workbooktest"
)

// sectionRef matches an exercise's section: "Notebook 02, §2.1 Tensor storage and views".
var sectionRef = regexp.MustCompile(`^Notebook (\d{2}), §(\d+\.\d+ .+)$`)

// unlinked lists exercises their notebook does not mention yet, with the reason.
// The test logs them instead of failing, and fails once the notebook does link
// one, so that the entry is removed.
var unlinked = map[string]string{}

// TestSectionsMatchNotebooks keeps the exercises and the chapter notebooks in
// step: every exercise names a section that exists, under that number and title,
// in its notebook (notebooks not written yet are skipped), and every notebook that
// exists mentions each of its exercises by folder name (but for the known gaps in
// unlinked).
func TestSectionsMatchNotebooks(t *testing.T) {
	root := workbooktest.Exercises(t)
	exs, err := workbook.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	notebooks := filepath.Join(filepath.Dir(root), "notebooks", "en")
	for _, ex := range exs {
		m := sectionRef.FindStringSubmatch(ex.Section)
		if m == nil {
			t.Errorf("%s: section %q is not of the form \"Notebook NN, §N.N Title\"", ex.Slug, ex.Section)
			continue
		}
		files, _ := filepath.Glob(filepath.Join(notebooks, m[1]+"-*.ipynb"))
		if len(files) == 0 {
			t.Logf("%s: notebook %s not written yet; section %q not checked", ex.Slug, m[1], m[2])
			continue
		}
		headings, text := notebookText(t, files[0])
		found := false
		for _, h := range headings {
			found = found || strings.HasPrefix(h, m[2])
		}
		if !found {
			t.Errorf("%s names section %q, but %s has the sections %q — update the exercise's README.md (Section: line) or the notebook", ex.Slug, m[2], filepath.Base(files[0]), headings)
		}
		linked := strings.Contains(text, ex.Slug)
		why, known := unlinked[ex.Slug]
		switch {
		case !linked && known:
			t.Logf("%s does not link exercise %s yet: %s", filepath.Base(files[0]), ex.Slug, why)
		case !linked:
			t.Errorf("%s does not link exercise %s — its section %q should name it", filepath.Base(files[0]), ex.Slug, m[2])
		case known:
			t.Errorf("%s now links exercise %s: remove it from unlinked in this test", filepath.Base(files[0]), ex.Slug)
		}
	}
}

// notebookText returns the numbered "## N.N …" headings of the markdown cells of
// an .ipynb file, and all its markdown text.
func notebookText(t *testing.T, path string) (headings []string, text string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var nb struct {
		Cells []struct {
			CellType string          `json:"cell_type"`
			Source   json.RawMessage `json:"source"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(data, &nb); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var all strings.Builder
	for _, c := range nb.Cells {
		if c.CellType != "markdown" {
			continue
		}
		var lines []string
		if err := json.Unmarshal(c.Source, &lines); err != nil {
			var one string
			if err := json.Unmarshal(c.Source, &one); err != nil {
				t.Fatalf("%s: cell source: %v", path, err)
			}
			lines = []string{one}
		}
		src := strings.Join(lines, "")
		all.WriteString(src)
		for _, l := range strings.Split(src, "\n") {
			if h, ok := strings.CutPrefix(l, "## "); ok && len(h) > 0 && h[0] >= '0' && h[0] <= '9' {
				headings = append(headings, h)
			}
		}
	}
	return headings, all.String()
}

// TestNotebookStubsMatchExercises keeps the exercise cells of the notebooks in
// step with the exercises: a "%%writefile ${MEMLAB_WORKBOOK}/exercises/<folder>/<file>"
// cell must start out as that exercise's stub (less its build line), in every
// edition, and the check cell after it must check that folder.
func TestNotebookStubsMatchExercises(t *testing.T) {
	root := workbooktest.Exercises(t)
	exs, err := workbook.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	numbers := map[string]int{}
	for _, ex := range exs {
		numbers[ex.Slug] = ex.Number
	}
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(root), "notebooks", "*", "*.ipynb"))
	found := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var nb struct {
			Cells []struct {
				Type   string          `json:"cell_type"`
				Source json.RawMessage `json:"source"`
			} `json:"cells"`
		}
		if err := json.Unmarshal(data, &nb); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		src := func(i int) string {
			var lines []string
			if err := json.Unmarshal(nb.Cells[i].Source, &lines); err != nil {
				var s string
				json.Unmarshal(nb.Cells[i].Source, &s)
				return s
			}
			return strings.Join(lines, "")
		}
		for i := range nb.Cells {
			first, body, _ := strings.Cut(src(i), "\n")
			rel, ok := strings.CutPrefix(first, "%%writefile ${MEMLAB_WORKBOOK}/exercises/")
			if !ok {
				continue
			}
			found++
			slug, file, _ := strings.Cut(rel, "/")
			stub, err := os.ReadFile(filepath.Join(root, slug, file))
			if err != nil {
				t.Errorf("%s cell %d writes %s, which is no exercise's file: %v", f, i, rel, err)
				continue
			}
			want := strings.TrimPrefix(string(stub), "//go:build !solution\n\n")
			if strings.TrimRight(body, "\n") != strings.TrimRight(want, "\n") {
				t.Errorf("%s cell %d: the code differs from exercises/%s/%s — regenerate notebooks/src/06-exercises from the stubs", f, i, slug, file)
			}
			check := fmt.Sprintf(`go run ./cmd/memlab exercises check %d --not-started-ok --student "$MEMLAB_WORKBOOK/exercises/%s"`, numbers[slug], slug)
			if i+1 >= len(nb.Cells) || !strings.Contains(src(i+1), check) {
				t.Errorf("%s cell %d: the cell after exercise %s's code does not run %q", f, i, slug, check)
			}
		}
	}
	if found == 0 {
		t.Fatal("no notebook has an exercise cell (%%writefile ${MEMLAB_WORKBOOK}/exercises/…)")
	}
}
