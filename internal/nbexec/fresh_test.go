package nbexec

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeptCopies is the check `make test` runs: every pristine notebook in
// notebooks/{en,zh-CN} has a kept executed copy in notebooks/executed/ that
// belongs to its current source.
func TestKeptCopies(t *testing.T) {
	if err := CheckRepo(filepath.Join("..", "..")); err != nil {
		t.Fatal(err)
	}
}

// checkout copies one pristine notebook and its kept copy from the repository
// into a temporary checkout and returns its root.
func checkout(t *testing.T, name string) string {
	t.Helper()
	root := t.TempDir()
	for _, rel := range []string{filepath.Join("notebooks", "en", name), filepath.Join("notebooks", ExecutedDir, "en", name)} {
		b, err := os.ReadFile(filepath.Join("..", "..", rel))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(root, rel), b)
	}
	return root
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// edit rewrites a notebook of the temporary checkout through f.
func edit(t *testing.T, path string, f func(nb *Notebook)) {
	t.Helper()
	nb, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	f(nb)
	b, err := nb.Encode()
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, b)
}

// codeCell is the index of the first code cell that runs (has "%%").
func codeCell(t *testing.T, nb *Notebook) int {
	t.Helper()
	for i, c := range nb.Cells {
		if c.CellType == "code" && IsMain(c.Source) {
			return i
		}
	}
	t.Fatal("no cell with %% in the notebook")
	return -1
}

// TestStaleCheckFails shows the check failing: a cell's source edited after
// its copy was executed, and every other way a kept copy stops belonging to
// its notebook.
func TestStaleCheckFails(t *testing.T) {
	const name = "00-setup-and-tour.ipynb"
	pristine := filepath.Join("notebooks", "en", name)
	kept := filepath.Join("notebooks", ExecutedDir, "en", name)
	nb, err := Read(filepath.Join("..", "..", pristine))
	if err != nil {
		t.Fatal(err)
	}
	n := len(nb.Cells) // the notebook's cells, which the messages count
	cases := []struct {
		what string
		edit func(t *testing.T, root string)
		want []string
	}{
		{"a code cell's source changed", func(t *testing.T, root string) {
			edit(t, filepath.Join(root, pristine), func(nb *Notebook) {
				i := codeCell(t, nb)
				nb.Cells[i].Source = append(nb.Cells[i].Source, "\nfmt.Println(\"one more line\")")
			})
		}, []string{kept, "(whichDevice): the cell's source has changed since it was executed", "record-executed.sh"}},
		{"a markdown cell changed", func(t *testing.T, root string) {
			edit(t, filepath.Join(root, pristine), func(nb *Notebook) {
				nb.Cells[0].Source[0] = "# 00 · A new title\n"
			})
		}, []string{kept + ": cell 1: the markdown differs", `"# 00 · A new title"`}},
		{"a cell added", func(t *testing.T, root string) {
			edit(t, filepath.Join(root, pristine), func(nb *Notebook) {
				nb.Cells = append(nb.Cells, &Cell{CellType: "markdown", Source: Source{"more"}})
			})
		}, []string{"cells, its pristine notebook has", fmt.Sprintf("they differ from cell %d (\"more\")", n+1)}},
		{"a cell inserted", func(t *testing.T, root string) {
			edit(t, filepath.Join(root, pristine), func(nb *Notebook) {
				nb.Cells = append(nb.Cells[:1], append([]*Cell{{CellType: "markdown", Source: Source{"new words"}}}, nb.Cells[1:]...)...)
			})
		}, []string{"they differ from cell 2 (\"new words\")"}},
		{"a cell removed at the end", func(t *testing.T, root string) {
			edit(t, filepath.Join(root, pristine), func(nb *Notebook) { nb.Cells = nb.Cells[:len(nb.Cells)-1] })
		}, []string{fmt.Sprintf("%d cells, its pristine notebook has %d: they differ at the end", n, n-1)}},
		{"every cell edited", func(t *testing.T, root string) {
			edit(t, filepath.Join(root, pristine), func(nb *Notebook) {
				for _, c := range nb.Cells {
					c.Source = append(c.Source, "\n// more")
				}
			})
		}, []string{"cell 1: the markdown differs", "cell 2: the cell's source has changed", "… and more cells differ"}},
		{"two cells swapped", func(t *testing.T, root string) {
			edit(t, filepath.Join(root, pristine), func(nb *Notebook) {
				i := codeCell(t, nb)
				nb.Cells[i], nb.Cells[i+1] = nb.Cells[i+1], nb.Cells[i]
			})
		}, []string{"is a code cell, the pristine notebook's is a markdown cell"}},
		{"the kept copy's source edited", func(t *testing.T, root string) {
			edit(t, filepath.Join(root, kept), func(nb *Notebook) {
				i := codeCell(t, nb)
				nb.Cells[i].Source = append(nb.Cells[i].Source, "\n// edited")
			})
		}, []string{"the kept copy's source was edited after it was executed"}},
		{"an error output", func(t *testing.T, root string) {
			edit(t, filepath.Join(root, kept), func(nb *Notebook) {
				i := codeCell(t, nb)
				nb.Cells[i].Outputs = append(nb.Cells[i].Outputs, map[string]any{"output_type": "error", "evalue": "boom"})
			})
		}, []string{"has an error output: boom"}},
		{"no stamp", func(t *testing.T, root string) {
			edit(t, filepath.Join(root, kept), func(nb *Notebook) {
				delete(nb.Metadata["memlab"].(map[string]any), "executed")
			})
		}, []string{"no complete metadata memlab.executed"}},
		{"a kept copy missing", func(t *testing.T, root string) {
			os.Remove(filepath.Join(root, kept))
		}, []string{kept + ": missing: notebook " + name + " has no executed copy"}},
		{"a kept copy of no notebook", func(t *testing.T, root string) {
			b, _ := os.ReadFile(filepath.Join(root, kept))
			writeFile(t, filepath.Join(root, "notebooks", ExecutedDir, "zh-CN", "99-gone.ipynb"), b)
		}, []string{"notebooks/executed/zh-CN/99-gone.ipynb: a kept copy of no notebook"}},
	}
	for _, c := range cases {
		t.Run(c.what, func(t *testing.T) {
			root := checkout(t, name)
			if err := CheckRepo(root); err != nil {
				t.Fatalf("the copied kept notebook is not fresh before the edit: %v", err)
			}
			c.edit(t, root)
			err := CheckRepo(root)
			if err == nil {
				t.Fatal("CheckRepo passed after the edit")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), filepath.ToSlash(w)) {
					t.Errorf("the error does not say %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestSourceSHA256 pins what source_sha256 hashes: the source lines joined,
// as a string or a list alike.
func TestSourceSHA256(t *testing.T) {
	var a, b Source
	if err := json.Unmarshal([]byte(`"%%\nfmt.Println(1)"`), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`["%%\n", "fmt.Println(1)"]`), &b); err != nil {
		t.Fatal(err)
	}
	// sha256("%%\nfmt.Println(1)")
	const want = "32194d5118ae5f957f93f99c8c3a6efc1c25cdb3dabe9b9b2d91892854b6e013"
	if a.SHA256() != b.SHA256() || len(a) != 2 {
		t.Errorf("a string and its lines hash differently: %s %s (%q)", a.SHA256(), b.SHA256(), a)
	}
	if got := a.SHA256(); got != want {
		t.Errorf("sha256 = %s, want %s (sha256sum of the joined source)", got, want)
	}
}
