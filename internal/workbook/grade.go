package workbook

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Submission is a student's copy of one exercise folder.
type Submission struct {
	Exercise Exercise // the official exercise it answers
	Dir      string   // the folder holding the student's .go files
}

// Result is the grade of one submission.
type Result struct {
	Exercise Exercise
	Report   *Report // the official tests run against the student's code
	Total    int     // cases the official tests hold when every function works
}

// Score returns the number of passing cases and the total to count them against.
// A rejected report scores nothing.
func (r Result) Score() (passed, total int) {
	pass, fail, skip := r.Report.Counts()
	if r.Report.Rejected != "" {
		return 0, max(r.Total, pass+fail+skip)
	}
	return pass, max(r.Total, pass+fail+skip)
}

// Grade runs the official, unmodified tests of each submission against the
// student's code and returns the results in the order of subs. root is the
// official exercises module. It is NewGrader, Grader.Grade for each submission
// in turn, and Grader.Close; a submission that hands in no .go file is an error.
//
// Threat model: the student's code runs inside the test binary, in the same
// process as the official tests, so nothing that process can write is trusted
// as such. Grade
//
//   - builds from the submission only the learner's files (ExerciseFiles): the
//     files the exercise shares with its solution (the naive version a test
//     compares with, the types, the sentinel errors) and the tests always come
//     from the official folder, and the learner's code may not assign to the
//     shared files' variables;
//   - checks the submission's source (CheckSubmission): only pure packages may
//     be imported and fmt's printing to standard output is refused, so the
//     student's code has no way to write to the binary's standard output;
//   - builds the tests (go test -c, cgo off: no student code runs) inside the
//     sandbox, under the same time and memory limits as the run, with a Go
//     build cache of its own that reads the instructor's cache and is removed
//     afterwards (nothing the submission compiles reaches the instructor's
//     cache);
//   - runs the binary with -test.v=test2json in the sandbox (bubblewrap: no
//     network, no writable file of the instructor's, no view of other
//     processes; see GradeOptions.Sandbox), with a time, a memory and an output
//     limit; a run that hits one is killed with its whole process group and
//     graded as failing, with the limit it went over;
//   - reads the results only from the binary's standard output, where the
//     testing package frames them; what the student's code can print (the
//     builtin println, panics) goes to standard error and is shown, never parsed;
//     a test or case reported twice, or a stream that disagrees with the
//     binary's exit status, voids the grade (Report.Rejected);
//   - verifies after every run that the official test files, in the exercises
//     folder and in the scratch copy, are byte-identical (SHA-256) to what they
//     were before, and stops with an error if not.
//
// The scratch modules live in a temporary folder that is removed when Grade
// returns, also when ctx is cancelled. The total of each exercise is the number
// of cases its reference solution passes, run once per exercise, so that a stub
// that stops a test early does not shrink it.
func Grade(ctx context.Context, root string, subs []Submission, opts GradeOptions) ([]Result, error) {
	if len(subs) == 0 {
		return nil, fmt.Errorf("workbook: nothing to grade")
	}
	g, err := NewGrader(ctx, root, opts)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	results := make([]Result, len(subs))
	for i, s := range subs {
		if results[i], err = g.Grade(ctx, s); err != nil {
			return nil, err
		}
	}
	return results, nil
}

// ErrNothingHandedIn is returned (wrapped) by Grader.Grade when the
// submission's folder holds no .go file of the learner's.
var ErrNothingHandedIn = errors.New("workbook: nothing handed in")

// ErrTestsChanged is returned (wrapped) by Grader.Grade when the official test
// files changed while a submission was graded; no grade after it can be
// trusted.
var ErrTestsChanged = errors.New("workbook: the official tests changed")

// Grader grades submissions against one official exercises folder. Its Grade
// may be called from several goroutines at once: each submission is built and
// run in a folder and a sandbox of its own.
type Grader struct {
	root       string
	opts       GradeOptions
	tmp        string // removed by Close
	gomod      []byte // the scratch modules' go.mod (replace directories made absolute)
	gosum      []byte // nil if the module has none
	seed       string // the instructor's Go build cache: read by submissions' builds, written by official ones
	goroot     string
	gomodcache string
	ro         []string // host folders the build reads: GOROOT, GOMODCACHE, replace targets
	prog       string   // the folder holding the cacheprog binary
	seq        atomic.Int64

	mu     sync.Mutex
	totals map[string]*total
}

