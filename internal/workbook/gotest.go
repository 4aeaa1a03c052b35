package workbook

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// NotImplementedYet is the text of the failure an untouched stub produces; it
// mirrors exercisetest.NotImplementedYet in the exercises module.
const NotImplementedYet = "not implemented yet"

// Status is the outcome of one test or test case.
type Status int

// Outcomes. Running means go test reported no outcome (the binary crashed).
const (
	Running Status = iota
	Pass
	Fail
	Skip
)

// String returns "pass", "fail", "skip" or "no result".
func (s Status) String() string {
	switch s {
	case Pass:
		return "pass"
	case Fail:
		return "fail"
	case Skip:
		return "skip"
	}
	return "no result"
}

// Case is one leaf test: a subtest, or a top-level test without subtests.
type Case struct {
	Name   string   // the subtest's name (after the top-level name), or "" for a test without subtests
	Status Status   // outcome
	Output []string // the messages it logged (t.Errorf, t.Log), trimmed
}

// Test is one top-level test function and its cases.
type Test struct {
	Name   string   // such as "TestB_PowerOfTwoDivisions"
	Status Status   // outcome of the whole test
	Output []string // messages logged by the test function itself
	Cases  []*Case  // subtests in order; one case named "" if it has none
}

// Report is the result of running one exercise's tests.
type Report struct {
	Slug        string   // the exercise folder
	Status      Status   // the package's outcome
	BuildFailed bool     // the code did not compile (or go vet refused it)
	BuildOutput []string // compiler and vet messages
	Output      []string // package-level output that belongs to no test (panics, crashes)
	Tests       []*Test  // top-level tests in the order they ran
	// Rejected, when not empty, says why the results cannot be trusted (the
	// submission broke the grading policy, or the test output was forged); such
	// a report never passes and scores nothing.
	Rejected string
	// Limit names the grader's limit the build or the test run went over
	// ("time limit", "memory limit", "output limit"), or is empty.
	Limit string
	// Notes are the grader's remarks on the submission, such as a shared
	// file of the exercise's that the submission changed and the official
	// copy replaced.
	Notes []string
	// Build and Run are how long the grader's build of the tests and their
	// run took (zero when they did not happen, or outside the grader).
	Build, Run time.Duration
	// Untouched says the tests did not run: the learner's working copy of the
	// exercise is still its stub (see [RunExercises]); it is not started.
	Untouched bool
}

// Counts returns the number of cases that passed, failed and were skipped.
func (r *Report) Counts() (pass, fail, skip int) {
	for _, t := range r.Tests {
		for _, c := range t.Cases {
			switch c.Status {
			case Pass:
				pass++
			case Skip:
				skip++
			default:
				fail++
			}
		}
	}
	return pass, fail, skip
}

// Passed reports whether the exercise is solved: it built, the package passed, at
// least one case ran and no case failed or was skipped.
func (r *Report) Passed() bool {
	pass, fail, skip := r.Counts()
	return r.Rejected == "" && !r.BuildFailed && r.Status == Pass && pass > 0 && fail == 0 && skip == 0
}

// NotStarted reports whether the exercise is untouched: it builds, no case passes,
// and every failure is a stub's "not implemented yet".
func (r *Report) NotStarted() bool {
	if r.Untouched {
		return true
	}
	if r.BuildFailed || r.Rejected != "" {
		return false
	}
	for _, t := range r.Tests {
		for _, c := range t.Cases {
			if c.Status == Pass || (c.Status == Fail && !mentions(c.Output, NotImplementedYet) && !mentions(t.Output, NotImplementedYet)) {
				return false
			}
		}
	}
	return len(r.Tests) > 0
}

