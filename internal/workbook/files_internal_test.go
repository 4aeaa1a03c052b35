package workbook

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"memlab.dev/memlab/reference"
)

// officialExercises returns the repository's exercises folder.
func officialExercises(t *testing.T) []Exercise {
	t.Helper()
	root, err := reference.Root()
	if err != nil {
		t.Fatal(err)
	}
	exs, err := Load(filepath.Join(root, "exercises"))
	if err != nil {
		t.Fatal(err)
	}
	return exs
}

// TestExerciseFilesOfEveryExercise: in each of the 19 exercises, the
// learner's files are the stubs, each with its reference solution beside it,
// and the files the grader always takes from the official folder are exactly
// these (a new shared file is a decision: add it here).
func TestExerciseFilesOfEveryExercise(t *testing.T) {
	shared := map[string][]string{
		"05-segment-size": {"pool.go"}, "06-best-fit": {"block.go"}, "07-split": {"block.go"},
		"08-merge": {"block.go"}, "09-stats": {"stats.go"}, "10-fragmentation": {"block.go"},
		"11-views-keep-alive": {"view.go"}, "12-tensor-pool": {"pool.go"}, "13-kv-block-table": {"kvcache.go"},
		"14-version-counter": {"version.go"}, "17-inplace-block": {"naive.go"}, "18-my-pool": {"errors.go"},
		"19-lower-the-peak": {"naive.go", "shape.go"},
	}
	exs := officialExercises(t)
	if len(exs) != 19 {
		t.Fatalf("%d exercises; want 19", len(exs))
	}
	for _, ex := range exs {
		f, err := ExerciseFiles(ex.Dir)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(f.Shared, shared[ex.Slug]) {
			t.Errorf("%s: shared files %q; want %q", ex.Slug, f.Shared, shared[ex.Slug])
		}
		if len(f.Learner) != len(f.Solutions) {
			t.Errorf("%s: stubs %q, solutions %q; want one solution per stub", ex.Slug, f.Learner, f.Solutions)
		}
		for _, l := range f.Learner {
			want := strings.TrimSuffix(l, ".go") + "_solution.go"
			if _, err := os.Stat(filepath.Join(ex.Dir, want)); err != nil {
				t.Errorf("%s: the stub %s has no %s beside it", ex.Slug, l, want)
			}
		}
		if len(f.Tests) == 0 {
			t.Errorf("%s: no tests", ex.Slug)
		}
	}
}

// TestCheckShared: the learner's code may not assign to, increment or take the
// address of a variable declared in a shared file (14-version-counter's
// ErrModifiedInPlace, which the tests compare with errors.Is: set to nil, a
// nil error would match it); using it is fine.
func TestCheckShared(t *testing.T) {
	var ex Exercise
	for _, e := range officialExercises(t) {
		if e.Slug == "14-version-counter" {
			ex = e
		}
	}
	for _, tc := range []struct{ src, want string }{
		{"package version\nfunc f() error { return ErrModifiedInPlace }\n", ""},
		{"package version\nfunc init() { ErrModifiedInPlace = nil }\n", "x.go:2: ErrModifiedInPlace is declared in a file of the exercise's"},
		{"package version\nvar p = &ErrModifiedInPlace\n", "x.go:2: ErrModifiedInPlace"},
		{"package version\nfunc init() { (ErrModifiedInPlace), _ = nil, 1 }\n", "x.go:2: ErrModifiedInPlace"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(tc.src), 0o644); err != nil {
			t.Fatal(err)
		}
		err := checkShared(ex, dir)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("checkShared(%q) = %v; want accepted", tc.src, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("checkShared(%q) = %v; want an error containing %q", tc.src, err, tc.want)
		}
	}
}

// TestAssemble: a learner's copy of 17-inplace-block is built from its own
// block.go and helper, the official naive.go (the copy's rewritten one is
// noted, not built) and the official tests (the copy's are ignored); a source
// file over MaxSourceBytes is refused.
func TestAssemble(t *testing.T) {
	var ex Exercise
	for _, e := range officialExercises(t) {
		if e.Slug == "17-inplace-block" {
			ex = e
		}
	}
	src := t.TempDir()
	for name, body := range map[string]string{"block.go": "package inplace // mine\n", "helper.go": "package inplace\n", "naive.go": "package inplace // rewritten\n", "block_test.go": "package inplace // mine\n"} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dst := filepath.Join(t.TempDir(), "pkg")
	notes, n, err := assemble(ex, src, dst)
	if err != nil || n != 2 || len(notes) != 1 || !strings.Contains(notes[0], "naive.go differs from the official copy") {
		t.Fatalf("assemble = %q, %d, %v; want 2 files of the learner's and a note on naive.go", notes, n, err)
	}
	for name, official := range map[string]bool{"block.go": false, "helper.go": false, "naive.go": true, "block_test.go": true} {
		got, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := os.ReadFile(filepath.Join(src, name))
		if official {
			want, _ = os.ReadFile(filepath.Join(ex.Dir, name))
		}
		if string(got) != string(want) {
			t.Errorf("%s built from the %s copy; want the %s one", name, map[bool]string{true: "learner's", false: "official"}[official], map[bool]string{true: "official", false: "learner's"}[official])
		}
	}
	if _, err := os.Stat(filepath.Join(dst, "block_solution.go")); err == nil {
		t.Error("the official solution was put beside the learner's code")
	}
	if err := os.WriteFile(filepath.Join(src, "big.go"), make([]byte, MaxSourceBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := assemble(ex, src, filepath.Join(t.TempDir(), "pkg")); err == nil || !strings.Contains(err.Error(), "big.go takes 1 MiB, over the 1 MiB") {
		t.Errorf("assemble of a 1 MiB + 1 byte file: %v; want it refused", err)
	}
}

// TestStudentRoot: a student's exercise folders are found in their folder, or
// in the workbook/exercises or exercises folder of a whole hand-in.
func TestStudentRoot(t *testing.T) {
	class := t.TempDir()
	for _, d := range []string{"a/03-view", "b/workbook/exercises/03-view", "b/exercises/03-view", "c/exercises/04-round-size", "d/notes"} {
		if err := os.MkdirAll(filepath.Join(class, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for st, want := range map[string]string{"a": "a", "b": "b/workbook/exercises", "c": "c/exercises", "d": "d"} {
		if got := studentRoot(filepath.Join(class, st)); got != filepath.Join(class, want) {
			t.Errorf("studentRoot(%s) = %s; want %s", st, got, filepath.Join(class, want))
		}
	}
}
