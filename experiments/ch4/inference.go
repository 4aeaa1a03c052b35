package ch4

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/model"
)

// InferenceRow is one mode of [Inference].
type InferenceRow struct {
	Mode model.Mode
	// PeakAllocated is max_memory_allocated over the whole workload, weights
	// included; Working is the same above Weights, memory_allocated before
	// the first request (the weights, rounded up by the allocator).
	PeakAllocated, Working, Weights int64
	PeakReserved                    int64
	// AllocCalls is allocation.all.allocated: requests to the caching
	// allocator; DeviceMallocs is num_device_alloc: the cudaMallocs among them.
	AllocCalls, DeviceMallocs int64
	// Token is the median time of one decoding step (one new token of one
	// request); Prefill the median time of a prompt's forward pass.
	Token, Prefill time.Duration
	// Total is the wall time of the whole workload.
	Total  time.Duration
	Tokens int       // tokens generated
	Curve  []int64   // memory_allocated after each allocator event, from a Recorder
	Logits []float32 // the first request's last logits, to compare modes
}

// InferenceResult is what [Inference] measured.
type InferenceResult struct {
	Size        model.Size
	Device      string
	Simulated   bool
	WeightBytes int64
	Requests    []model.Request
	Rows        []InferenceRow // the first is the baseline
	// MaxLogitDiff is the largest difference between the baseline's logits
	// and any other mode's (the first request's last step).
	MaxLogitDiff float64
}

// Inference runs the size's workload of variable-length requests through the
// model package's transformer in each mode (model.Modes when none are given),
// each on a device of its own with the same weights, and measures memory,
// allocator calls and latency. The modes take turns request by request, each
// request starting with the next mode, so that a machine busy with something
// else slows them alike. The first mode is the reference the others are
// compared with.
func Inference(s Setup, sizeName string, modes ...model.Mode) (res InferenceResult, err error) {
	if len(modes) == 0 {
		modes = model.Modes
	}
	if res.Size, err = model.SizeByName(sizeName); err != nil {
		return res, fmt.Errorf("ch4: Inference: %w", err)
	}
	if res.Requests, err = res.Size.Workload.Make(res.Size.Config.Vocab); err != nil {
		return res, fmt.Errorf("ch4: Inference: %w", err)
	}
	runs := make([]*inferenceRun, len(modes))
	defer func() {
		for _, r := range runs {
			if r != nil {
				err = errors.Join(err, r.close())
			}
		}
	}()
	for i, mode := range modes {
		if runs[i], err = startInference(s, &res, mode); err != nil {
			return res, fmt.Errorf("ch4: Inference: %v: %w", mode, err)
		}
	}
	for i, req := range res.Requests {
		for j := range runs {
			r := runs[(i+j)%len(runs)] // each request starts with the next mode
			if err := r.generate(i, req); err != nil {
				return res, fmt.Errorf("ch4: Inference: %v: request %d: %w", r.row.Mode, i, err)
			}
		}
	}
	for _, r := range runs {
		res.Rows = append(res.Rows, r.finish())
	}
	for _, row := range res.Rows[1:] {
		for i, v := range row.Logits {
			res.MaxLogitDiff = math.Max(res.MaxLogitDiff, math.Abs(float64(v-res.Rows[0].Logits[i])))
		}
	}
	return res, nil
}

// inferenceRun is one mode's bench, model and engine while Inference runs.
type inferenceRun struct {
	b        *Bench
	m        *model.Model
	e        *model.Engine
	rec      *memlab.Recorder
	weights  int64
	c0       counters
	row      InferenceRow
	steps    []time.Duration
	prefills []time.Duration
}

func startInference(s Setup, res *InferenceResult, mode model.Mode) (r *inferenceRun, err error) {
	r = &inferenceRun{row: InferenceRow{Mode: mode}}
	if r.b, err = s.Open(); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, r.close())
			r = nil
		}
	}()
	res.Device, res.Simulated = fmt.Sprintf("%v (%s)", r.b, r.b.Device().Name()), r.b.Simulated()
	if r.m, err = model.New(r.b, res.Size.Config); err != nil {
		return r, err
	}
	res.WeightBytes = r.m.WeightBytes()
	if r.e, err = r.m.NewEngine(mode, model.EngineOptions{MaxLen: res.Size.Workload.MaxLen(), Timer: r.b.Device().Time}); err != nil {
		return r, err
	}
	r.weights = r.b.MemoryAllocated()
	r.b.ResetPeakMemoryStats()
	r.c0 = r.b.counters()
	r.rec = r.b.Record()
	return r, nil
}

func (r *inferenceRun) generate(i int, req model.Request) error {
	t0 := time.Now()
	g, err := r.e.Generate(req)
	r.row.Total += time.Since(t0)
	if err != nil {
		return err
	}
	r.steps = append(r.steps, g.Steps...)
	r.prefills = append(r.prefills, g.Prefill)
	r.row.Tokens += len(g.Tokens)
	if i == 0 {
		r.row.Logits = g.LastLogits
	}
	return nil
}

func (r *inferenceRun) finish() InferenceRow {
	r.rec.Stop()
	row := r.row
	c := r.b.counters().since(r.c0)
	row.PeakAllocated = r.b.MaxMemoryAllocated()
	row.Working = row.PeakAllocated - r.weights
	row.Weights = r.weights
	row.PeakReserved = r.b.MaxMemoryReserved()
	row.AllocCalls, row.DeviceMallocs = c.allocs, c.deviceAllocs
	row.Token, row.Prefill = median(r.steps), median(r.prefills)
	for _, smp := range r.rec.Timeline().Samples {
		row.Curve = append(row.Curve, smp.Allocated)
	}
	return row
}