// total is the number of cases an exercise's reference solution passes,
// worked out once.
type total struct {
	once sync.Once
	n    int
	err  error
}

// Paths of the build and run sandboxes (bubblewrap); fixed, so that a build's
// cache keys are the same in every submission and hit the official builds'.
const (
	sandboxModule = "/grade/module"
	sandboxOut    = "/grade/out"
	sandboxSeed   = "/grade/seed"
	sandboxProg   = "/grade/prog"
)

// officialBuildTimeout bounds a build of official code (a reference solution),
// which may compile the standard library the first time.
const officialBuildTimeout = 30 * time.Minute

//go:embed cacheprog/main.go
var cacheprogSource []byte

// NewGrader prepares grading against the exercises module at root: it checks
// that the sandbox and prlimit are there, finds the Go toolchain's folders and
// builds the build-cache helper (cacheprog). Close removes what it made.
func NewGrader(ctx context.Context, root string, opts GradeOptions) (*Grader, error) {
	if opts.Sandbox == "" || opts.Sandbox == "bwrap" {
		if _, err := exec.LookPath("bwrap"); err != nil {
			return nil, ErrNoSandbox
		}
	} else if opts.Sandbox != "none" {
		return nil, fmt.Errorf("workbook: unknown sandbox %q (want bwrap or none)", opts.Sandbox)
	}
	if _, err := exec.LookPath("prlimit"); err != nil {
		return nil, fmt.Errorf("workbook: prlimit (util-linux) is not installed; the grader sets a submission's memory limit with it")
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, fmt.Errorf("workbook: %w", err)
	}
	g := &Grader{root: root, opts: opts, gomod: absReplace(gomod, root), totals: map[string]*total{}}
	if data, err := os.ReadFile(filepath.Join(root, "go.sum")); err == nil {
		g.gosum = data
	}
	env, err := goEnvVars(ctx, "GOROOT", "GOMODCACHE", "GOCACHE")
	if err != nil {
		return nil, err
	}
	g.goroot, g.seed = env[0], env[2]
	if g.seed == "" || g.seed == "off" {
		return nil, fmt.Errorf("workbook: the Go build cache is off (GOCACHE=%q): the grader needs one", g.seed)
	}
	if err := os.MkdirAll(g.seed, 0o755); err != nil {
		return nil, fmt.Errorf("workbook: %w", err)
	}
	g.ro, g.gomodcache = []string{g.goroot}, env[1]
	if g.gomodcache != "" {
		g.ro = append(g.ro, g.gomodcache)
	}
	g.ro = append(g.ro, replaceDirs(g.gomod)...)
	if g.tmp, err = os.MkdirTemp("", "memlab-grade-"); err != nil {
		return nil, fmt.Errorf("workbook: %w", err)
	}
	if err := g.buildCacheprog(ctx); err != nil {
		g.Close()
		return nil, err
	}
	return g, nil
}

// Close removes the grader's temporary folders.
func (g *Grader) Close() error {
	return os.RemoveAll(g.tmp)
}

