package workbook

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Submission is a student's copy of one exercise folder.
type Submission struct {
	Exercise Exercise // the official exercise it answers
	Dir      string   // the folder holding the student's .go files
}

// Result is the grade of one submission.
type Result struct {
	Exercise Exercise
	Report   *Report // the official tests run against the student's code
	Total    int     // cases the official tests hold when every function works
}

// Score returns the number of passing cases and the total to count them against.
// A rejected report scores nothing.
func (r Result) Score() (passed, total int) {
	pass, fail, skip := r.Report.Counts()
	if r.Report.Rejected != "" {
		return 0, max(r.Total, pass+fail+skip)
	}
	return pass, max(r.Total, pass+fail+skip)
}

// Grade runs the official, unmodified tests of each submission against the
// student's code and returns the results in the order of subs. root is the
// official exercises module.
//
// Threat model: the student's code runs inside the test binary, in the same
// process as the official tests, so nothing that process can write is trusted
// as such. Grade
//
//   - checks the submission's source first (CheckSubmission): only pure
//     packages may be imported and fmt's printing to standard output is refused,
//     so the student's code has no way to write to the binary's standard output;
//   - builds the tests (go test -c, cgo off) without running any student code,
//     and runs the binary with -test.v=test2json in a sandbox (bubblewrap: no
//     network, no writable file of the instructor's, no view of other processes;
//     see GradeOptions.Sandbox), with a time and an output limit; a run that
//     hits either is killed with its whole process group and graded as failing;
//   - reads the results only from the binary's standard output, where the
//     testing package frames them; what the student's code can print (the
//     builtin println, panics) goes to standard error and is shown, never parsed;
//     a test or case reported twice, or a stream that disagrees with the
//     binary's exit status, voids the grade (Report.Rejected);
//   - verifies after every run that the official test files, in the exercises
//     folder and in the scratch copy, are byte-identical (SHA-256) to what they
//     were before, and stops with an error if not.
//
// The scratch module lives in a temporary folder that is removed when Grade
// returns, also when ctx is cancelled: the official go.mod, go.sum and internal/
// helpers and, per submission, the student's non-test .go files with the
// official *_test.go files (the student's own test files are ignored; the
// student's folders are not modified). Beside each it puts the official
// reference solution under reference/, so that the total counts the cases a
// complete answer passes: a stub that stops a test early does not shrink it.
func Grade(ctx context.Context, root string, subs []Submission, opts GradeOptions) ([]Result, error) {
	if len(subs) == 0 {
		return nil, fmt.Errorf("workbook: nothing to grade")
	}
	if opts.Sandbox == "" || opts.Sandbox == "bwrap" {
		if _, err := exec.LookPath("bwrap"); err != nil {
			return nil, ErrNoSandbox
		}
	}
	tmp, err := os.MkdirTemp("", "memlab-grade-")
	if err != nil {
		return nil, fmt.Errorf("workbook: %w", err)
	}
	defer os.RemoveAll(tmp)
	scratch := filepath.Join(tmp, "module")
	if err := os.MkdirAll(filepath.Join(tmp, "bin"), 0o755); err != nil {
		return nil, fmt.Errorf("workbook: %w", err)
	}
	if err := copyModuleFiles(root, scratch); err != nil {
		return nil, err
	}
	results := make([]Result, len(subs))
	for i, s := range subs {
		results[i] = Result{Exercise: s.Exercise}
		dst := filepath.Join(scratch, s.Exercise.Slug)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return nil, fmt.Errorf("workbook: %w", err)
		}
		n, err := copyGoFiles(s.Dir, dst, func(name string) bool { return !strings.HasSuffix(name, "_test.go") })
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, fmt.Errorf("workbook: %s holds no .go files to grade for exercise %s", s.Dir, s.Exercise.Slug)
		}
		if _, err := copyGoFiles(s.Exercise.Dir, dst, func(name string) bool { return strings.HasSuffix(name, "_test.go") }); err != nil {
			return nil, err
		}
		ref := filepath.Join(scratch, "reference", s.Exercise.Slug)
		if err := os.CopyFS(ref, os.DirFS(s.Exercise.Dir)); err != nil {
			return nil, fmt.Errorf("workbook: %w", err)
		}
		if err := SwapInSolution(ref); err == nil {
			r, err := gradeOne(ctx, opts, tmp, scratch, "reference/"+s.Exercise.Slug)
			if err != nil {
				return nil, err
			}
			if r.Passed() {
				results[i].Total, _, _ = r.Counts()
			}
		} else if !errors.Is(err, ErrNoSolution) {
			return nil, err
		}
		if !opts.SkipSourceCheck {
			if err := CheckSubmission(dst); err != nil {
				results[i].Report = &Report{Slug: s.Exercise.Slug, Status: Fail, Rejected: err.Error()}
				continue
			}
		}
		official, err := hashTests(s.Exercise.Dir)
		if err != nil {
			return nil, err
		}
		copied, err := hashTests(dst)
		if err != nil {
			return nil, err
		}
		r, err := gradeOne(ctx, opts, tmp, scratch, s.Exercise.Slug)
		if err != nil {
			return nil, err
		}
		for dir, want := range map[string]string{s.Exercise.Dir: official, dst: copied} {
			got, err := hashTests(dir)
			if err != nil || got != want {
				return nil, fmt.Errorf("workbook: the official tests in %s changed while %s was graded (%v): grading stopped; restore them (git checkout) before grading again", dir, s.Dir, err)
			}
		}
		results[i].Report = r
	}
	return results, nil
}

