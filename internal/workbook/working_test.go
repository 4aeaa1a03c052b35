package workbook

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestLockScratch: a second RunWorking waits for the first; a lock left by a
// process that is gone is taken over at once.
func TestLockScratch(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lockScratch(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := lockScratch(ctx, dir); err == nil {
		t.Fatal("a second lock was granted while the first is held")
	}
	unlock()
	unlock2, err := lockScratch(context.Background(), dir)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	unlock2()
	// A pid that no process has (above Linux's pid_max).
	if err := os.WriteFile(filepath.Join(dir, ".lock"), []byte("99999999\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel2()
	unlock3, err := lockScratch(ctx2, dir)
	if err != nil {
		t.Fatalf("a lock of a dead process was not taken over: %v", err)
	}
	unlock3()
}

// TestWorkingCopyDir: MEMLAB_WORKBOOK moves the working copy; without it, it is
// workbook/exercises beside the exercises folder; WorkingCopy is "" until it exists;
// ProgressDir is the working copy once it does, the exercises folder before.
func TestWorkingCopyDir(t *testing.T) {
	repo := t.TempDir()
	root := filepath.Join(repo, "exercises")
	t.Setenv(WorkbookEnv, "")
	if got, want := WorkingCopyDir(root), filepath.Join(repo, "workbook", "exercises"); got != want {
		t.Errorf("WorkingCopyDir = %s, want %s", got, want)
	}
	if got := WorkingCopy(root); got != "" {
		t.Errorf("WorkingCopy of a missing folder = %q, want \"\"", got)
	}
	if got := ProgressDir(root, WorkingCopy(root)); got != root {
		t.Errorf("ProgressDir without a working copy = %q, want the exercises folder %q", got, root)
	}
	wb := t.TempDir()
	t.Setenv(WorkbookEnv, wb)
	if err := os.Mkdir(filepath.Join(wb, "exercises"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, want := WorkingCopy(root), filepath.Join(wb, "exercises"); got != want {
		t.Errorf("WorkingCopy with MEMLAB_WORKBOOK = %q, want %q", got, want)
	}
	if got, want := ProgressDir(root, WorkingCopy(root)), filepath.Join(wb, "exercises"); got != want {
		t.Errorf("ProgressDir with a working copy = %q, want it, %q", got, want)
	}
}

// TestUntouched: a working copy that is still the stub (or absent) is reported
// "not started" without go test (PATH has no go here); an edited, added or
// removed code file makes it touched, and touched exercises do run.
func TestUntouched(t *testing.T) {
	root, err := filepath.Abs("../../exercises")
	if err != nil {
		t.Fatal(err)
	}
	exs, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(exs) < 3 {
		t.Fatalf("%d exercises in %s, want at least 3", len(exs), root)
	}
	work := t.TempDir()
	for _, ex := range exs[:2] {
		if _, _, err := CopyStub(ex, work); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", "") // any go test run would fail
	reports, err := RunExercises(context.Background(), root, work, exs[:3], RunOptions{})
	if err != nil {
		t.Fatalf("RunExercises on stubs ran something: %v", err)
	}
	for _, ex := range exs[:3] {
		if r := reports[ex.Slug]; r == nil || !r.Untouched || State(r) != "not started" || r.Passed() {
			t.Errorf("%s: report %+v, want an untouched, not started one", ex.Slug, r)
		}
	}
	ex := exs[1]
	dir := filepath.Join(work, ex.Slug)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var code string
	for _, e := range entries {
		if filepath.Ext(e.Name()) == ".go" {
			code = filepath.Join(dir, e.Name())
			break
		}
	}
	if code == "" {
		t.Fatalf("the stub of %s has no code file", ex.Slug)
	}
	orig, err := os.ReadFile(code)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		change func() error
	}{
		{"edited", func() error { return os.WriteFile(code, append(append([]byte(nil), orig...), "// mine\n"...), 0o644) }},
		{"added", func() error {
			return os.WriteFile(filepath.Join(dir, "mine.go"), []byte("package x\n"), 0o644)
		}},
		{"removed", func() error { return os.Remove(code) }},
	} {
		if err := c.change(); err != nil {
			t.Fatal(err)
		}
		restore := func() {
			os.Remove(filepath.Join(dir, "mine.go"))
			if err := os.WriteFile(code, orig, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if Untouched(work, ex) {
			if c.name == "removed" && !hasGoFiles(dir) {
				restore()
				continue // no code at all: the stub's is tested, not started
			}
			t.Errorf("%s file: Untouched says the copy is the stub", c.name)
		}
		if _, err := RunExercises(context.Background(), root, work, []Exercise{ex}, RunOptions{}); err == nil {
			t.Errorf("%s file: RunExercises ran no tests on a touched copy", c.name)
		}
		restore()
		if !Untouched(work, ex) {
			t.Errorf("after undoing the %s file: the copy is no longer untouched", c.name)
		}
	}
}
