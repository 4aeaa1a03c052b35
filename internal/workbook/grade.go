package workbook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
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
func (r Result) Score() (passed, total int) {
	pass, fail, skip := r.Report.Counts()
	return pass, max(r.Total, pass+fail+skip)
}

// Grade runs the official, unmodified tests of each submission against the
// student's code and returns the results in the order of subs. root is the
// official exercises module. Grade builds a scratch copy of the module in a
// temporary folder: the official go.mod and internal/ helpers and, per
// submission, the student's non-test .go files with the official *_test.go files
// (any test files of the student are ignored; the student's folders are not
// modified). Beside each it puts the official reference solution under
// reference/, so that the same go test run also counts the cases a complete
// answer passes: a stub that stops a test early does not shrink the total.
func Grade(ctx context.Context, root string, subs []Submission, opts RunOptions) ([]Result, error) {
	if len(subs) == 0 {
		return nil, fmt.Errorf("workbook: nothing to grade")
	}
	tmp, err := os.MkdirTemp("", "memlab-grade-")
	if err != nil {
		return nil, fmt.Errorf("workbook: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := copyFile(filepath.Join(root, "go.mod"), filepath.Join(tmp, "go.mod")); err != nil {
		return nil, err
	}
	if err := os.CopyFS(filepath.Join(tmp, "internal"), os.DirFS(filepath.Join(root, "internal"))); err != nil {
		return nil, fmt.Errorf("workbook: %w", err)
	}
	var pkgs []string
	for _, s := range subs {
		dst := filepath.Join(tmp, s.Exercise.Slug)
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
		pkgs = append(pkgs, "./"+s.Exercise.Slug)
		ref := filepath.Join(tmp, "reference", s.Exercise.Slug)
		if err := os.CopyFS(ref, os.DirFS(s.Exercise.Dir)); err != nil {
			return nil, fmt.Errorf("workbook: %w", err)
		}
		if err := SwapInSolution(ref); err == nil {
			pkgs = append(pkgs, "./reference/"+s.Exercise.Slug)
		} else if !errors.Is(err, ErrNoSolution) {
			return nil, err
		}
	}
	reports, err := RunTests(ctx, tmp, pkgs, opts)
	if err != nil {
		return nil, err
	}
	results := make([]Result, len(subs))
	for i, s := range subs {
		r := reports[s.Exercise.Slug]
		if r == nil {
			r = &Report{Slug: s.Exercise.Slug, BuildFailed: true, BuildOutput: []string{"go test reported nothing for this exercise"}}
		}
		results[i] = Result{Exercise: s.Exercise, Report: r}
		if ref := reports["reference/"+s.Exercise.Slug]; ref != nil && ref.Passed() {
			results[i].Total, _, _ = ref.Counts()
		}
	}
	return results, nil
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