func (r *inferenceRun) close() error {
	if r.rec != nil {
		r.rec.Stop()
	}
	var err error
	if r.e != nil {
		err = r.e.Release()
	}
	if r.m != nil {
		err = errors.Join(err, r.m.Release())
	}
	return errors.Join(err, r.b.Close())
}

// Row returns the row of mode, or false.
func (r InferenceResult) Row(mode model.Mode) (InferenceRow, bool) {
	for _, row := range r.Rows {
		if row.Mode == mode {
			return row, true
		}
	}
	return InferenceRow{}, false
}

// Savings returns how much smaller row's working peak and median token time
// are than the first row's, in percent (negative: larger).
func (r InferenceResult) Savings(row InferenceRow) (memory, token float64) {
	base := r.Rows[0]
	return saved(float64(row.Working), float64(base.Working)), saved(float64(row.Token), float64(base.Token))
}

// String prints the table and the comparison with the course's figures.
func (r InferenceResult) String() string {
	var b strings.Builder
	cfg, w := r.Size.Config, r.Size.Workload
	fmt.Fprintf(&b, "model %q: %d layers, d_model %d, %d heads, MLP %d, vocab %d (%s of weights) on %s\n",
		r.Size.Name, cfg.Layers, cfg.Dim, cfg.Heads, cfg.Hidden, cfg.Vocab, mib(r.WeightBytes), r.Device)
	fmt.Fprintf(&b, "%d requests: prompts of %d–%d tokens, %d–%d generated tokens each (greedy)\n",
		w.Requests, w.PromptMin, w.PromptMax, w.DecodeMin, w.DecodeMax)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tpeak allocated\tabove weights\tsaved\tpeak reserved\tallocator calls\tcudaMalloc\tmedian token\tsaved\tmedian prefill\ttotal\t")
	for _, row := range r.Rows {
		mem, tok := r.Savings(row)
		fmt.Fprintf(tw, "%v\t%s\t%s\t%.1f%%\t%s\t%d\t%d\t%s\t%.1f%%\t%s\t%s\t\n", row.Mode, mib(row.PeakAllocated), mib(row.Working), mem,
			mib(row.PeakReserved), row.AllocCalls, row.DeviceMallocs, us(row.Token), tok, us(row.Prefill), row.Total.Round(time.Millisecond))
	}
	tw.Flush()
	fmt.Fprintf(&b, "largest logit difference from the baseline: %.3g\n", r.MaxLogitDiff)
	fmt.Fprintln(&b, "the course's figures beside what was measured here:")
	claim := func(text string, mode, ref model.Mode, memory bool) {
		row, ok := r.Row(mode)
		base, okRef := r.Row(ref)
		if !ok || !okRef {
			return
		}
		v, what := saved(float64(row.Token), float64(base.Token)), "median token latency"
		if memory {
			v, what = saved(float64(row.Working), float64(base.Working)), "peak memory above weights"
		}
		fmt.Fprintf(&b, "  %-44s measured %5.1f%% (%v against %v, %s)\n", text, v, mode, ref, what)
	}
	claim("in-place ops, BERT-like inference: 12%", model.InPlace, r.Rows[0].Mode, true)
	claim("", model.Optimised, model.Optimised&^model.InPlace, true)
	claim("views + in-place + pooling combined: 20–30%", model.Optimised, r.Rows[0].Mode, true)
	claim("KV-cache pooling, latency: 5–10%", model.KVCache, r.Rows[0].Mode, false)
	if r.Simulated {
		fmt.Fprintln(&b, "(simulated device: times are the CPU reference kernels plus modelled cudaMalloc latency, not GPU times)")
	}
	return b.String()
}

// Plot draws each mode's peak memory above the weights.
func (r InferenceResult) Plot() (*memplot.Figure, error) {
	return r.bars("peak memory above the weights", "MiB", func(row InferenceRow) float64 { return float64(row.Working) / MiB })
}

// PlotLatency draws each mode's median time per generated token.
func (r InferenceResult) PlotLatency() (*memplot.Figure, error) {
	return r.bars("median time per generated token", "µs per token", func(row InferenceRow) float64 {
		return float64(row.Token) / float64(time.Microsecond)
	})
}

// bars draws one bar per mode.
func (r InferenceResult) bars(what, unit string, value func(InferenceRow) float64) (*memplot.Figure, error) {
	groups := make([]string, len(r.Rows))
	vals := memplot.BarSeries{Name: what}
	for i, row := range r.Rows {
		groups[i] = row.Mode.String()
		vals.Values = append(vals.Values, value(row))
	}
	f, err := memplot.Bars(fmt.Sprintf("4.4 %s model: %s", r.Size.Name, what), unit, groups, vals)
	if err != nil {
		return nil, err
	}
	f.LabelX(groups...)
	return f, nil
}

// PlotCurves draws memory_allocated above the weights over allocator events
// for the first mode and the optimised one (or the last, without it).
func (r InferenceResult) PlotCurves() (*memplot.Figure, error) {
	other := r.Rows[len(r.Rows)-1]
	if row, ok := r.Row(model.Optimised); ok {
		other = row
	}
	var series []memplot.Series
	for _, row := range []InferenceRow{r.Rows[0], other} {
		s := memplot.Series{Name: row.Mode.String(), Y: make([]int64, len(row.Curve)), X: make([]float64, len(row.Curve))}
		for i, v := range row.Curve {
			s.X[i], s.Y[i] = float64(i), v-row.Weights
		}
		series = append(series, s)
	}
	return memplot.Lines(fmt.Sprintf("4.4 %s model: memory_allocated above the weights, request after request", r.Size.Name), "allocator event", series...)
}
