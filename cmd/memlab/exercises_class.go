package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"memlab.dev/memlab/internal/workbook"
	"memlab.dev/memlab/units"
)

// gradeFlags are the flags grade --student and grade --class share: the race
// detector and the limits.
type gradeFlags struct {
	race      *bool
	timeout   *time.Duration
	memory    *string
	maxOutput *int64
	sandbox   *string
}

// newGradeFlags defines the shared grade flags on fs.
func newGradeFlags(fs *flag.FlagSet) gradeFlags {
	return gradeFlags{
		race:      fs.Bool("race", false, "run with the race detector"),
		timeout:   fs.Duration("timeout", workbook.DefaultTimeout, "wall-clock limit of one submission's build, and of its test run"),
		memory:    fs.String("memory", "1GiB", "memory limit of each process of a submission's build and test run (heap, and any file it writes)"),
		maxOutput: fs.Int64("max-output", workbook.DefaultMaxOutput, "bytes one submission's build or test run may write"),
		sandbox:   fs.String("sandbox", "bwrap", "isolation of the student's code: bwrap (bubblewrap) or none (only for code you trust)"),
	}
}

// options returns the GradeOptions the flags set, or an error for a bad value.
func (g gradeFlags) options() (workbook.GradeOptions, error) {
	mem, err := units.ParseBytes(*g.memory)
	switch {
	case err != nil:
		return workbook.GradeOptions{}, fmt.Errorf("--memory: %w", err)
	case mem < 64<<20:
		return workbook.GradeOptions{}, fmt.Errorf("--memory %s: want at least 64MiB (the go command itself needs that much)", *g.memory)
	case *g.timeout <= 0:
		return workbook.GradeOptions{}, fmt.Errorf("--timeout %v: want a positive duration", *g.timeout)
	case *g.maxOutput <= 0:
		return workbook.GradeOptions{}, fmt.Errorf("--max-output %d: want a positive number of bytes", *g.maxOutput)
	}
	return workbook.GradeOptions{Timeout: *g.timeout, Memory: int64(mem), MaxOutput: *g.maxOutput, Sandbox: *g.sandbox, Race: *g.race}, nil
}

// parse parses args, flags and positionals in any order, into fs, which holds
// g and the command's own flags; valid reports whether those and the
// positionals make a call. It returns the GradeOptions the flags set and true,
// warning on stderr that --sandbox none runs whose code with the user's
// rights; or, having printed what is wrong and usage, the exit status and false.
func (g gradeFlags) parse(fs *flag.FlagSet, args []string, valid func(pos []string) bool, usage, whose string, stderr io.Writer) (workbook.GradeOptions, int, bool) {
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return workbook.GradeOptions{}, helpOr2(err), false
	}
	opts, err := g.options()
	if err != nil || !valid(pos) {
		if err != nil {
			fmt.Fprintf(stderr, "memlab exercises grade: %v\n", err)
		}
		fmt.Fprintln(stderr, usage)
		return workbook.GradeOptions{}, 2, false
	}
	if opts.Sandbox == "none" {
		fmt.Fprintf(stderr, "memlab exercises grade: warning: --sandbox none runs %s code with your rights\n", whose)
	}
	return opts, 0, true
}

const gradeClassUsage = "usage: memlab exercises grade --class DIR [--csv FILE] [--json FILE|-] [-j N] [--race] [--timeout D] [--memory BYTES] [--max-output BYTES] [--sandbox bwrap|none]"

