package workbook

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"memlab.dev/memlab/lang"
)

// maxFailuresShown is how many failing cases of one test WriteReport details.
const maxFailuresShown = 5

// State is a one-word summary of a report: "passing", "not started",
// "in progress" (with counts), "does not build", "rejected", "over the time
// limit" (memory, output), or "no result" for a nil report.
func State(r *Report) string {
	switch {
	case r == nil:
		return "no result"
	case r.Rejected != "":
		return "rejected"
	case r.Limit != "":
		return "over the " + r.Limit
	case r.BuildFailed:
		return "does not build"
	case r.Passed():
		return "passing"
	case r.NotStarted():
		return "not started"
	}
	pass, fail, skip := r.Counts()
	return fmt.Sprintf("in progress (%d/%d)", pass, pass+fail+skip)
}

// StateText is a State in the current edition's language (lang.Current):
// "not started" is 未开始 in Chinese.
func StateText(state string) string {
	var pass, total int
	if n, _ := fmt.Sscanf(state, "in progress (%d/%d)", &pass, &total); n == 2 {
		return fmt.Sprintf(lang.Text("in progress (%d/%d)"), pass, total)
	}
	return lang.Text(state)
}

// WriteReport writes a readable account of r, the test results of exercise ex, to
// w: a heading, one line per test with its passing cases, the messages of failing
// cases (the tests' explanations), and a closing summary line.
func WriteReport(w io.Writer, ex Exercise, r *Report) {
	fmt.Fprintf(w, lang.Text("Exercise %d · %s"), ex.Number, ex.Title)
	if ex.Section != "" {
		fmt.Fprintf(w, "  (%s)", ex.Section)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  Note: %s\n", n)
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(w)
	}
	if r.Rejected != "" {
		fmt.Fprintf(w, "  %s\n\n", r.Rejected)
		fmt.Fprintf(w, "REJECTED  exercise %d is not graded: its results cannot be trusted (reason above).\n", ex.Number)
		return
	}
	if r.BuildFailed {
		fmt.Fprintln(w, "  "+lang.Text("Your code does not build (errors from the compiler or go vet):"))
		for _, l := range r.BuildOutput {
			fmt.Fprintf(w, "    %s\n", l)
		}
		for _, l := range r.Output {
			fmt.Fprintf(w, "    %s\n", l)
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, lang.Text("FAIL  exercise %d does not build — fix the errors above first.")+"\n", ex.Number)
		return
	}
	for _, t := range r.Tests {
		writeTest(w, ex.Slug, t)
	}
	if r.Status != Pass && !anyFailed(r) && len(r.Output) > 0 {
		fmt.Fprintln(w, "  "+lang.Text("The test binary failed outside any test:"))
		for _, l := range r.Output {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
	pass, fail, skip := r.Counts()
	total := pass + fail + skip
	fmt.Fprintln(w)
	switch {
	case r.Passed():
		fmt.Fprintf(w, lang.Text("PASS  all %d cases of exercise %d pass.")+"\n", total, ex.Number)
	case r.NotStarted():
		fmt.Fprintf(w, lang.Text("TODO  exercise %d is not started: read exercises/%s/README.md and replace the panics.")+"\n", ex.Number, ex.Slug)
	default:
		fmt.Fprintf(w, lang.Text("FAIL  %d of %d cases pass.")+"\n", pass, total)
	}
}

// anyFailed reports whether some case of r failed.
func anyFailed(r *Report) bool {
	_, fail, _ := r.Counts()
	return fail > 0
}

// writeTest writes the line of one top-level test of the exercise folder slug and
// the details of its failures.
func writeTest(w io.Writer, slug string, t *Test) {
	pass, total := 0, len(t.Cases)
	var failed []*Case
	todo := ""
	for _, c := range t.Cases {
		switch c.Status {
		case Pass:
			pass++
		case Fail, Running:
			failed = append(failed, c)
			if todo == "" {
				todo = notImplemented(c.Output)
			}
		}
	}
	if todo == "" {
		todo = notImplemented(t.Output)
	}
	switch {
	case t.Status == Pass && len(failed) == 0:
		fmt.Fprintf(w, "  "+lang.Text("PASS  %s (%d/%d)")+"\n", t.Name, pass, total)
		return
	case todo != "" && pass == 0:
		fmt.Fprintf(w, "  "+lang.Text("TODO  %s — %s")+"\n", t.Name, todo)
		return
	}
	fmt.Fprintf(w, "  "+lang.Text("FAIL  %s (%d/%d)")+"\n", t.Name, pass, total)
	for _, l := range t.Output {
		fmt.Fprintf(w, "          %s\n", l)
	}
	for i, c := range failed {
		if i == maxFailuresShown {
			more := len(failed) - i
			fmt.Fprintf(w, "        … and %d more failing %s (all of them: go test -v -run %s ./%s/)\n", more, plural(more, "case"), t.Name, slug)
			break
		}
		if c.Name != "" {
			fmt.Fprintf(w, "        ✗ %s\n", strings.ReplaceAll(c.Name, "_", " "))
		}
		if len(c.Output) == 0 && c.Status == Running {
			fmt.Fprintln(w, "          (no result: the test binary stopped here, probably a panic or a crash)")
		}
		for _, l := range c.Output {
			fmt.Fprintf(w, "          %s\n", l)
		}
	}
}

// notImplemented returns the "Func: not implemented yet" part of the first line
// of output that has one, or "".
func notImplemented(output []string) string {
	for _, l := range output {
		if i := strings.Index(l, NotImplementedYet); i >= 0 {
			return l[:i+len(NotImplementedYet)]
		}
	}
	return ""
}

// WriteList writes one line per exercise to w: number, title, notebook section,
// state from reports (keyed by folder name) and hints revealed according to p,
// followed by a progress summary and a suggestion of what to do next.
func WriteList(w io.Writer, exs []Exercise, reports map[string]*Report, p Progress) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, lang.Text("#\tExercise\tSection\tStatus\tHints"))
	passing := 0
	next := -1
	for i, ex := range exs {
		r := reports[ex.Slug]
		if r != nil && r.Passed() {
			passing++
		} else if next < 0 {
			next = i
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d/%d\n", ex.Number, ex.Title, ex.Section, StateText(State(r)), p.HintsRevealed[ex.Slug], len(ex.Hints))
	}
	tw.Flush()
	fmt.Fprintf(w, "\n"+lang.Text("%d of %d exercises pass."), passing, len(exs))
	if next >= 0 {
		n := exs[next].Number
		fmt.Fprintf(w, " "+lang.Text("Next: exercise %d — read exercises/%s/README.md, then \"%s check %d\" (\"%s hint %d\" if stuck)."), n, exs[next].Slug, Command, n, Command, n)
	}
	fmt.Fprintln(w)
}

// plural returns word, with an "s" unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
