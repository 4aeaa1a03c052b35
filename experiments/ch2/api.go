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

// Call is one torch.cuda API call and what it returned.
type Call struct {
	Torch, Go, Result string
}

// APITour calls every memory function of the lab API after a small workload
// (a 100 MiB and a 50 MiB tensor, the second released) and records what each
// returned, with its torch.cuda name beside the Go one.
func APITour(l *memlab.Lab) (calls []Call, err error) {
	x, err := bytesTensor(l, 100*MiB)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, x.Release()) }()
	y, err := bytesTensor(l, 50*MiB)
	if err != nil {
		return nil, err
	}
	if err := y.Release(); err != nil {
		return nil, err
	}
	add := func(torch, goName, result string) { calls = append(calls, Call{torch, goName, result}) }
	size := allocator.FormatSize
	add("memory_allocated()", "MemoryAllocated()", size(l.MemoryAllocated()))
	add("memory_reserved()", "MemoryReserved()", size(l.MemoryReserved()))
	add("max_memory_allocated()", "MaxMemoryAllocated()", size(l.MaxMemoryAllocated()))
	add("max_memory_reserved()", "MaxMemoryReserved()", size(l.MaxMemoryReserved()))
	free, total, err := l.MemGetInfo()
	if err != nil {
		return calls, err
	}
	add("mem_get_info()", "MemGetInfo()", fmt.Sprintf("free %s of %s (driver-used %s)", size(int64(free)), size(int64(total)), size(int64(total-free))))
	st := l.MemoryStats()
	add("memory_stats()", "MemoryStats()", fmt.Sprintf("%d keys; num_device_alloc = %d, allocation.all.current = %d",
		len(st), st["num_device_alloc"], st["allocation.all.current"]))
	snap := l.Snapshot()
	blocks := 0
	for _, s := range snap.Segments {
		blocks += len(s.Blocks)
	}
	add("memory_snapshot()", "Snapshot()", fmt.Sprintf("%d segments, %d blocks", len(snap.Segments), blocks))
	lines := strings.Count(l.MemorySummary(), "\n")
	add("memory_summary()", "MemorySummary()", fmt.Sprintf("a %d-line table (shown below)", lines))
	l.ResetPeakMemoryStats()
	add("reset_peak_memory_stats()", "ResetPeakMemoryStats()", "max_memory_allocated() is now "+size(l.MaxMemoryAllocated()))
	if err := l.EmptyCache(); err != nil {
		return calls, err
	}
	add("empty_cache()", "EmptyCache()", "memory_reserved() is now "+size(l.MemoryReserved()))
	if err := l.SetPerProcessMemoryFraction(0.5); err != nil {
		return calls, err
	}
	add("set_per_process_memory_fraction(0.5)", "SetPerProcessMemoryFraction(0.5)", "reserved memory capped at "+size(int64(total/2)))
	if err := l.SetPerProcessMemoryFraction(1); err != nil {
		return calls, err
	}
	add("set_per_process_memory_fraction(1.0)", "SetPerProcessMemoryFraction(1)", "cap removed")
	err = l.SetPerProcessMemoryFraction(1.5)
	add("set_per_process_memory_fraction(1.5)", "SetPerProcessMemoryFraction(1.5)", fmt.Sprintf("error: %v", err))
	if err == nil {
		return calls, errors.New("ch2: a memory fraction of 1.5 was accepted")
	}
	return calls, nil
}

// CallTable prints the calls as a table.
func CallTable(calls []Call) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "torch.cuda\tmemlab\tresult\t")
	for _, c := range calls {
		fmt.Fprintf(w, "%s\t%s\t%s\t\n", c.Torch, c.Go, c.Result)
	}
	w.Flush()
	return b.String()
}

// LeakResult is the outcome of [LeakCheck].
type LeakResult struct {
	Steps int
	// Leaky and Fixed are the bytes CheckLeaks reported for the two loops.
	Leaky, Fixed int64
	// LeakyCurve and FixedCurve are MemoryAllocated after each step.
	LeakyCurve, FixedCurve []int64
}

// LeakCheck runs the leak-check idiom on two versions of a loop that computes
// a 1 MiB output per step and keeps a history of results. The leaky one keeps
// the output tensors (Python's history.append(out)); the fixed one copies the
// number it needs to the host and releases the tensor
// (history.append(out[0, 0].item())). CheckLeaks reports steps MiB for the
// first and 0 for the second.
func LeakCheck(l *memlab.Lab, steps int) (res LeakResult, err error) {
	if steps < 1 {
		return res, fmt.Errorf("ch2: LeakCheck: steps = %d, need at least 1", steps)
	}
	res.Steps = steps
	w, err := tensor.Randn(l, 7, tensor.Float32, 256, 1024)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, w.Release()) }()
	var kept []*tensor.Tensor
	loop := func(leaky bool, curve *[]int64) func() error {
		return func() error {
			var history []float32
			for i := 0; i < steps; i++ {
				x, err := tensor.Randn(l, uint64(i), tensor.Float32, 256, 256)
				if err != nil {
					return err
				}
				out, err := x.Matmul(w)
				if err := errors.Join(err, x.Release()); err != nil {
					return errors.Join(err, tensor.ReleaseAll(out))
				}
				if leaky {
					kept = append(kept, out) // the tensor, and its 1 MiB, live on
				} else {
					v, err := out.Float32s()
					if err := errors.Join(err, out.Release()); err != nil {
						return err
					}
					history = append(history, v[0])
				}
				*curve = append(*curve, l.MemoryAllocated())
			}
			return nil
		}
	}
	if res.Leaky, err = l.CheckLeaks(loop(true, &res.LeakyCurve)); err != nil {
		return res, errors.Join(err, tensor.ReleaseAll(kept...))
	}
	if err := tensor.ReleaseAll(kept...); err != nil {
		return res, err
	}
	res.Fixed, err = l.CheckLeaks(loop(false, &res.FixedCurve))
	return res, err
}