// exercisesGradeClass grades a whole class: every student folder of --class.
func exercisesGradeClass(ctx context.Context, root string, exs []workbook.Exercise, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("grade", flag.ContinueOnError)
	fs.SetOutput(stderr)
	class := fs.String("class", "", "the class folder: one folder per student, each a copy of the exercises folder")
	csvPath := fs.String("csv", "", "write every row (student,exercise,state,passed,total) to this CSV file (- for standard output)")
	jsonPath := fs.String("json", "", "write every row as a JSON array to this file (- for standard output)")
	jobs := fs.Int("j", runtime.NumCPU(), "submissions graded at once")
	flags := newGradeFlags(fs)
	opts, code, ok := flags.parse(fs, args, func(pos []string) bool {
		return *class != "" && len(pos) == 0 && *jobs >= 1 && (*csvPath != "-" || *jsonPath != "-")
	}, gradeClassUsage, "the students'", stderr)
	if !ok {
		return code
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	progress := func(r workbook.Row, done, total int) {
		el := time.Since(start)
		left := time.Duration(float64(el) / float64(done) * float64(total-done))
		fmt.Fprintf(stderr, "[%d/%d %s, ~%s left] %s %s: %s\n", done, total, el.Round(time.Second), left.Round(time.Second), r.Student, r.Exercise, rowCell(r, true))
	}
	rows, err := workbook.GradeClass(ctx, root, exs, *class, opts, *jobs, progress)
	if err != nil {
		fmt.Fprintf(stderr, "memlab exercises grade: %v\n", err)
		return 1
	}
	var build, run, all time.Duration
	built := 0
	for _, r := range rows {
		if r.Build > 0 {
			build, run, all = build+r.Build, run+r.Run, all+r.Time
			built++
		}
	}
	load := ""
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(data)); len(f) >= 3 {
			load = fmt.Sprintf(", %d CPUs, load average %s %s %s at the end", runtime.NumCPU(), f[0], f[1], f[2])
		}
	}
	fmt.Fprintf(stderr, "graded %d submissions (%d students × %d exercises) in %s on %d workers, %s UTC on %s/%s%s\n",
		len(rows), len(rows)/len(exs), len(exs), time.Since(start).Round(time.Second), *jobs, time.Now().UTC().Format("2006-01-02 15:04"), runtime.GOOS, runtime.GOARCH, load)
	if built > 0 {
		fmt.Fprintf(stderr, "per built submission: %.2fs building the tests, %.2fs running them, %.2fs in all (the rest: copying, the source check, reading the results); summed over the workers\n",
			build.Seconds()/float64(built), run.Seconds()/float64(built), all.Seconds()/float64(built))
	}
	if *csvPath != "" {
		if err := writeOut(*csvPath, stdout, func(w io.Writer) error { return writeClassCSV(w, rows) }); err != nil {
			fmt.Fprintf(stderr, "memlab exercises grade: %v\n", err)
			return 1
		}
	}
	if *jsonPath != "" {
		if err := writeOut(*jsonPath, stdout, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", " ")
			return enc.Encode(rows)
		}); err != nil {
			fmt.Fprintf(stderr, "memlab exercises grade: %v\n", err)
			return 1
		}
	}
	if *csvPath != "-" && *jsonPath != "-" {
		writeClassTable(stdout, exs, rows)
	}
	return 0
}

// writeOut calls write on the file path, or on stdout if path is "-".
func writeOut(path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == "-" {
		return write(stdout)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeClassCSV writes rows as CSV with the header student,exercise,state,passed,total.
func writeClassCSV(w io.Writer, rows []workbook.Row) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"student", "exercise", "state", "passed", "total"})
	for _, r := range rows {
		cw.Write([]string{r.Student, r.Exercise, r.State, strconv.Itoa(r.Passed), strconv.Itoa(r.Total)})
	}
	cw.Flush()
	return cw.Error()
}

// rowCell is the table's cell for one row: ✓ when it passes, - when not handed
// in or not started, R rejected, T/M/O over the time/memory/output limit, B
// does not build, E an error, else passed/total. long spells the state out.
func rowCell(r workbook.Row, long bool) string {
	if long {
		s := fmt.Sprintf("%s, %d/%d", r.State, r.Passed, r.Total)
		if r.Detail != "" {
			s += " — " + r.Detail
		}
		return s
	}
	switch {
	case r.State == "passing":
		return "✓"
	case r.State == "not handed in" || r.State == "not started":
		return "-"
	case r.State == "rejected":
		return "R"
	case r.State == "over the time limit":
		return "T"
	case r.State == "over the memory limit":
		return "M"
	case r.State == "over the output limit":
		return "O"
	case r.State == "does not build":
		return "B"
	case r.State == "error":
		return "E"
	}
	return fmt.Sprintf("%d/%d", r.Passed, r.Total)
}

// writeClassTable writes one line per student: the exercises passing, the
// cases passed of the total, and a cell per exercise.
func writeClassTable(w io.Writer, exs []workbook.Exercise, rows []workbook.Row) {
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)
	head := []string{"Student", "Passing", "Cases"}
	for _, ex := range exs {
		head = append(head, fmt.Sprintf("%02d", ex.Number))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for i := 0; i < len(rows); i += len(exs) {
		student := rows[i : i+len(exs)]
		passing, passed, total := 0, 0, 0
		cells := []string{}
		for _, r := range student {
			if r.State == "passing" {
				passing++
			}
			passed += r.Passed
			total += r.Total
			cells = append(cells, rowCell(r, false))
		}
		fmt.Fprintf(tw, "%s\t%d/%d\t%d/%d\t%s\n", student[0].Student, passing, len(exs), passed, total, strings.Join(cells, "\t"))
	}
	tw.Flush()
	fmt.Fprintln(w, "\n✓ passing  - not handed in or not started  n/m cases passing  B does not build  R rejected (the report says why)  T/M/O over the time/memory/output limit  E could not be read")
}
