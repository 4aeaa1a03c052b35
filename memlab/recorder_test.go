package memlab

import (
	"testing"

	"memlab.dev/memlab/memplot"
)

func TestRecorder(t *testing.T) {
	l := openSim(t)
	rec := l.Record()
	rec.Mark("alloc")
	p, err := l.Allocate(100 * mib)
	if err != nil {
		t.Fatal(err)
	}
	rec.Mark("free")
	if err := l.Deallocate(p); err != nil {
		t.Fatal(err)
	}
	if err := l.EmptyCache(); err != nil {
		t.Fatal(err)
	}
	rec.Stop()
	if _, err := l.Allocate(mib); err != nil { // after Stop: not recorded
		t.Fatal(err)
	}
	tl := rec.Timeline()
	// start, segment_alloc, alloc, free_requested, free_completed, segment_free, empty_cache
	if len(tl.Samples) != 7 || rec.Events() != 6 {
		t.Fatalf("%d samples, %d events; want 7 and 6: %+v", len(tl.Samples), rec.Events(), tl.Samples)
	}
	if a, r := rec.Peak(); a != 100*mib || r != 100*mib {
		t.Errorf("Peak = %d, %d; want 100 MiB both", a, r)
	}
	if rec.OOMs() != 0 {
		t.Errorf("OOMs = %d, want 0", rec.OOMs())
	}
	if rec.SegmentAllocs() != 1 {
		t.Errorf("SegmentAllocs = %d, want 1", rec.SegmentAllocs())
	}
	last := tl.Samples[len(tl.Samples)-1]
	if last.Allocated != 0 || last.Reserved != 0 {
		t.Errorf("last sample %+v, want nothing allocated or reserved", last)
	}
	first := tl.Samples[0]
	peak := tl.Samples[2]
	if peak.DriverUsed-first.DriverUsed != 100*mib {
		t.Errorf("driver-used grew by %d at the allocation, want 100 MiB", peak.DriverUsed-first.DriverUsed)
	}
	if len(tl.Marks) != 2 || tl.Marks[0] != (memplot.Mark{X: 0, Label: "alloc"}) || tl.Marks[1].X != 2 {
		t.Errorf("marks = %+v, want alloc at 0 and free at 2", tl.Marks)
	}
	gs := rec.Gauges()
	if len(gs) != 2 || gs[0].TotalFree != 0 || gs[1].TotalFree != 0 || gs[1].Label != "free" {
		t.Errorf("gauges %+v; want two marks with nothing free yet", gs)
	}
	if _, err := memplot.FragmentationCurve("x", "", rec.Gauges()); err != nil {
		t.Error(err)
	}
	if tt := rec.TimelineByTime(); len(tt.Samples) != 7 || tt.XLabel != "time (ms)" {
		t.Errorf("TimelineByTime: %d samples, label %q", len(tt.Samples), tt.XLabel)
	}
	if _, err := memplot.Curve("x", rec); err != nil {
		t.Error(err)
	}
	rec.Stop() // idempotent
}

func TestRecorderCountsOOMs(t *testing.T) {
	l := openSim(t)
	rec := l.Record()
	if _, err := l.Allocate(8 << 30); !IsOutOfMemory(err) {
		t.Fatalf("8 GiB on a 4 GiB device: %v", err)
	}
	rec.Stop()
	if rec.OOMs() != 1 {
		t.Errorf("OOMs = %d, want 1", rec.OOMs())
	}
}

func TestRecorderBoundsItsHistory(t *testing.T) {
	l := openSim(t)
	rec := l.Record()
	rec.mu.Lock()
	rec.max = 16
	rec.mu.Unlock()
	for i := 0; i < 100; i++ {
		p, err := l.Allocate(mib)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Deallocate(p); err != nil {
			t.Fatal(err)
		}
	}
	rec.Stop()
	tl := rec.Timeline()
	if len(tl.Samples) >= 16 || len(tl.Samples) < 8 {
		t.Errorf("%d samples kept, want between 8 and 15", len(tl.Samples))
	}
	for i := 1; i < len(tl.Samples); i++ {
		if tl.Samples[i].X <= tl.Samples[i-1].X {
			t.Fatalf("samples out of order at %d: %v", i, tl.Samples)
		}
	}
	if rec.Events() < 300 {
		t.Errorf("Events = %d, want every event counted", rec.Events())
	}
	if a, _ := rec.Peak(); a != mib {
		t.Errorf("peak allocated %d, want 1 MiB", a)
	}
}
