package ch4

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/tensor"
)

// ReluResult is what [ReluPeak] measured.
type ReluResult struct {
	Bytes int64 // the activation's size
	// OutOfPlacePeak and InPlacePeak are the peaks of memory_allocated
	// while computing y = x.relu() and x.relu_(), above what was allocated
	// before x was created.
	OutOfPlacePeak, InPlacePeak int64
	// OutOfPlaceAllocs and InPlaceAllocs count allocator calls, x's included.
	OutOfPlaceAllocs, InPlaceAllocs int64
	Timeline                        memplot.Timeline
}

// ReluPeak creates an activation x of rows × cols float32 values and applies
// relu to it twice, recording memory: out of place (y = x.relu(), so x and
// y are both alive) and in place (x.relu_()). Every tensor is released
// before it returns.
func ReluPeak(s Setup, rows, cols int) (res ReluResult, err error) {
	if rows < 1 || cols < 1 {
		return res, fmt.Errorf("ch4: ReluPeak: %d × %d activation, need at least 1 × 1", rows, cols)
	}
	b, err := s.Open()
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, b.Close()) }()
	rec := b.Record()
	defer rec.Stop()
	res.Bytes = int64(rows) * int64(cols) * 4
	run := func(label string, inPlace bool) (peak, allocs int64, err error) {
		rec.Mark(label)
		base := b.MemoryAllocated()
		b.ResetPeakMemoryStats()
		c0 := b.counters()
		x, err := tensor.Randn(b, 1, tensor.Float32, rows, cols)
		if err != nil {
			return 0, 0, err
		}
		var y *tensor.Tensor
		if inPlace {
			err = x.Relu_()
		} else {
			y, err = x.Relu()
		}
		peak = b.MaxMemoryAllocated() - base
		allocs = b.counters().since(c0).allocs
		return peak, allocs, errors.Join(err, tensor.ReleaseLive(y, x))
	}
	if res.OutOfPlacePeak, res.OutOfPlaceAllocs, err = run("y = x.relu()", false); err != nil {
		return res, fmt.Errorf("ch4: ReluPeak: relu: %w", err)
	}
	if res.InPlacePeak, res.InPlaceAllocs, err = run("x.relu_()", true); err != nil {
		return res, fmt.Errorf("ch4: ReluPeak: relu_: %w", err)
	}
	rec.Stop()
	res.Timeline = rec.Timeline()
	for i := range res.Timeline.Samples {
		// The CUDA context (hundreds of MiB) would flatten the curves that
		// matter here; a negative value is not drawn.
		res.Timeline.Samples[i].DriverUsed = -1
	}
	return res, nil
}

// Saving is the share of the out-of-place peak that relu_ saves, in percent.
func (r ReluResult) Saving() float64 {
	return saved(float64(r.InPlacePeak), float64(r.OutOfPlacePeak))
}

// String prints both peaks.
func (r ReluResult) String() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "activation x\t%s\t\n", mib(r.Bytes))
	fmt.Fprintf(w, "y = x.relu()\tpeak %s\t%d allocations\t\n", mib(r.OutOfPlacePeak), r.OutOfPlaceAllocs)
	fmt.Fprintf(w, "x.relu_()\tpeak %s\t%d allocations\t\n", mib(r.InPlacePeak), r.InPlaceAllocs)
	w.Flush()
	fmt.Fprintf(&b, "relu_ saves %.0f%% of the peak\n", r.Saving())
	return b.String()
}

// Plot draws the memory curve of both runs.
func (r ReluResult) Plot() (*memplot.Figure, error) {
	return memplot.MemoryCurve("4.1 relu vs relu_: memory over allocator events", r.Timeline)
}

// BranchResult is what [SharedBranch] computed.
type BranchResult struct {
	X []float32 // the shared input
	// Correct is relu(x) + 2·x computed out of place; Hazard is the same
	// with branch A's relu done in place on x, which branch B then reads.
	Correct, Hazard []float32
	// VersionBefore and VersionAfter are x's version counter around relu_.
	VersionBefore, VersionAfter int64
}

