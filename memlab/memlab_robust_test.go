package memlab

import (
	"errors"
	"fmt"
	"memlab.dev/memlab/memplot"
	"strings"
	"sync"
	"testing"

	"memlab.dev/memlab/device/sim"
	"memlab.dev/memlab/internal/robusttest"
	"memlab.dev/memlab/tensor"
)

var noPanic = robusttest.NoPanic

// Open with bad options fails with an error naming the bad part, and changes
// nothing: the current lab stays as it was.
func TestRobustOpenBadOptions(t *testing.T) {
	keepLab := openSim(t)
	tests := []struct {
		name string
		opts []Option
		want string
	}{
		{"negative capacity", []Option{Sim("-1GiB")}, "-1GiB"},
		{"zero capacity", []Option{Sim("0GiB")}, "0GiB"},
		{"capacity with an exponent", []Option{Sim("1e30GiB")}, "1e30GiB"},
		{"capacity too large", []Option{Sim("99999999999TiB")}, "too large"},
		{"capacity below a page", []Option{Sim("1KiB")}, "page"},
		{"empty capacity", []Option{Device("sim:")}, `"sim:"`},
		{"negative index", []Option{Device("sim:-5")}, "negative device index"},
		{"negative cuda index", []Option{Device("cuda:-1")}, `"-1"`},
		{"three fields", []Option{Device("sim:abc:def")}, `"abc"`},
		{"unknown kind", []Option{Device("tpu")}, `"tpu"`},
		{"tiny SimConfig", []Option{SimConfig(sim.Config{Capacity: 1})}, "capacity 1"},
		{"negative split size", []Option{Sim("1GiB"), AllocConf("max_split_size_mb:-1")}, "max_split_size_mb"},
		{"gc threshold above 1", []Option{Sim("1GiB"), AllocConf("garbage_collection_threshold:2")}, "garbage_collection_threshold"},
		{"only commas", []Option{Sim("1GiB"), AllocConf(",,,")}, "Unrecognized key ',' in CUDA allocator config."},
		{"key without value", []Option{Sim("1GiB"), AllocConf("expandable_segments")}, "expandable_segments"},
		{"unknown key", []Option{Sim("1GiB"), AllocConf("no_such_key:1")}, "no_such_key"},
		{"option failing", []Option{Sim("1GiB"), OnDevice(nil)}, "OnDevice(nil)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noPanic(t, "Open", func() {
				l, err := Open(tt.opts...)
				if err == nil {
					l.Close()
					t.Fatalf("Open succeeded, want an error containing %q", tt.want)
				}
				if !strings.Contains(err.Error(), tt.want) {
					t.Errorf("Open error = %q, want it to mention %q", err, tt.want)
				}
			})
			if c, err := Current(); err != nil || c != keepLab {
				t.Errorf("a failed Open changed the current lab")
			}
		})
	}
	// A nil Option is skipped.
	noPanic(t, "Open(nil option)", func() {
		l, err := Open(nil, Sim("1GiB"), AllocConf(""), NotCurrent())
		if err != nil {
			t.Fatal(err)
		}
		l.Close()
	})
	// Sharing a closed lab's device fails cleanly.
	a, err := Open(Sim("1GiB"), AllocConf(""), NotCurrent())
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	noPanic(t, "SharedWith(closed)", func() {
		b, err := Open(SharedWith(a), NotCurrent())
		if err == nil {
			b.Close()
			t.Fatal("a lab shared with a closed one opened")
		}
		if !strings.Contains(err.Error(), "closed") {
			t.Errorf("SharedWith(closed lab): %v", err)
		}
	})
}

