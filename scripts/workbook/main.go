// Command workbook keeps the learners' working copies of the notebooks. What a
// learner opens and edits in JupyterLab (make lab) is workbook/EDITION/NAME.ipynb,
// a copy of the pristine, tracked notebooks/EDITION/NAME.ipynb; workbook/ is
// git-ignored, so autosave never touches the tracked notebooks and `make test`
// never sees a learner's edits.
//
// Usage (scripts/lab.sh runs it; paths default to the checkout's):
//
//	go run ./scripts/workbook [-notebooks DIR] [-workbook DIR] sync
//	go run ./scripts/workbook [-notebooks DIR] [-workbook DIR] status
//	go run ./scripts/workbook [-notebooks DIR] [-workbook DIR] restore -edition EDITION [NAME...]
//
// Each working copy has a record, workbook/.pristine/EDITION/NAME.sha256: the
// SHA-256 of the pristine notebook it was copied from. A copy still byte-equal to
// that version is one the learner never edited. sync creates the missing copies
// of every edition, silently refreshes the unedited ones whose pristine notebook
// has changed, and never writes a copy the learner edited: when such a copy's
// pristine notebook has changed, it says so in one line naming the copy and the
// restore command; it also writes workbook/go.mod, which keeps whatever a
// learner puts into the workbook out of the memlab module (and out of make
// test's go vet ./... and go test ./...). restore replaces the named copies (all of the edition's when
// none is named) with their pristine notebooks, renaming an edited copy to
// NAME.ipynb.bak-<UTC time> first, and says what it did. A NAME is the notebook's
// name with or without .ipynb, or a prefix of exactly one name ("02"). status
// lists every copy and its state.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	exercises "memlab.dev/memlab/internal/workbook"
	"memlab.dev/memlab/lang"
)

// Editions are the notebook editions, as named by their folders.
var Editions = []string{"en", "zh-CN"}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, time.Now))
}

const usage = `usage: workbook [-notebooks DIR] [-workbook DIR] sync
       workbook [-notebooks DIR] [-workbook DIR] status
       workbook [-notebooks DIR] [-workbook DIR] restore -edition EDITION [NAME...]`

// run is main with its outputs and clock as arguments; it returns the exit status.
func run(args []string, stdout, stderr io.Writer, now func() time.Time) int {
	fl := flag.NewFlagSet("workbook", flag.ContinueOnError)
	fl.SetOutput(stderr)
	wb := &workbook{now: now}
	fl.StringVar(&wb.notebooks, "notebooks", "notebooks", "the pristine notebooks: `DIR`/EDITION/NAME.ipynb")
	fl.StringVar(&wb.dir, "workbook", "workbook", "the working copies: `DIR`/EDITION/NAME.ipynb")
	fl.StringVar(&wb.exercises, "exercises", "", "sync also makes the missing working copies of the exercises of this `DIR` in the workbook's exercises/")
	fl.Usage = func() { fmt.Fprintln(stderr, usage) }
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if fl.NArg() == 0 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	var err error
	switch cmd, rest := fl.Arg(0), fl.Args()[1:]; cmd {
	case "sync":
		if len(rest) > 0 {
			err = fmt.Errorf("sync takes no arguments, got %q", rest)
			break
		}
		err = wb.sync(stdout)
	case "status":
		if len(rest) > 0 {
			err = fmt.Errorf("status takes no arguments, got %q", rest)
			break
		}
		err = wb.status(stdout)
	case "restore":
		rf := flag.NewFlagSet("restore", flag.ContinueOnError)
		rf.SetOutput(stderr)
		edition := rf.String("edition", "", "the edition whose copies to restore: en or zh-CN")
		if err := rf.Parse(rest); err != nil {
			return 2
		}
		err = wb.restore(stdout, *edition, rf.Args())
	default:
		fmt.Fprintf(stderr, "workbook: unknown command %q\n%s\n", cmd, usage)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "workbook: %v\n", err)
		return 1
	}
	return 0
}

// workbook is a folder of working copies and the folder of pristine notebooks
// they are made from.
type workbook struct {
	notebooks string // pristine notebooks: notebooks/EDITION/NAME.ipynb
	dir       string // working copies: workbook/EDITION/NAME.ipynb
	exercises string // the exercises module whose stubs sync copies into dir/exercises; "" for none
	now       func() time.Time
}

// state is what a working copy is, next to its pristine notebook.
type state int

const (
	missing       state = iota // no working copy yet
	pristine                   // byte-equal to its pristine notebook
	stale                      // never edited, but its pristine notebook has changed since it was copied
	edited                     // edited by the learner; its pristine notebook is unchanged
	editedChanged              // edited, and its pristine notebook has changed since (or no record says which it was)
	orphan                     // a working copy whose pristine notebook is gone
)

