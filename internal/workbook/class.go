package workbook

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Row is one student's grade of one exercise: a line of the class report.
type Row struct {
	Student  string `json:"student"`  // the student's folder name
	Exercise string `json:"exercise"` // the exercise folder, such as "03-view"
	State    string `json:"state"`    // State of its report, or "not handed in", or "error"
	Passed   int    `json:"passed"`
	Total    int    `json:"total"`
	Detail   string `json:"detail,omitempty"` // why it was rejected, the limit it went over, or the error
	// Build and Run are how long the submission's build and test run took.
	Build time.Duration `json:"-"`
	Run   time.Duration `json:"-"`
	Time  time.Duration `json:"-"` // the whole row: copying, checking, building, running
}

// Students returns the student folders of the class folder dir, sorted: every
// folder in it that does not start with a dot.
func Students(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("workbook: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("workbook: %s holds no student folders", dir)
	}
	sort.Strings(names)
	return names, nil
}

// GradeClass grades every student folder of the class folder dir (each a copy
// of the exercises folder as learners hand it in, such as the notebook's
// workbook/exercises: one NN-name folder per exercise they did; see
// studentRoot for a whole repository handed in) against the
// exercises exs of the official module at root, and returns one row per
// student and exercise, students sorted, exercises in course order. An
// exercise a student's folder lacks is "not handed in".
//
// jobs submissions are graded at once (at least 1), each isolated as Grade
// isolates one: one student's hang, flood or crash costs only that row. done,
// if not nil, is called after each row, from one goroutine at a time, with the
// number of rows finished and the total. The error is for the grading itself
// (the toolchain, an interrupt, official tests that changed), never for what a
// student handed in.
func GradeClass(ctx context.Context, root string, exs []Exercise, dir string, opts GradeOptions, jobs int, done func(Row, int, int)) ([]Row, error) {
	students, err := Students(dir)
	if err != nil {
		return nil, err
	}
	g, err := NewGrader(ctx, root, opts)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rows := make([]Row, len(students)*len(exs))
	work := make(chan int)
	var (
		mu       sync.Mutex
		finished int
		firstErr error
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	var wg sync.WaitGroup
	for range max(jobs, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				st, ex := students[i/len(exs)], exs[i%len(exs)]
				row, err := gradeRow(ctx, g, studentRoot(filepath.Join(dir, st)), st, ex)
				if err != nil {
					fail(err)
					continue
				}
				mu.Lock()
				rows[i] = row
				finished++
				if done != nil {
					done(row, finished, len(rows))
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for i := range rows {
		select {
		case work <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("workbook: grading the class: %w", err)
	}
	return rows, nil
}

// studentRoot returns the folder of a student's hand-in that holds the
// exercise folders: dir itself, or, when dir holds none but a whole repository
// or workbook was handed in, its workbook/exercises or exercises.
func studentRoot(dir string) string {
	for _, d := range []string{dir, filepath.Join(dir, "workbook", "exercises"), filepath.Join(dir, "exercises")} {
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.IsDir() && slugPattern.MatchString(e.Name()) {
				return d
			}
		}
	}
	return dir
}

// gradeRow grades student st's copy of exercise ex in their folder dir.
func gradeRow(ctx context.Context, g *Grader, dir, st string, ex Exercise) (row Row, err error) {
	row = Row{Student: st, Exercise: ex.Slug}
	start := time.Now()
	defer func() { row.Time = time.Since(start) }()
	sub := filepath.Join(dir, ex.Slug)
	if info, err := os.Stat(sub); err != nil || !info.IsDir() {
		n, err := g.total(ctx, ex)
		if err != nil {
			return row, err
		}
		row.State, row.Total = "not handed in", n
		return row, nil
	}
	res, err := g.Grade(ctx, Submission{Exercise: ex, Dir: sub})
	switch {
	case errors.Is(err, ErrNothingHandedIn):
		row.State, row.Total = "not handed in", res.Total
		return row, nil
	case errors.Is(err, ErrTestsChanged) || ctx.Err() != nil:
		return row, err
	case err != nil:
		// Something of the student's folder the grader could not read: this
		// row only.
		row.State, row.Total, row.Detail = "error", res.Total, err.Error()
		return row, nil
	}
	row.State, _, _ = strings.Cut(State(res.Report), " (") // "in progress (3/7)": the counts have columns of their own
	row.Passed, row.Total = res.Score()
	row.Build, row.Run = res.Report.Build, res.Report.Run
	switch {
	case res.Report.Rejected != "":
		row.Detail = res.Report.Rejected
	case res.Report.Limit != "":
		row.Detail = stoppedLine(res.Report)
	case len(res.Report.Notes) > 0:
		row.Detail = strings.Join(res.Report.Notes, "; ")
	}
	return row, nil
}

// stoppedLine returns the grader's "stopped by the grader: …" line of r.
func stoppedLine(r *Report) string {
	for _, l := range append(append([]string{}, r.BuildOutput...), r.Output...) {
		if s, ok := strings.CutPrefix(l, "stopped by the grader: "); ok {
			return s
		}
	}
	return r.Limit
}