// Close twice and use after Close: errors, never a panic, and no memory
// handed out from the cache of a closed device.
func TestRobustUseAfterClose(t *testing.T) {
	for _, shared := range []bool{false, true} {
		owner, err := Open(Sim("1GiB"), AllocConf(""), NotCurrent())
		if err != nil {
			t.Fatal(err)
		}
		l := owner
		if shared {
			if l, err = Open(SharedWith(owner), AllocConf(""), NotCurrent()); err != nil {
				t.Fatal(err)
			}
		}
		p, err := l.Allocate(1 << 20)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Deallocate(p); err != nil { // cached in the allocator
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		noPanic(t, "use after Close", func() {
			p, err := l.Allocate(1 << 20)
			if err == nil {
				t.Errorf("Allocate after Close (shared %v) returned %#x from the cache of a closed lab", shared, p)
			} else if !strings.Contains(err.Error(), "closed") {
				t.Errorf("Allocate after Close: %v", err)
			}
			x, err := tensor.Zeros(l, tensor.Float32, 1024)
			if err == nil {
				t.Errorf("a tensor was made on a closed lab")
				x.Release()
			}
			_ = l.MemoryAllocated()
			_ = l.MemoryReserved()
			_ = l.MemoryStats()
			_ = l.MemorySummary()
			_ = l.Snapshot()
			_ = l.Describe()
			_ = l.Gauge("after close")
			_, _, _ = l.MemGetInfo()
			_, _ = l.DriverUsed()
			_ = l.EmptyCache()
			l.ResetPeakMemoryStats()
			if _, err := memplot.SegmentMap("after close", l.Segments()); err != nil {
				t.Logf("SegmentMap after Close: %v", err)
			}
			r := l.Record()
			r.Stop()
			r.Stop()
		})
		if shared {
			// The owner is untouched and keeps working.
			q, err := owner.Allocate(1 << 20)
			if err != nil {
				t.Fatalf("owner after its sharer closed: %v", err)
			}
			if err := owner.Deallocate(q); err != nil {
				t.Fatal(err)
			}
			owner.Close()
		}
	}
}

// With no current lab, the package-level functions never open a device
// behind the caller's back: those that return an error return ErrNoLab, those
// that return only a number panic with a message that names the function and
// says what to do, instead of a silent 0 that would read as a measurement.
func TestRobustNoCurrentLab(t *testing.T) {
	prev, _ := Current()
	t.Cleanup(func() { SetCurrent(prev) })
	SetCurrent(nil)
	if l, err := Current(); l != nil || !errors.Is(err, ErrNoLab) {
		t.Fatalf("Current with no lab = %v, %v; want ErrNoLab", l, err)
	}
	for name, f := range map[string]func(){
		"MemoryAllocated":      func() { MemoryAllocated() },
		"MemoryReserved":       func() { MemoryReserved() },
		"MaxMemoryAllocated":   func() { MaxMemoryAllocated() },
		"MaxMemoryReserved":    func() { MaxMemoryReserved() },
		"MemoryStats":          func() { MemoryStats() },
		"MemorySummary":        func() { MemorySummary() },
		"Snapshot":             func() { Snapshot() },
		"ResetPeakMemoryStats": func() { ResetPeakMemoryStats() },
		"ShowSummary":          func() { ShowSummary() },
	} {
		msg := panicOf(f)
		if !strings.Contains(msg, "memlab."+name+"()") || !strings.Contains(msg, "no lab is open") || !strings.Contains(msg, "MustOpen") {
			t.Errorf("%s without a lab: panic %q; want one naming the function and saying to open a lab", name, msg)
		}
	}
	noPanic(t, "package functions that return errors, without a lab", func() {
		for name, err := range map[string]error{
			"EmptyCache":                  EmptyCache(),
			"SetPerProcessMemoryFraction": SetPerProcessMemoryFraction(0.5),
		} {
			if !errors.Is(err, ErrNoLab) {
				t.Errorf("%s without a lab: %v, want ErrNoLab", name, err)
			}
		}
		if _, _, err := MemGetInfo(); !errors.Is(err, ErrNoLab) {
			t.Errorf("MemGetInfo without a lab: %v", err)
		}
		if _, err := DriverUsed(); !errors.Is(err, ErrNoLab) {
			t.Errorf("DriverUsed without a lab: %v", err)
		}
		if _, err := Record(); !errors.Is(err, ErrNoLab) {
			t.Errorf("Record without a lab: %v", err)
		}
		if _, err := CheckLeaks(func() error { return nil }); !errors.Is(err, ErrNoLab) {
			t.Errorf("CheckLeaks without a lab: %v", err)
		}
	})
	// A lab closed is no longer current.
	l := openSim(t)
	l.Close()
	if _, err := Current(); !errors.Is(err, ErrNoLab) {
		t.Errorf("Current after the current lab closed: %v", err)
	}
}

// panicOf runs f and returns what it panicked with ("" if it did not).
func panicOf(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

// Bad arguments to a lab's methods: errors, and the allocator's numbers as
// they were. An out-of-memory error has PyTorch's wording, and the lab keeps
// working after it.
func TestRobustLabBadArguments(t *testing.T) {
	l := openSim(t)
	x, err := tensor.Zeros(l, tensor.Float32, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Release()
	before := l.MemoryStats()
	same := func(what string) {
		t.Helper()
		after := l.MemoryStats()
		for _, k := range []string{"allocated_bytes.all.current", "reserved_bytes.all.current", "active_bytes.all.current", "requested_bytes.all.current", "segment.all.current"} {
			if before[k] != after[k] {
				t.Errorf("%s changed %s: %d -> %d", what, k, before[k], after[k])
			}
		}
	}
	noPanic(t, "bad arguments", func() {
		for _, n := range []int64{-1, -1 << 63} { // 0 is (0, nil), as torch.empty(0)
			if _, err := l.Allocate(n); err == nil {
				t.Errorf("Allocate(%d) succeeded", n)
			}
			same("a bad Allocate")
		}
		for _, p := range []tensor.Ptr{1, 0xdeadbeef, x.DataPtr() + 512} { // Free(0) is a no-op
			if err := l.Deallocate(p); err == nil {
				t.Errorf("Deallocate(%#x) succeeded", uint64(p))
			}
			same("a bad Deallocate")
		}
		for _, f := range []float64{-1, 1.5, nan(), inf()} {
			if err := l.SetPerProcessMemoryFraction(f); err == nil {
				t.Errorf("SetPerProcessMemoryFraction(%v) succeeded", f)
			}
			same("a bad SetPerProcessMemoryFraction")
		}
		if _, err := l.CheckLeaks(nil); err == nil || !strings.Contains(err.Error(), "nil") {
			t.Errorf("CheckLeaks(nil): %v", err)
		}
		boom := errors.New("boom")
		if _, err := l.CheckLeaks(func() error { return boom }); !errors.Is(err, boom) {
			t.Errorf("CheckLeaks of a failing function: %v", err)
		}
		// Out of memory: PyTorch's wording, nothing changed, and the lab works after.
		_, err := l.Allocate(1 << 40)
		if !IsOutOfMemory(err) || !strings.Contains(err.Error(), "CUDA out of memory. Tried to allocate 1024.00 GiB") {
			t.Errorf("Allocate(1 TiB) on a 4 GiB lab: %v", err)
		}
		if _, err := tensor.Empty(l, tensor.Float32, 1<<20, 1<<20); !IsOutOfMemory(err) {
			t.Errorf("a 4 TiB tensor: %v", err)
		}
		same("an out-of-memory failure")
		p, err := l.Allocate(1 << 20)
		if err != nil {
			t.Fatalf("Allocate after an OOM: %v", err)
		}
		if err := l.Deallocate(p); err != nil {
			t.Fatal(err)
		}
	})
	if err := Register(Experiment{}); err == nil {
		t.Error("Register of an empty experiment succeeded")
	}
	if err := Register(Experiment{Chapter: "9", Section: "9.1", Name: "no run"}); err == nil {
		t.Error("Register of an experiment without Run succeeded")
	}
}

func nan() float64 { z := 0.0; return z / z }
func inf() float64 { z := 0.0; return 1 / z }

// Close racing with Allocate and Deallocate: no panic, no data race, and
// once Close has returned every Allocate fails.
func TestRobustCloseRacesWithAllocate(t *testing.T) {
	l, err := Open(Sim("1GiB"), AllocConf(""), NotCurrent())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				p, err := l.Allocate(4096)
				if err == nil {
					_ = l.Deallocate(p)
				}
				_ = l.MemoryAllocated()
			}
		}()
	}
	if err := l.Close(); err != nil {
		t.Error(err)
	}
	if _, err := l.Allocate(4096); err == nil {
		t.Error("Allocate after Close succeeded")
	}
	close(done)
	wg.Wait()
}
