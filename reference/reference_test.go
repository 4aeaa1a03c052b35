package reference_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"memlab.dev/memlab/reference"
)

// TestShipped checks that the ground truth the tests and notebooks read is in
// the repository: a fresh clone must have it, so a missing file fails here.
func TestShipped(t *testing.T) {
	for _, c := range []struct {
		folder, pattern string
		atLeast         int
	}{
		{reference.Torch211, "*.jsonl.gz", 10},
		{reference.Torch211, "*.summary.txt", 10},
		{reference.Torch211, "snapshot_*.pickle", 2},
		{reference.Workloads211, "*__default.pickle", 3},
		{reference.Workloads211, "*.facts.json", 15},
		{reference.Modern211, "*__default.pickle", 5},
		{reference.Modern211, "*.facts.json", 25},
		{reference.Misses211, "*__default.pickle", 2},
		{reference.Misses211, "*.facts.json", 10},
	} {
		files, err := reference.Glob(c.folder, c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) < c.atLeast {
			t.Errorf("%s/%s: %d files, want at least %d", c.folder, c.pattern, len(files), c.atLeast)
		}
	}
}

func TestMissingIsAnError(t *testing.T) {
	_, err := reference.File(reference.Torch211, "no-such-trace.jsonl.gz")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("File of a missing name: %v, want an error wrapping fs.ErrNotExist", err)
	}
	if _, err := reference.Glob(reference.Torch211, "*.nothing"); err == nil {
		t.Fatal("Glob matching nothing returned no error")
	}
}

func TestRootFromEnvironment(t *testing.T) {
	root, err := reference.Root()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("MEMLAB_ROOT", root)
	if got, err := reference.Root(); err != nil || got != root {
		t.Fatalf("Root with MEMLAB_ROOT=%s: %q, %v", root, got, err)
	}
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MEMLAB_ROOT", bad)
	if _, err := reference.Root(); err == nil {
		t.Fatal("Root accepted a MEMLAB_ROOT of another module")
	}
}
