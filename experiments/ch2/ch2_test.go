package ch2

import (
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/internal/labtest"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
)

// These tests pin the numbers notebook 02 states in its prose.

var sim = Setup{Device: "sim"}

func newLab(t testing.TB) *memlab.Lab { return labtest.Open(t, "24GiB") }

func TestStorageVsViews(t *testing.T) {
	l := newLab(t)
	r, err := StorageVsViews(l)
	if err != nil {
		t.Fatal(err)
	}
	if r.AllocatedBase != 4*MiB || r.AllocatedViews != 4*MiB || r.AllocatedCopy != 8*MiB {
		t.Errorf("allocated: base %d, views %d, copy %d; want 4, 4 and 8 MiB", r.AllocatedBase, r.AllocatedViews, r.AllocatedCopy)
	}
	byName := map[string]TensorInfo{}
	for _, ti := range r.Tensors {
		byName[ti.Name] = ti
	}
	tests := []struct {
		name              string
		nbytes, storage   int64
		ptrDelta          int64
		strides           []int
		contiguous, share bool
	}{
		{"x", 4 * MiB, 4 * MiB, 0, []int{1024, 1}, true, true},
		{"x.view(256, 4096)", 4 * MiB, 4 * MiB, 0, []int{4096, 1}, true, true},
		{"x.t()", 4 * MiB, 4 * MiB, 0, []int{1, 1024}, false, true},
		{"x[0:1]", 4096, 4 * MiB, 0, []int{1024, 1}, true, true},
		{"x[512]", 4096, 4 * MiB, 2 * MiB, []int{1}, true, true},
		{"x[:, 100:110]", 40960, 4 * MiB, 400, []int{1024, 1}, false, true},
		{"x.t().contiguous()", 4 * MiB, 4 * MiB, 4 * MiB, []int{1024, 1}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ti, ok := byName[tt.name]
			if !ok {
				t.Fatal("missing")
			}
			if ti.Nbytes != tt.nbytes || ti.StorageNbytes != tt.storage || ti.PtrDelta != tt.ptrDelta ||
				!slices.Equal(ti.Strides, tt.strides) || ti.Contiguous != tt.contiguous || ti.SharesBase != tt.share {
				t.Errorf("got %+v, want %+v", ti, tt)
			}
		})
	}
	if !strings.Contains(r.String(), "x[512]") {
		t.Error("String lacks the rows")
	}
	if _, err := r.Plot(); err != nil {
		t.Error(err)
	}
}

func TestSliceKeepsBase(t *testing.T) {
	s, err := SliceKeepsBase(newLab(t))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{
		"big = empty(4096, 4096)": 64 * MiB,
		"del big":                 64 * MiB, // the row view keeps the storage
		"row2 = row.clone()":      64*MiB + 16*1024,
		"del row":                 16 * 1024,
		"del row2":                0,
	}
	for label, alloc := range want {
		st, ok := s.Find(label)
		if !ok || st.Allocated != alloc {
			t.Errorf("%s: allocated %d, want %d", label, st.Allocated, alloc)
		}
	}
}

func TestTransposeStrides(t *testing.T) {
	r, err := TransposeStrides(newLab(t))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.X.Strides, []int{3, 1}) || !slices.Equal(r.XT.Strides, []int{1, 3}) || r.XT.Contiguous || !r.XT.SharesBase {
		t.Errorf("x %+v, x.t() %+v", r.X, r.XT)
	}
	if !slices.Equal(r.Memory, []float32{0, 1, 2, 3, 4, 5}) || !slices.Equal(r.Logical, []float32{0, 3, 1, 4, 2, 5}) ||
		!slices.Equal(r.CopyMemory, []float32{0, 3, 1, 4, 2, 5}) {
		t.Errorf("orders: memory %v, logical %v, copy %v", r.Memory, r.Logical, r.CopyMemory)
	}
	if r.CopyAllocated != 512 {
		t.Errorf("the copy allocated %d bytes, want one 512-byte block", r.CopyAllocated)
	}
}

func TestSavedTensors(t *testing.T) {
	const layers = 4
	r, err := SavedTensors(newLab(t), layers)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i <= layers; i++ {
		if r.NoGrad[i].Allocated != 2*MiB {
			t.Errorf("no tape, step %d: %d allocated, want a flat 2 MiB", i, r.NoGrad[i].Allocated)
		}
		if want := int64(2+i) * MiB; r.Grad[i].Allocated != want {
			t.Errorf("tape, step %d: %d allocated, want %d (1 MiB more per layer)", i, r.Grad[i].Allocated, want)
		}
	}
	if last := r.Grad[len(r.Grad)-1]; last.Label != "backward" || last.Allocated != 2*MiB {
		t.Errorf("after backward: %+v, want 2 MiB", last)
	}
	if r.SavedBytes != (layers+2)*MiB {
		t.Errorf("saved %d bytes, want W, x and one relu output per layer: %d", r.SavedBytes, (layers+2)*MiB)
	}
	if _, err := SavedTensors(newLab(t), 0); err == nil {
		t.Error("0 layers accepted")
	}
}