// buildCacheprog compiles the embedded cacheprog (standard library only) into
// g.prog, with the instructor's own toolchain and cache: it is official code.
func (g *Grader) buildCacheprog(ctx context.Context) error {
	src := filepath.Join(g.tmp, "cacheprog-src")
	g.prog = filepath.Join(g.tmp, "prog")
	for _, d := range []string{src, g.prog} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("workbook: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module cacheprog\n\ngo 1.24\n"), 0o644); err != nil {
		return fmt.Errorf("workbook: %w", err)
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), cacheprogSource, 0o644); err != nil {
		return fmt.Errorf("workbook: %w", err)
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", filepath.Join(g.prog, "cacheprog"), ".")
	cmd.Dir = src
	env, err := goEnv(g.tmp)
	if err != nil {
		return err
	}
	cmd.Env = append(env, "GOWORK=off", "GOFLAGS=", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("workbook: building the grader's cache helper: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Grade grades one submission: it builds the official tests against the
// learner's files of sub.Dir and runs them, sandboxed and limited. A
// submission with no .go file to grade is ErrNothingHandedIn.
func (g *Grader) Grade(ctx context.Context, sub Submission) (Result, error) {
	ex := sub.Exercise
	res := Result{Exercise: ex}
	n, err := g.total(ctx, ex)
	if err != nil {
		return res, err
	}
	res.Total = n
	ws, err := g.workspace(ex)
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(ws)
	pkg := filepath.Join(ws, "module", ex.Slug)
	notes, handed, err := assemble(ex, sub.Dir, pkg)
	var big *tooBigError
	if errors.As(err, &big) {
		res.Report = &Report{Slug: ex.Slug, Status: Fail, Rejected: big.Error()}
		return res, nil
	}
	if err != nil {
		return res, err
	}
	if handed == 0 {
		return res, fmt.Errorf("%w: %s holds no .go files to grade for exercise %s", ErrNothingHandedIn, sub.Dir, ex.Slug)
	}
	if !g.opts.SkipSourceCheck {
		err := CheckSubmission(pkg)
		if err == nil {
			err = checkShared(ex, pkg)
		}
		if err != nil {
			res.Report = &Report{Slug: ex.Slug, Status: Fail, Rejected: err.Error(), Notes: notes}
			return res, nil
		}
	}
	official, err := hashTests(ex.Dir)
	if err != nil {
		return res, err
	}
	copied, err := hashTests(pkg)
	if err != nil {
		return res, err
	}
	r, err := g.buildAndRun(ctx, ws, ex.Slug, false)
	if err != nil {
		return res, err
	}
	for dir, want := range map[string]string{ex.Dir: official, pkg: copied} {
		got, err := hashTests(dir)
		if err != nil || got != want {
			return res, fmt.Errorf("%w: in %s, while %s was graded (%v): grading stopped; restore them (git checkout) before grading again", ErrTestsChanged, dir, sub.Dir, err)
		}
	}
	r.Notes = append(notes, r.Notes...)
	res.Report = r
	return res, nil
}

// total returns the number of cases exercise ex's reference solution passes
// (0 if it has none, or it does not pass), building and running it once per
// Grader. Its build is official code and fills the instructor's build cache,
// which the submissions' builds then read.
func (g *Grader) total(ctx context.Context, ex Exercise) (int, error) {
	g.mu.Lock()
	t, ok := g.totals[ex.Slug]
	if !ok {
		t = &total{}
		g.totals[ex.Slug] = t
	}
	g.mu.Unlock()
	t.once.Do(func() {
		ws, err := g.workspace(ex)
		if err != nil {
			t.err = err
			return
		}
		defer os.RemoveAll(ws)
		pkg := filepath.Join(ws, "module", ex.Slug)
		if err := os.CopyFS(pkg, os.DirFS(ex.Dir)); err != nil {
			t.err = fmt.Errorf("workbook: %w", err)
			return
		}
		if err := SwapInSolution(pkg); err != nil {
			if !errors.Is(err, ErrNoSolution) {
				t.err = err
			}
			return
		}
		r, err := g.buildAndRun(ctx, ws, ex.Slug, true)
		if err != nil {
			t.err = err
			return
		}
		if r.Passed() {
			t.n, _, _ = r.Counts()
		}
	})
	if t.err != nil && ctx.Err() == nil {
		// An interrupted run may be retried by another call; a real failure not.
		return 0, t.err
	}
	if ctx.Err() != nil {
		return 0, fmt.Errorf("workbook: grading %s: %w", ex.Slug, ctx.Err())
	}
	return t.n, nil
}

// workspace makes a fresh folder for one build: module/ (the scratch module's
// go.mod, go.sum and internal/; the caller fills module/<slug>) and out/ (the
// test binary, the build's own cache and temporary files).
func (g *Grader) workspace(ex Exercise) (string, error) {
	ws := filepath.Join(g.tmp, fmt.Sprintf("s%d", g.seq.Add(1)))
	mod := filepath.Join(ws, "module")
	for _, d := range []string{mod, filepath.Join(ws, "out", "gocache"), filepath.Join(ws, "out", "gotmp"), filepath.Join(ws, "out", "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", fmt.Errorf("workbook: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), g.gomod, 0o644); err != nil {
		return "", fmt.Errorf("workbook: %w", err)
	}
	if g.gosum != nil {
		if err := os.WriteFile(filepath.Join(mod, "go.sum"), g.gosum, 0o644); err != nil {
			return "", fmt.Errorf("workbook: %w", err)
		}
	}
	if err := os.CopyFS(filepath.Join(mod, "internal"), os.DirFS(filepath.Join(g.root, "internal"))); err != nil {
		return "", fmt.Errorf("workbook: %w", err)
	}
	return ws, nil
}

// buildAndRun builds the tests of the package slug of the workspace ws's
// module and runs them, and returns the report. official builds (the reference
// solutions) write the instructor's build cache and have no memory limit;
// a submission's build reads that cache through cacheprog and writes its own.
func (g *Grader) buildAndRun(ctx context.Context, ws, slug string, official bool) (*Report, error) {
	v := g.view(ws)
	bin := v.out + "/pkg.test"
	gocache := v.out + "/gocache"
	env := []string{
		"PATH=" + g.goroot + "/bin:/usr/bin:/bin", "HOME=" + v.home, "GOROOT=" + g.goroot,
		"GOTMPDIR=" + v.out + "/gotmp", "GOFLAGS=-mod=readonly", "GOPROXY=off", "GOSUMDB=off",
		"GOTOOLCHAIN=local", "GOWORK=off", "GOENV=off", "GOTELEMETRY=off",
	}
	if g.gomodcache != "" {
		env = append(env, "GOMODCACHE="+g.gomodcache)
	}
	if !g.opts.Race {
		env = append(env, "CGO_ENABLED=0")
	}
	mounts := []mount{{host: filepath.Join(ws, "module"), at: v.module}, {host: filepath.Join(ws, "out"), at: v.out, rw: true}}
	build := job{what: "the build", dir: v.module, timeout: g.opts.timeout(), memory: g.opts.memory()}
	if official {
		env = append(env, "GOCACHE="+v.seed)
		mounts = append(mounts, mount{host: g.seed, at: v.seed, rw: true})
		build.timeout, build.memory = officialBuildTimeout, 0
	} else {
		env = append(env, "GOCACHE="+gocache, "GOCACHEPROG="+v.prog+"/cacheprog "+v.seed+" "+gocache)
		mounts = append(mounts, mount{host: g.seed, at: v.seed}, mount{host: g.prog, at: v.prog})
	}
	for _, d := range g.ro {
		mounts = append(mounts, mount{host: d, at: d})
	}
	// -s -w: no symbol table nor DWARF, which tracebacks do not need (they
	// read pclntab); a third less work for the linker, the build's largest step.
	argv := []string{g.goroot + "/bin/go", "test", "-c", "-ldflags=-s -w", "-o", bin}
	if g.opts.Race {
		argv = append(argv, "-race")
	}
	build.argv, build.env, build.mounts = append(argv, "./"+slug), env, mounts
	t0 := time.Now()
	res, err := runJob(ctx, g.opts, build)
	if err != nil {
		return nil, err
	}
	buildTime := time.Since(t0)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("workbook: grading %s: %w", slug, ctx.Err())
	}
	hostBin := filepath.Join(ws, "out", "pkg.test")
	if res.stopped != "" || res.exitCode != 0 {
		r := &Report{Slug: slug, Status: Fail, BuildFailed: true, Limit: res.limit, Build: buildTime}
		for _, l := range strings.Split(strings.TrimRight(string(res.stdout)+string(res.stderr), "\n"), "\n") {
			if l != "" && !strings.HasPrefix(l, "# ") && len(r.BuildOutput) < 200 {
				r.BuildOutput = append(r.BuildOutput, l)
			}
		}
		if res.stopped != "" {
			r.BuildOutput = append(r.BuildOutput, "stopped by the grader: "+res.stopped)
		}
		return r, nil
	}
	if _, err := os.Stat(hostBin); err != nil {
		return &Report{Slug: slug, Status: Fail, BuildFailed: true, BuildOutput: []string{"go test -c wrote no test binary (no test files?)"}}, nil
	}
	if mem := g.opts.memory(); !official {
		if static, err := staticData(hostBin); err != nil {
			return nil, err
		} else if static > mem {
			return &Report{Slug: slug, Status: Fail, Limit: "memory limit",
				Output: []string{fmt.Sprintf("stopped by the grader: its static data takes %s, over the memory limit of %s", byteSize(static), byteSize(mem))}}, nil
		}
	}
	args := []string{bin, "-test.v=test2json", "-test.count=1", "-test.timeout=" + (g.opts.timeout() + time.Minute).String()}
	run := job{what: "the test run", argv: args, dir: v.module + "/" + slug, timeout: g.opts.timeout(), memory: g.opts.memory(),
		env:    []string{"TMPDIR=/tmp", "HOME=" + v.home, "PATH=/usr/bin:/bin"},
		mounts: []mount{{host: filepath.Join(ws, "module"), at: v.module}, {host: filepath.Join(ws, "out"), at: v.out}}}
	t0 = time.Now()
	res, err = runJob(ctx, g.opts, run)
	if err != nil {
		return nil, err
	}
	runTime := time.Since(t0)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("workbook: grading %s: %w", slug, ctx.Err())
	}
	r, err := g.report(ctx, ws, slug, res)
	if err != nil {
		return nil, err
	}
	r.Build, r.Run = buildTime, runTime
	return r, nil
}

// view is where the folders of a workspace are, as its build and run see them.
type view struct{ module, out, home, seed, prog string }

func (g *Grader) view(ws string) view {
	if g.opts.Sandbox == "none" {
		out := filepath.Join(ws, "out")
		return view{module: filepath.Join(ws, "module"), out: out, home: filepath.Join(out, "home"), seed: g.seed, prog: g.prog}
	}
	return view{module: sandboxModule, out: sandboxOut, home: "/tmp", seed: sandboxSeed, prog: sandboxProg}
}

// report reads the test binary's output in res into the report of slug.
func (g *Grader) report(ctx context.Context, ws, slug string, res runResult) (*Report, error) {
	events, err := toEvents(ctx, ws, ModulePath+"/"+slug, res.stdout)
	if err != nil {
		return nil, err
	}
	reports, err := parseEvents(bytes.NewReader(events))
	if err != nil {
		return nil, err
	}
	r := reports[slug]
	if r == nil {
		r = &Report{Slug: slug}
	}
	keep := 200
	if res.limit == "memory limit" {
		keep = 3 // the runtime's "out of memory" and the start of its stack: the reason follows
	}
	for _, l := range strings.Split(strings.TrimRight(string(res.stderr), "\n"), "\n") {
		if l = strings.TrimSpace(l); l != "" && len(r.Output) < keep {
			r.Output = append(r.Output, l)
		}
	}
	r.Limit = res.limit
	switch {
	case res.stopped != "":
		r.Status = Fail
		r.Output = append(r.Output, "stopped by the grader: "+res.stopped)
		markUnfinished(r)
	case res.exitCode != 0 && r.Status == Pass:
		r.Rejected = fmt.Sprintf("the test binary exited with status %d but its output says every test passed", res.exitCode)
	case res.exitCode == 0 && r.Status != Pass && r.Rejected == "":
		r.Rejected = "the test binary exited with status 0 but its output does not say the tests passed"
	case res.exitCode != 0:
		r.Status = Fail
		markUnfinished(r)
	}
	if r.Rejected != "" {
		r.Status = Fail
	}
	return r, nil
}

// goEnvVars returns the values of the named go env variables.
func goEnvVars(ctx context.Context, names ...string) ([]string, error) {
	cmd := exec.CommandContext(ctx, "go", append([]string{"env"}, names...)...)
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("workbook: go env: %w (is the Go toolchain installed and on PATH?)", err)
	}
	vals := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(vals) != len(names) {
		return nil, fmt.Errorf("workbook: go env %s printed %d lines", strings.Join(names, " "), len(vals))
	}
	return vals, nil
}

// replaceDirs returns the absolute directories of gomod's replace directives.
func replaceDirs(gomod []byte) []string {
	var dirs []string
	for _, l := range strings.Split(string(gomod), "\n") {
		if _, after, ok := strings.Cut(l, "=>"); ok {
			if t := strings.TrimSpace(after); filepath.IsAbs(t) {
				dirs = append(dirs, filepath.Clean(t))
			}
		}
	}
	return dirs
}

// markUnfinished fails every test and case of r that has no outcome.
func markUnfinished(r *Report) {
	for _, t := range r.Tests {
		if t.Status == Running {
			t.Status = Fail
		}
		for _, c := range t.Cases {
			if c.Status == Running {
				c.Status = Fail
			}
		}
	}
}

// copyModuleFiles copies the exercises module's go.mod (with any relative
// replace directory made absolute, so that the copy still finds it), go.sum and
// internal/ from root to dst.
func copyModuleFiles(root, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("workbook: %w", err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return fmt.Errorf("workbook: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dst, "go.mod"), absReplace(gomod, root), 0o644); err != nil {
		return fmt.Errorf("workbook: %w", err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.sum")); err == nil {
		if err := copyFile(filepath.Join(root, "go.sum"), filepath.Join(dst, "go.sum")); err != nil {
			return err
		}
	}
	if err := os.CopyFS(filepath.Join(dst, "internal"), os.DirFS(filepath.Join(root, "internal"))); err != nil {
		return fmt.Errorf("workbook: %w", err)
	}
	return nil
}

// absReplace rewrites the relative directories of a go.mod's replace directives
// ("=> ../") into absolute ones under root.
func absReplace(gomod []byte, root string) []byte {
	lines := strings.Split(string(gomod), "\n")
	for i, l := range lines {
		before, after, ok := strings.Cut(l, "=>")
		if !ok {
			continue
		}
		target := strings.TrimSpace(after)
		if strings.HasPrefix(target, "./") || strings.HasPrefix(target, "../") {
			lines[i] = before + "=> " + filepath.Join(root, target)
		}
	}
	return []byte(strings.Join(lines, "\n"))
}

// hashTests returns a SHA-256 over the names and contents of the *_test.go files
// in dir.
func hashTests(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("workbook: %w", err)
	}
	h := sha256.New()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return "", fmt.Errorf("workbook: %w", err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", e.Name(), len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ErrNoSolution is returned (wrapped) by SwapInSolution when a folder holds no
// reference solution.
var ErrNoSolution = errors.New("workbook: no reference solution")

// SwapInSolution turns the exercise folder dir into a solved one, in place: every
// stub (a .go file whose first line is "//go:build !solution") is removed and
// every solution file ("//go:build solution") loses that line, so a plain go test
// builds the reference solution.
func SwapInSolution(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("workbook: %w", err)
	}
	swapped := false
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("workbook: %w", err)
		}
		first, rest, _ := strings.Cut(string(data), "\n")
		switch strings.TrimSpace(first) {
		case "//go:build !solution":
			err = os.Remove(p)
		case "//go:build solution":
			err = os.WriteFile(p, []byte(rest), 0o644)
			swapped = true
		}
		if err != nil {
			return fmt.Errorf("workbook: %w", err)
		}
	}
	if !swapped {
		return fmt.Errorf("%w in %s", ErrNoSolution, dir)
	}
	return nil
}

// copyGoFiles copies the regular .go files of src accepted by keep into dst and
// returns how many it copied.
func copyGoFiles(src, dst string, keep func(name string) bool) (int, error) {
	entries, err := os.ReadDir(src)
	if err != nil {
		return 0, fmt.Errorf("workbook: %w", err)
	}
	n := 0
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasSuffix(name, ".go") || !keep(name) {
			continue
		}
		if err := copyFile(filepath.Join(src, name), filepath.Join(dst, name)); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// copyFile copies the regular file src to dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("workbook: %w", err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return fmt.Errorf("workbook: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("workbook: copying %s: %w", src, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("workbook: %w", err)
	}
	return nil
}

// CheckCopy runs the official tests of exercise ex against the learner's copy of
// it in dir (such as workbook/exercises/17-inplace-block, which a notebook cell
// writes): like Grade it builds a scratch module from root's go.mod, go.sum and
// internal/, the copy's own .go files and the official shared and test files, and
// leaves dir untouched; unlike Grade it runs the learner's own code unsandboxed,
// as go test does, with the options of a check.
func CheckCopy(ctx context.Context, root string, ex Exercise, dir string, opts RunOptions) (*Report, error) {
	tmp, err := os.MkdirTemp("", "memlab-check-")
	if err != nil {
		return nil, fmt.Errorf("workbook: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := copyModuleFiles(root, tmp); err != nil {
		return nil, err
	}
	notes, n, err := assemble(ex, dir, filepath.Join(tmp, ex.Slug))
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("workbook: %s holds no .go files of exercise %s (make one with \"%s copy %d\")", dir, ex.Slug, Command, ex.Number)
	}
	opts.Solution = false
	reports, err := RunTests(ctx, tmp, []string{"./" + ex.Slug}, opts)
	if err != nil {
		return nil, err
	}
	r := reports[ex.Slug]
	if r == nil {
		return nil, fmt.Errorf("workbook: go test reported nothing for %s", ex.Slug)
	}
	r.Notes = append(notes, r.Notes...)
	return r, nil
}

// stubFile says whether the file name of the exercise folder dir is part of
// the stub a working copy starts from: a .go file that is neither a test nor
// the reference solution (first line //go:build solution).
func stubFile(dir, name string) bool {
	if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
		return false
	}
	data, err := os.ReadFile(filepath.Join(dir, name))
	first, _, _ := strings.Cut(string(data), "\n")
	return err == nil && strings.TrimSpace(first) != "//go:build solution"
}

