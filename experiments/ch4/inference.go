package ch4

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/memlab"
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
	Tokens int // tokens generated
	// StepPeak is max_memory_allocated during each forward pass, request
	// after request (a prompt's pass, then one per generated token): every
	// mode makes the same passes, so the curves of two modes align pass by
	// pass.
	StepPeak []int64
	Logits   []float32 `json:"-"` // the first request's last logits, to compare modes
}

// InferenceResult is what [Inference] measured.
type InferenceResult struct {
	Size model.Size
	// Device names the device, such as "cuda:0 (NVIDIA H200)"; Card is its
	// name alone.
	Device, Card string
	Simulated    bool
	WeightBytes  int64
	Requests     []model.Request `json:"-"` // made again from Size.Workload
	Rows         []InferenceRow  // the first is the reference
	// MaxLogitDiff is the largest difference between the baseline's logits
	// and any other mode's (the first request's last step).
	MaxLogitDiff float64
	// Passes is the number of forward passes per request, in order: the
	// prompt's and one per generated token after the first.
	Passes []int
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
		if s.Progress != nil {
			s.Progress(i+1, len(res.Requests))
		}
	}
	for _, r := range runs {
		res.Rows = append(res.Rows, r.finish())
	}
	for _, req := range res.Requests {
		res.Passes = append(res.Passes, req.Decode) // a prefill and Decode-1 steps
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
	weights  int64
	c0       counters
	row      InferenceRow
	steps    []time.Duration
	prefills []time.Duration
	// peak and peakReserved fold in the allocator's peaks, which each
	// forward pass resets to read its own.
	peak, peakReserved int64
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
	res.Card = r.b.Device().Name()
	res.Device, res.Simulated = fmt.Sprintf("%v (%s)", r.b, res.Card), r.b.Simulated()
	if r.m, err = model.New(r.b, res.Size.Config); err != nil {
		return r, err
	}
	res.WeightBytes = r.m.WeightBytes()
	if r.e, err = r.m.NewEngine(mode, model.EngineOptions{MaxLen: res.Size.Workload.MaxLen(), Timer: r.timePass, Forward: s.Forward}); err != nil {
		return r, err
	}
	r.weights = r.b.MemoryAllocated()
	r.b.ResetPeakMemoryStats()
	r.c0 = r.b.counters()
	return r, nil
}

// timePass times one forward pass with the device's clock and records the
// peak memory during it in StepPeak: the allocator's peak is folded into
// r.peak and reset before the pass, and read after it.
func (r *inferenceRun) timePass(f func() error) (time.Duration, error) {
	r.foldPeaks()
	r.b.ResetPeakMemoryStats()
	d, err := r.b.Device().Time(f)
	r.row.StepPeak = append(r.row.StepPeak, r.b.MaxMemoryAllocated())
	return d, err
}

// foldPeaks adds the allocator's peaks since the last reset to r's.
func (r *inferenceRun) foldPeaks() {
	r.peak = max(r.peak, r.b.MaxMemoryAllocated())
	r.peakReserved = max(r.peakReserved, r.b.MaxMemoryReserved())
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
	r.foldPeaks()
	row := r.row
	c := r.b.counters().since(r.c0)
	row.PeakAllocated = r.peak
	row.Working = row.PeakAllocated - r.weights
	row.Weights = r.weights
	row.PeakReserved = r.peakReserved
	row.AllocCalls, row.DeviceMallocs = c.allocs, c.deviceAllocs
	row.Token, row.Prefill = median(r.steps), median(r.prefills)
	return row
}

