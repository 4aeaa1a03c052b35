package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"memlab.dev/memlab/internal/workbook"
	"memlab.dev/memlab/lang"
)

func init() {
	register(command{
		name:    "exercises",
		summary: "the course exercises: list with progress, check N, hint N, grade a student's copy",
		run:     runExercises,
	})
}

const exercisesUsage = `usage: memlab exercises [--dir DIR] [--tracked] <command> [arguments]

A learner solves the exercises in a working copy, workbook/exercises/ (made by
make lab and by notebook 06, git-ignored; MEMLAB_WORKBOOK moves it): list,
check and hint use it whenever it exists, so a notebook's progress table, this
command and notebook 06 agree, and the repository's files never change. The
tracked exercises/ folder is the instructor's: its stubs, official tests and
reference solutions (--tracked works on it, as --solution does).

commands:
  list                      every exercise with its notebook section, status and hints seen
  check N [--race] [--run REGEXP] [--solution] [--student DIR]
                            run exercise N's official tests on your working copy of it (the
                            stub while you have none) and explain the failures; exit 0 iff it
                            passes. --student checks another copy of the exercise folder
  copy N... [--to DIR]      make a working copy of each exercise's stub in DIR/<folder>
                            (default: the working copy, workbook/exercises beside the
                            exercises folder); an existing copy is kept as it is
  hint N                    show the next hint of exercise N (remembered in the working
                            copy's .progress.json)
  grade --student PATH [--exercise N] [--json] [--race] [--timeout D] [--memory BYTES]
        [--max-output BYTES] [--sandbox bwrap|none]
                            instructors: run the official, unmodified tests against a student's
                            copy of one exercise folder (or of the whole exercises folder) and
                            print the score; exit 0 iff every graded exercise passes. Only the
                            student's own files are built (the files an exercise shares with its
                            solution come from the exercises folder); the source is checked (pure
                            imports, no printing); the build and the tests run in a bubblewrap
                            sandbox (no network, nothing writable of yours) under a time, a memory
                            and an output limit; the official tests are verified unchanged after
                            every run
  grade --class DIR [--csv FILE] [--json FILE|-] [-j N] [--race] [--timeout D] [--memory BYTES]
        [--max-output BYTES] [--sandbox bwrap|none]
                            instructors: grade every student folder of DIR (each a copy of the
                            exercises folder as handed in, such as a notebook's workbook/exercises)
                            on N workers (default: the number of CPUs), with progress on stderr;
                            print a table (one line per student), write every student × exercise
                            row to --csv (student,exercise,state,passed,total) and --json

N is a number (4), a folder (04-round-size) or a name (round-size). DIR is the
exercises folder; by default it is found from the current directory upward.
--tracked (instructors) lists, checks and hints the exercises folder itself
instead of the working copy. Everything runs offline with the local Go toolchain.
`

func runExercises(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("exercises", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "the exercises folder (default: found from the current directory upward)")
	tracked := fs.Bool("tracked", false, "instructors: list, check and hint the exercises folder itself, not the learner's working copy")
	fs.Usage = func() { fmt.Fprint(stderr, exercisesUsage) }
	if err := fs.Parse(args); err != nil {
		return helpOr2(err)
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	sub, rest := fs.Arg(0), fs.Args()[1:]
	switch sub {
	case "help":
		fmt.Fprint(stdout, exercisesUsage)
		return 0
	case "list", "hint":
		// they take no flags: -h and --help ask for the usage
		for _, a := range rest {
			if a == "-h" || a == "-help" || a == "--help" {
				fmt.Fprint(stdout, exercisesUsage)
				return 0
			}
		}
	case "check", "grade", "copy":
	default:
		fmt.Fprintf(stderr, "memlab exercises: unknown command %q\n", sub)
		fs.Usage()
		return 2
	}
	cwd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "memlab exercises: %v\n", err)
		return 1
	}
	root, err := workbook.FindRoot(cwd, *dir)
	if err != nil {
		fmt.Fprintf(stderr, "memlab exercises: %v\n", err)
		return 1
	}
	exs, err := workbook.Load(root)
	if err != nil {
		fmt.Fprintf(stderr, "memlab exercises: %v\n", err)
		return 1
	}
	ctx := context.Background()
	// The learner's working copy, where one exists: list, check and hint read it.
	work := ""
	if !*tracked {
		work = workbook.WorkingCopy(root)
	}
	switch sub {
	case "list":
		return exercisesList(ctx, root, work, exs, rest, stdout, stderr)
	case "check":
		return exercisesCheck(ctx, root, work, exs, rest, stdout, stderr)
	case "hint":
		return exercisesHint(root, work, exs, rest, stdout, stderr)
	case "copy":
		return exercisesCopy(root, exs, rest, stdout, stderr)
	default: // "grade"
		return exercisesGrade(ctx, root, exs, rest, stdout, stderr)
	}
}

