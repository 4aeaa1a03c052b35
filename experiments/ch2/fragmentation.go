package ch2

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/tensor"
)

// The fragmenting workload of section 2.3.
const (
	// FragBudget is the device memory the workload runs in.
	FragBudget = 4096 * MiB
	// FragRounds is how many batches it runs.
	FragRounds = 6
	// FragBig and FragSmall are a batch's activation (after a first, larger
	// batch of FragSegment bytes) and the small tensor each batch keeps.
	FragSegment = 512 * MiB
	FragBig     = 496 * MiB
	FragSmall   = 16 * MiB
	// FragRequest is the large request made at the end.
	FragRequest = 1536 * MiB
)

// FragResult is the outcome of one run of the fragmenting workload.
type FragResult struct {
	Name, Conf string
	// OK is whether the final FragRequest was served.
	OK bool
	// Err is the out-of-memory message when it was not.
	Err string
	// Before is the fragmentation gauge right before the final request;
	// Segments the segment map at that moment.
	Before   memplot.Gauge
	Segments []memplot.Segment
	// History is the fragmentation gauge after each batch and after the
	// activations are freed.
	History []memplot.FragSample
	// DeviceFree is the driver's free memory right before the final request.
	DeviceFree int64
	// PeakReserved is max_memory_reserved over the whole run.
	PeakReserved int64
	// DeviceAllocs is num_device_alloc (cudaMalloc calls, or page mappings
	// with expandable segments) over the run.
	DeviceAllocs int64
}

// workload is one variant of the fragmenting workload.
type workload struct {
	name, conf string
	prealloc   bool  // allocate the final request's tensor first and reuse it
	batch      int64 // activation size of every batch after the first
}

// Fragment runs a workload that really fragments, in a FragBudget device:
// FragRounds batches, each of which first allocates and frees a FragSegment
// activation (a long batch), then allocates a FragBig one (a shorter batch,
// which splits the cached segment and leaves FragSegment−FragBig free at its
// end) and a FragSmall tensor the program keeps (a logged metric, say) — which
// lands in that leftover and pins the segment. When the batches' activations
// are freed, FragRounds×FragBig bytes are free in the cache, but no single
// block is larger than FragBig, no segment is wholly free (so EmptyCache and
// the allocator's retry release nothing), and the device is nearly full: the
// FragRequest fails with PyTorch's out-of-memory message while about twice
// that much is free.
func Fragment(s Setup) (FragResult, error) {
	return run(s, workload{name: "fragmented (default)", batch: FragBig})
}