func (r *inferenceRun) close() error {
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
	fmt.Fprintln(&b, "chapter = in-place+views+kv-cache, the chapter's three techniques (its pool: the KV-cache arenas); pooled-scores = attention scores and softmax in pooled buffers (the chapter's 4.4), shown beside chapter, not in it; last-logits is memlab's own extra, not the chapter's; optimised = chapter+last-logits")
	fmt.Fprintf(&b, "largest logit difference from the baseline: %.3g\n", r.MaxLogitDiff)
	fmt.Fprintln(&b, "the course's figures beside what was measured here:")
	for _, c := range r.Claims() {
		fmt.Fprintf(&b, "  %-44s measured %5.1f%% (%v against %v, %s)\n", c.Claim, c.Saved, c.Mode, c.Ref, c.What)
	}
	if r.Simulated {
		fmt.Fprintln(&b, "(simulated device: times are the CPU reference kernels plus modelled cudaMalloc latency, not GPU times)")
	}
	return b.String()
}

// ChapterModes are the rows chapter 4 asks for: the baseline, each of its
// three techniques alone, and the three together ([model.Chapter]).
var ChapterModes = []model.Mode{model.Baseline, model.InPlace, model.Views, model.KVCache, model.Chapter}

// Table returns the figures of the modes in ChapterModes that ran, as a
// notebook table (HTML in GoNB) with String's columns but the median
// prefill and the token time saved; the
// other modes, memlab's own extras, are in ExtrasTable.
func (r InferenceResult) Table() *memlab.Table {
	cfg := r.Size.Config
	return r.table(true, fmt.Sprintf(lang.Text("%s model (%d layers, d_model %d, %s of weights) on %s: the chapter's techniques"),
		SizeName(r.Size.Name), cfg.Layers, cfg.Dim, mib(r.WeightBytes), r.Device))
}

// ExtrasTable returns the figures of the modes not in ChapterModes —
// memlab's own extras (pooled scores, last-logits and their combinations) —
// saved against the first mode as in Table. It has no rows when only
// ChapterModes ran.
func (r InferenceResult) ExtrasTable() *memlab.Table {
	return r.table(false, fmt.Sprintf(lang.Text("%s model: memlab's own extras, not the chapter's (saved: against the %v)"), SizeName(r.Size.Name), ModeName(r.Rows[0].Mode)))
}

// table is String's columns but the median prefill (which the notebook does
// not discuss) and the token time saved (which Findings and the notebook's
// spread over runs say), so that it fits a notebook's output
// (memlab.OutputWidth).
func (r InferenceResult) table(chapter bool, caption string) *memlab.Table {
	t := memlab.NewTable(T("mode", "peak allocated", "above weights", "saved", "peak reserved", "allocator calls", "cudaMalloc", "median token")...)
	t.Caption = caption
	for _, row := range r.Rows {
		if slices.Contains(ChapterModes, row.Mode) != chapter {
			continue
		}
		mem, _ := r.Savings(row)
		// "views + kv-cache + last-logits": a long mode may wrap between its parts
		t.Row(strings.ReplaceAll(row.Mode.String(), "+", " + "), mib(row.PeakAllocated), mib(row.Working), fmt.Sprintf("%.1f%%", mem),
			mib(row.PeakReserved), row.AllocCalls, row.DeviceMallocs, us(row.Token))
	}
	return t
}

// Measure is what an InferenceRow's value is compared on.
type Measure uint8

const (
	// Working is the peak memory above the weights.
	Working Measure = iota
	// Peak is the total peak memory, weights included.
	Peak
	// TokenLatency is the median time of one generated token.
	TokenLatency
)

// String names the measure as the tables print it.
func (m Measure) String() string {
	switch m {
	case Working:
		return "peak memory above weights"
	case Peak:
		return "total peak memory"
	case TokenLatency:
		return "median token latency"
	}
	return fmt.Sprintf("Measure(%d)", uint8(m))
}

// Of returns row's value of the measure.
func (m Measure) Of(row InferenceRow) float64 {
	switch m {
	case Working:
		return float64(row.Working)
	case Peak:
		return float64(row.PeakAllocated)
	}
	return float64(row.Token)
}

