package ch4

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/model"
	"memlab.dev/memlab/tensor"
)

// This file holds the plumbing of notebook 04's cells that is no part of the
// lesson: tables built from measurements, and verdicts computed from them.

// BatchTable is the table of [RunBatch] runs: each run's peak above the
// weights, what it saved against the first run, its allocator calls and
// cudaMallocs.
func BatchTable(runs []BatchRun) *memlab.Table {
	tab := memlab.NewTable(T("tricks", "peak above the weights", "saved", "allocator calls", "cudaMalloc")...)
	for _, r := range runs {
		tab.Row(r.Name, memlab.FormatBytes(r.Peak), fmt.Sprintf("%.1f %%", Percent(r.Peak, runs[0].Peak)), r.Calls, r.Mallocs)
	}
	return tab
}

// Partly is a verdict with a partial case: Holds if all, PartlyHolds if only
// some, DoesNotHold otherwise.
func Partly(all, some bool) memlab.Verdict {
	switch {
	case all:
		return memlab.Holds
	case some:
		return memlab.PartlyHolds
	}
	return memlab.DoesNotHold
}

// MemoryOnlyNote makes l memory-only on the simulator ([MemoryOnly]) and then
// says so, in the workbook's edition.
func MemoryOnlyNote(l *memlab.Lab) {
	if MemoryOnly(l) {
		fmt.Println(lang.Text("simulated device: memory accounting only (no values computed; the bytes are those of a GPU run)"))
	}
}

// BERTCase is one case of the 12 % question: eager or fused attention, a
// sequence length and a batch.
type BERTCase struct {
	Fused      bool
	Seq, Batch int
}

// BERTCases are the cases the notebook measures: eager then fused attention,
// at 128 and 512 tokens, batches 32 and 64.
func BERTCases() []BERTCase {
	var cs []BERTCase
	for _, fused := range []bool{false, true} {
		for _, seq := range []int{128, 512} {
			for _, batch := range []int{32, 64} {
				cs = append(cs, BERTCase{fused, seq, batch})
			}
		}
	}
	return cs
}

// InPlaceTable collects the peaks of BERT's forward pass out of place and in
// place, case by case, into a table and the verdict on the chapter's 12 %.
type InPlaceTable struct {
	tab   *memlab.Table
	saved map[bool][]float64 // by Fused
}

// NewInPlaceTable returns an empty table.
func NewInPlaceTable() *InPlaceTable {
	return &InPlaceTable{
		tab:   memlab.NewTable(T("attention", "sequence", "batch", "out of place", "in place", "saved", "scores : MLP")...),
		saved: map[bool][]float64{},
	}
}

// Add records case c's peaks above the weights, out of place and in place.
func (t *InPlaceTable) Add(c BERTCase, out, in int64) {
	s := Percent(in, out)
	t.saved[c.Fused] = append(t.saved[c.Fused], s)
	t.tab.Row(AttentionName(c.Fused), c.Seq, c.Batch, memlab.FormatBytes(out), memlab.FormatBytes(in), fmt.Sprintf("%.1f %%", s), ScoresToMLP(c.Seq, c.Fused))
}

// Show shows the table.
func (t *InPlaceTable) Show() { t.tab.Show() }

// Judge prints the verdict on the chapter's 12 % ([NearTwelve]) from what
// was added: eager attention at 128 and 512 tokens (batch 32), the range
// with fused attention. It needs the cases of [BERTCases].
func (t *InPlaceTable) Judge() {
	e, f := t.saved[false], t.saved[true]
	if len(e) < 3 || len(f) == 0 {
		fmt.Println(lang.Text("no verdict: the table lacks cases"))
		return
	}
	memlab.Judge("switching a few activations to in-place cut BERT inference memory by 12 percent", NearTwelve(append(slices.Clone(e), f...)),
		"in place saves %.1f %% at 128 tokens and %.1f %% at 512 with eager attention, %.1f–%.1f %% with fused attention",
		e[0], e[2], slices.Min(f), slices.Max(f))
}

// FitTable runs forward passes on a simulated device of one capacity
// ([OnDevice]) and tabulates whether each fits.
type FitTable struct {
	capacity int64
	tab      *memlab.Table
	fits     map[string]bool // by batch and tricks
}

// NewFitTable returns a table for a device between the reserved peaks of
// small and large (each run on a device of its own), in whole 2 MiB pages:
// small fits it, large does not.
func NewFitTable(small, large func(*memlab.Lab) int64) *FitTable {
	_, r1, _ := OnDevice(0, small)
	_, r2, _ := OnDevice(0, large)
	capacity := (r1 + r2) / 2 &^ (2<<20 - 1)
	return &FitTable{
		capacity: capacity,
		tab:      memlab.NewTable(lang.Text("batch"), lang.Text("tricks"), fmt.Sprintf(lang.Text("on a device of %s"), memlab.FormatBytes(capacity))),
		fits:     map[string]bool{},
	}
}

// Run runs pass, batch with tricks, on the table's device and adds its row:
// "fits", or where it ran out of memory ([Fits]).
func (t *FitTable) Run(batch int, tricks fmt.Stringer, pass func(*memlab.Lab) int64) {
	_, _, err := OnDevice(t.capacity, pass)
	t.fits[fmt.Sprint(batch, tricks)] = err == nil
	t.tab.Row(batch, tricks, Fits(err))
}

// Fits reports whether the run of batch with tricks fitted (false if none
// ran).
func (t *FitTable) Fits(batch int, tricks fmt.Stringer) bool {
	return t.fits[fmt.Sprint(batch, tricks)]
}

// Show shows the table.
func (t *FitTable) Show() { t.tab.Show() }

