// Package workbooktest builds scratch copies of the course's exercises module for
// tests: a few exercises copied from the repository, optionally with their
// reference solutions swapped in for the stubs, so tests can see both the failing
// and the passing path without touching the real folder.
package workbooktest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"memlab.dev/memlab/internal/workbook"
	"memlab.dev/memlab/reference"
)

// Exercises returns the repository's exercises folder (reference.Root's
// exercises/). A repository without one fails the test: the exercises ship
// with it.
func Exercises(t testing.TB) string {
	t.Helper()
	root, err := reference.Root()
	if err != nil {
		t.Fatal(err)
	}
	ex := filepath.Join(root, "exercises")
	if _, err := os.Stat(filepath.Join(ex, "go.mod")); err != nil {
		t.Fatalf("no exercises module in the repository: %v", err)
	}
	return ex
}

// Module copies the exercises module's go.mod (its replace directive pointed
// at the repository), go.sum and internal/ and the named exercise
// folders (such as "05-segment-size") into a new temporary folder and returns it.
func Module(t testing.TB, slugs ...string) string {
	t.Helper()
	src := Exercises(t)
	dst := t.TempDir()
	var err error
	for _, f := range []string{"go.mod", "go.sum"} {
		data, rerr := os.ReadFile(filepath.Join(src, f))
		if f == "go.mod" {
			// The copy is elsewhere: its replace directive names the repository.
			data = []byte(strings.Replace(string(data), "=> ../\n", "=> "+filepath.Dir(src)+"\n", 1))
		}
		if rerr == nil {
			err = os.WriteFile(filepath.Join(dst, f), data, 0o644)
		} else if f == "go.mod" {
			err = rerr
		}
		if err != nil {
			break
		}
	}
	for _, d := range append([]string{"internal"}, slugs...) {
		if err == nil {
			err = os.CopyFS(filepath.Join(dst, d), os.DirFS(filepath.Join(src, d)))
		}
	}
	if err != nil {
		t.Fatal(err)
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
