package workbook_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"memlab.dev/memlab/internal/workbook"
	"memlab.dev/memlab/internal/workbook/workbooktest"
)

// The attacks an adversarial run found on the grader: each submission is the
// untouched stub of 03-view plus one file of the attacker's.

// forgeSrc prints go test's framing from init(), both plain and with test2json's
// ^V marker, claiming that every official test passed.
const forgeSrc = `package view

import (
	"fmt"
	"os"
)

func init() {
	for _, name := range []string{%s} {
		for _, m := range []string{"", "\x16"} {
			fmt.Printf("%%s=== RUN   %%s\n%%s--- PASS: %%s (0.00s)\n", m, name, m, name)
			fmt.Fprintf(os.Stdout, "%%s=== RUN   %%s/case\n%%s--- PASS: %%s/case (0.00s)\n", m, name, m, name)
		}
	}
	fmt.Println("\x16PASS")
	fmt.Println("PASS")
	fmt.Println("ok  \tmemlab.dev/memlab/exercises/03-view\t0.01s")
}
`

// tamperSrc rewrites every view_test.go it can reach: the copy beside it, the
// ones found from the grader's working folder upward (through /proc), and the
// instructor's official file, whose path it is given.
const tamperSrc = `package view

import (
	"os"
	"path/filepath"
	"strings"
)

const fake = "package view\nimport \"testing\"\nfunc TestA_Gutted(t *testing.T) {}\n"

func init() {
	targets := []string{"view_test.go", %q}
	for pid := "self"; pid != "" && pid != "0"; {
		status, err := os.ReadFile("/proc/" + pid + "/status")
		if err != nil {
			break
		}
		if cwd, err := os.Readlink("/proc/" + pid + "/cwd"); err == nil {
			for d := cwd; d != "/" && d != "."; d = filepath.Dir(d) {
				targets = append(targets, filepath.Join(d, "03-view", "view_test.go"), filepath.Join(d, "view_test.go"))
			}
		}
		pid = ""
		for _, l := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(l, "PPid:") {
				pid = strings.TrimSpace(strings.TrimPrefix(l, "PPid:"))
			}
		}
	}
	for _, t := range targets {
		if _, err := os.Stat(t); err == nil {
			os.WriteFile(t, []byte(fake), 0o644)
		}
	}
}
`

// sleepSrc never lets the tests start.
const sleepSrc = `package view

import "time"

func init() { time.Sleep(time.Hour) }
`

// floodSrc writes 200 MB from init() with the builtin println, which the
// source check allows (it goes to standard error).
const floodSrc = `package view

func init() {
	line := "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456"
	for i := 0; i < 2000000; i++ {
		println(line)
	}
}
`

// attackModule returns a scratch exercises module holding 03-view and a
// student's copy of its stub with the file attack.go added.
func attackModule(t *testing.T, attack string) (root string, sub workbook.Submission) {
	t.Helper()
	root = workbooktest.Module(t, "03-view")
	exs, err := workbook.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	student := filepath.Join(t.TempDir(), "03-view")
	if err := os.CopyFS(student, os.DirFS(exs[0].Dir)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(student, "attack.go"), []byte(attack), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, workbook.Submission{Exercise: exs[0], Dir: student}
}

// officialTests returns the top-level test names of 03-view's official tests.
func officialTests(t *testing.T, dir string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "view_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, "func Test"); ok {
			name, _, _ := strings.Cut(rest, "(")
			names = append(names, "Test"+name)
		}
	}
	if len(names) == 0 {
		t.Fatal("no tests found in view_test.go")
	}
	return names
}

func gradeOne(t *testing.T, root string, sub workbook.Submission, opts workbook.GradeOptions) workbook.Result {
	t.Helper()
	res, err := workbook.Grade(context.Background(), root, []workbook.Submission{sub}, opts)
	if err != nil {
		t.Fatalf("Grade: %v", err)
	}
	if len(res) != 1 || res[0].Report == nil {
		t.Fatalf("Grade = %+v; want one result with a report", res)
	}
	return res[0]
}

