package workbook

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// WorkbookEnv names the environment variable that moves the learner's working
// copies (scripts/lab.sh exports it to the kernels it starts); its exercises/
// folder is the working copy of the exercises.
const WorkbookEnv = "MEMLAB_WORKBOOK"

// WorkingModulePath is the module path of the working copy's go.mod (CopyStub
// writes it).
const WorkingModulePath = "memlab.dev/memlab/workbook/exercises"

// WorkingCopyDir is where the learner's working copy of the exercises of the
// exercises module at root lives, whether or not it exists yet:
// $MEMLAB_WORKBOOK/exercises when MEMLAB_WORKBOOK is set, else
// workbook/exercises beside root.
func WorkingCopyDir(root string) string {
	dir := filepath.Join(filepath.Dir(root), "workbook", "exercises")
	if wb := os.Getenv(WorkbookEnv); wb != "" {
		dir = filepath.Join(wb, "exercises")
	}
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// WorkingCopy returns the learner's working copy of the exercises of the
// exercises module at root (WorkingCopyDir; made by make lab and by notebook
// 06's first cell), or "" when that folder does not exist. The exercises folder
// at root is the instructor's: a learner solves the exercises in the working
// copy, whose edits git ignores.
func WorkingCopy(root string) string {
	dir := WorkingCopyDir(root)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return ""
	}
	return dir
}

// Started reports whether the working copy work holds a copy of exercise ex
// (its folder with at least one .go file).
func Started(work string, ex Exercise) bool {
	return hasGoFiles(filepath.Join(work, ex.Slug))
}

// hasGoFiles reports whether dir holds a .go file.
func hasGoFiles(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") {
			return true
		}
	}
	return false
}

// scratchDir is the folder, inside a working copy, where RunWorking assembles
// the module it tests; a dot folder, so that the working copy's go ./...
// patterns never match it.
const scratchDir = ".check"

// resultsFile is the file, in the scratch folder, that keeps the last report of
// each exercise with the hash of what it was run on.
const resultsFile = "results.json"

// cached is one exercise's last report and the key of its inputs.
type cached struct {
	Key    string  `json:"key"`
	Report *Report `json:"report"`
}

// RunWorking runs the official tests of the exercises exs of the exercises
// module at root against the learner's working copy work (WorkingCopy): each
// exercise's non-test .go files come from work/<folder> when it holds any, else
// from the exercise's own folder (its stub: not started), and its *_test.go
// files always from the exercise's folder. Like CheckCopy it leaves both
// folders untouched: the module is assembled in work/.check (git-ignored with
// the working copy) and run there with one go test. A report is kept with a
// SHA-256 of everything it depends on (the files tested, the exercises module's
// go.mod, go.sum and internal/, the sources of the memlab module it replaces,
// the Go toolchain's version, the options), so asking again about exercises
// that did not change runs nothing: progress views stay quick.
func RunWorking(ctx context.Context, root, work string, exs []Exercise, opts RunOptions) (map[string]*Report, error) {
	if opts.Solution {
		return nil, errors.New("workbook: the working copy holds the learner's code, not the reference solutions")
	}
	scratch := filepath.Join(work, scratchDir)
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		return nil, fmt.Errorf("workbook: %w", err)
	}
	unlock, err := lockScratch(ctx, scratch)
	if err != nil {
		return nil, err
	}
	defer unlock()
	shared, err := sharedKey(root, opts)
	if err != nil {
		return nil, err
	}
	cache := map[string]cached{}
	if data, err := os.ReadFile(filepath.Join(scratch, resultsFile)); err == nil {
		_ = json.Unmarshal(data, &cache) // a damaged cache is an empty one
	}
	reports := map[string]*Report{}
	keys := map[string]string{}
	var stale []string
	for _, ex := range exs {
		src := ex.Dir
		if Started(work, ex) {
			src = filepath.Join(work, ex.Slug)
		}
		key, err := exerciseKey(shared, ex, src)
		if err != nil {
			return nil, err
		}
		keys[ex.Slug] = key
		if c, ok := cache[ex.Slug]; ok && c.Key == key && c.Report != nil {
			reports[ex.Slug] = c.Report
			continue
		}
		if err := assembleScratch(scratch, ex, src); err != nil {
			return nil, err
		}
		stale = append(stale, "./"+ex.Slug)
	}
	if len(stale) == 0 {
		return reports, nil
	}
	// A fresh copy of go.mod, go.sum and internal/ each run (os.CopyFS
	// refuses to overwrite).
	if err := os.RemoveAll(filepath.Join(scratch, "internal")); err != nil {
		return nil, fmt.Errorf("workbook: %w", err)
	}
	if err := copyModuleFiles(root, scratch); err != nil {
		return nil, err
	}
	fresh, err := RunTests(ctx, scratch, stale, opts)
	if err != nil {
		return nil, err
	}
	for _, p := range stale {
		slug := strings.TrimPrefix(p, "./")
		r := fresh[slug]
		if r == nil {
			continue
		}
		reports[slug] = r
		cache[slug] = cached{Key: keys[slug], Report: r}
	}
	if data, err := json.Marshal(cache); err == nil {
		tmp := filepath.Join(scratch, resultsFile+".tmp")
		if os.WriteFile(tmp, data, 0o644) == nil {
			_ = os.Rename(tmp, filepath.Join(scratch, resultsFile)) // a cache not saved is only slower next time
		}
	}
	return reports, nil
}

