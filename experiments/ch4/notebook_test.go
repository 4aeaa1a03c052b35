package ch4

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/model"
	"memlab.dev/memlab/tensor"
)

// TestMemoryOnlySameAccounting runs the same generation with the simulator's
// kernels and memory only: the peak, the allocator calls and the cudaMallocs
// agree, which is what lets notebook 04 measure BERT-base's sizes in
// milliseconds.
func TestMemoryOnlySameAccounting(t *testing.T) {
	size, err := model.SizeByName("small")
	if err != nil {
		t.Fatal(err)
	}
	req, err := size.Workload.Make(size.Config.Vocab)
	if err != nil {
		t.Fatal(err)
	}
	type acct struct{ peak, calls, mallocs int64 }
	run := func(memOnly bool) acct {
		l, err := memlab.Open(memlab.Device("sim"), memlab.AllocConf(""), memlab.NotCurrent())
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if got := MemoryOnly(l); got != memOnly && memOnly {
			t.Fatal("MemoryOnly refused the simulator")
		} else if !memOnly {
			l.Kernels = l.Device()
		}
		m, err := model.New(l, size.Config)
		if err != nil {
			t.Fatal(err)
		}
		e, err := m.NewEngine(model.Chapter, model.EngineOptions{MaxLen: size.Workload.MaxLen()})
		if err != nil {
			t.Fatal(err)
		}
		calls, mallocs := AllocCalls(l), Mallocs(l)
		l.ResetPeakMemoryStats()
		if _, err := e.Generate(req[0]); err != nil {
			t.Fatal(err)
		}
		a := acct{l.MaxMemoryAllocated(), AllocCalls(l) - calls, Mallocs(l) - mallocs}
		if err := errors.Join(e.Release(), m.Release()); err != nil {
			t.Fatal(err)
		}
		return a
	}
	if real, only := run(false), run(true); real != only {
		t.Errorf("with kernels %+v, memory only %+v", real, only)
	}
}

func TestNotebookHelpers(t *testing.T) {
	if got := Percent(90, 100); math.Abs(got-10) > 1e-9 {
		t.Errorf("Percent(90, 100) = %g", got)
	}
	if got := Percent(1, 0); got != 0 {
		t.Errorf("Percent(1, 0) = %g", got)
	}
	if got := Median([]time.Duration{3, 1, 2}); got != 2 {
		t.Errorf("Median = %v", got)
	}
	if got := Median(nil); got != 0 {
		t.Errorf("Median(nil) = %v", got)
	}
	for _, c := range []struct {
		saved []float64
		want  memlab.Verdict
	}{{[]float64{11.1, 12}, memlab.Holds}, {[]float64{11.1, 0}, memlab.Depends}, {[]float64{0, 30}, memlab.DoesNotHold}, {nil, memlab.DoesNotHold}} {
		if got := NearTwelve(c.saved); got != c.want {
			t.Errorf("NearTwelve(%v) = %v, want %v", c.saved, got, c.want)
		}
	}
	base := InferenceRow{AllocCalls: 10, Working: 10}
	for _, c := range []struct {
		row  InferenceRow
		want memlab.Verdict
	}{{InferenceRow{AllocCalls: 5, Working: 5}, memlab.Holds}, {InferenceRow{AllocCalls: 5, Working: 12}, memlab.PartlyHolds}, {InferenceRow{AllocCalls: 12, Working: 5}, memlab.DoesNotHold}} {
		if got := Essence(c.row, base); got != c.want {
			t.Errorf("Essence(%+v) = %v, want %v", c.row, got, c.want)
		}
	}
	if got := Fits(nil); got != "fits" {
		t.Errorf("Fits(nil) = %q", got)
	}
	if got := ScoresToMLP(512, false); got != "2.0×" {
		t.Errorf("ScoresToMLP(512) = %q", got)
	}
}

// TestFitsNamesTheOperation reads an out-of-memory error as the notebook's
// table shows it.
func TestFitsNamesTheOperation(t *testing.T) {
	_, _, err := OnDevice(64<<20, func(l *memlab.Lab) int64 {
		x := memlab.Must(tensor.Empty(l, tensor.Float32, 1<<20)) // 4 MiB
		defer x.Release()
		y := memlab.Must(x.Scale(2))
		defer y.Release()
		memlab.Must(tensor.Empty(l, tensor.Float32, 32<<20)) // 128 MiB: no
		return 0
	})
	if !memlab.IsOutOfMemory(err) {
		t.Fatalf("err = %v, want out of memory", err)
	}
	if got := Fits(err); !strings.HasPrefix(got, "out of memory in ") || !strings.Contains(got, "asking for 128.00 MiB") {
		t.Errorf("Fits = %q", got)
	}
}

// TestLatencyEvidence: a GPU's verdict rests on its live runs, the
// simulator's on the recorded large run.
func TestLatencyEvidence(t *testing.T) {
	rec, err := LoadRecorded()
	if err != nil {
		t.Fatal(err)
	}
	src, v := LatencyEvidence("cuda:0 (NVIDIA H200)", 3.5, rec)
	if v != 3.5 || !strings.HasPrefix(src, "live on cuda:0") {
		t.Errorf("GPU: %q %g", src, v)
	}
	src, v = LatencyEvidence("sim:0 (memlab simulated GPU (80 GiB))", 30, rec)
	if !strings.HasPrefix(src, "recorded on cuda:0") || v < 8 || v > 10 {
		t.Errorf("simulator: %q %g", src, v)
	}
}
