package workbook_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"memlab.dev/memlab/internal/workbook"
	"memlab.dev/memlab/internal/workbook/workbooktest"
)

// TestRunTestsStates runs the real tests of one exercise four ways in one go test
// call: as shipped, solved, solved with a bug, and not compiling.
func TestRunTestsStates(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	const slug = "05-segment-size"
	root := workbooktest.Module(t, slug)
	src := filepath.Join(root, slug)
	for _, s := range []string{"91-solved", "92-buggy", "93-broken"} {
		if err := os.CopyFS(filepath.Join(root, s), os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
		workbooktest.SwapInSolution(t, filepath.Join(root, s))
	}
	edit(t, filepath.Join(root, "92-buggy", "segment_solution.go"), "size <= SmallSize", "size < SmallSize")
	edit(t, filepath.Join(root, "93-broken", "segment_solution.go"), "return SmallPool, nil", "return SmallPool")
	reports, err := workbook.RunTests(context.Background(), root, []string{"./..."}, workbook.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		slug, state string
		passed      bool
		mention     string
	}{
		{slug, "not started", false, workbook.NotImplementedYet},
		{"91-solved", "passing", true, ""},
		{"92-buggy", "in progress", false, "PoolFor(1048576): want the small pool, got the large pool — exactly 1 MiB is still small"},
		{"93-broken", "does not build", false, "not enough return values"},
	}
	for _, tc := range tests {
		r := reports[tc.slug]
		if r == nil {
			t.Fatalf("no report for %s", tc.slug)
		}
		if got := workbook.State(r); !strings.HasPrefix(got, tc.state) || r.Passed() != tc.passed {
			t.Errorf("%s: State %q, Passed %v; want %q, %v", tc.slug, got, r.Passed(), tc.state, tc.passed)
		}
		var out bytes.Buffer
		workbook.WriteReport(&out, workbook.Exercise{Number: 5, Slug: tc.slug, Title: "T"}, r)
		if !strings.Contains(out.String(), tc.mention) {
			t.Errorf("%s: the report does not mention %q:\n%s", tc.slug, tc.mention, out.String())
		}
	}
}

// edit replaces old by new in the file at p, which must contain it.
func edit(t *testing.T, p, old, new string) {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(old)) {
		t.Fatalf("%s does not contain %q", p, old)
	}
	if err := os.WriteFile(p, bytes.Replace(data, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestGrade(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	const slug = "08-merge"
	root := workbooktest.Module(t, slug)
	exs, err := workbook.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	ex := exs[0]
	students := t.TempDir()
	// A student who solved it but whose own extra test fails: their tests are ignored.
	solved := filepath.Join(students, "alice", slug)
	// A student who gutted the official tests instead of solving: the official ones run.
	cheat := filepath.Join(students, "bob", slug)
	for _, d := range []string{solved, cheat} {
		if err := os.CopyFS(d, os.DirFS(ex.Dir)); err != nil {
			t.Fatal(err)
		}
	}
	workbooktest.SwapInSolution(t, solved)
	if err := os.WriteFile(filepath.Join(solved, "mine_test.go"), []byte("package merge\nimport \"testing\"\nfunc TestMine(t *testing.T) { t.Fatal(\"student test\") }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cheat, "merge_test.go"), []byte("package merge\nimport \"testing\"\nfunc TestA_Free(t *testing.T) {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A student who has not started: the stub stops each test at its first case.
	untouched := filepath.Join(students, "carol", slug)
	if err := os.CopyFS(untouched, os.DirFS(ex.Dir)); err != nil {
		t.Fatal(err)
	}
	subs := []workbook.Submission{{Exercise: ex, Dir: solved}, {Exercise: ex, Dir: cheat}, {Exercise: ex, Dir: untouched}}
	var results []workbook.Result
	for _, s := range subs {
		res, err := workbook.Grade(context.Background(), root, []workbook.Submission{s}, workbook.GradeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 1 || res[0].Report == nil {
			t.Fatalf("Grade(%s) = %+v; want one result with a report", s.Dir, res)
		}
		results = append(results, res[0])
	}
	full := 0
	for i, wantPassed := range []bool{true, false, false} {
		r := results[i]
		if r.Report.Passed() != wantPassed {
			t.Errorf("Grade(%s): Passed %v, want %v", subs[i].Dir, r.Report.Passed(), wantPassed)
		}
		for _, test := range r.Report.Tests {
			if test.Name == "TestMine" {
				t.Errorf("Grade(%s) ran the student's own test file", subs[i].Dir)
			}
		}
		pass, total := r.Score()
		if i == 0 {
			full = total
			if pass != total || total < 10 {
				t.Errorf("Grade of a solved copy: score %d/%d; want every official case (more than 10) passing", pass, total)
			}
			continue
		}
		if total != full || pass == total {
			t.Errorf("Grade(%s): score %d/%d; want a lower score out of the same %d cases as the solved copy — the total counts the official cases, not the ones that ran", subs[i].Dir, pass, total, full)
		}
	}
	if _, err := workbook.Grade(context.Background(), root, []workbook.Submission{{Exercise: ex, Dir: t.TempDir()}}, workbook.GradeOptions{}); err == nil {
		t.Error("Grade of an empty folder: want an error")
	}
	if _, err := workbook.Grade(context.Background(), root, nil, workbook.GradeOptions{}); err == nil {
		t.Error("Grade of nothing: want an error")
	}
}

// TestCopyAndCheckCopy: a learner's copy is made once and never overwritten, and
// CheckCopy runs the official tests against it: the stub is not started, the
// solution written into the copy passes.
func TestCopyAndCheckCopy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	const slug = "05-segment-size"
	root := workbooktest.Module(t, slug)
	exs, err := workbook.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	ex := exs[0]
	work := filepath.Join(t.TempDir(), "workbook", "exercises")
	dst, made, err := workbook.CopyStub(ex, work)
	if err != nil || !made || dst != filepath.Join(work, slug) {
		t.Fatalf("CopyStub = %q, %v, %v; want a new %s", dst, made, err, filepath.Join(work, slug))
	}
	if _, err := os.Stat(filepath.Join(work, "go.mod")); err != nil {
		t.Errorf("the copies' folder has no go.mod of its own, so go build ./... would compile them: %v", err)
	}
	for _, name := range []string{"segment_test.go", "segment_solution.go"} {
		if _, err := os.Stat(filepath.Join(dst, name)); err == nil {
			t.Errorf("the learner's copy holds %s", name)
		}
	}
	r, err := workbook.CheckCopy(context.Background(), root, ex, dst, workbook.RunOptions{})
	if err != nil || !r.NotStarted() {
		t.Fatalf("CheckCopy of the fresh copy: %v, state %q; want not started", err, workbook.State(r))
	}
	sol, err := os.ReadFile(filepath.Join(ex.Dir, "segment_solution.go"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, "segment_solution.go"), sol, 0o644); err != nil {
		t.Fatal(err)
	}
	workbooktest.SwapInSolution(t, dst)
	if _, made, err := workbook.CopyStub(ex, work); err != nil || made {
		t.Fatalf("CopyStub over an existing copy: made %v, %v; want it kept", made, err)
	}
	if _, err := os.Stat(filepath.Join(dst, "segment.go")); err == nil {
		t.Fatal("CopyStub overwrote the learner's copy")
	}
	r, err = workbook.CheckCopy(context.Background(), root, ex, dst, workbook.RunOptions{})
	if err != nil || !r.Passed() {
		t.Fatalf("CheckCopy of the solved copy: %v, state %q; want passing", err, workbook.State(r))
	}
}
