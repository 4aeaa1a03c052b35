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