// Claim is one of the course's figures beside the comparison that measures
// it.
type Claim struct {
	Claim     string // the course's words; "" for a further comparison of the claim before
	Mode, Ref model.Mode
	What      Measure
	Saved     float64 // percent of Ref's value that Mode saves (negative: Mode is larger)
}

// Claims compares the course's figures with the modes that apply what each
// names: in-place against the baseline (and against all but in-place, once
// the other optimisations have moved the peak), the chapter's three
// techniques against the baseline on the peak above the weights and on the
// total peak, the KV-cache pool's latency, and memlab's extra, last-logits,
// labelled as not the chapter's. Comparisons whose modes did not run are
// left out.
func (r InferenceResult) Claims() []Claim {
	var cs []Claim
	shown := "" // the claim the last comparison printed under
	add := func(text string, mode, ref model.Mode, what Measure) {
		v, ok := r.Compare(mode, ref, what)
		if !ok || mode == ref {
			return
		}
		c := Claim{Mode: mode, Ref: ref, What: what, Saved: v}
		if text != shown {
			c.Claim, shown = text, text
		}
		cs = append(cs, c)
	}
	const inPlace, combined, latency, extra = "in-place ops, BERT-like inference: 12%", "views + in-place + pooling combined: 20–30%",
		"KV-cache pooling, latency: 5–10%", "memlab's extra, not the chapter's:"
	add(inPlace, model.InPlace, model.Baseline, Working)
	add(inPlace, model.Optimised, model.Optimised&^model.InPlace, Working)
	add(combined, model.Chapter, model.Baseline, Working)
	add(combined, model.Chapter, model.Baseline, Peak)
	add(combined, model.Chapter|model.PooledScores, model.Baseline, Working) // with the chapter's 4.4 buffers pooled too
	add(latency, model.KVCache, model.Baseline, TokenLatency)
	add(latency, model.Chapter, model.Baseline, TokenLatency)
	add(extra, model.LastLogits, model.Baseline, Working)
	add(extra, model.Optimised, model.Baseline, Working)
	return cs
}

// Compare returns how much of ref's value of what mode saves, in percent
// (negative: mode is larger), and whether both modes ran.
func (r InferenceResult) Compare(mode, ref model.Mode, what Measure) (float64, bool) {
	row, ok := r.Row(mode)
	base, okRef := r.Row(ref)
	if !ok || !okRef {
		return 0, false
	}
	return saved(what.Of(row), what.Of(base)), true
}

