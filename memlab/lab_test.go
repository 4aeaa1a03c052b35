package memlab

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/device/sim"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/tensor"
)

const mib = 1 << 20

func openSim(t *testing.T, opts ...Option) *Lab {
	t.Helper()
	l, err := Open(append([]Option{Sim("4GiB"), AllocConf("")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func TestOpenErrors(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		want string
	}{
		{"bad alloc conf", []Option{Sim(""), AllocConf("max_split_size_mb:abc")}, "memlab: allocator config"},
		{"bad device spec", []Option{Device("tpu:0")}, `memlab: open device "tpu:0"`},
		{"bad capacity", []Option{Sim("lots")}, `memlab: Sim("lots"): units: size "lots": not a number`},
		{"NaN capacity", []Option{Sim("NaN")}, `memlab: Sim("NaN")`},
		{"capacity with an index", []Option{Sim("1:24GiB")}, `memlab: Sim("1:24GiB")`},
		{"nil device", []Option{OnDevice(nil)}, "memlab: OnDevice(nil)"},
		{"nil lab to share", []Option{SharedWith(nil)}, "memlab: SharedWith(nil)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Open(tt.opts...)
			if err == nil {
				l.Close()
				t.Fatalf("Open succeeded, want an error containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Open error = %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestAllocateGoesThroughTheAllocator(t *testing.T) {
	l := openSim(t)
	p, err := l.Allocate(3 * mib)
	if err != nil {
		t.Fatal(err)
	}
	// 3 MiB is a large-pool request: a 20 MiB segment, of which the block takes 3 MiB.
	if got := l.MemoryAllocated(); got != 3*mib {
		t.Errorf("MemoryAllocated = %d, want %d", got, 3*mib)
	}
	if got := l.MemoryReserved(); got != 20*mib {
		t.Errorf("MemoryReserved = %d, want %d", got, 20*mib)
	}
	used, err := l.DriverUsed()
	if err != nil {
		t.Fatal(err)
	}
	if used < 20*mib {
		t.Errorf("DriverUsed = %d, want at least the 20 MiB segment", used)
	}
	if err := l.Deallocate(p); err != nil {
		t.Fatal(err)
	}
	if got, res := l.MemoryAllocated(), l.MemoryReserved(); got != 0 || res != 20*mib {
		t.Errorf("after Deallocate: allocated %d reserved %d, want 0 and %d", got, res, 20*mib)
	}
	if err := l.Deallocate(p); err == nil {
		t.Error("a second Deallocate of the same pointer succeeded")
	}
	if err := l.EmptyCache(); err != nil {
		t.Fatal(err)
	}
	if l.MemoryReserved() != 0 {
		t.Errorf("MemoryReserved after EmptyCache = %d", l.MemoryReserved())
	}
	if l.MaxMemoryAllocated() != 3*mib || l.MaxMemoryReserved() != 20*mib {
		t.Errorf("peaks = %d, %d", l.MaxMemoryAllocated(), l.MaxMemoryReserved())
	}
	l.ResetPeakMemoryStats()
	if l.MaxMemoryAllocated() != 0 {
		t.Errorf("MaxMemoryAllocated after reset = %d", l.MaxMemoryAllocated())
	}
}

func TestOutOfMemory(t *testing.T) {
	l := openSim(t)
	_, err := l.Allocate(8 << 30)
	if !IsOutOfMemory(err) {
		t.Fatalf("Allocate(8 GiB) on a 4 GiB device: %v, want an out-of-memory error", err)
	}
	var oom *allocator.OutOfMemoryError
	if !errors.As(err, &oom) || !strings.HasPrefix(err.Error(), "CUDA out of memory. Tried to allocate 8.00 GiB") {
		t.Errorf("error = %v, want PyTorch's message", err)
	}
	if IsOutOfMemory(errors.New("other")) || IsOutOfMemory(nil) {
		t.Error("IsOutOfMemory is true for other errors")
	}
}

func TestSharedDeviceHasSeparateAllocators(t *testing.T) {
	a := openSim(t)
	b, err := Open(SharedWith(a), AllocConf(""), NotCurrent())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Device() != a.Device() || b.Allocator() == a.Allocator() {
		t.Fatal("SharedWith: want the same device and another allocator")
	}
	usedBefore, _ := a.DriverUsed()
	if _, err := b.Allocate(100 * mib); err != nil {
		t.Fatal(err)
	}
	if a.MemoryAllocated() != 0 || b.MemoryAllocated() != 100*mib {
		t.Errorf("allocated: a %d, b %d; want 0 and 100 MiB", a.MemoryAllocated(), b.MemoryAllocated())
	}
	usedAfter, _ := a.DriverUsed()
	if usedAfter-usedBefore != 100*mib {
		t.Errorf("a's driver view grew by %d, want b's 100 MiB", usedAfter-usedBefore)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.MemGetInfo(); err != nil {
		t.Errorf("closing the sharing lab closed the device: %v", err)
	}
}

func TestCurrentLab(t *testing.T) {
	a := openSim(t)
	if c, _ := Current(); c != a {
		t.Fatal("Open did not make the lab current")
	}
	b := openSim(t, NotCurrent())
	if c, _ := Current(); c != a {
		t.Fatal("NotCurrent replaced the current lab")
	}
	if _, err := b.Allocate(mib); err != nil {
		t.Fatal(err)
	}
	if MemoryAllocated() != 0 {
		t.Errorf("package MemoryAllocated = %d, want the current lab's 0", MemoryAllocated())
	}
	SetCurrent(b)
	if MemoryAllocated() != mib || MemoryReserved() != 2*mib || MaxMemoryAllocated() != mib || MaxMemoryReserved() != 2*mib {
		t.Errorf("package functions on b: %d %d %d %d", MemoryAllocated(), MemoryReserved(), MaxMemoryAllocated(), MaxMemoryReserved())
	}
	if MemoryStats()["allocation.all.current"] != 1 {
		t.Errorf("MemoryStats allocation.all.current = %d", MemoryStats()["allocation.all.current"])
	}
	if len(Snapshot().Segments) != 1 {
		t.Errorf("Snapshot has %d segments, want 1", len(Snapshot().Segments))
	}
	if !strings.Contains(MemorySummary(), "PyTorch CUDA memory summary") {
		t.Error("MemorySummary is not PyTorch's table")
	}
	if err := SetPerProcessMemoryFraction(2); err == nil {
		t.Error("fraction 2 accepted")
	}
	free, total, err := MemGetInfo()
	if err != nil || free >= total {
		t.Errorf("MemGetInfo = %d, %d, %v", free, total, err)
	}
	ResetPeakMemoryStats()
	if err := EmptyCache(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	currentMu.Lock()
	cur := current
	currentMu.Unlock()
	if cur != nil {
		t.Error("closing the current lab left it current")
	}
}

func TestLatencyOptions(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		want bool // the simulator models latency
	}{
		{"plain simulator", []Option{Sim("1GiB")}, false},
		{"WithLatency", []Option{Sim("1GiB"), WithLatency()}, true},
		{"SimConfig H200", []Option{SimConfig(sim.H200())}, true},
		{"SimConfig with WithLatency", []Option{SimConfig(sim.Config{Capacity: 1 << 30}), WithLatency()}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Open(append(tt.opts, AllocConf(""), NotCurrent())...)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			d, ok := l.Device().(*sim.Device)
			if !ok {
				t.Fatalf("device %T, want *sim.Device", l.Device())
			}
			if got := d.Config().ModelLatency; got != tt.want {
				t.Errorf("ModelLatency = %v, want %v", got, tt.want)
			}
			if _, total, _ := l.MemGetInfo(); tt.name == "WithLatency" && total != 1<<30 {
				t.Errorf("capacity %d after reopening, want 1 GiB", total)
			}
		})
	}
	if _, err := Open(SimConfig(sim.Config{Capacity: 1}), NotCurrent()); err == nil || !strings.Contains(err.Error(), "memlab: simulated device") {
		t.Errorf("a 1-byte simulator: %v", err)
	}
}

func TestDescribe(t *testing.T) {
	l := openSim(t, AllocConf("max_split_size_mb:128"))
	d := l.Describe()
	for _, want := range []string{"device:     sim:0", "4.00 GiB", "chosen:     requested (argument \"sim:0:4GiB\")", "alloc conf: max_split_size_mb:128"} {
		if !strings.Contains(d, want) {
			t.Errorf("Describe() = %q, want it to mention %q", d, want)
		}
	}
}

func TestCheckLeaks(t *testing.T) {
	l := openSim(t)
	var kept []uint64
	tests := []struct {
		name   string
		f      func() error
		leaked int64
		err    string
	}{
		{"releases everything", func() error {
			p, err := l.Allocate(mib)
			if err != nil {
				return err
			}
			return l.Deallocate(p)
		}, 0, ""},
		{"keeps one block", func() error {
			p, err := l.Allocate(2 * mib)
			kept = append(kept, uint64(p))
			return err
		}, 2 * mib, ""},
		{"fails", func() error { return errors.New("boom") }, 0, "memlab: CheckLeaks: boom"},
		{"nil", nil, 0, "CheckLeaks(nil)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			leaked, err := l.CheckLeaks(tt.f)
			if leaked != tt.leaked {
				t.Errorf("leaked = %d, want %d", leaked, tt.leaked)
			}
			if (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("err = %v, want %q", err, tt.err)
			}
		})
	}
}

func TestSegmentsStates(t *testing.T) {
	l := openSim(t)
	a, _ := l.Allocate(100 * mib)
	b, _ := l.Allocate(100 * mib)
	if err := l.Deallocate(b); err != nil {
		t.Fatal(err)
	}
	// b's free 100 MiB segment is whole (Free); now split a fresh cached one.
	c, _ := l.Allocate(40 * mib) // takes the low part of b's segment, 60 MiB left
	segs := Segments(l.Snapshot())
	var states []memplot.BlockState
	for _, s := range segs {
		for _, blk := range s.Blocks {
			states = append(states, blk.State)
		}
	}
	want := []memplot.BlockState{memplot.Allocated, memplot.Allocated, memplot.InactiveSplit}
	if len(states) != len(want) {
		t.Fatalf("block states %v, want %v", states, want)
	}
	for i := range want {
		if states[i] != want[i] {
			t.Errorf("block %d state %v, want %v", i, states[i], want[i])
		}
	}
	g := l.Gauge("now")
	if g.LargestFree != 60*mib || g.TotalFree != 60*mib {
		t.Errorf("gauge %+v, want 60 MiB largest and total", g)
	}
	l.Deallocate(c)
	l.Deallocate(a)
	segs = Segments(l.Snapshot())
	if len(segs) != 2 || segs[0].Blocks[0].State != memplot.Free || segs[1].Blocks[0].State != memplot.Free {
		t.Errorf("after freeing everything: %+v, want two whole free segments", segs)
	}
	if _, err := memplot.SegmentMap("x", l.Segments()); err != nil {
		t.Error(err)
	}
}

func TestShowTextOutsideNotebook(t *testing.T) {
	var buf bytes.Buffer
	old := Output
	Output = &buf
	defer func() { Output = old }()
	l := openSim(t)
	l.ShowSummary()
	if !strings.Contains(buf.String(), "PyTorch CUDA memory summary") {
		t.Errorf("ShowSummary printed %q", buf.String())
	}
	buf.Reset()
	l.ShowStats("num_device_alloc", "reserved_bytes.all.current", "no.such.key")
	out := buf.String()
	for _, want := range []string{"num_device_alloc", "(no such stat)", "reserved_bytes.all.current"} {
		if !strings.Contains(out, want) {
			t.Errorf("ShowStats output lacks %q:\n%s", want, out)
		}
	}
}

func TestStatsTable(t *testing.T) {
	got := StatsTable(map[string]int64{"b_bytes": 2 * mib, "a": 3}).String()
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "a") || !strings.Contains(lines[2], "2.00 MiB") {
		t.Errorf("StatsTable = %q; want a header, then a, then b_bytes with its size", got)
	}
}

func TestRegister(t *testing.T) {
	if err := Register(Experiment{Chapter: "9", Section: "9.1", Name: "x"}); err == nil {
		t.Error("an experiment without Run was registered")
	}
	run := func(string) (Report, error) { return Report{}, nil }
	if err := Register(Experiment{Chapter: "9", Section: "9.1", Name: "x", Run: run}); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range Experiments() {
		found = found || (e.Chapter == "9" && e.Name == "x")
	}
	if !found {
		t.Error("registered experiment not listed")
	}
}

// TestLabConcurrentUse allocates from several goroutines while a recorder
// listens; run with -race.
func TestLabConcurrentUse(t *testing.T) {
	l := openSim(t)
	rec := l.Record()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				p, err := l.Allocate(int64(1+i%3) * mib)
				if err != nil {
					t.Error(err)
					return
				}
				_ = l.MemoryAllocated()
				if err := l.Deallocate(p); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	go rec.Mark("half")
	wg.Wait()
	rec.Stop()
	if l.MemoryAllocated() != 0 {
		t.Errorf("MemoryAllocated = %d after all goroutines released", l.MemoryAllocated())
	}
	if rec.Events() < 400 {
		t.Errorf("recorder saw %d events, want at least 400 (an alloc and a free each)", rec.Events())
	}
}

// A bare number given to Sim is the capacity in bytes, never the device index.
func TestSimBareNumberIsACapacity(t *testing.T) {
	l, err := Open(Sim("1073741824"), AllocConf(""))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, total, err := l.Device().MemGetInfo()
	if err != nil {
		t.Fatal(err)
	}
	if l.String() != "sim:0" || total != 1<<30 {
		t.Fatalf("Sim(\"1073741824\") opened %s with %d bytes; want sim:0 with 1073741824", l, total)
	}
}

// Tensors of two labs cannot be combined, and the error tells the two
// devices apart although both are named sim:0.
func TestOpsAcrossTwoLabsNameThemApart(t *testing.T) {
	a, b := openSim(t), openSim(t)
	x, err := tensor.Ones(a, tensor.Float32, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Release()
	y, err := tensor.Ones(b, tensor.Float32, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Release()
	_, err = x.Add(y)
	if err == nil || !strings.Contains(err.Error(), "found at least two devices, sim:0 and another sim:0 (a different device of the same name") {
		t.Fatalf("x.Add(y) across labs: %v", err)
	}
}