// gradeOne builds and runs the tests of the package at pkg (a folder of the
// scratch module, such as "03-view") and returns its report.
func gradeOne(ctx context.Context, opts GradeOptions, tmp, scratch, pkg string) (*Report, error) {
	slug := filepath.ToSlash(pkg)
	bin := filepath.Join(tmp, "bin", strings.ReplaceAll(slug, "/", "_")+".test")
	ok, msgs, err := buildTest(ctx, opts, scratch, "./"+slug, bin)
	if err != nil {
		return nil, err
	}
	if !ok {
		return &Report{Slug: slug, Status: Fail, BuildFailed: true, BuildOutput: msgs}, nil
	}
	args := []string{"-test.v=test2json", "-test.count=1", "-test.timeout=" + (opts.timeout() + time.Minute).String()}
	res, err := runSandboxed(ctx, opts, tmp, filepath.Join(scratch, pkg), bin, args)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("workbook: grading %s: %w", slug, ctx.Err())
	}
	events, err := toEvents(ctx, tmp, ModulePath+"/"+slug, res.stdout)
	if err != nil {
		return nil, err
	}
	reports, err := parseEvents(bytes.NewReader(events))
	if err != nil {
		return nil, err
	}
	r := reports[slug]
	if r == nil {
		r = &Report{Slug: slug}
	}
	for _, l := range strings.Split(strings.TrimRight(string(res.stderr), "\n"), "\n") {
		if l = strings.TrimSpace(l); l != "" && len(r.Output) < 200 {
			r.Output = append(r.Output, l)
		}
	}
	switch {
	case res.stopped != "":
		r.Status = Fail
		r.Output = append(r.Output, "stopped by the grader: "+res.stopped)
		markUnfinished(r)
	case res.exitCode != 0 && r.Status == Pass:
		r.Rejected = fmt.Sprintf("the test binary exited with status %d but its output says every test passed", res.exitCode)
	case res.exitCode == 0 && r.Status != Pass && r.Rejected == "":
		r.Rejected = "the test binary exited with status 0 but its output does not say the tests passed"
	case res.exitCode != 0:
		r.Status = Fail
		markUnfinished(r)
	}
	if r.Rejected != "" {
		r.Status = Fail
	}
	return r, nil
}