// staleLock is the age after which a lock of the scratch folder is taken to be
// left by a process that died.
const staleLock = 10 * time.Minute

// lockScratch waits until no other RunWorking uses the scratch folder (two
// notebooks' progress cells at once, a terminal's check), then holds it until
// the returned function is called.
func lockScratch(ctx context.Context, scratch string) (func(), error) {
	lock := filepath.Join(scratch, ".lock")
	for {
		f, err := os.OpenFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintf(f, "%d\n", os.Getpid())
			f.Close()
			return func() { os.Remove(lock) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("workbook: %w", err)
		}
		if lockAbandoned(lock) {
			os.Remove(lock)
			continue
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("workbook: waiting for %s (another check of the working copy): %w", lock, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// lockAbandoned reports whether the lock file was left by a process that is
// gone (a notebook cell interrupted), or is older than staleLock.
func lockAbandoned(lock string) bool {
	st, err := os.Stat(lock)
	if err != nil {
		return false // removed meanwhile: try again
	}
	if time.Since(st.ModTime()) > staleLock {
		return true
	}
	data, err := os.ReadFile(lock)
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		// Being written: give it a moment.
		return time.Since(st.ModTime()) > time.Second
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	err = p.Signal(syscall.Signal(0))
	return errors.Is(err, os.ErrProcessDone) || (err != nil && strings.Contains(err.Error(), "no such process"))
}

// assembleScratch puts exercise ex into the scratch module, in place of what
// was there, as the grader builds it (assemble: the learner's files from src,
// the shared files and the tests from the official folder).
func assembleScratch(scratch string, ex Exercise, src string) error {
	dst := filepath.Join(scratch, ex.Slug)
	if err := os.RemoveAll(dst); err != nil {
		return fmt.Errorf("workbook: %w", err)
	}
	_, _, err := assemble(ex, src, dst)
	return err
}

// exerciseKey is the SHA-256 of shared and of the .go files that exercise ex is
// tested with when its code comes from src.
func exerciseKey(shared string, ex Exercise, src string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", shared, ex.Slug)
	if err := hashGoFiles(h, src, func(name string) bool { return !strings.HasSuffix(name, "_test.go") }); err != nil {
		return "", err
	}
	if err := hashGoFiles(h, ex.Dir, func(name string) bool { return strings.HasSuffix(name, "_test.go") }); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashGoFiles writes the names and contents of the .go files of dir that keep
// accepts into h.
func hashGoFiles(h interface{ Write([]byte) (int, error) }, dir string, keep func(string) bool) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("workbook: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || !keep(e.Name()) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return fmt.Errorf("workbook: %w", err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", e.Name(), len(data))
		h.Write(data)
	}
	return nil
}

// sharedKey is a SHA-256 of what every exercise's result depends on besides its
// own files: the options, the Go toolchain's version, the exercises module's
// go.mod, go.sum and internal/ (contents), and the module its go.mod replaces
// memlab.dev/memlab with (the names, sizes and times of its .go files, go.mod
// and go.sum: a git pull or an edit changes them).
func sharedKey(root string, opts RunOptions) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "race=%v run=%q\x00", opts.Race, opts.Run)
	if goBin, err := exec.LookPath("go"); err == nil {
		if real, err := filepath.EvalSymlinks(goBin); err == nil {
			v, _ := os.ReadFile(filepath.Join(filepath.Dir(real), "..", "VERSION"))
			fmt.Fprintf(h, "go=%s\x00", v)
		}
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("workbook: %w", err)
	}
	h.Write(gomod)
	sum, _ := os.ReadFile(filepath.Join(root, "go.sum"))
	h.Write(sum)
	err = filepath.WalkDir(filepath.Join(root, "internal"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(data))
		h.Write(data)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("workbook: %w", err)
	}
	for _, l := range strings.Split(string(absReplace(gomod, root)), "\n") {
		_, target, ok := strings.Cut(l, "=>")
		if !ok || !filepath.IsAbs(strings.TrimSpace(target)) {
			continue
		}
		if err := stampTree(h, strings.TrimSpace(target), root); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// stampTree writes the path, size and modification time of every .go file,
// go.mod and go.sum under dir into h, skipping skip (the exercises module,
// hashed by content), hidden folders, testdata, node_modules and the
// checkout's build/ and workbook/.
func stampTree(h interface{ Write([]byte) (int, error) }, dir, skip string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			if path != dir && (path == skip || strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" ||
				(filepath.Dir(path) == dir && (name == "build" || name == "workbook"))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") && name != "go.mod" && name != "go.sum" {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00", path, info.Size(), info.ModTime().UnixNano())
		return nil
	})
}

// Untouched says whether the learner has not started exercise ex in the
// working copy work: it has no code there, or exactly the stub's code files
// (the ones [CopyStub] copies), byte for byte.
func Untouched(work string, ex Exercise) bool {
	dir := filepath.Join(work, ex.Slug)
	if !hasGoFiles(dir) {
		return true
	}
	mine, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	stub := map[string]bool{}
	if entries, err := os.ReadDir(ex.Dir); err == nil {
		for _, e := range entries {
			if e.Type().IsRegular() && stubFile(ex.Dir, e.Name()) {
				stub[e.Name()] = true
			}
		}
	}
	n := 0
	for _, e := range mine {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		if !stub[e.Name()] {
			return false // a file of the learner's own (or a test)
		}
		a, errA := os.ReadFile(filepath.Join(dir, e.Name()))
		b, errB := os.ReadFile(filepath.Join(ex.Dir, e.Name()))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			return false
		}
		n++
	}
	return n == len(stub)
}