// String reports both loops.
func (r LeakResult) String() string {
	return fmt.Sprintf("CheckLeaks after %d steps: leaky loop %s, fixed loop %s\n",
		r.Steps, allocator.FormatSize(r.Leaky), allocator.FormatSize(r.Fixed))
}

// Plot draws allocated memory per step of both loops.
func (r LeakResult) Plot() (*memplot.Figure, error) {
	series := func(name string, ys []int64) memplot.Series {
		s := memplot.Series{Name: name, Y: ys, Step: true}
		for i := range ys {
			s.X = append(s.X, float64(i+1))
		}
		return s
	}
	return memplot.Lines("2.4 the leak check: memory_allocated per step", "step",
		series("keeps tensors (leaks)", r.LeakyCurve), series("keeps numbers (fixed)", r.FixedCurve))
}

// SharedResult is the outcome of [SharedDevice].
type SharedResult struct {
	Total   int64 // device total memory
	Cap     int64 // user A's reserved-memory cap
	Steps   []SharedStep
	AOOMErr string // user A's out-of-memory message
}

// SharedStep is the state of both users after one step.
type SharedStep struct {
	Label                  string
	AReserved, BReserved   int64
	DriverUsed             int64
	AAllocated, BAllocated int64
}

// SharedDevice has two users share one device, each with its own allocator,
// like two processes on one GPU. User A caps itself at half of an 8 GiB
// budget with SetPerProcessMemoryFraction; its 3 GiB tensor fits, a further
// 2 GiB one fails with PyTorch's out-of-memory message (which names the cap)
// even though the device has room, and user B, uncapped, takes 3 GiB. The
// driver's view counts both users.
func SharedDevice(s Setup) (res SharedResult, err error) {
	const budget = 8192 * MiB
	a, err := s.Open("", budget)
	if err != nil {
		return res, err
	}
	b, err := memlab.Open(memlab.SharedWith(a), memlab.AllocConf(""), memlab.NotCurrent())
	if err != nil {
		return res, errors.Join(err, a.Close())
	}
	var keep []*tensor.Tensor
	defer func() { err = errors.Join(err, tensor.ReleaseAll(keep...), b.Close(), a.Close()) }()
	_, total, err := a.MemGetInfo()
	if err != nil {
		return res, err
	}
	res.Total = int64(total)
	res.Cap = budget / 2
	if err := a.SetPerProcessMemoryFraction(float64(res.Cap) / float64(total)); err != nil {
		return res, err
	}
	observe := func(label string) {
		used, _ := a.DriverUsed()
		res.Steps = append(res.Steps, SharedStep{Label: label, AReserved: a.MemoryReserved(), BReserved: b.MemoryReserved(),
			AAllocated: a.MemoryAllocated(), BAllocated: b.MemoryAllocated(), DriverUsed: used})
	}
	observe("start")
	x, err := bytesTensor(a, 3072*MiB)
	if err != nil {
		return res, fmt.Errorf("user A, 3 GiB: %w", err)
	}
	keep = append(keep, x)
	observe("A: 3 GiB")
	y, err := bytesTensor(a, 2048*MiB)
	switch {
	case err == nil:
		keep = append(keep, y)
		return res, errors.New("ch2: user A's 2 GiB request passed its 4 GiB cap")
	case !memlab.IsOutOfMemory(err):
		return res, err
	}
	res.AOOMErr = err.Error()
	observe("A: 2 GiB more (OOM)")
	z, err := bytesTensor(b, 3072*MiB)
	if err != nil {
		return res, fmt.Errorf("user B, 3 GiB: %w", err)
	}
	keep = append(keep, z)
	observe("B: 3 GiB")
	return res, nil
}

// String prints both users' memory after each step and A's error.
func (r SharedResult) String() string {
	var b strings.Builder
	size := allocator.FormatSize
	fmt.Fprintf(&b, "device total %s; user A capped at %s of reserved memory\n", size(r.Total), size(r.Cap))
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "step\tA reserved\tB reserved\tdriver-used (nvidia-smi)\t")
	for _, s := range r.Steps {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t\n", s.Label, size(s.AReserved), size(s.BReserved), size(s.DriverUsed))
	}
	w.Flush()
	fmt.Fprintf(&b, "user A's error: %s\n", r.AOOMErr)
	return b.String()
}

// Plot draws each user's reserved memory and the driver's count per step.
func (r SharedResult) Plot() (*memplot.Figure, error) {
	var groups []string
	a := memplot.BarSeries{Name: "user A reserved"}
	bb := memplot.BarSeries{Name: "user B reserved"}
	d := memplot.BarSeries{Name: "driver-used"}
	for _, s := range r.Steps {
		groups = append(groups, s.Label)
		a.Values = append(a.Values, float64(s.AReserved)/MiB)
		bb.Values = append(bb.Values, float64(s.BReserved)/MiB)
		d.Values = append(d.Values, float64(s.DriverUsed)/MiB)
	}
	return memplot.Bars("2.4 two users on one device, A capped at "+allocator.FormatSize(r.Cap), "MiB", groups, a, bb, d)
}