func (s state) String() string {
	return [...]string{
		missing:       "missing (make lab creates it)",
		pristine:      "pristine",
		stale:         "pristine-changed (not edited; make lab refreshes it)",
		edited:        "edited",
		editedChanged: "edited, pristine-changed (restore to take the new notebook)",
		orphan:        "edited, no pristine notebook any more (kept)",
	}[s]
}

// entry is one notebook of one edition: its pristine notebook, its working copy
// and its record.
type entry struct {
	edition, name string // name without .ipynb
	state         state
	pristineSum   string // SHA-256 of the pristine notebook ("" for an orphan)
}

func (wb *workbook) pristinePath(ed, name string) string {
	return filepath.Join(wb.notebooks, ed, name+".ipynb")
}

func (wb *workbook) copyPath(ed, name string) string {
	return filepath.Join(wb.dir, ed, name+".ipynb")
}

func (wb *workbook) recordPath(ed, name string) string {
	return filepath.Join(wb.dir, ".pristine", ed, name+".sha256")
}

// names lists the NAME of every DIR/NAME.ipynb that is a regular file, sorted; a
// missing DIR has none.
func names(dir string) ([]string, error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, de := range des {
		n := de.Name()
		if strings.HasSuffix(n, ".ipynb") && !strings.HasPrefix(n, ".") && de.Type().IsRegular() {
			out = append(out, strings.TrimSuffix(n, ".ipynb"))
		}
	}
	sort.Strings(out)
	return out, nil
}

// sumFile returns the hex SHA-256 of a regular file's bytes, or "" when it does
// not exist; anything else at the path is an error.
func sumFile(path string) (string, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:]), nil
}

// readRecord returns the SHA-256 a record holds, or "" when it is missing or
// does not hold one.
func readRecord(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	s := string(bytes.TrimSpace(b))
	if _, err := hex.DecodeString(s); err != nil || len(s) != 2*sha256.Size {
		return ""
	}
	return s
}

// scan returns the entries of one edition: every pristine notebook, then every
// working copy that has none.
func (wb *workbook) scan(ed string) ([]entry, error) {
	pnames, err := names(filepath.Join(wb.notebooks, ed))
	if err != nil {
		return nil, err
	}
	var out []entry
	have := map[string]bool{}
	for _, n := range pnames {
		have[n] = true
		e := entry{edition: ed, name: n}
		if e.pristineSum, err = sumFile(wb.pristinePath(ed, n)); err != nil {
			return nil, err
		}
		cs, err := sumFile(wb.copyPath(ed, n))
		if err != nil {
			return nil, err
		}
		rec := readRecord(wb.recordPath(ed, n))
		switch {
		case cs == "":
			e.state = missing
		case cs == e.pristineSum:
			e.state = pristine
		case rec != "" && cs == rec:
			e.state = stale
		case rec == e.pristineSum:
			e.state = edited
		default:
			e.state = editedChanged
		}
		out = append(out, e)
	}
	cnames, err := names(filepath.Join(wb.dir, ed))
	if err != nil {
		return nil, err
	}
	for _, n := range cnames {
		if !have[n] {
			out = append(out, entry{edition: ed, name: n, state: orphan})
		}
	}
	return out, nil
}

// writeAtomic writes data to path through a temporary file in the same folder,
// so that a reader (or a crash) sees the old file or the new one, never half.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".workbook-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// copyPristine writes the pristine notebook over the working copy and records
// which version it is; the pristine notebook's bytes must still hash to sum.
func (wb *workbook) copyPristine(e entry) error {
	b, err := os.ReadFile(wb.pristinePath(e.edition, e.name))
	if err != nil {
		return err
	}
	s := sha256.Sum256(b)
	if hex.EncodeToString(s[:]) != e.pristineSum {
		return fmt.Errorf("%s changed while it was being copied; run the command again", wb.pristinePath(e.edition, e.name))
	}
	if err := writeAtomic(wb.copyPath(e.edition, e.name), b); err != nil {
		return err
	}
	return wb.writeRecord(e)
}

func (wb *workbook) writeRecord(e entry) error {
	p := wb.recordPath(e.edition, e.name)
	if readRecord(p) == e.pristineSum {
		return nil
	}
	return writeAtomic(p, []byte(e.pristineSum+"\n"))
}

// restoreCommand is the command that restores one working copy.
func restoreCommand(ed, name string) string {
	return fmt.Sprintf("scripts/lab.sh restore --edition %s %s", ed, name)
}