// SharedBranch computes out = relu(x) + 2·x, where x feeds two branches,
// twice: out of place, and with branch A's relu done in place (x.relu_()).
// The in-place version changes x under branch B, so the result differs
// wherever x was negative; no error is raised — only the version counter
// shows what happened.
func SharedBranch(s Setup) (res BranchResult, err error) {
	b, err := s.Open()
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, b.Close()) }()
	res.X = []float32{1, -2, 3, -4, 0.5, -0.5}
	compute := func(inPlace bool) (vals []float32, err error) {
		x, err := tensor.FromFloat32(b, res.X)
		if err != nil {
			return nil, err
		}
		var a, bb, out *tensor.Tensor
		defer func() { err = errors.Join(err, tensor.ReleaseLive(out, bb, a, x)) }()
		if inPlace {
			res.VersionBefore = x.Version()
			if err = x.Relu_(); err != nil { // branch A, in place: a is x itself
				return nil, err
			}
			res.VersionAfter = x.Version()
			if bb, err = x.Scale(2); err != nil { // branch B reads the modified x
				return nil, err
			}
			out, err = x.Add(bb)
		} else {
			if a, err = x.Relu(); err != nil {
				return nil, err
			}
			if bb, err = x.Scale(2); err != nil {
				return nil, err
			}
			out, err = a.Add(bb)
		}
		if err != nil {
			return nil, err
		}
		return out.Float32s()
	}
	if res.Correct, err = compute(false); err != nil {
		return res, fmt.Errorf("ch4: SharedBranch: %w", err)
	}
	if res.Hazard, err = compute(true); err != nil {
		return res, fmt.Errorf("ch4: SharedBranch: %w", err)
	}
	return res, nil
}

// Wrong counts the elements where the in-place version differs.
func (r BranchResult) Wrong() int {
	n := 0
	for i := range r.Correct {
		if r.Correct[i] != r.Hazard[i] {
			n++
		}
	}
	return n
}

// String prints the inputs and both results.
func (r BranchResult) String() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "x\trelu(x) + 2x\tx.relu_(); x + 2x\t")
	for i := range r.X {
		mark := ""
		if r.Correct[i] != r.Hazard[i] {
			mark = "  ← wrong"
		}
		fmt.Fprintf(w, "%g\t%g\t%g%s\t\n", r.X[i], r.Correct[i], r.Hazard[i], mark)
	}
	w.Flush()
	fmt.Fprintf(&b, "%d of %d results wrong, no error raised; x._version went %d → %d\n", r.Wrong(), len(r.X), r.VersionBefore, r.VersionAfter)
	return b.String()
}

// SavedResult is what [SavedTensorError] found.
type SavedResult struct {
	// Nodes are the operations the tape recorded.
	Nodes []string
	// SavedBytes is what the tape's saved tensors held before backward.
	SavedBytes int64
	// Err is PyTorch's error for the in-place version, from Backward.
	Err string
	// FixedErr is Backward's error for the out-of-place version ("" when it
	// succeeded).
	FixedErr string
}

// SavedTensorError reproduces autograd's saved-tensor check: y = x.exp()
// saves its output y for backward; y.mul_(2) then changes y in place, and
// backward fails with PyTorch's message. The out-of-place z = y * 2 leaves
// the saved y intact, and backward succeeds.
func SavedTensorError(s Setup) (res SavedResult, err error) {
	b, err := s.Open()
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, b.Close()) }()
	run := func(inPlace bool) (backward error, err error) {
		tape := tensor.NewTape()
		defer func() { err = errors.Join(err, tape.Release()) }()
		err = tensor.WithScope(func(sc *tensor.Scope) error {
			x, err := sc.Track(tensor.Randn(b, 3, tensor.Float32, 256, 256))
			if err != nil {
				return err
			}
			if err := tape.Watch(x); err != nil {
				return err
			}
			y, err := x.Exp()
			if err != nil {
				return err
			}
			if inPlace {
				err = y.Scale_(2)
			} else {
				_, err = y.Scale(2)
			}
			if err != nil {
				return err
			}
			if inPlace {
				res.Nodes = tape.Nodes()
				res.SavedBytes = tape.SavedBytes()
			}
			backward = tape.Backward()
			return nil
		})
		return backward, err
	}
	bad, err := run(true)
	if err != nil {
		return res, fmt.Errorf("ch4: SavedTensorError: %w", err)
	}
	if bad == nil {
		return res, errors.New("ch4: SavedTensorError: backward after an in-place change to a saved tensor succeeded")
	}
	res.Err = bad.Error()
	good, err := run(false)
	if err != nil {
		return res, fmt.Errorf("ch4: SavedTensorError: %w", err)
	}
	if good != nil {
		res.FixedErr = good.Error()
	}
	return res, nil
}

// String prints the error and the fix.
func (r SavedResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "recorded: %s; saved for backward: %s\n", strings.Join(r.Nodes, ", "), mib(r.SavedBytes))
	fmt.Fprintf(&b, "y = x.exp(); y.mul_(2); backward():\n  %s\n", r.Err)
	if r.FixedErr == "" {
		fmt.Fprintln(&b, "y = x.exp(); z = y * 2; backward(): ok")
	} else {
		fmt.Fprintf(&b, "y = x.exp(); z = y * 2; backward(): %s\n", r.FixedErr)
	}
	return b.String()
}