func mentions(lines []string, s string) bool {
	for _, l := range lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// RunOptions changes how the tests run.
type RunOptions struct {
	Race     bool   // go test -race
	Solution bool   // go test -tags solution: the reference solutions instead of the stubs
	Run      string // go test -run pattern ("" runs everything)
}

// RunTests runs go test -json on the packages (patterns such as "./04-round-size" or
// "./...") of the exercises module at root, and returns a report per exercise
// folder (relative to root, such as "04-round-size"). Failing tests are not an error; an error means go test could not run or
// produced no results.
func RunTests(ctx context.Context, root string, packages []string, opts RunOptions) (map[string]*Report, error) {
	args := []string{"test", "-json"}
	if opts.Race {
		args = append(args, "-race")
	}
	if opts.Solution {
		args = append(args, "-tags", "solution")
	}
	if opts.Run != "" {
		args = append(args, "-run", opts.Run)
	}
	args = append(args, packages...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	if opts.Race {
		// -race needs cgo; a notebook's kernel runs with CGO_ENABLED=0 (scripts/gonb-kernel).
		cmd.Env = append(cmd.Env, "CGO_ENABLED=1")
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var exitErr *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exitErr) {
		return nil, fmt.Errorf("workbook: running go test: %w (is the Go toolchain installed and on PATH?)", runErr)
	}
	reports, err := parseEvents(&stdout)
	if err != nil {
		return nil, err
	}
	if len(reports) == 0 {
		msg := strings.TrimSpace(stderr.String() + stdout.String())
		return nil, fmt.Errorf("workbook: go test %s produced no results: %s", strings.Join(packages, " "), msg)
	}
	return reports, nil
}

// event is one line of go test -json (cmd/test2json) output.
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output and build-fail events
	Test       string
	Output     string
}

// noise matches go test's own framing lines, which the report replaces.
var noise = regexp.MustCompile(`^\s*(=== (RUN|PAUSE|CONT|NAME)|--- (PASS|FAIL|SKIP)|PASS$|FAIL$|ok\s|FAIL\s|\?\s|coverage:|exit status \d+$)`)

// fileLine matches the "name_test.go:42: " prefix of a logged message.
var fileLine = regexp.MustCompile(`^\w+_test\.go:\d+: `)

// parseEvents reads go test -json output and builds one report per package,
// keyed by the package's folder relative to the exercises module ("04-round-size").
func parseEvents(r io.Reader) (map[string]*Report, error) {
	reports := map[string]*Report{}
	report := func(pkg string) *Report {
		// Build events name the test variant ("x [x.test]", "x_test [x.test]").
		slug := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(pkg, ModulePath+"/"), ".test"), "_test")
		rep, ok := reports[slug]
		if !ok {
			rep = &Report{Slug: slug}
			reports[slug] = rep
		}
		return rep
	}
	tests := map[string]*Test{}
	cases := map[string]*Case{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("workbook: reading go test -json output: %w", err)
		}
		switch e.Action {
		case "build-output":
			rep := report(strings.Fields(e.ImportPath + " ")[0])
			if msg := strings.TrimRight(e.Output, "\n"); msg != "" && !strings.HasPrefix(msg, "# ") {
				rep.BuildOutput = append(rep.BuildOutput, msg)
			}
			continue
		case "build-fail":
			report(strings.Fields(e.ImportPath + " ")[0]).BuildFailed = true
			continue
		}
		if e.Package == "" {
			continue
		}
		rep := report(e.Package)
		if e.Test == "" {
			switch e.Action {
			case "pass", "fail", "skip":
				if rep.Status != Running {
					forged(rep, "the package")
				}
			}
			switch e.Action {
			case "pass":
				rep.Status = Pass
			case "fail":
				rep.Status = Fail
			case "skip":
				rep.Status = Skip
			case "output":
				if msg := clean(e.Output); msg != "" {
					if strings.Contains(msg, "[build failed]") || strings.Contains(msg, "[setup failed]") {
						rep.BuildFailed = true
					} else {
						rep.Output = append(rep.Output, msg)
					}
				}
			}
			continue
		}
		top, sub, isSub := strings.Cut(e.Test, "/")
		key := e.Package + "\x00" + top
		t, ok := tests[key]
		if !ok {
			t = &Test{Name: top}
			tests[key] = t
			rep.Tests = append(rep.Tests, t)
		}
		if isSub {
			ckey := key + "\x00" + sub
			c, ok := cases[ckey]
			if !ok {
				c = &Case{Name: sub}
				cases[ckey] = c
				t.Cases = append(t.Cases, c)
			}
			if !apply(e, &c.Status, &c.Output) {
				forged(rep, e.Test)
			}
			continue
		}
		if !apply(e, &t.Status, &t.Output) {
			forged(rep, e.Test)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("workbook: reading go test output: %w", err)
	}
	for _, rep := range reports {
		for _, t := range rep.Tests {
			if len(t.Cases) == 0 {
				t.Cases = []*Case{{Status: t.Status, Output: t.Output}}
				t.Output = nil
			}
		}
	}
	return reports, nil
}

// apply records the outcome or output of one event for a test or case. It
// reports false when the event is a second outcome for the same test or case,
// which go test never produces: something other than the testing package wrote
// framing into the output.
func apply(e event, status *Status, output *[]string) bool {
	switch e.Action {
	case "pass", "fail", "skip":
		if *status != Running {
			return false
		}
	}
	switch e.Action {
	case "pass":
		*status = Pass
	case "fail":
		*status = Fail
	case "skip":
		*status = Skip
	case "output":
		if msg := clean(e.Output); msg != "" {
			*output = append(*output, msg)
		}
	}
	return true
}

// forged marks rep as rejected: its output reports an outcome of name twice.
func forged(rep *Report, name string) {
	if rep.Rejected == "" {
		rep.Rejected = fmt.Sprintf("the test output reports the outcome of %s twice: something other than the tests wrote test framing", name)
	}
}

// clean drops go test's framing lines and the file:line prefix of messages.
func clean(s string) string {
	s = strings.TrimRight(s, "\n")
	if strings.TrimSpace(s) == "" || noise.MatchString(s) {
		return ""
	}
	s = strings.TrimSpace(s)
	return fileLine.ReplaceAllString(s, "")
}