// CopyStub makes the learner's working copy of exercise ex: the folder
// dir/<slug> with the exercise's stub and the files it shares with the
// solution (no tests, no reference solution). It returns the folder and
// whether it made it; an existing folder is left as it is, so a copy is never
// overwritten. dir gets a go.mod of its own (if it has none), so that the
// repository's `go build ./...` and `go vet ./...` never compile a learner's
// half-written code.
func CopyStub(ex Exercise, dir string) (string, bool, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", false, fmt.Errorf("workbook: %w", err)
	}
	if gomod := filepath.Join(dir, "go.mod"); !exists(gomod) {
		const text = "// The learner's copies of the exercises, checked with `go run ./cmd/memlab exercises check N --student`:\n// a module of its own, so that the repository's go build ./... never compiles them.\nmodule memlab.dev/memlab/workbook/exercises\n\ngo 1.26\n"
		if err := os.WriteFile(gomod, []byte(text), 0o644); err != nil {
			return "", false, fmt.Errorf("workbook: %w", err)
		}
	}
	dst := filepath.Join(dir, ex.Slug)
	if _, err := os.Stat(dst); err == nil {
		return dst, false, nil
	}
	tmp, err := os.MkdirTemp(dir, ".copy-"+ex.Slug+"-")
	if err != nil {
		return "", false, fmt.Errorf("workbook: %w", err)
	}
	defer os.RemoveAll(tmp)
	_, err = copyGoFiles(ex.Dir, tmp, func(name string) bool { return stubFile(ex.Dir, name) })
	if err != nil {
		return "", false, err
	}
	for _, md := range []string{"README.md", "HINTS.md", "README" + ChineseSuffix, "HINTS" + ChineseSuffix} {
		if _, err := os.Stat(filepath.Join(ex.Dir, md)); err == nil {
			if err := copyFile(filepath.Join(ex.Dir, md), filepath.Join(tmp, md)); err != nil {
				return "", false, err
			}
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", false, fmt.Errorf("workbook: %w", err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return "", false, fmt.Errorf("workbook: %w", err)
	}
	return dst, true, nil
}

// exists reports whether path names an existing file.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