// RunExercises runs the tests of exs on the learner's working copy work when
// there is one (RunWorking), and on the exercises folder root itself when work
// is "" (RunTests): what every progress view (memlab exercises list,
// progress.Show) reports.
//
// On a working copy, an exercise the learner has not touched (no copy, or a
// copy whose code is still the stub's, see [Untouched]) is reported "not
// started" at once, without running its tests (a stub's tests only say "not
// implemented yet"): a fresh working copy's first look costs no go test.
func RunExercises(ctx context.Context, root, work string, exs []Exercise, opts RunOptions) (map[string]*Report, error) {
	if work != "" {
		reports := map[string]*Report{}
		var touched []Exercise
		for _, ex := range exs {
			if Untouched(work, ex) {
				reports[ex.Slug] = &Report{Slug: ex.Slug, Untouched: true}
			} else {
				touched = append(touched, ex)
			}
		}
		if len(touched) == 0 {
			return reports, nil
		}
		ran, err := RunWorking(ctx, root, work, touched, opts)
		if err != nil {
			return nil, err
		}
		for slug, r := range ran {
			reports[slug] = r
		}
		return reports, nil
	}
	pkgs := make([]string, len(exs))
	for i, ex := range exs {
		pkgs[i] = "./" + ex.Slug
	}
	return RunTests(ctx, root, pkgs, opts)
}