// Remedies runs the fragmenting workload as it is and with each remedy:
//   - pre-allocation: the large buffer is allocated first and reused;
//   - uniform sizes: every batch's activation is FragSegment bytes, so a
//     freed segment is reused whole and never split;
//   - max_split_size_mb:256: the 512 MiB segments are never split, so the
//     small tensors get segments of their own, and under pressure the free
//     oversize segments are released;
//   - expandable_segments:True: memory is mapped page by page into one growing
//     segment, and free pages are unmapped when the device runs short.
func Remedies(s Setup) ([]FragResult, error) {
	variants := []workload{
		{name: "fragmented (default)", batch: FragBig},
		{name: "pre-allocation", batch: FragBig, prealloc: true},
		{name: "uniform sizes", batch: FragSegment},
		{name: "max_split_size_mb:256", conf: "max_split_size_mb:256", batch: FragBig},
		{name: "expandable_segments", conf: "expandable_segments:True", batch: FragBig},
	}
	var out []FragResult
	for _, v := range variants {
		r, err := run(s, v)
		if err != nil {
			return out, fmt.Errorf("ch2: %s: %w", v.name, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func run(s Setup, w workload) (res FragResult, err error) {
	res.Name, res.Conf = w.name, w.conf
	l, err := s.Open(w.conf, FragBudget)
	if err != nil {
		return res, err
	}
	var keep []*tensor.Tensor
	defer func() { err = errors.Join(err, tensor.ReleaseAll(keep...), l.Close()) }()
	var big *tensor.Tensor
	if w.prealloc {
		if big, err = bytesTensor(l, FragRequest); err != nil {
			return res, fmt.Errorf("pre-allocating: %w", err)
		}
		keep = append(keep, big)
	}
	rounds := FragRounds
	if w.prealloc {
		rounds = FragRounds - FragRequest/FragSegment // the buffer takes their room
	}
	var acts []*tensor.Tensor
	for i := 0; i < rounds; i++ {
		long, err := bytesTensor(l, FragSegment)
		if err != nil {
			return res, fmt.Errorf("batch %d: %w", i, err)
		}
		if err := long.Release(); err != nil {
			return res, err
		}
		act, err := bytesTensor(l, w.batch)
		if err != nil {
			return res, fmt.Errorf("batch %d: %w", i, err)
		}
		acts = append(acts, act)
		small, err := bytesTensor(l, FragSmall)
		if err != nil {
			return res, errors.Join(fmt.Errorf("batch %d: %w", i, err), tensor.ReleaseAll(acts...))
		}
		keep = append(keep, small)
		res.gauge(l, fmt.Sprintf("batch %d", i+1))
	}
	if err := tensor.ReleaseAll(acts...); err != nil {
		return res, err
	}
	res.gauge(l, "activations freed")
	snap := l.Snapshot()
	res.Before = memlab.GaugeOf(w.name, snap)
	res.Segments = memlab.Segments(snap)
	if free, _, err := l.MemGetInfo(); err == nil {
		res.DeviceFree = int64(free)
	}
	if w.prealloc {
		res.OK = true // the request is served by the buffer allocated up front
	} else {
		t, err := bytesTensor(l, FragRequest)
		switch {
		case err == nil:
			res.OK = true
			keep = append(keep, t)
		case memlab.IsOutOfMemory(err):
			res.Err = err.Error()
		default:
			return res, err
		}
	}
	res.PeakReserved = l.MaxMemoryReserved()
	res.DeviceAllocs = l.MemoryStats()["num_device_alloc"]
	return res, nil
}

// gauge appends the lab's fragmentation gauge to the history.
func (r *FragResult) gauge(l *memlab.Lab, label string) {
	g := l.Gauge(label)
	r.History = append(r.History, memplot.FragSample{X: float64(len(r.History)), Label: label, LargestFree: g.LargestFree, TotalFree: g.TotalFree})
}

// PlotHistory draws the fragmentation gauge batch by batch.
func (r FragResult) PlotHistory() (*memplot.Figure, error) {
	return memplot.FragmentationCurve("2.3 free memory in the cache, batch by batch: "+r.Name, "", r.History)
}

// String prints the gauge and the outcome.
func (r FragResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s free in the cache, largest free block %s, device free %s; ",
		r.Name, allocator.FormatSize(r.Before.TotalFree), allocator.FormatSize(r.Before.LargestFree), allocator.FormatSize(r.DeviceFree))
	if r.OK {
		fmt.Fprintf(&b, "the %s request was served\n", allocator.FormatSize(FragRequest))
	} else {
		fmt.Fprintf(&b, "the %s request FAILED:\n  %s\n", allocator.FormatSize(FragRequest), r.Err)
	}
	return b.String()
}

// Plot draws the segment map before the final request.
func (r FragResult) Plot() (*memplot.Figure, error) {
	return memplot.SegmentMap("2.3 segments before the "+allocator.FormatSize(FragRequest)+" request: "+r.Name, r.Segments)
}

// RemedyTable prints one line per variant.
func RemedyTable(rs []FragResult) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "variant\t%s served\tfree in cache\tlargest free block\tpeak reserved\tdevice allocations\t\n", allocator.FormatSize(FragRequest))
	for _, r := range rs {
		fmt.Fprintf(w, "%s\t%v\t%s\t%s\t%s\t%d\t\n", r.Name, r.OK, allocator.FormatSize(r.Before.TotalFree),
			allocator.FormatSize(r.Before.LargestFree), allocator.FormatSize(r.PeakReserved), r.DeviceAllocs)
	}
	w.Flush()
	return b.String()
}

// PlotRemedies draws the fragmentation gauge of every variant against the request.
func PlotRemedies(rs []FragResult) (*memplot.Figure, error) {
	var gs []memplot.Gauge
	for _, r := range rs {
		g := r.Before
		if !r.OK {
			g.Label += " (OOM)"
		}
		gs = append(gs, g)
	}
	f, err := memplot.Fragmentation("2.3 free memory before the large request, per remedy", FragRequest, gs...)
	if err != nil {
		return nil, err
	}
	f.Width *= 1.3
	f.X.Tick.Label.Font.Size = 8
	return f, nil
}