// MergeTable tabulates, setting by setting of PYTORCH_CUDA_ALLOC_CONF, the
// segments and blocks of a lab while tensors are in use and after they are
// freed.
type MergeTable struct {
	tab    *memlab.Table
	merged bool // every segment one free block again after del, so far
}

// NewMergeTable returns an empty table.
func NewMergeTable() *MergeTable {
	return &MergeTable{tab: memlab.NewTable(T("PYTORCH_CUDA_ALLOC_CONF", "segments", "blocks while in use", "free blocks after del")...), merged: true}
}

// Add adds the row of conf: l's segments and blocks now (after del), and
// inUse, its blocks before.
func (t *MergeTable) Add(conf string, l *memlab.Lab, inUse int) {
	segs, free := len(l.Snapshot().Segments), Blocks(l)
	t.merged = t.merged && free == segs
	t.tab.Row(conf, segs, inUse, free)
}

// Show shows the table.
func (t *MergeTable) Show() { t.tab.Show() }

// Merged reports whether every segment was one free block again after del,
// in every row.
func (t *MergeTable) Merged() bool { return t.merged }

// Judge prints the verdict on the chapter's warning that a badly set
// max_split_size_mb leaves fragments that cannot merge: it holds if some
// row's segments did not merge back into one free block each.
func (t *MergeTable) Judge() {
	memlab.Judge("a badly set max_split_size_mb leaves fragments that cannot merge", memlab.HoldsIf(!t.merged),
		"after del, every segment is one free block again under all three settings: %v", t.merged)
}

// Fill sets every element of t to v, what t.fill_(v) and Python's
// y[0, 0] = v on a 0-d view do: it copies a 0-d tensor of v into t (a
// version bump of t's storage) and releases it.
func Fill(t *tensor.Tensor, v float64) error {
	src, err := tensor.Full(t.Device(), t.DType(), v)
	if err != nil {
		return fmt.Errorf("ch4: Fill: %w", err)
	}
	return errors.Join(t.CopyFrom(src), src.Release())
}

// LiveSpread sorts faster (a kv-cache's token-time savings against the
// baseline's in live runs on device, in percent), prints their median and
// range, and returns the median (0 for none).
func LiveSpread(device string, faster []float64) float64 {
	if len(faster) == 0 {
		return 0
	}
	slices.Sort(faster)
	m := faster[len(faster)/2]
	memlab.Measured("live, on %s: kv-cache's median token time against the baseline's over %d runs: %.1f %% saved (median), from %.1f %% to %.1f %% (negative: slower)",
		device, len(faster), m, faster[0], faster[len(faster)-1])
	return m
}

// SayMallocs prints, for the live run and the recorded ones, the baseline's
// and kv-cache's cudaMallocs, allocator calls and median token times.
func SayMallocs(live InferenceResult, rec RecordedRuns) {
	runs := []InferenceResult{live}
	for _, r := range rec {
		runs = append(runs, r.Result)
	}
	for i, res := range runs {
		b, _ := res.Row(model.Baseline)
		k, _ := res.Row(model.KVCache)
		memlab.Measured("%s, %s model on %s: baseline %d cudaMalloc and %d allocator calls, kv-cache %d and %d; median token %s → %s",
			LiveOrRecorded(i > 0), SizeName(res.Size.Name), res.Device, b.DeviceMallocs, b.AllocCalls, k.DeviceMallocs, k.AllocCalls, b.Token.Round(time.Microsecond), k.Token.Round(time.Microsecond))
	}
}

// Engine is a model's weights on a lab and an engine running them in one
// mode.
type Engine struct {
	*model.Engine
	m *model.Model
}

// NewEngine loads the model of the named size (model.Sizes) on l and returns
// an engine running it in mode, for requests up to the size's workload's
// longest, with the forward pass f in the modes f implements (nil: the
// model's own, model.EngineOptions.Forward).
func NewEngine(l *memlab.Lab, sizeName string, mode model.Mode, f model.Forward) (*Engine, error) {
	size, err := model.SizeByName(sizeName)
	if err != nil {
		return nil, fmt.Errorf("ch4: NewEngine: %w", err)
	}
	m, err := model.New(l, size.Config)
	if err != nil {
		return nil, fmt.Errorf("ch4: NewEngine: %w", err)
	}
	e, err := m.NewEngine(mode, model.EngineOptions{MaxLen: size.Workload.MaxLen(), Forward: f})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("ch4: NewEngine: %w", err), m.Release())
	}
	return &Engine{Engine: e, m: m}, nil
}

// FirstRequest is the first request of the named size's workload.
func FirstRequest(sizeName string) (model.Request, error) {
	size, err := model.SizeByName(sizeName)
	if err != nil {
		return model.Request{}, fmt.Errorf("ch4: FirstRequest: %w", err)
	}
	reqs, err := size.Workload.Make(size.Config.Vocab)
	if err != nil {
		return model.Request{}, fmt.Errorf("ch4: FirstRequest: %w", err)
	}
	if len(reqs) == 0 {
		return model.Request{}, fmt.Errorf("ch4: FirstRequest: the %s workload has no requests", sizeName)
	}
	return reqs[0], nil
}

// Release frees the engine's pools, then the weights.
func (e *Engine) Release() error { return errors.Join(e.Engine.Release(), e.m.Release()) }

// ModeTable is the table of one request run mode by mode: the weights, the
// peak above them, the allocator calls and the first tokens; the caption
// says what the request is.
func ModeTable(req model.Request) *memlab.Table {
	tab := memlab.NewTable(T("mode", "weights", "peak above the weights", "allocator calls", "tokens")...)
	tab.Caption = fmt.Sprintf(lang.Text("one request: %d prompt tokens, %d generated"), len(req.Prompt), req.Decode)
	return tab
}