// markUnfinished fails every test and case of r that has no outcome.
func markUnfinished(r *Report) {
	for _, t := range r.Tests {
		if t.Status == Running {
			t.Status = Fail
		}
		for _, c := range t.Cases {
			if c.Status == Running {
				c.Status = Fail
			}
		}
	}
}

// copyModuleFiles copies the exercises module's go.mod (with any relative
// replace directory made absolute, so that the copy still finds it), go.sum and
// internal/ from root to dst.
func copyModuleFiles(root, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("workbook: %w", err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return fmt.Errorf("workbook: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dst, "go.mod"), absReplace(gomod, root), 0o644); err != nil {
		return fmt.Errorf("workbook: %w", err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.sum")); err == nil {
		if err := copyFile(filepath.Join(root, "go.sum"), filepath.Join(dst, "go.sum")); err != nil {
			return err
		}
	}
	if err := os.CopyFS(filepath.Join(dst, "internal"), os.DirFS(filepath.Join(root, "internal"))); err != nil {
		return fmt.Errorf("workbook: %w", err)
	}
	return nil
}

// absReplace rewrites the relative directories of a go.mod's replace directives
// ("=> ../") into absolute ones under root.
func absReplace(gomod []byte, root string) []byte {
	lines := strings.Split(string(gomod), "\n")
	for i, l := range lines {
		before, after, ok := strings.Cut(l, "=>")
		if !ok {
			continue
		}
		target := strings.TrimSpace(after)
		if strings.HasPrefix(target, "./") || strings.HasPrefix(target, "../") {
			lines[i] = before + "=> " + filepath.Join(root, target)
		}
	}
	return []byte(strings.Join(lines, "\n"))
}

// hashTests returns a SHA-256 over the names and contents of the *_test.go files
// in dir.
func hashTests(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("workbook: %w", err)
	}
	h := sha256.New()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return "", fmt.Errorf("workbook: %w", err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", e.Name(), len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ErrNoSolution is returned (wrapped) by SwapInSolution when a folder holds no
// reference solution.
var ErrNoSolution = errors.New("workbook: no reference solution")

// SwapInSolution turns the exercise folder dir into a solved one, in place: every
// stub (a .go file whose first line is "//go:build !solution") is removed and
// every solution file ("//go:build solution") loses that line, so a plain go test
// builds the reference solution.
func SwapInSolution(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("workbook: %w", err)
	}
	swapped := false
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("workbook: %w", err)
		}
		first, rest, _ := strings.Cut(string(data), "\n")
		switch strings.TrimSpace(first) {
		case "//go:build !solution":
			err = os.Remove(p)
		case "//go:build solution":
			err = os.WriteFile(p, []byte(rest), 0o644)
			swapped = true
		}
		if err != nil {
			return fmt.Errorf("workbook: %w", err)
		}
	}
	if !swapped {
		return fmt.Errorf("%w in %s", ErrNoSolution, dir)
	}
	return nil
}

// copyGoFiles copies the regular .go files of src accepted by keep into dst and
// returns how many it copied.
func copyGoFiles(src, dst string, keep func(name string) bool) (int, error) {
	entries, err := os.ReadDir(src)
	if err != nil {
		return 0, fmt.Errorf("workbook: %w", err)
	}
	n := 0
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasSuffix(name, ".go") || !keep(name) {
			continue
		}
		if err := copyFile(filepath.Join(src, name), filepath.Join(dst, name)); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// copyFile copies the regular file src to dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("workbook: %w", err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return fmt.Errorf("workbook: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("workbook: copying %s: %w", src, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("workbook: %w", err)
	}
	return nil
}

