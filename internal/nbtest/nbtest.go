// Package nbtest runs the cells of a notebook written as Go
// (notebooks/src/NAME) inside `go test`: each cell's printed output is
// captured for the test to assert on, every figure it shows is drawn (to
// PNG, in memory), and a failing cell, a "plot" cell without a figure, a
// table or preformatted text wider than a notebook's output
// (memlab.OutputWidth) or a tensor the cell dropped without releasing fails
// the test.
//
//	func TestStorage(t *testing.T) {
//		out := nbtest.Run(t, Cells, "storageVsViews")
//		nbtest.Want(t, out, `Measured: every view .* 4\.00 MiB`)
//	}
package nbtest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/tensor"
)

// mu serialises cells: they share os.Stdout and the figure sink.
var mu sync.Mutex

// Result is what one cell did.
type Result struct {
	Output  string            // everything the cell printed
	Figures []*memplot.Figure // the figures it showed, in order
}

// Run runs the named cell and returns its output. The test fails if the cell
// is not in cells, panics, shows no figure although tagged "plot", shows a
// table (or preformatted text) wider than memlab.OutputWidth, or leaks a
// tensor (collected by Go without Release).
func Run(t testing.TB, cells []memlab.Cell, name string) string {
	t.Helper()
	return Exec(t, cells, name).Output
}

// Exec is [Run] returning the figures too.
func Exec(t testing.TB, cells []memlab.Cell, name string) Result {
	t.Helper()
	for _, c := range cells {
		if c.Name == name {
			return exec(t, c)
		}
	}
	t.Fatalf("nbtest: no cell %q (the cells are the //nb:cell functions; run go run ./scripts/mknotebooks after adding one)", name)
	return Result{}
}

func exec(t testing.TB, c memlab.Cell) (res Result) {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	leaks := &lockedWriter{}
	prevLeak := tensor.SetLeakWriter(leaks)
	defer tensor.SetLeakWriter(prevLeak)
	prevSink := memlab.SetFigureSink(func(mf memlab.Figure) error {
		f, ok := mf.(*memplot.Figure)
		if !ok {
			return fmt.Errorf("nbtest: a figure of type %T, not a memplot figure", mf)
		}
		if _, err := f.PNG(); err != nil {
			return err
		}
		res.Figures = append(res.Figures, f)
		return nil
	})
	defer memlab.SetFigureSink(prevSink)
	// Tables and preformatted text print as they would without the sink; each
	// must fit the notebook's output with the file browser open.
	var wide []string
	prevDisplay := memlab.SetDisplaySink(func(d memlab.Display) error {
		if w := d.Width(); w > memlab.OutputWidth {
			wide = append(wide, fmt.Sprintf("%d columns:\n%s", w, d.Text))
		}
		_, err := io.WriteString(memlab.Output, d.Text)
		return err
	})
	defer memlab.SetDisplaySink(prevDisplay)

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		io.Copy(&out, r)
		close(done)
	}()
	prevStdout, prevOutput := os.Stdout, memlab.Output
	os.Stdout, memlab.Output = w, w
	_, runErr := c.Exec()
	os.Stdout, memlab.Output = prevStdout, prevOutput
	w.Close()
	<-done
	r.Close()
	res.Output = out.String()
	if runErr != nil {
		t.Fatalf("cell %s failed: %v\noutput:\n%s", c.Name, runErr, res.Output)
	}
	for _, w := range wide {
		t.Errorf("cell %s shows a table wider than a notebook's output (%d columns) by %s", c.Name, memlab.OutputWidth, w)
	}
	// A tensor the cell dropped without Release is reported when Go collects it.
	for range 3 {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	if l := leaks.String(); l != "" {
		t.Errorf("cell %s leaked tensors (dropped without Release):\n%s", c.Name, l)
	}
	return res
}

// All runs every cell in order and returns their outputs by name.
func All(t testing.TB, cells []memlab.Cell) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, c := range cells {
		out[c.Name] = exec(t, c).Output
	}
	return out
}

// Want fails the test unless out matches every regular expression.
func Want(t testing.TB, out string, patterns ...string) {
	t.Helper()
	for _, p := range patterns {
		if !regexp.MustCompile(p).MatchString(out) {
			t.Errorf("output does not match %q:\n%s", p, indent(out))
		}
	}
}

// Line returns the first line of out that starts with prefix (such as
// "Measured:"), failing the test if there is none.
func Line(t testing.TB, out, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	t.Fatalf("no line starting %q in:\n%s", prefix, indent(out))
	return ""
}

func indent(s string) string {
	return "\t" + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n\t")
}

// lockedWriter collects leak reports, which arrive from the runtime's cleanup goroutine.
type lockedWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
