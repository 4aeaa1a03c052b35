package nbtest

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/tensor"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); runtime.Goexit() }
func (r *recorder) Fatal(args ...any)                 { r.Errorf("%s", fmt.Sprint(args...)); runtime.Goexit() }

// failures runs f with a recorder and returns what it reported.
func failures(t *testing.T, f func(tb testing.TB)) string {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return strings.Join(r.errors, "\n")
}

func TestRunCapturesOutputAndFigures(t *testing.T) {
	cells := []memlab.Cell{{Name: "ok", Plot: true, Func: func() {
		fmt.Println("printed")
		memlab.Measured("%d", 42)
		memlab.Show(memplot.Bars("b", "MiB", []string{"a"}, memplot.BarSeries{Name: "s", Values: []float64{1}}))
	}}}
	res := Exec(t, cells, "ok")
	if res.Output != "printed\nMeasured: 42\n" || len(res.Figures) != 1 {
		t.Errorf("output %q, %d figures", res.Output, len(res.Figures))
	}
	if got := Line(t, res.Output, "Measured:"); got != "Measured: 42" {
		t.Errorf("Line = %q", got)
	}
}

func TestRunFails(t *testing.T) {
	for name, tt := range map[string]struct {
		cell memlab.Cell
		want string
	}{
		"panics":         {memlab.Cell{Name: "c", Func: func() { memlab.Check(fmt.Errorf("boom")) }}, "cell c failed: memlab: cell c"},
		"plot not shown": {memlab.Cell{Name: "c", Plot: true, Func: func() {}}, "tagged plot but showed no figure"},
		"missing":        {memlab.Cell{Name: "other", Func: func() {}}, `no cell "c"`},
		"leaks a tensor": {memlab.Cell{Name: "c", Func: leak}, "cell c leaked tensors"},
	} {
		t.Run(name, func(t *testing.T) {
			got := failures(t, func(tb testing.TB) { Run(tb, []memlab.Cell{tt.cell}, "c") })
			if !strings.Contains(got, tt.want) {
				t.Errorf("failures %q, want %q", got, tt.want)
			}
		})
	}
	if got := failures(t, func(tb testing.TB) { Want(tb, "abc", `b`, `x+`) }); !strings.Contains(got, `does not match "x+"`) || strings.Contains(got, `"b"`) {
		t.Errorf("Want: %q", got)
	}
}

// leak drops a tensor without releasing it.
func leak() {
	l := memlab.MustOpen(memlab.Sim("1GiB"))
	defer l.Close()
	memlab.Must(tensor.Empty(l, tensor.Float32, 16))
}