// goMod is the workbook's go.mod: a module of its own, so that a .go file a
// learner puts into the workbook is no package of the memlab module, and `go vet
// ./...` and `go test ./...` (make test) never see it.
const goMod = `// workbook/ holds your working copies of the notebooks (make lab). This file makes it
// a Go module of its own, so that make test (go vet ./..., go test ./...) never builds
// what you put here.
module workbook
`

// sync creates the missing working copies of every edition and refreshes the
// unedited ones whose pristine notebook changed; it names every edited copy
// whose pristine notebook changed, with the command that restores it.
func (wb *workbook) sync(w io.Writer) error {
	if b, err := os.ReadFile(filepath.Join(wb.dir, "go.mod")); err != nil || string(b) != goMod {
		if err := writeAtomic(filepath.Join(wb.dir, "go.mod"), []byte(goMod)); err != nil {
			return err
		}
	}
	for _, ed := range Editions {
		es, err := wb.scan(ed)
		if err != nil {
			return err
		}
		if len(es) == 0 {
			continue
		}
		var created, refreshed, editedN int
		for _, e := range es {
			switch e.state {
			case missing:
				err = wb.copyPristine(e)
				created++
			case stale:
				err = wb.copyPristine(e)
				refreshed++
			case pristine:
				err = wb.writeRecord(e)
			case edited, orphan:
				editedN++
			case editedChanged:
				editedN++
				fmt.Fprintf(w, lang.Text("workbook: %s keeps your edits, but %s has changed since it was copied; to take the new one (yours is kept as a backup): %s")+"\n",
					wb.copyPath(ed, e.name), wb.pristinePath(ed, e.name), restoreCommand(ed, e.name))
			}
			if err != nil {
				return err
			}
		}
		var parts []string
		for _, p := range []struct {
			n    int
			what string
		}{{created, "%d created"}, {refreshed, "%d refreshed from changed notebooks"}, {editedN, "%d edited by you"}} {
			if p.n > 0 {
				parts = append(parts, fmt.Sprintf(lang.Text(p.what), p.n))
			}
		}
		format := "workbook: %s: %d working copies in %s%s"
		if len(es) == 1 {
			format = "workbook: %s: %d working copy in %s%s"
		}
		fmt.Fprintf(w, lang.Text(format)+"\n", ed, len(es), filepath.Join(wb.dir, ed), detail(parts))
	}
	return wb.syncExercises(w)
}

// syncExercises makes the missing working copies of the exercises (their
// stubs, as `memlab exercises copy` makes them) in the workbook's exercises/,
// the one place a learner solves them: notebook 06 writes there, and
// `memlab exercises` and every progress cell read it. A copy that exists is
// never touched.
func (wb *workbook) syncExercises(w io.Writer) error {
	if wb.exercises == "" {
		return nil
	}
	exs, err := exercises.Load(wb.exercises)
	if err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	dir := filepath.Join(wb.dir, "exercises")
	made := 0
	for _, ex := range exs {
		_, ok, err := exercises.CopyStub(ex, dir)
		if err != nil {
			return fmt.Errorf("sync: %w", err)
		}
		if ok {
			made++
		}
	}
	var parts []string
	if made > 0 {
		parts = append(parts, fmt.Sprintf(lang.Text("%d created"), made))
	}
	fmt.Fprintf(w, lang.Text("workbook: exercises: %d working copies in %s%s")+"\n", len(exs), dir, detail(parts))
	return nil
}

