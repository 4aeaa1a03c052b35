// Package workbooktest builds scratch copies of the course's exercises module for
// tests: a few exercises copied from the repository, optionally with their
// reference solutions swapped in for the stubs, so tests can see both the failing
// and the passing path without touching the real folder.
package workbooktest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"memlab.dev/memlab/internal/workbook"
)

// Exercises returns the repository's exercises folder, found by walking up from
// the current directory to the go.mod of memlab.dev/memlab. It skips the test if
// there is none.
func Exercises(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(data), []byte("module memlab.dev/memlab\n")) {
			ex := filepath.Join(dir, "exercises")
			if _, err := os.Stat(filepath.Join(ex, "go.mod")); err != nil {
				t.Skipf("no exercises module at %s: %v", ex, err)
			}
			return ex
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("not inside the memlab repository: no go.mod of memlab.dev/memlab above the test")
		}
		dir = parent
	}
}

// Module copies the exercises module's go.mod and internal/ and the named exercise
// folders (such as "05-segment-size") into a new temporary folder and returns it.
func Module(t testing.TB, slugs ...string) string {
	t.Helper()
	src := Exercises(t)
	dst := t.TempDir()
	copyTree(t, filepath.Join(src, "go.mod"), filepath.Join(dst, "go.mod"))
	copyTree(t, filepath.Join(src, "internal"), filepath.Join(dst, "internal"))
	for _, s := range slugs {
		copyTree(t, filepath.Join(src, s), filepath.Join(dst, s))
	}
	return dst
}

// SwapInSolution turns the exercise folder dir into a solved one, as a student who
// finished it would have it (see workbook.SwapInSolution).
func SwapInSolution(t testing.TB, dir string) {
	t.Helper()
	if err := workbook.SwapInSolution(dir); err != nil {
		t.Fatal(err)
	}
}

// copyTree copies the file or folder src to dst.
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
