package workbook

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Submission is a student's copy of one exercise folder.
type Submission struct {
	Exercise Exercise // the official exercise it answers
	Dir      string   // the folder holding the student's .go files
}

// Grade runs the official, unmodified tests of each submission against the
// student's code and returns a report per exercise folder. root is the official
// exercises module. For each submission, Grade builds a scratch copy of the module
// in a temporary folder: the official go.mod and internal/ helpers, the student's
// non-test .go files, and the official *_test.go files (any test files of the
// student are ignored). The student's folders are not modified.
func Grade(ctx context.Context, root string, subs []Submission, opts RunOptions) (map[string]*Report, error) {
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
	if err := copyTree(filepath.Join(root, "internal"), filepath.Join(tmp, "internal")); err != nil {
		return nil, err
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
	}
	return RunTests(ctx, tmp, pkgs, opts)
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

// copyTree copies the regular files under src to dst, creating folders as needed.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("workbook: %w", err)
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return fmt.Errorf("workbook: %w", err)
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		return copyFile(p, target)
	})
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
