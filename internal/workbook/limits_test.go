package workbook_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"memlab.dev/memlab/internal/workbook"
	"memlab.dev/memlab/internal/workbook/workbooktest"
)

// The second adversarial round: a submission that rewrites a file the exercise
// shares with its solution (the answer key), one whose build is huge, and one
// that takes all the memory it can.

// forgedNaive returns a rewritten naive.go, the answer key, for package pkg:
// its function fn, taking x and the rest of params, makes two copies of x,
// releases one and answers with the other (a peak of two copies), and the
// file keeps the official release helper that the exercise's other files call.
func forgedNaive(pkg, fn, params string) string {
	return fmt.Sprintf(`package %s

import "memlab.dev/memlab/tensor"

func %s(%s) (*tensor.Tensor, error) {
	c, err := x.Clone()
	if err != nil {
		return nil, err
	}
	d, err := x.Clone()
	if err != nil {
		return nil, err
	}
	return c, d.Release()
}

func release(t *tensor.Tensor, err error) error {
	if rerr := t.Release(); err == nil {
		return rerr
	}
	return err
}
`, pkg, fn, params)
}

// cheat17 rewrites 17-inplace-block's naive.go, so that the tests compare the
// learner's Block with a copy of x, and answers with copies of x.
var cheat17 = map[string]string{
	"naive.go": forgedNaive("inplace", "NaiveBlock", "x, b *tensor.Tensor, s float64"),
	"block.go": `package inplace

import (
	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/tensor"
)

func Block(x, b *tensor.Tensor, s float64) (*tensor.Tensor, error)      { return x.Clone() }
func BlockTrain(x, b *tensor.Tensor, s float64) (*tensor.Tensor, error) { return x.Clone() }

func Saving(a *allocator.Allocator, x, b *tensor.Tensor, s float64) (naive, mine int64, err error) {
	measure := func(block func(x, b *tensor.Tensor, s float64) (*tensor.Tensor, error)) (int64, error) {
		a.ResetPeakMemoryStats()
		start := a.MemoryAllocated()
		out, err := block(x, b, s)
		if err != nil {
			return 0, err
		}
		return a.MaxMemoryAllocated() - start, out.Release()
	}
	if naive, err = measure(NaiveBlock); err != nil {
		return 0, 0, err
	}
	mine, err = measure(Block)
	return naive, mine, err
}
`,
}

// cheat19 rewrites 19-lower-the-peak's naive.go: NaiveForward returns a copy
// of x after peaking at two, and the learner's functions copy x.
var cheat19 = map[string]string{
	"naive.go": forgedNaive("peak", "NaiveForward", "x, w, bias *tensor.Tensor"),
	"forward.go": `package peak

import "memlab.dev/memlab/tensor"

func Forward(x, w, bias *tensor.Tensor) (*tensor.Tensor, error) { return x.Clone() }

func ForwardInto(out, x, w, bias *tensor.Tensor) error { return out.CopyFrom(x) }
`,
}

