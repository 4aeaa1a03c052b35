package nbexec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Editions are the folders of notebooks/ that hold pristine notebooks.
var Editions = []string{"en", "zh-CN"}

// ExecutedDir is where the kept executed copies live, under notebooks/.
const ExecutedDir = "executed"

// Regenerate is the procedure that rewrites the kept copies, for messages.
const Regenerate = "regenerate them on the GPU machine: make -f Makefile.gpu executed-binaries, " +
	"run `bash bin/record/record-executed.sh` there (bin/record carried), then " +
	"scripts/record-executed.sh unpack FILES_AT/executed.tar (notebooks/README.md, \"Executed copies\")"

// Fresh checks that kept is an executed copy of pristine as it is now: the
// same cells in the same order, markdown and raw cells identical, every code
// cell's recorded source_sha256 that of pristine's cell (and of kept's own
// source), no error outputs, and a complete stamp. name names kept in the
// messages. It returns every difference found.
func Fresh(name string, pristine, kept *Notebook) error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{name}, args...)...))
	}
	if _, ok := kept.Executed(); !ok {
		bad("no complete metadata memlab.executed {device, date, commit, command}: it was not written by memlab lab -ipynb")
	}
	if e, p := kept.Edition(), pristine.Edition(); e != p {
		bad("edition %q, its pristine notebook's is %q", e, p)
	}
	if len(kept.Cells) != len(pristine.Cells) {
		// Cells added or removed: past the first difference every cell is
		// shifted, so that is the one worth naming.
		i := 0
		for i < min(len(kept.Cells), len(pristine.Cells)) && sameCell(kept.Cells[i], pristine.Cells[i]) {
			i++
		}
		where := "at the end"
		if i < len(pristine.Cells) {
			where = fmt.Sprintf("from cell %d (%s)", i+1, firstLine(pristine.Cells[i].Source))
		}
		bad("%d cells, its pristine notebook has %d: they differ %s", len(kept.Cells), len(pristine.Cells), where)
		return errors.Join(errs...)
	}
	const most = 5 // differences named per notebook
	cellErrs := 0
	for i := range kept.Cells {
		k, p := kept.Cells[i], pristine.Cells[i]
		if cellErrs == most {
			bad("… and more cells differ")
			break
		}
		n := len(errs)
		checkCell(i, k, p, bad)
		if len(errs) > n {
			cellErrs++
		}
	}
	return errors.Join(errs...)
}

// sameCell reports whether a kept cell is still its pristine cell.
func sameCell(k, p *Cell) bool {
	if k.CellType != p.CellType {
		return false
	}
	if p.CellType != "code" {
		return k.Source.Text() == p.Source.Text()
	}
	m, _ := k.Metadata["memlab"].(map[string]any)
	sum, _ := m["source_sha256"].(string)
	return sum == p.Source.SHA256()
}

// checkCell reports how kept cell i differs from its pristine cell.
func checkCell(i int, k, p *Cell, bad func(string, ...any)) {
	where := fmt.Sprintf("cell %d", i+1)
	m, _ := k.Metadata["memlab"].(map[string]any)
	if n, _ := m["cell"].(string); n != "" {
		where += " (" + n + ")"
	}
	if k.CellType != p.CellType {
		bad("%s is a %s cell, the pristine notebook's is a %s cell (%s)", where, k.CellType, p.CellType, firstLine(p.Source))
		return
	}
	if p.CellType != "code" {
		if k.Source.Text() != p.Source.Text() {
			bad("%s: the %s differs from the pristine notebook's (%s)", where, p.CellType, firstLine(p.Source))
		}
		return
	}
	sum, _ := m["source_sha256"].(string)
	switch {
	case sum == "":
		bad("%s has no metadata memlab.source_sha256", where)
	case sum != p.Source.SHA256():
		bad("%s: the cell's source has changed since it was executed (%s)", where, firstLine(p.Source))
	case sum != k.Source.SHA256():
		bad("%s: the kept copy's source was edited after it was executed", where)
	}
	for _, o := range k.Outputs {
		if o["output_type"] == "error" {
			bad("%s has an error output: %v", where, o["evalue"])
		}
	}
}

// firstLine is the first line of a cell's source that says something, short,
// to name the cell in a message.
func firstLine(src Source) string {
	for _, l := range strings.Split(src.Text(), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || l == "%%" || strings.HasPrefix(l, "%env") || l == "l := memlab.MustOpen()" || l == "defer l.Close()" {
			continue
		}
		if r := []rune(l); len(r) > 60 {
			l = string(r[:60]) + "…"
		}
		return fmt.Sprintf("%q", l)
	}
	return `""`
}

// CheckRepo checks the kept copies of a checkout's notebooks (root is the
// repository root): every pristine notebook in notebooks/EDITION/ has a fresh
// kept copy in notebooks/executed/EDITION/ (see [Fresh]), and every kept copy
// has its pristine notebook. The error names each notebook and cell at fault
// and the command that regenerates the copies.
func CheckRepo(root string) error {
	var errs []error
	for _, ed := range Editions {
		pristine, err := filepath.Glob(filepath.Join(root, "notebooks", ed, "*.ipynb"))
		if err != nil {
			return err
		}
		keptPaths, err := filepath.Glob(filepath.Join(root, "notebooks", ExecutedDir, ed, "*.ipynb"))
		if err != nil {
			return err
		}
		want := map[string]bool{}
		for _, p := range pristine {
			want[filepath.Base(p)] = true
			rel := filepath.Join("notebooks", ExecutedDir, ed, filepath.Base(p))
			if err := CheckFile(p, filepath.Join(root, rel), rel); err != nil {
				errs = append(errs, err)
			}
		}
		for _, k := range keptPaths {
			if !want[filepath.Base(k)] {
				errs = append(errs, fmt.Errorf("notebooks/%s/%s/%s: a kept copy of no notebook (notebooks/%s/%s does not exist): delete it",
					ExecutedDir, ed, filepath.Base(k), ed, filepath.Base(k)))
			}
		}
	}
	if len(errs) > 0 {
		sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
		return fmt.Errorf("%w\nthe kept executed notebooks are out of date with their sources; %s", errors.Join(errs...), Regenerate)
	}
	return nil
}

// CheckFile checks one kept copy against its pristine notebook; name names
// the kept copy in the messages. A missing kept copy is an error.
func CheckFile(pristinePath, keptPath, name string) error {
	p, err := Read(pristinePath)
	if err != nil {
		return err
	}
	if _, err := os.Stat(keptPath); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: missing: notebook %s has no executed copy", name, filepath.Base(pristinePath))
	}
	k, err := Read(keptPath)
	if err != nil {
		return err
	}
	return Fresh(name, p, k)
}