// Findings prints the notebook's "Measured:" notes on this result: each
// technique's effect on the peak above the weights, the chapter's three
// together on both peaks, memlab's extra apart, and the token latency, with
// the chapter's figure beside each. Comparisons whose modes did not run are
// left out. The notes are in the edition MEMLAB_LANG names (package lang):
// each sentence is looked up in lang's catalog by its English format.
func (r InferenceResult) Findings() string {
	var b strings.Builder
	base := r.Rows[0]
	effect := func(v float64) string {
		switch {
		case v > 0:
			return fmt.Sprintf(lang.Text("lowers it by %.1f %%"), v)
		case v < 0:
			return fmt.Sprintf(lang.Text("raises it by %.1f %%"), -v)
		}
		return lang.Text("leaves it unchanged")
	}
	same := lang.Text("every mode's logits equal the baseline's exactly")
	if r.MaxLogitDiff != 0 {
		same = fmt.Sprintf(lang.Text("every mode's logits are within %.3g of the baseline's"), r.MaxLogitDiff)
	}
	fmt.Fprintf(&b, lang.Text("Measured (%s model on %s): the %v's peak is %s, %s above the weights; %s.")+"\n",
		SizeName(r.Size.Name), r.Device, ModeName(base.Mode), mib(base.PeakAllocated), mib(base.Working), same)
	for _, m := range []model.Mode{model.InPlace, model.Views, model.KVCache, model.PooledScores} {
		row, ok := r.Row(m)
		if !ok {
			continue
		}
		v, _ := r.Compare(m, base.Mode, Working)
		fmt.Fprintf(&b, "- "+lang.Text("%v alone %s (%s above the weights), with %d allocator calls instead of %d.")+"\n", ModeName(m), effect(v), mib(row.Working), row.AllocCalls, base.AllocCalls)
	}
	if row, ok := r.Row(model.Chapter); ok {
		w, _ := r.Compare(model.Chapter, base.Mode, Working)
		p, _ := r.Compare(model.Chapter, base.Mode, Peak)
		fmt.Fprintf(&b, "- "+lang.Text("The chapter's three techniques together (%v = in-place+views+kv-cache): peak above the weights %s → %s, which %s; total peak %s → %s, which %s. The chapter says 20–30 %% less.")+"\n",
			ModeName(model.Chapter), mib(base.Working), mib(row.Working), effect(w), mib(base.PeakAllocated), mib(row.PeakAllocated), effect(p))
	}
	if row, ok := r.Row(model.Chapter | model.PooledScores); ok {
		if c, ok := r.Row(model.Chapter); ok {
			w, _ := r.Compare(row.Mode, model.Chapter, Working)
			fmt.Fprintf(&b, "- "+lang.Text("Pooled attention scores (the chapter's 4.4 buffers) added to them (%v): peak above the weights %s → %s, which %s, with %d allocator calls instead of %d.")+"\n",
				ModeName(row.Mode), mib(c.Working), mib(row.Working), effect(w), row.AllocCalls, c.AllocCalls)
		}
	}
	if v, ok := r.Compare(model.Optimised, model.Optimised&^model.InPlace, Working); ok {
		fmt.Fprintf(&b, "- "+lang.Text("In-place added to all the others saves %.1f %% of the peak above the weights (in-place alone: see above). The chapter says 12 %% for in-place on BERT-like inference.")+"\n", v)
	}
	if v, ok := r.Compare(model.LastLogits, base.Mode, Working); ok {
		o, _ := r.Compare(model.Optimised, base.Mode, Working)
		fmt.Fprintf(&b, "- "+lang.Text("memlab's own extra, last-logits (not one of the chapter's techniques), alone %s; added to the chapter's three (optimised), the peak above the weights against the baseline's: %s.")+"\n", effect(v), effect(o))
	}
	if row, ok := r.Row(model.KVCache); ok {
		v, _ := r.Compare(model.KVCache, base.Mode, TokenLatency)
		fmt.Fprintf(&b, "- "+lang.Text("Median token: %v %s, kv-cache %s (%s; the chapter says 5–10 %% faster)"), ModeName(base.Mode), us(base.Token), us(row.Token), Faster(v))
		if c, ok := r.Row(model.Chapter); ok {
			cv, _ := r.Compare(model.Chapter, base.Mode, TokenLatency)
			fmt.Fprintf(&b, lang.Text(", chapter %s (%s)"), us(c.Token), Faster(cv))
		}
		fmt.Fprint(&b, lang.Text("."))
		if r.Simulated {
			fmt.Fprint(&b, lang.Text(" On the simulated device these are CPU-kernel times that vary from run to run by more than the modes differ: only a GPU run can test the latency claim."))
		}
		fmt.Fprintln(&b)
	}
	var mallocs []string
	most := int64(0)
	for _, row := range r.Rows {
		mallocs = append(mallocs, fmt.Sprintf("%v %d", ModeName(row.Mode), row.DeviceMallocs))
		most = max(most, row.DeviceMallocs)
	}
	if most == 0 {
		fmt.Fprintln(&b, "- "+lang.Text("No mode makes a cudaMalloc during the workload: the caching allocator already pools every pass's temporaries, attention scores included."))
	} else {
		fmt.Fprintf(&b, "- "+lang.Text("cudaMalloc calls during the workload: %s; every other allocation, attention scores included, is served from the caching allocator's cache.")+"\n", strings.Join(mallocs, ", "))
	}
	return b.String()
}