// detail is parts in parentheses after a space (in Chinese, full-width ones),
// or "" when there are none.
func detail(parts []string) string {
	switch {
	case len(parts) == 0:
		return ""
	case lang.Current() == lang.Chinese:
		return "（" + strings.Join(parts, "，") + "）"
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// status lists every working copy of every edition and its state.
func (wb *workbook) status(w io.Writer) error {
	fmt.Fprintf(w, "working copies (%s/; restore one with %s):\n", wb.dir, restoreCommand("EDITION", "NAME"))
	found := false
	for _, ed := range Editions {
		es, err := wb.scan(ed)
		if err != nil {
			return err
		}
		for _, e := range es {
			found = true
			fmt.Fprintf(w, "  %-5s  %-28s %s\n", ed, e.name+".ipynb", e.state)
		}
	}
	if !found {
		fmt.Fprintf(w, "  none: no notebooks under %s\n", wb.notebooks)
	}
	return nil
}

// resolve maps the names a learner typed to notebook names of the edition: the
// name itself, NAME.ipynb, or a prefix that exactly one name starts with.
func resolve(args, all []string, ed, dir string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, a := range args {
		if strings.ContainsAny(a, `/\`) || a == "" || strings.HasPrefix(a, ".") {
			return nil, fmt.Errorf("%q: give a notebook's name (such as 02-memory-mechanics), not a path; --edition picks the edition", a)
		}
		q := strings.TrimSuffix(a, ".ipynb")
		var match []string
		for _, n := range all {
			if n == q {
				match = []string{n}
				break
			}
			if strings.HasPrefix(n, q) {
				match = append(match, n)
			}
		}
		switch len(match) {
		case 0:
			return nil, fmt.Errorf("%q: %s has no such notebook; its notebooks: %s", a, dir, strings.Join(all, ", "))
		case 1:
		default:
			return nil, fmt.Errorf("%q: more than one notebook of %s starts with it: %s", a, ed, strings.Join(match, ", "))
		}
		if !seen[match[0]] {
			seen[match[0]] = true
			out = append(out, match[0])
		}
	}
	return out, nil
}

// backupPath returns a name for a backup of the working copy that no file has:
// NAME.ipynb.bak-20261201T154500Z, with -2, -3… when one exists.
func (wb *workbook) backupPath(ed, name string) (string, error) {
	base := wb.copyPath(ed, name) + ".bak-" + wb.now().UTC().Format("20060102T150405Z")
	for i := 1; i < 1000; i++ {
		p := base
		if i > 1 {
			p = fmt.Sprintf("%s-%d", base, i)
		}
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			return p, nil
		} else if err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("no free backup name beside %s", base)
}

// restore replaces the named working copies of an edition (all of them when no
// name is given) with their pristine notebooks, keeping an edited copy as a
// backup, and says what it did with each.
func (wb *workbook) restore(w io.Writer, ed string, args []string) error {
	known := false
	for _, e := range Editions {
		known = known || e == ed
	}
	if !known {
		return fmt.Errorf("restore: edition %q: want one of %s (--edition)", ed, strings.Join(Editions, ", "))
	}
	es, err := wb.scan(ed)
	if err != nil {
		return err
	}
	byName := map[string]entry{}
	var all []string
	for _, e := range es {
		if e.state != orphan {
			byName[e.name] = e
			all = append(all, e.name)
		}
	}
	dir := filepath.Join(wb.notebooks, ed)
	if len(all) == 0 {
		return fmt.Errorf("restore: %s holds no notebooks: the %s edition has none yet", dir, ed)
	}
	todo := all
	if len(args) > 0 {
		if todo, err = resolve(args, all, ed, dir); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
	}
	var replaced []string
	for _, n := range todo {
		e := byName[n]
		cp, pp := wb.copyPath(ed, n), wb.pristinePath(ed, n)
		switch e.state {
		case missing:
			if err := wb.copyPristine(e); err != nil {
				return err
			}
			fmt.Fprintf(w, lang.TextIn(ed, "workbook: created %s from %s")+"\n", cp, pp)
		case pristine:
			if err := wb.writeRecord(e); err != nil {
				return err
			}
			fmt.Fprintf(w, lang.TextIn(ed, "workbook: %s is already the same as %s: nothing to restore")+"\n", cp, pp)
		case stale:
			if err := wb.copyPristine(e); err != nil {
				return err
			}
			replaced = append(replaced, n)
			fmt.Fprintf(w, lang.TextIn(ed, "workbook: replaced %s (not edited by you) with the changed %s")+"\n", cp, pp)
		default: // edited
			bak, err := wb.backupPath(ed, n)
			if err != nil {
				return err
			}
			if err := os.Rename(cp, bak); err != nil {
				return fmt.Errorf("keeping your copy as a backup: %w", err)
			}
			if err := wb.copyPristine(e); err != nil {
				return fmt.Errorf("%w (your copy is %s)", err, bak)
			}
			replaced = append(replaced, n)
			fmt.Fprintf(w, lang.TextIn(ed, "workbook: replaced %s with %s; your copy is kept as %s")+"\n", cp, pp, bak)
		}
	}
	if len(replaced) > 0 {
		// JupyterLab does not reload a file changed under it, and saving it then
		// asks "File Changed": what to click, in the edition's words (its
		// language pack's, for zh-CN).
		fmt.Fprintf(w, lang.TextIn(ed, "workbook: JupyterLab still shows the old %s if it is open there: before you save, click File ▸ Reload Notebook from Disk in its tab. If a save asks \"File Changed\", click Revert (Overwrite would save the old notebook over the restored one).")+"\n",
			strings.Join(replaced, ", "))
	}
	return nil
}
