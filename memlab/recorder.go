package memlab

import (
	"sync"
	"time"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/memplot/plotdata"
)

// DefaultMaxSamples bounds a Recorder's memory: past it, every other sample
// is dropped and only every second event is kept from then on, so a long run
// keeps its shape in bounded space (peaks are tracked separately).
const DefaultMaxSamples = 1 << 16

// Recorder records a lab's memory over allocator events: allocated, reserved
// and driver-used bytes after each event, with labelled phases. Start one with
// [Lab.Record] (or [Record] on the current lab), run the workload, call
// [Recorder.Stop], then plot it with [Recorder.Plot].
//
// Driver-used bytes are read from the device when a segment is allocated,
// freed, mapped or unmapped, the only events that change it for this lab;
// another lab on the same device shows up at this lab's next segment event.
type Recorder struct {
	lab *Lab

	mu       sync.Mutex
	cancel   func()
	done     bool
	start    time.Time
	samples  []plotdata.Sample
	times    []time.Duration
	marks    []plotdata.Mark
	gauges   []plotdata.FragSample
	events   int // events seen
	stride   int // keep one event in stride
	driver   int64
	peakA    int64
	peakR    int64
	segments int
	ooms     int
	max      int
}

// Record starts recording the lab's memory. It samples the current state as
// event 0.
func (l *Lab) Record() *Recorder {
	r := &Recorder{lab: l, start: time.Now(), stride: 1, max: DefaultMaxSamples}
	r.driver, _ = l.driverUsed()
	a, res := l.alloc.MemoryAllocated(), l.alloc.MemoryReserved()
	r.add(plotdata.Sample{X: 0, Allocated: a, Reserved: res, DriverUsed: r.driver}, 0)
	r.cancel = l.alloc.Subscribe(r.onEvent)
	return r
}

// Record starts a [Recorder] on the current lab.
func Record() (*Recorder, error) {
	l, err := Current()
	if err != nil {
		return nil, err
	}
	return l.Record(), nil
}

// onEvent runs inside the allocator's lock: it must not call the allocator.
func (r *Recorder) onEvent(e allocator.Event) {
	var driver int64
	refresh := false
	switch e.Action {
	case allocator.ActionSegmentAlloc, allocator.ActionSegmentFree,
		allocator.ActionSegmentMap, allocator.ActionSegmentUnmap:
		driver, _ = r.lab.driverUsed() // the device, not the allocator: safe here
		refresh = true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	if refresh {
		r.driver = driver
	}
	switch e.Action {
	case allocator.ActionSegmentAlloc:
		r.segments++
	case allocator.ActionOOM:
		r.ooms++
	}
	r.events++
	r.peakA = max(r.peakA, e.Allocated)
	r.peakR = max(r.peakR, e.Reserved)
	if r.events%r.stride != 0 {
		return
	}
	r.add(plotdata.Sample{X: float64(r.events), Allocated: e.Allocated, Reserved: e.Reserved, DriverUsed: r.driver}, e.Time.Sub(r.start))
}

// add appends a sample, halving the history when it is full. Called with r.mu
// held (or before the recorder is shared).
func (r *Recorder) add(s plotdata.Sample, t time.Duration) {
	r.peakA = max(r.peakA, s.Allocated)
	r.peakR = max(r.peakR, s.Reserved)
	r.samples = append(r.samples, s)
	r.times = append(r.times, t)
	if len(r.samples) < r.max {
		return
	}
	n := 0
	for i := 0; i < len(r.samples); i += 2 {
		r.samples[n], r.times[n] = r.samples[i], r.times[i]
		n++
	}
	r.samples, r.times = r.samples[:n], r.times[:n]
	r.stride *= 2
}

// Mark labels the current point of the recording ("forward", "backward"); the
// plot draws it as a dashed line. It also reads the fragmentation gauge off a
// snapshot (cost proportional to the number of blocks), for
// [Recorder.PlotFragmentation].
func (r *Recorder) Mark(label string) {
	g := r.lab.Gauge(label) // before r.mu: the allocator's lock comes first
	r.mu.Lock()
	defer r.mu.Unlock()
	r.marks = append(r.marks, plotdata.Mark{X: float64(r.events), Label: label})
	r.gauges = append(r.gauges, plotdata.FragSample{X: float64(r.events), Label: label, LargestFree: g.LargestFree, TotalFree: g.TotalFree})
}

// Gauges returns the fragmentation gauge read at each mark:
// memlab.Show(plotdata.FragmentationCurve("…", "", rec.Gauges())) draws them.
func (r *Recorder) Gauges() []plotdata.FragSample {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]plotdata.FragSample(nil), r.gauges...)
}

// Stop ends the recording; the Recorder keeps what it recorded. Stop is
// idempotent.
func (r *Recorder) Stop() {
	r.mu.Lock()
	cancel := r.cancel
	r.cancel, r.done = nil, true
	r.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// Events is the number of allocator events seen so far.
func (r *Recorder) Events() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.events
}

// Peak returns the highest allocated and reserved bytes seen while recording.
func (r *Recorder) Peak() (allocated, reserved int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.peakA, r.peakR
}

// SegmentAllocs is the number of device allocations (cudaMalloc) seen.
func (r *Recorder) SegmentAllocs() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.segments
}

// OOMs is the number of out-of-memory failures seen.
func (r *Recorder) OOMs() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ooms
}

// Timeline returns the recording over event index, for plotdata.Curve.
func (r *Recorder) Timeline() plotdata.Timeline {
	r.mu.Lock()
	defer r.mu.Unlock()
	tl := plotdata.Timeline{XLabel: lang.Text("allocator event"), Samples: append([]plotdata.Sample(nil), r.samples...)}
	tl.Marks = append(tl.Marks, r.marks...)
	return tl
}

// TimelineByTime returns the recording over wall-clock milliseconds since
// Record; marks are placed at the time of the sample they follow.
func (r *Recorder) TimelineByTime() plotdata.Timeline {
	r.mu.Lock()
	defer r.mu.Unlock()
	tl := plotdata.Timeline{XLabel: lang.Text("time (ms)"), Samples: make([]plotdata.Sample, len(r.samples))}
	for i, s := range r.samples {
		s.X = float64(r.times[i].Microseconds()) / 1000
		tl.Samples[i] = s
	}
	for _, m := range r.marks {
		// the last sample at or before the mark's event
		x := 0.0
		for i, s := range r.samples {
			if s.X <= m.X {
				x = tl.Samples[i].X
			}
		}
		tl.Marks = append(tl.Marks, plotdata.Mark{X: x, Label: m.Label})
	}
	return tl
}