// TestGradeForgedFraming: printing go test's framing does not earn a grade. The
// source check refuses the submission; without it, the sandboxed run reads the
// forged lines as duplicates of the real outcomes and voids the grade.
func TestGradeForgedFraming(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	root, sub := attackModule(t, "")
	quoted := []string{}
	for _, n := range officialTests(t, sub.Exercise.Dir) {
		quoted = append(quoted, fmt.Sprintf("%q", n))
	}
	if err := os.WriteFile(filepath.Join(sub.Dir, "attack.go"), []byte(fmt.Sprintf(forgeSrc, strings.Join(quoted, ", "))), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []workbook.GradeOptions{{}, {SkipSourceCheck: true}} {
		r := gradeOne(t, root, sub, opts)
		pass, total := r.Score()
		if r.Report.Passed() || pass != 0 || r.Report.Rejected == "" {
			t.Errorf("SkipSourceCheck=%v: forged framing graded %q, %d/%d (rejected: %q); want rejected, 0 cases",
				opts.SkipSourceCheck, workbook.State(r.Report), pass, total, r.Report.Rejected)
		}
	}
}

// TestGradeTamperWithOfficialTests: a submission that rewrites the official
// view_test.go (beside it, upward from the grader's folder, and at its known
// path) changes nothing, and the next, unimplemented, submission still fails.
func TestGradeTamperWithOfficialTests(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	root, sub := attackModule(t, "")
	official := filepath.Join(sub.Exercise.Dir, "view_test.go")
	if err := os.WriteFile(filepath.Join(sub.Dir, "attack.go"), []byte(fmt.Sprintf(tamperSrc, official)), 0o644); err != nil {
		t.Fatal(err)
	}
	before := fileHash(t, official)
	r := gradeOne(t, root, sub, workbook.GradeOptions{})
	if r.Report.Rejected == "" || !strings.Contains(r.Report.Rejected, `"os"`) {
		t.Errorf("tampering submission: rejected %q; want it refused for importing os", r.Report.Rejected)
	}
	r = gradeOne(t, root, sub, workbook.GradeOptions{SkipSourceCheck: true})
	if r.Report.Passed() {
		t.Error("tampering submission graded passing")
	}
	if fileHash(t, official) != before {
		t.Fatal("the sandboxed submission rewrote the official view_test.go")
	}
	if err := os.Remove(filepath.Join(sub.Dir, "attack.go")); err != nil {
		t.Fatal(err)
	}
	if r := gradeOne(t, root, sub, workbook.GradeOptions{}); r.Report.Passed() || !r.Report.NotStarted() {
		t.Errorf("the next, unimplemented, submission: %q; want not started", workbook.State(r.Report))
	}
	// Without the sandbox and the source check the attack works; the hash check
	// then stops grading instead of reporting a forged score.
	if err := os.WriteFile(filepath.Join(sub.Dir, "attack.go"), []byte(fmt.Sprintf(tamperSrc, official)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := workbook.Grade(context.Background(), root, []workbook.Submission{sub}, workbook.GradeOptions{Sandbox: "none", SkipSourceCheck: true})
	if err == nil || !strings.Contains(err.Error(), "changed") {
		t.Errorf("unsandboxed tampering: Grade error %v; want one saying the official tests changed", err)
	}
}

// TestGradeLimits: a submission that sleeps in init() is stopped at the time
// limit, one that writes 200 MB at the output limit; both fail, and the grader
// leaves no temporary folder behind.
func TestGradeLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	for _, tc := range []struct {
		name, src, reason string
		opts              workbook.GradeOptions
	}{
		{"sleep", sleepSrc, "time limit", workbook.GradeOptions{Timeout: 3 * time.Second}},
		{"flood", floodSrc, "output limit", workbook.GradeOptions{MaxOutput: 1 << 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, sub := attackModule(t, tc.src)
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			r := gradeOne(t, root, sub, tc.opts)
			out := strings.Join(r.Report.Output, "\n")
			if r.Report.Passed() || !strings.Contains(out, tc.reason) {
				t.Errorf("%s: state %q, output %.300q; want failing, stopped at the %s", tc.name, workbook.State(r.Report), out, tc.reason)
			}
			if len(out) > 1<<20+4096 {
				t.Errorf("%s: the report holds %d bytes of output; want at most the 1 MiB limit", tc.name, len(out))
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("%s: the grader left %d entries in TMPDIR: %v", tc.name, len(left), left)
			}
		})
	}
}

func fileHash(t *testing.T, p string) [32]byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(data)
}

func TestCheckSubmission(t *testing.T) {
	for _, tc := range []struct {
		src, want string // want "" means accepted
	}{
		{"package p\nimport (\"fmt\"; \"strings\")\nfunc F() string { return fmt.Sprintf(\"%d\", 1) + strings.Repeat(\"a\", 2) }\n", ""},
		{"package p\nimport \"memlab.dev/memlab/tensor\"\nvar _ tensor.Layout\nfunc F() { println(1) }\n", ""},
		{"package p\nimport \"os\"\nvar _ = os.Stdout\n", `import "os" is not allowed`},
		{"package p\nimport \"unsafe\"\nvar _ unsafe.Pointer\n", `import "unsafe" is not allowed`},
		{"package p\nimport \"C\"\n", `import "C" is not allowed`},
		{"package p\nimport \"fmt\"\nfunc init() { fmt.Println(\"--- PASS\") }\n", "fmt.Println writes to standard output"},
		{"package p\nimport f \"fmt\"\nvar p = f.Printf\n", "f.Printf writes to standard output"},
		{"package p\nimport . \"fmt\"\n", "dot import"},
		{"package p\nimport _ \"unsafe\"\n//go:linkname x runtime.x\nvar x int\n", "//go:linkname"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte(tc.src), 0o644); err != nil {
			t.Fatal(err)
		}
		err := workbook.CheckSubmission(dir)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckSubmission(%q) = %v; want accepted", tc.src, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("CheckSubmission(%q) = %v; want an error containing %q", tc.src, err, tc.want)
		}
	}
}