// cheatCopy returns a student's copy of the official exercise folder src (its
// stub, as "memlab exercises copy" makes it) with files overwritten.
func cheatCopy(t *testing.T, src string, files map[string]string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	for _, p := range append(globs(t, dst, "*_solution.go"), globs(t, dst, "*_test.go")...) {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dst, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func globs(t *testing.T, dir, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestGradeSharedFilesAreOfficial: rewriting naive.go, the answer key of
// 17-inplace-block and 19-lower-the-peak, passes every official test when the
// submission's naive.go is built (shown with a plain go test), and passes
// nothing graded: the grader builds the official naive.go and says so.
func TestGradeSharedFilesAreOfficial(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	root := workbooktest.Module(t, "17-inplace-block", "19-lower-the-peak")
	exs, err := workbook.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	cheats := []map[string]string{cheat17, cheat19}
	// The cheats are real: beside the official tests, with their own naive.go,
	// every test passes.
	var pkgs []string
	for i, ex := range exs {
		naked := filepath.Join(root, "9"+string(rune('0'+i))+"-naked")
		dir := cheatCopy(t, ex.Dir, cheats[i])
		if err := os.CopyFS(naked, os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
		for _, p := range globs(t, ex.Dir, "*_test.go") {
			data, err := os.ReadFile(p)
			if err == nil {
				err = os.WriteFile(filepath.Join(naked, filepath.Base(p)), data, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		pkgs = append(pkgs, "./"+filepath.Base(naked))
	}
	reports, err := workbook.RunTests(context.Background(), root, pkgs, workbook.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		if r := reports[strings.TrimPrefix(p, "./")]; r == nil || !r.Passed() {
			t.Fatalf("the cheat %s does not pass the official tests with its own naive.go (%q): the test shows nothing", p, workbook.State(r))
		}
	}
	g, err := workbook.NewGrader(context.Background(), root, workbook.GradeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for i, ex := range exs {
		res, err := g.Grade(context.Background(), workbook.Submission{Exercise: ex, Dir: cheatCopy(t, ex.Dir, cheats[i])})
		if err != nil {
			t.Fatal(err)
		}
		pass, total := res.Score()
		if res.Report.Passed() || pass == total {
			t.Errorf("%s: a rewritten naive.go graded %q, %d/%d; want the official naive.go built, and failing", ex.Slug, workbook.State(res.Report), pass, total)
		}
		if notes := strings.Join(res.Report.Notes, "\n"); !strings.Contains(notes, "naive.go differs from the official copy") {
			t.Errorf("%s: the report's notes %q do not say the submission's naive.go was replaced", ex.Slug, notes)
		}
	}
}

// bigBuild declares 1.8 GB of initialized data: a build that, unlimited, takes
// gigabytes of memory and disk.
const bigBuild = `package view

var big1 = [600_000_000]byte{1, 2, 3}
var big2 = [600_000_000]byte{4, 5, 6}
var big3 = [600_000_000]byte{7, 8, 9}

var sum = int(big1[0]) + int(big2[1]) + int(big3[2])

func init() { println(sum) }
`

// touch3GiB allocates and touches 3 GiB in a package-level initializer,
// importing nothing.
const touch3GiB = `package view

var big = func() []byte {
	b := make([]byte, 3<<30)
	for i := range b {
		b[i] = 1
	}
	return b
}()

func Big() int { return len(big) }
`

// bigStatic is a 1.5 GB bss, touched at init.
const bigStatic = `package view

var big [1_500_000_000]byte

func init() {
	for i := range big {
		big[i] = 1
	}
}
`

// TestGradeBuildLimits: the build of a submission declaring 1.8 GB of data
// runs in the sandbox under the time and memory limits: with --timeout 5s it
// fails within the limit, saying which limit it went over, and leaves nothing
// in the instructor's build cache nor in TMPDIR.
func TestGradeBuildLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	root, sub := attackModule(t, bigBuild)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	g, err := workbook.NewGrader(context.Background(), root, workbook.GradeOptions{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// The reference solution's build and run first, so that the time below is
	// the submission's alone.
	honest := workbook.Submission{Exercise: sub.Exercise, Dir: sub.Exercise.Dir}
	if _, err := g.Grade(context.Background(), honest); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := g.Grade(context.Background(), sub)
	took := time.Since(start)
	g.Close()
	if err != nil {
		t.Fatal(err)
	}
	r := res.Report
	out := strings.Join(r.BuildOutput, "\n")
	if r.Passed() || !r.BuildFailed || r.Limit == "" || !strings.Contains(out, "stopped by the grader: the build") {
		t.Errorf("1.8 GB of data: state %q, limit %q, build output %q; want the build stopped at a limit, saying so", workbook.State(r), r.Limit, out)
	}
	if took > 5*time.Second+3*time.Second {
		t.Errorf("grading the 1.8 GB build took %v; want it stopped within the 5s limit", took)
	}
	if big := bigFilesSince(t, goCache(t), start, 64<<20); len(big) > 0 {
		t.Errorf("the submission's build left files of 64 MiB or more in the instructor's build cache: %v", big)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the grader left %d entries in TMPDIR: %v", len(left), left)
	}
}

// TestGradeMemoryLimit: a submission that touches 3 GiB in a package-level
// initializer, or declares a 1.5 GB bss, is stopped at the memory limit and
// graded as failing, saying so.
func TestGradeMemoryLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	for _, tc := range []struct{ name, src, reason string }{
		{"heap", touch3GiB, "the test run went over the memory limit of 1 GiB"},
		{"static", bigStatic, "its static data takes 1.43 GiB, over the memory limit of 1 GiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, sub := attackModule(t, tc.src)
			r := gradeOne(t, root, sub, workbook.GradeOptions{Memory: 1 << 30})
			out := strings.Join(r.Report.Output, "\n")
			if r.Report.Passed() || r.Report.Limit != "memory limit" || !strings.Contains(out, tc.reason) {
				t.Errorf("%s: state %q, limit %q, output %.400q; want failing at the memory limit: %q", tc.name, workbook.State(r.Report), r.Report.Limit, out, tc.reason)
			}
		})
	}
}

// goCache returns the go command's build cache folder.
func goCache(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// bigFilesSince returns the files under dir of at least size bytes modified
// at or after since.
func bigFilesSince(t *testing.T, dir string, since time.Time, size int64) []string {
	t.Helper()
	var big []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if info, err := d.Info(); err == nil && info.Size() >= size && !info.ModTime().Before(since) {
			big = append(big, p)
		}
		return nil
	})
	return big
}