func TestAllocatedVsReserved(t *testing.T) {
	s, err := AllocatedVsReserved(newLab(t))
	if err != nil {
		t.Fatal(err)
	}
	start, x, del, y, end := s[0], s[1], s[2], s[3], s[5]
	if x.Allocated != 256*MiB || x.Reserved != 256*MiB || x.DriverUsed-start.DriverUsed != 256*MiB {
		t.Errorf("after x: %+v", x)
	}
	if del.Allocated != 0 || del.Reserved != 256*MiB || del.DriverUsed != x.DriverUsed {
		t.Errorf("after del x: %+v, want 0 allocated, 256 MiB still reserved and in the driver's count", del)
	}
	if y.DeviceAllocs != x.DeviceAllocs {
		t.Errorf("y made a new device allocation (%d → %d); it should reuse the cache", x.DeviceAllocs, y.DeviceAllocs)
	}
	if end.Reserved != 0 || end.DriverUsed != start.DriverUsed {
		t.Errorf("after empty_cache: %+v, want nothing reserved and the driver back at %d", end, start.DriverUsed)
	}
	if start.DriverUsed <= 0 {
		t.Errorf("driver-used at start = %d; the context should occupy memory", start.DriverUsed)
	}
}

func TestChapterSequence(t *testing.T) {
	r, err := ChapterSequence(sim, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range r.Steps {
		if st.Err != "" || st.Reserved > 1024*MiB {
			t.Errorf("%s: %+v; want no OOM and at most 1 GiB reserved", st.Label, st)
		}
	}
	if len(r.At768) != 1 {
		t.Fatalf("at 768 MiB: %d segments, want the one 1 GiB segment", len(r.At768))
	}
	want := []memplot.Block{{Size: 768 * MiB, State: memplot.Allocated}, {Size: 256 * MiB, State: memplot.InactiveSplit}}
	if !slices.Equal(r.At768[0].Blocks, want) {
		t.Errorf("blocks at 768 MiB: %+v, want %+v", r.At768[0].Blocks, want)
	}
	if r.RefErr != "" {
		t.Skipf("PyTorch ground truth not available: %s", r.RefErr)
	}
	if !r.MatchesReference() {
		t.Errorf("memlab differs from PyTorch:\n%s", r)
	}
}

func TestMaxSplitSize(t *testing.T) {
	r, err := MaxSplitSize(sim)
	if err != nil {
		t.Fatal(err)
	}
	peak := func(s Steps) (m int64) {
		for _, st := range s {
			m = max(m, st.Reserved)
		}
		return m
	}
	if peak(r.Default.Steps) != 1024*MiB || peak(r.MaxSplit.Steps) != 2560*MiB {
		t.Errorf("peak reserved: default %d, max_split %d; want 1 GiB and 2.5 GiB", peak(r.Default.Steps), peak(r.MaxSplit.Steps))
	}
	if r.MaxSplit.RefErr == "" && !r.MaxSplit.MatchesReference() {
		t.Errorf("max_split_size_mb:128 differs from PyTorch:\n%s", r.MaxSplit)
	}
	if _, err := r.Plot(); err != nil {
		t.Error(err)
	}
}

func TestFragment(t *testing.T) {
	r, err := Fragment(sim)
	if err != nil {
		t.Fatal(err)
	}
	if r.OK {
		t.Fatal("the large request was served; the workload should fragment")
	}
	if r.Before.TotalFree != FragRounds*FragBig || r.Before.LargestFree != FragBig {
		t.Errorf("gauge %+v, want %d free in blocks of at most %d", r.Before, FragRounds*FragBig, FragBig)
	}
	if r.Before.TotalFree < 19*FragRequest/10 {
		t.Errorf("only %d free; the notebook says about twice the request", r.Before.TotalFree)
	}
	for _, want := range []string{"CUDA out of memory. Tried to allocate 1.50 GiB", "2.91 GiB is reserved by PyTorch but unallocated"} {
		if !strings.Contains(r.Err, want) {
			t.Errorf("OOM message lacks %q: %s", want, r.Err)
		}
	}
	states := map[memplot.BlockState]int{}
	for _, s := range r.Segments {
		for _, b := range s.Blocks {
			states[b.State]++
		}
	}
	if states[memplot.InactiveSplit] != FragRounds || states[memplot.Free] != 0 {
		t.Errorf("block states %v, want %d inactive-split blocks and no whole free segment", states, FragRounds)
	}
	if _, err := r.Plot(); err != nil {
		t.Error(err)
	}
	// The notebook: nothing is free while the batches run (each small tensor
	// fills its segment's leftover exactly); freeing the activations leaves
	// 496 MiB holes, one per batch.
	if len(r.History) != FragRounds+1 {
		t.Fatalf("%d gauge readings, want one per batch and one at the end", len(r.History))
	}
	for i, g := range r.History[:FragRounds] {
		if g.TotalFree != 0 || g.LargestFree != 0 {
			t.Errorf("after batch %d: %+v; want the small tensor to have filled the leftover", i+1, g)
		}
	}
	if last := r.History[FragRounds]; last.TotalFree != FragRounds*FragBig || last.LargestFree != FragBig {
		t.Errorf("at the end: %+v", last)
	}
	if _, err := r.PlotHistory(); err != nil {
		t.Error(err)
	}
}

func TestRemedies(t *testing.T) {
	rs, err := Remedies(sim)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"fragmented (default)": false, "pre-allocation": true, "uniform sizes": true,
		"max_split_size_mb:256": true, "expandable_segments": true}
	if len(rs) != len(want) {
		t.Fatalf("%d variants, want %d", len(rs), len(want))
	}
	for _, r := range rs {
		if ok, known := want[r.Name]; !known || r.OK != ok {
			t.Errorf("%s: served %v, want %v (%s)", r.Name, r.OK, ok, r.Err)
		}
		if r.PeakReserved > FragBudget {
			t.Errorf("%s: peak reserved %d above the budget", r.Name, r.PeakReserved)
		}
	}
	// The notebook: "uniform sizes and max_split_size_mb hold 3.09 GiB at peak,
	// against 3 GiB for the fragmented run".
	peaks := map[string]int64{"fragmented (default)": 3072 * MiB, "uniform sizes": 3168 * MiB, "max_split_size_mb:256": 3168 * MiB}
	for _, r := range rs {
		if want, ok := peaks[r.Name]; ok && r.PeakReserved != want {
			t.Errorf("%s: peak reserved %d, want %d", r.Name, r.PeakReserved, want)
		}
	}
	if !strings.Contains(RemedyTable(rs), "uniform sizes") {
		t.Error("RemedyTable lacks a variant")
	}
	if _, err := PlotRemedies(rs); err != nil {
		t.Error(err)
	}
}