// parseInterleaved parses flags that may come before or after positional
// arguments ("check 4 --race" and "check --race 4") and returns the positionals.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func exercisesList(ctx context.Context, root, work string, exs []workbook.Exercise, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "memlab exercises list: unexpected arguments %q\n", args)
		return 2
	}
	progress, err := workbook.LoadProgress(workbook.ProgressDir(root, work))
	if err != nil {
		fmt.Fprintf(stderr, "memlab exercises: %v\n", err)
		return 1
	}
	reports, err := workbook.RunExercises(ctx, root, work, exs, workbook.RunOptions{})
	if err != nil {
		fmt.Fprintf(stderr, "memlab exercises: %v\n", err)
		return 1
	}
	if work != "" {
		fmt.Fprintf(stdout, lang.Text("memlab exercises: your working copy %s (the official tests of %s)")+"\n\n", work, root)
	} else {
		fmt.Fprintf(stdout, lang.Text("memlab exercises in %s")+"\n\n", root)
	}
	workbook.WriteList(stdout, exs, reports, progress)
	return 0
}

func exercisesCheck(ctx context.Context, root, work string, exs []workbook.Exercise, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	race := fs.Bool("race", false, "run with the race detector (exercises 12 and 14 are about concurrency)")
	run := fs.String("run", "", "run only the tests matching this regular expression, such as TestB for part B")
	solution := fs.Bool("solution", false, "instructors: test the reference solution (build tag solution) instead of the stub")
	student := fs.String("student", "", "check this copy of the exercise folder instead of your working copy")
	notStartedOK := fs.Bool("not-started-ok", false, "exit 0 when the exercise is not started (notebook 06's checks): only a started, failing exercise exits 1")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return helpOr2(err)
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "usage: memlab exercises check N [--race] [--run REGEXP] [--solution] [--student DIR]")
		return 2
	}
	ex, err := workbook.Lookup(exs, pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "memlab exercises: %v\n", err)
		return 2
	}
	opts := workbook.RunOptions{Race: *race, Run: *run, Solution: *solution}
	var r *workbook.Report
	if *student != "" {
		if *solution {
			fmt.Fprintln(stderr, "memlab exercises check: --solution and --student exclude each other")
			return 2
		}
		r, err = workbook.CheckCopy(ctx, root, ex, *student, opts)
	} else if work != "" && !*solution {
		var reports map[string]*workbook.Report
		reports, err = workbook.RunWorking(ctx, root, work, []workbook.Exercise{ex}, opts)
		r = reports[ex.Slug]
	} else {
		var reports map[string]*workbook.Report
		reports, err = workbook.RunTests(ctx, root, []string{"./" + ex.Slug}, opts)
		r = reports[ex.Slug]
	}
	if err != nil {
		fmt.Fprintf(stderr, "memlab exercises: %v\n", err)
		return 1
	}
	if r == nil {
		fmt.Fprintf(stderr, "memlab exercises: go test reported nothing for %s\n", ex.Slug)
		return 1
	}
	if len(r.Tests) == 0 && !r.BuildFailed && *run != "" {
		fmt.Fprintf(stderr, "memlab exercises: no test of exercise %d matches --run %q (its tests are named TestA_…, TestB_…: see exercises/%s/README.md)\n", ex.Number, *run, ex.Slug)
		return 2
	}
	if work != "" && *student == "" && !*solution {
		if workbook.Started(work, ex) {
			fmt.Fprintf(stdout, lang.Text("Your copy: %s")+"\n", filepath.Join(work, ex.Slug))
		} else {
			fmt.Fprintf(stdout, lang.Text("You have no copy of exercise %d yet (notebook 06 writes it, or: %s copy %d): its stub is checked.")+"\n", ex.Number, workbook.Command, ex.Number)
		}
	}
	workbook.WriteReport(stdout, ex, r)
	if r.NotStarted() {
		// Not started is no failure: a notebook that checks every exercise
		// (06) shows it calmly, and a script sees it by the exit status.
		if *notStartedOK {
			return 0
		}
		return 1
	}
	if !r.Passed() {
		if len(ex.Hints) > 0 {
			fmt.Fprintf(stdout, "      "+lang.Text("Stuck? \"%s hint %d\" shows the next hint.")+"\n", workbook.Command, ex.Number)
		}
		return 1
	}
	for _, next := range exs {
		if next.Number > ex.Number {
			fmt.Fprintf(stdout, "      "+lang.Text("Next: exercise %d · %s — exercises/%s/README.md")+"\n", next.Number, next.Title, next.Slug)
			break
		}
	}
	return 0
}

