package reference_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/snapshot"
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
		{reference.Misses211, "*__default.pickle", 8},
		{reference.Misses211, "*.facts.json", 40},
		{reference.Programs211, "*__default.pickle", 5},
		{reference.Programs211, "*.facts.json", 25},
		{reference.Ranks211, "*__default.rank0.pickle", 2},
		{reference.Ranks211, "*.rank0.facts.json", 10},
	} {
		glob := reference.Glob
		if strings.HasSuffix(c.pattern, ".pickle") {
			glob = reference.GlobPickles // P__S.pickle or P__S.pickle.gz
		}
		files, err := glob(c.folder, c.pattern)
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

// TestPickleGz: a snapshot that ships as P__S.pickle.gz is found by Pickle and
// GlobPickles beside plain ones and reads as its plain form does; both forms of one
// name, or neither, are errors. The folder is a copy in a temporary checkout
// (MEMLAB_ROOT), so no shipped file is touched.
func TestPickleGz(t *testing.T) {
	src, err := reference.File(reference.Misses211, "bert_encode_base__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	dir := filepath.Join(root, "reference", reference.Misses211)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module "+reference.Module+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var zipped bytes.Buffer
	w := gzip.NewWriter(&zipped)
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a__default.pickle", data)
	write("b__default.pickle.gz", zipped.Bytes())
	write("b__other.pickle", data)
	t.Setenv("MEMLAB_ROOT", root)

	files, err := reference.GlobPickles(reference.Misses211, "*__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "a__default.pickle"), filepath.Join(dir, "b__default.pickle.gz")}
	if !slices.Equal(files, want) {
		t.Fatalf("GlobPickles: %q, want %q", files, want)
	}
	if got := reference.TrimPickle(files[1]); got != filepath.Join(dir, "b__default") {
		t.Errorf("TrimPickle(%s) = %s", files[1], got)
	}
	p, err := reference.Pickle(reference.Misses211, "b__default.pickle")
	if err != nil || p != want[1] {
		t.Fatalf("Pickle: %q, %v; want %q", p, err, want[1])
	}
	if p, err := reference.Pickle(reference.Misses211, "a__default.pickle"); err != nil || p != want[0] {
		t.Fatalf("Pickle of a plain one: %q, %v", p, err)
	}
	plain, err := snapshot.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := snapshot.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, plain) {
		t.Error("the .pickle.gz reads differently from its plain form")
	}
	if _, err := reference.Pickle(reference.Misses211, "c__default.pickle"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Pickle of neither: %v, want an error wrapping fs.ErrNotExist", err)
	}
	write("a__default.pickle.gz", zipped.Bytes())
	if _, err := reference.Pickle(reference.Misses211, "a__default.pickle"); err == nil || !strings.Contains(err.Error(), "both") {
		t.Errorf("Pickle of both forms: %v, want an error", err)
	}
	if _, err := reference.GlobPickles(reference.Misses211, "*__default.pickle"); err == nil || !strings.Contains(err.Error(), "both") {
		t.Errorf("GlobPickles with both forms of one name: %v, want an error", err)
	}
	if _, err := reference.GlobPickles(reference.Misses211, "*.nothing"); err == nil {
		t.Error("GlobPickles matching nothing returned no error")
	}
}