func TestAPITour(t *testing.T) {
	calls, err := APITour(newLab(t))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range calls {
		got[c.Go] = c.Result
	}
	for goName, want := range map[string]string{
		"MemoryAllocated()":                "100.00 MiB",
		"MemoryReserved()":                 "150.00 MiB",
		"ResetPeakMemoryStats()":           "is now 100.00 MiB",
		"EmptyCache()":                     "is now 100.00 MiB",
		"SetPerProcessMemoryFraction(1.5)": "allowed range is 0~1",
		"MemGetInfo()":                     "of 24.00 GiB",
	} {
		if !strings.Contains(got[goName], want) {
			t.Errorf("%s = %q, want it to contain %q", goName, got[goName], want)
		}
	}
	if len(calls) != 13 {
		t.Errorf("%d calls, want 13", len(calls))
	}
}

func TestLeakCheck(t *testing.T) {
	r, err := LeakCheck(newLab(t), 8)
	if err != nil {
		t.Fatal(err)
	}
	if r.Leaky != 8*MiB || r.Fixed != 0 {
		t.Errorf("leaked: %d and %d, want 8 MiB and 0", r.Leaky, r.Fixed)
	}
	if len(r.LeakyCurve) != 8 || r.LeakyCurve[7]-r.LeakyCurve[0] != 7*MiB {
		t.Errorf("leaky curve %v, want 1 MiB more per step", r.LeakyCurve)
	}
}

func TestSharedDevice(t *testing.T) {
	r, err := SharedDevice(sim)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.AOOMErr, "4.00 GiB allowed") || !strings.Contains(r.AOOMErr, "of which 4.50 GiB is free") {
		t.Errorf("A's error does not name its cap: %s", r.AOOMErr)
	}
	start, last := r.Steps[0], r.Steps[len(r.Steps)-1]
	if last.AReserved != 3072*MiB || last.BReserved != 3072*MiB || last.DriverUsed-start.DriverUsed != 6144*MiB {
		t.Errorf("end: %+v; want 3 GiB each and the driver counting 6 GiB more", last)
	}
	if _, err := r.Plot(); err != nil {
		t.Error(err)
	}
}

func TestCatalogRunsOnTheSimulator(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every experiment")
	}
	for _, e := range Catalog() {
		t.Run(e.Section+" "+e.Name, func(t *testing.T) {
			rep, err := e.Run("sim")
			if err != nil {
				t.Fatal(err)
			}
			if rep.Text == "" {
				t.Error("empty report")
			}
		})
	}
}

func TestSetupOpen(t *testing.T) {
	tests := []struct {
		name   string
		setup  Setup
		budget int64
		total  uint64
		err    string
	}{
		{"simulator sized to the budget", sim, 4096 * MiB, 4096 * MiB, ""},
		{"explicit simulator capacity is replaced", Setup{Device: "sim:80GiB"}, 2048 * MiB, 2048 * MiB, ""},
		{"budget too small", sim, 100, 0, "need at least 1 MiB"},
		{"bad device", Setup{Device: "tpu"}, 4096 * MiB, 0, `open device "tpu"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := tt.setup.Open("", tt.budget)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Open = %v, want an error containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if _, total, _ := l.MemGetInfo(); total != tt.total {
				t.Errorf("total %d, want %d", total, tt.total)
			}
		})
	}
}