func exercisesHint(root, work string, exs []workbook.Exercise, args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: memlab exercises hint N")
		return 2
	}
	ex, err := workbook.Lookup(exs, args[0])
	if err != nil {
		fmt.Fprintf(stderr, "memlab exercises: %v\n", err)
		return 2
	}
	edition := lang.Current()
	if ex, err = workbook.InEdition(ex, edition); err != nil {
		fmt.Fprintf(stderr, "memlab exercises: %v\n", err)
		return 1
	}
	hintsDir := workbook.ProgressDir(root, work)
	progress, err := workbook.LoadProgress(hintsDir)
	if err != nil {
		fmt.Fprintf(stderr, "memlab exercises: %v\n", err)
		return 1
	}
	hint, n, ok := progress.NextHint(ex)
	if !ok {
		hints := "HINTS.md"
		if edition == lang.Chinese {
			hints = "HINTS" + workbook.ChineseSuffix
		}
		if len(ex.Hints) == 0 {
			fmt.Fprintf(stdout, lang.TextIn(edition, "Exercise %d has no hints.")+"\n", ex.Number)
		} else {
			fmt.Fprintf(stdout, lang.TextIn(edition, "All %d hints of exercise %d are shown; they are in %s.")+"\n",
				len(ex.Hints), ex.Number, filepath.Join(ex.Dir, hints))
		}
		return 0
	}
	if err := progress.Save(hintsDir); err != nil {
		fmt.Fprintf(stderr, "memlab exercises: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, lang.TextIn(edition, "Exercise %d · %s — hint %d of %d")+"\n\n%s\n", ex.Number, ex.Title, n, len(ex.Hints), indent(hint))
	if n < len(ex.Hints) {
		fmt.Fprintf(stdout, "\n"+lang.TextIn(edition, "(\"%s hint %d\" again for the next one.)")+"\n", workbook.Command, ex.Number)
	}
	return 0
}

// indent prefixes every non-empty line of s with two spaces.
func indent(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "  " + l
		}
	}
	return strings.Join(lines, "\n")
}

// gradeResult is one exercise's line of "grade --json".
type gradeResult struct {
	Exercise string `json:"exercise"`
	State    string `json:"state"`
	Passed   int    `json:"passed"`
	Total    int    `json:"total"`
}

const gradeStudentUsage = "usage: memlab exercises grade --student PATH [--exercise N] [--json] [--race] [--timeout D] [--memory BYTES] [--max-output BYTES] [--sandbox bwrap|none]"

