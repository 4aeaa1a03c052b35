package ch4

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/model"
	"memlab.dev/memlab/tensor"
)

// capture returns what f prints on stdout and memlab.Output.
func capture(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	prevStdout, prevOutput := os.Stdout, memlab.Output
	os.Stdout, memlab.Output = w, w
	done := make(chan string)
	go func() {
		var b bytes.Buffer
		io.Copy(&b, r)
		done <- b.String()
	}()
	f()
	os.Stdout, memlab.Output = prevStdout, prevOutput
	w.Close()
	return <-done
}

// TestPartly: Holds, PartlyHolds or DoesNotHold.
func TestPartly(t *testing.T) {
	for _, c := range []struct {
		all, some bool
		want      memlab.Verdict
	}{{true, true, memlab.Holds}, {true, false, memlab.Holds}, {false, true, memlab.PartlyHolds}, {false, false, memlab.DoesNotHold}} {
		if got := Partly(c.all, c.some); got != c.want {
			t.Errorf("Partly(%v, %v) = %v, want %v", c.all, c.some, got, c.want)
		}
	}
}

// TestBatchTable: a row per run, each saving against the first.
func TestBatchTable(t *testing.T) {
	s := BatchTable([]BatchRun{{Name: "a", Peak: 200, Calls: 5, Mallocs: 1}, {Name: "b", Peak: 150, Calls: 3}}).String()
	for _, want := range []string{"a", "0.0 %", "b", "25.0 %"} {
		if !strings.Contains(s, want) {
			t.Errorf("BatchTable lacks %q:\n%s", want, s)
		}
	}
}

// TestInPlaceTable: the verdict needs the cases of BERTCases, and says so
// without them rather than panic.
func TestInPlaceTable(t *testing.T) {
	if n := len(BERTCases()); n != 8 {
		t.Fatalf("BERTCases: %d cases, want 8", n)
	}
	tab := NewInPlaceTable()
	if out := capture(t, tab.Judge); !strings.Contains(out, "no verdict") {
		t.Errorf("Judge of an empty table printed %q", out)
	}
	for i, c := range BERTCases() {
		tab.Add(c, 100, 88-int64(i%2)) // 12 % and 13 %
	}
	if out := capture(t, tab.Judge); !strings.Contains(out, "in place saves 12.0 % at 128 tokens") || !strings.Contains(out, "→ holds") {
		t.Errorf("Judge printed %q", out)
	}
}

// TestFitTable: a pass fits a device between a small and a large pass, the
// large one does not.
func TestFitTable(t *testing.T) {
	pass := func(n int) func(*memlab.Lab) int64 {
		return func(l *memlab.Lab) int64 {
			x := memlab.Must(tensor.Empty(l, tensor.Float32, n<<18)) // n MiB
			memlab.Check(x.Release())
			return l.MaxMemoryAllocated()
		}
	}
	tab := NewFitTable(pass(64), pass(512))
	tab.Run(1, model.Baseline, pass(64))
	tab.Run(2, model.Baseline, pass(512))
	if !tab.Fits(1, model.Baseline) || tab.Fits(2, model.Baseline) || tab.Fits(3, model.Baseline) {
		t.Errorf("fits: %v %v %v, want true false false", tab.Fits(1, model.Baseline), tab.Fits(2, model.Baseline), tab.Fits(3, model.Baseline))
	}
}

// TestMergeTable: a segment of one free block has merged; one of two free
// blocks has not.
func TestMergeTable(t *testing.T) {
	l := memlab.MustOpen(memlab.AllocConf(""), memlab.NotCurrent())
	defer l.Close()
	tab := NewMergeTable()
	x := memlab.Must(tensor.Empty(l, tensor.Float32, 1<<18))
	memlab.Check(x.Release())
	tab.Add("", l, 1)
	if !tab.Merged() {
		t.Error("one free block per segment: not merged")
	}
	a, b := memlab.Must(tensor.Empty(l, tensor.Float32, 1<<10)), memlab.Must(tensor.Empty(l, tensor.Float32, 1<<10))
	memlab.Check(a.Release())
	tab.Add("x", l, 2) // a free block beside b's: two blocks in a segment
	memlab.Check(b.Release())
	if tab.Merged() {
		t.Error("a segment of two blocks counted as merged")
	}
}

// TestFill writes through a 0-d view and leaves memory_allocated where it was.
func TestFill(t *testing.T) {
	l := memlab.MustOpen(memlab.AllocConf(""), memlab.NotCurrent())
	defer l.Close()
	x := memlab.Must(tensor.Arange(l, tensor.Float32, 0, 4, 1))
	before := l.MemoryAllocated()
	v := memlab.Must(x.Select(0, 2))
	if err := Fill(v, 9); err != nil {
		t.Fatal(err)
	}
	if got := memlab.Must(x.Float32s()); got[2] != 9 || l.MemoryAllocated() != before || x.Version() != 1 {
		t.Errorf("after Fill: x = %v, allocated %d (was %d), version %d", got, l.MemoryAllocated(), before, x.Version())
	}
	memlab.Check(tensor.ReleaseAll(v, x))
}

// TestLiveSpread returns the median and prints the range.
func TestLiveSpread(t *testing.T) {
	var m float64
	out := capture(t, func() { m = LiveSpread("sim:0", []float64{9, -1, 4}) })
	if m != 4 || !strings.Contains(out, "from -1.0 % to 9.0 %") {
		t.Errorf("LiveSpread = %v, printed %q", m, out)
	}
	if LiveSpread("sim:0", nil) != 0 {
		t.Error("LiveSpread of no runs is not 0")
	}
}

// TestNewEngineAndFirstRequest: an unknown size is an error, not a panic;
// the small size's engine generates its first request.
func TestNewEngineAndFirstRequest(t *testing.T) {
	l := memlab.MustOpen(memlab.AllocConf(""), memlab.NotCurrent())
	defer l.Close()
	if _, err := NewEngine(l, "huge", model.Baseline, nil); err == nil || !strings.Contains(err.Error(), "ch4: NewEngine") {
		t.Errorf("NewEngine of an unknown size: %v", err)
	}
	if _, err := FirstRequest("huge"); err == nil {
		t.Error("FirstRequest of an unknown size: no error")
	}
	req, err := FirstRequest("small")
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(l, "small", model.KVCache, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := e.Generate(req)
	if err != nil || len(g.Tokens) != req.Decode {
		t.Errorf("Generate: %d tokens, %v; want %d", len(g.Tokens), err, req.Decode)
	}
	if err := e.Release(); err != nil || l.MemoryAllocated() != 0 {
		t.Errorf("Release: %v, %d bytes left", err, l.MemoryAllocated())
	}
}