// CheckCopy runs the official tests of exercise ex against the learner's copy of
// it in dir (such as workbook/exercises/17-inplace-block, which a notebook cell
// writes): like Grade it builds a scratch module from root's go.mod, go.sum and
// internal/, the copy's non-test .go files and the official *_test.go files, and
// leaves dir untouched; unlike Grade it runs the learner's own code unsandboxed,
// as go test does, with the options of a check.
func CheckCopy(ctx context.Context, root string, ex Exercise, dir string, opts RunOptions) (*Report, error) {
	tmp, err := os.MkdirTemp("", "memlab-check-")
	if err != nil {
		return nil, fmt.Errorf("workbook: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := copyModuleFiles(root, tmp); err != nil {
		return nil, err
	}
	dst := filepath.Join(tmp, ex.Slug)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return nil, fmt.Errorf("workbook: %w", err)
	}
	n, err := copyGoFiles(dir, dst, func(name string) bool { return !strings.HasSuffix(name, "_test.go") })
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("workbook: %s holds no .go files of exercise %s (make one with \"%s copy %d\")", dir, ex.Slug, Command, ex.Number)
	}
	if _, err := copyGoFiles(ex.Dir, dst, func(name string) bool { return strings.HasSuffix(name, "_test.go") }); err != nil {
		return nil, err
	}
	opts.Solution = false
	reports, err := RunTests(ctx, tmp, []string{"./" + ex.Slug}, opts)
	if err != nil {
		return nil, err
	}
	r := reports[ex.Slug]
	if r == nil {
		return nil, fmt.Errorf("workbook: go test reported nothing for %s", ex.Slug)
	}
	return r, nil
}

// CopyStub makes the learner's working copy of exercise ex: the folder
// dir/<slug> with the exercise's stub and the files it shares with the
// solution (no tests, no reference solution). It returns the folder and
// whether it made it; an existing folder is left as it is, so a copy is never
// overwritten. dir gets a go.mod of its own (if it has none), so that the
// repository's `go build ./...` and `go vet ./...` never compile a learner's
// half-written code.
func CopyStub(ex Exercise, dir string) (string, bool, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", false, fmt.Errorf("workbook: %w", err)
	}
	if gomod := filepath.Join(dir, "go.mod"); !exists(gomod) {
		const text = "// The learner's copies of the exercises, checked with `go run ./cmd/memlab exercises check N --student`:\n// a module of its own, so that the repository's go build ./... never compiles them.\nmodule memlab.dev/memlab/workbook/exercises\n\ngo 1.26\n"
		if err := os.WriteFile(gomod, []byte(text), 0o644); err != nil {
			return "", false, fmt.Errorf("workbook: %w", err)
		}
	}
	dst := filepath.Join(dir, ex.Slug)
	if _, err := os.Stat(dst); err == nil {
		return dst, false, nil
	}
	tmp, err := os.MkdirTemp(dir, ".copy-"+ex.Slug+"-")
	if err != nil {
		return "", false, fmt.Errorf("workbook: %w", err)
	}
	defer os.RemoveAll(tmp)
	_, err = copyGoFiles(ex.Dir, tmp, func(name string) bool {
		if strings.HasSuffix(name, "_test.go") {
			return false
		}
		data, err := os.ReadFile(filepath.Join(ex.Dir, name))
		first, _, _ := strings.Cut(string(data), "\n")
		return err == nil && strings.TrimSpace(first) != "//go:build solution"
	})
	if err != nil {
		return "", false, err
	}
	for _, md := range []string{"README.md", "HINTS.md", "README" + ChineseSuffix, "HINTS" + ChineseSuffix} {
		if _, err := os.Stat(filepath.Join(ex.Dir, md)); err == nil {
			if err := copyFile(filepath.Join(ex.Dir, md), filepath.Join(tmp, md)); err != nil {
				return "", false, err
			}
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", false, fmt.Errorf("workbook: %w", err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return "", false, fmt.Errorf("workbook: %w", err)
	}
	return dst, true, nil
}

// exists reports whether path names an existing file.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