func exercisesGrade(ctx context.Context, root string, exs []workbook.Exercise, args []string, stdout, stderr io.Writer) int {
	for _, a := range args {
		if a == "--class" || a == "-class" || strings.HasPrefix(a, "--class=") || strings.HasPrefix(a, "-class=") {
			return exercisesGradeClass(ctx, root, exs, args, stdout, stderr)
		}
	}
	fs := flag.NewFlagSet("grade", flag.ContinueOnError)
	fs.SetOutput(stderr)
	student := fs.String("student", "", "the student's copy of an exercise folder, or of the whole exercises folder")
	exercise := fs.String("exercise", "", "which exercise the --student folder answers (default: from its folder name)")
	asJSON := fs.Bool("json", false, "print one JSON object per exercise instead of the report")
	flags := newGradeFlags(fs)
	opts, code, ok := flags.parse(fs, args, func(pos []string) bool {
		return *student != "" && len(pos) == 0
	}, gradeStudentUsage, "the student's", stderr)
	if !ok {
		return code
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	subs, err := submissions(exs, *student, *exercise)
	if err != nil {
		fmt.Fprintf(stderr, "memlab exercises grade: %v\n", err)
		return 2
	}
	results, err := workbook.Grade(ctx, root, subs, opts)
	if err != nil {
		fmt.Fprintf(stderr, "memlab exercises grade: %v\n", err)
		return 1
	}
	code, passedAll, casesPassed, casesTotal := 0, 0, 0, 0
	enc := json.NewEncoder(stdout)
	for i, res := range results {
		pass, total := res.Score()
		casesPassed += pass
		casesTotal += total
		if res.Report.Passed() {
			passedAll++
		} else {
			code = 1
		}
		if *asJSON {
			if err := enc.Encode(gradeResult{res.Exercise.Slug, workbook.State(res.Report), pass, total}); err != nil {
				fmt.Fprintf(stderr, "memlab exercises grade: %v\n", err)
				return 1
			}
			continue
		}
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		workbook.WriteReport(stdout, res.Exercise, res.Report)
		fmt.Fprintf(stdout, "Score for %s: %d/%d cases\n", res.Exercise.Slug, pass, total)
	}
	if !*asJSON && len(subs) > 1 {
		fmt.Fprintf(stdout, "\nTotal: %d of %d exercises pass; %d/%d cases.\n", passedAll, len(subs), casesPassed, casesTotal)
	}
	return code
}

// submissions works out what a --student folder holds: one exercise (named by
// --exercise or by the folder's own name) or, if it has exercise folders inside,
// each of those that matches an official exercise.
func submissions(exs []workbook.Exercise, student, exercise string) ([]workbook.Submission, error) {
	info, err := os.Stat(student)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%s is not a folder", student)
	}
	if exercise != "" {
		ex, err := workbook.Lookup(exs, exercise)
		if err != nil {
			return nil, err
		}
		return []workbook.Submission{{Exercise: ex, Dir: student}}, nil
	}
	abs, err := filepath.Abs(student)
	if err != nil {
		return nil, err
	}
	for _, ex := range exs {
		if ex.Slug == filepath.Base(abs) {
			return []workbook.Submission{{Exercise: ex, Dir: abs}}, nil
		}
	}
	var subs []workbook.Submission
	for _, ex := range exs {
		d := filepath.Join(abs, ex.Slug)
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			subs = append(subs, workbook.Submission{Exercise: ex, Dir: d})
		}
	}
	if len(subs) == 0 {
		return nil, fmt.Errorf("%s is neither an exercise folder (such as 03-view) nor a folder holding some; name the exercise with --exercise N", student)
	}
	return subs, nil
}

func exercisesCopy(root string, exs []workbook.Exercise, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("copy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	to := fs.String("to", workbook.WorkingCopyDir(root), "the folder to make the copies in")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return helpOr2(err)
	}
	if len(pos) == 0 {
		fmt.Fprintln(stderr, "usage: memlab exercises copy N... [--to DIR]")
		return 2
	}
	for _, arg := range pos {
		ex, err := workbook.Lookup(exs, arg)
		if err != nil {
			fmt.Fprintf(stderr, "memlab exercises: %v\n", err)
			return 2
		}
		dst, made, err := workbook.CopyStub(ex, *to)
		if err != nil {
			fmt.Fprintf(stderr, "memlab exercises: %v\n", err)
			return 1
		}
		if made {
			fmt.Fprintf(stdout, "exercise %d: your copy is %s\n", ex.Number, dst)
		} else {
			fmt.Fprintf(stdout, "exercise %d: your copy %s is kept as it is\n", ex.Number, dst)
		}
	}
	return 0
}