// TestReferenceSolutionsPassThePolicy: every official stub and reference
// solution keeps to the grading policy, so an honest answer is never rejected.
func TestReferenceSolutionsPassThePolicy(t *testing.T) {
	root := workbooktest.Exercises(t)
	exs, err := workbook.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range exs {
		if err := workbook.CheckSubmission(ex.Dir); err != nil {
			t.Errorf("%s's stub breaks the grading policy: %v", ex.Slug, err)
		}
		solved := filepath.Join(t.TempDir(), ex.Slug)
		if err := os.CopyFS(solved, os.DirFS(ex.Dir)); err != nil {
			t.Fatal(err)
		}
		workbooktest.SwapInSolution(t, solved)
		if err := workbook.CheckSubmission(solved); err != nil {
			t.Errorf("%s's reference solution breaks the grading policy: %v", ex.Slug, err)
		}
	}
}

// TestGradeInterrupted: when the grader is interrupted (its context cancelled,
// as SIGINT or SIGTERM do in memlab exercises grade) while a submission sleeps,
// Grade returns an error, kills the submission's processes (the sandbox and
// the test binary inside it) and removes its temporary folders.
func TestGradeInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	root, sub := attackModule(t, sleepSrc)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	g, err := workbook.NewGrader(context.Background(), root, workbook.GradeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The reference solution runs first, so that the test binary found below
	// is the sleeping submission's.
	if _, err := g.Grade(context.Background(), workbook.Submission{Exercise: sub.Exercise, Dir: sub.Exercise.Dir}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := g.Grade(ctx, sub)
		g.Close()
		done <- err
	}()
	// Interrupt once the submission's test binary is running in its sandbox.
	var running map[int]string
	for deadline := time.Now().Add(2 * time.Minute); len(running) < 2; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the submission's test binary did not start within 2 minutes")
		}
		running = processesUnder(t, tmp)
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("an interrupted Grade returned no error")
	}
	var left []string
	for pid, cmdline := range running {
		if now, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && string(now) == cmdline {
			left = append(left, strings.ReplaceAll(cmdline, "\x00", " "))
		}
	}
	if len(left) > 0 {
		t.Errorf("processes of the interrupted run are still alive: %v", left)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the interrupted grader left %d entries in TMPDIR: %v", len(left), left)
	}
}

// processesUnder returns the command lines (NUL-separated), by PID, of the
// live processes that run a test binary (with -test.v=test2json, not the go
// command building it) with an argument under dir, such as the sandbox
// started on a folder of dir, and of all their descendants, such as the test
// binary inside the sandbox.
func processesUnder(t *testing.T, dir string) map[int]string {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*")
	parent, cmd := map[int]int{}, map[int]string{}
	found := map[int]string{}
	for _, p := range procs {
		pid, err := strconv.Atoi(filepath.Base(p))
		if err != nil {
			continue
		}
		data, err := os.ReadFile(p + "/cmdline")
		if err != nil || len(data) == 0 {
			continue
		}
		cmd[pid] = string(data)
		if status, err := os.ReadFile(p + "/status"); err == nil {
			for _, l := range strings.Split(string(status), "\n") {
				if v, ok := strings.CutPrefix(l, "PPid:"); ok {
					parent[pid], _ = strconv.Atoi(strings.TrimSpace(v))
				}
			}
		}
		if !strings.Contains(string(data), "-test.v=test2json") {
			continue
		}
		for _, a := range strings.Split(string(data), "\x00") {
			if strings.HasPrefix(a, dir+string(filepath.Separator)) {
				found[pid] = string(data)
				break
			}
		}
	}
	for grew := true; grew; {
		grew = false
		for pid, ppid := range parent {
			if _, ok := found[ppid]; ok {
				if _, ok := found[pid]; !ok {
					found[pid] = cmd[pid]
					grew = true
				}
			}
		}
	}
	return found
}
