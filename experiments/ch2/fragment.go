package ch2

import (
	"errors"
	"fmt"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/tensor"
)

// Request is the large request made after the workload: 1.5 GiB.
const Request = 1536 << 20

// Device is the size of the device the workload runs on: 4 GiB.
const Device = 4 << 30

// Workload is 2.3's fragmenting training loop: each batch allocates and frees
// a Long activation (a long batch), then allocates a Short one (a shorter
// batch, which splits the long one's cached segment) and a Kept tensor that it
// keeps (a logged metric, which best fit puts in the split's leftover). After
// the batches it frees the activations.
type Workload struct {
	Batches           int
	Long, Short, Kept int
	// Buffer, if set, is pre-allocation: a placeholder made before training
	// whose views serve every batch's activations, allocating nothing.
	Buffer *tensor.Tensor
}

// Fragmenting is the workload of 2.3: six batches of 512 MiB, 496 MiB and a
// kept 16 MiB tensor, which leave six 496 MiB holes each pinned by a live
// tensor.
var Fragmenting = Workload{Batches: 6, Long: 512 << 20, Short: 496 << 20, Kept: 16 << 20}

// Run runs the workload on l and returns the tensors it kept; rec, if not
// nil, is marked after each batch and after the activations are freed.
func (w Workload) Run(l *memlab.Lab, rec *memlab.Recorder) (kept []*tensor.Tensor, err error) {
	if w.Batches < 1 || w.Long < 1 || w.Short < 1 || w.Kept < 1 {
		return nil, fmt.Errorf("ch2: workload %+v: every count and size must be positive", w)
	}
	if w.Buffer != nil && w.Buffer.Nbytes() < int64(max(w.Long, w.Short)) {
		return nil, fmt.Errorf("ch2: workload: the buffer's %s cannot hold a %s activation",
			memlab.FormatBytes(w.Buffer.Nbytes()), memlab.FormatBytes(int64(max(w.Long, w.Short))))
	}
	activation := func(n int) (*tensor.Tensor, error) {
		if w.Buffer != nil {
			return w.Buffer.Narrow(0, 0, n) // buf[:n], reused by every batch
		}
		return tensor.Empty(l, tensor.Uint8, n)
	}
	var acts, keep []*tensor.Tensor
	defer func() {
		if err != nil { // release what the batches held
			err = errors.Join(err, tensor.ReleaseAll(append(acts, keep...)...))
		}
	}()
	for i := 1; i <= w.Batches; i++ {
		long, err := activation(w.Long)
		if err != nil {
			return nil, fmt.Errorf("ch2: batch %d: %w", i, err)
		}
		if err := long.Release(); err != nil {
			return nil, err
		}
		act, err := activation(w.Short)
		if err != nil {
			return nil, fmt.Errorf("ch2: batch %d: %w", i, err)
		}
		acts = append(acts, act)
		k, err := tensor.Empty(l, tensor.Uint8, w.Kept)
		if err != nil {
			return nil, fmt.Errorf("ch2: batch %d: %w", i, err)
		}
		keep = append(keep, k)
		if rec != nil {
			rec.Mark(fmt.Sprintf(lang.Text("batch %d"), i))
		}
	}
	if err := tensor.ReleaseAll(acts...); err != nil {
		return nil, err
	}
	acts = nil
	if rec != nil {
		rec.Mark("activations freed")
	}
	return keep, nil
}

// Remedy is one variant of the fragmenting workload.
type Remedy struct {
	Name string
	Conf string // PYTORCH_CUDA_ALLOC_CONF
	// Short is the shorter batches' activation (Fragmenting's when 0).
	Short int
	// Prealloc makes the activations views of a placeholder made before training.
	Prealloc bool
}

// Fragmented is the workload with none of the remedies.
var Fragmented = Remedy{Name: "fragmented (defaults)"}

// Remedies are the fragmented run and the chapter's remedies: pre-allocation,
// uniform sizes, max_split_size_mb (256, and the chapter's 32) and
// expandable segments.
var Remedies = []Remedy{
	Fragmented,
	{Name: "pre-allocation", Prealloc: true},
	{Name: "uniform sizes", Short: 512 << 20},
	{Name: "max_split_size_mb:256", Conf: "max_split_size_mb:256"},
	{Name: "max_split_size_mb:32", Conf: "max_split_size_mb:32"},
	{Name: "expandable_segments", Conf: "expandable_segments:True"},
}

// Outcome is how the free memory lay before the request, and what came of
// it.
type Outcome struct {
	Remedy
	// Snapshot is the allocator's state before the request.
	Snapshot allocator.Snapshot
	// Releasable is free memory the allocator can give back and re-request
	// as one (whole free segments, free pages of expandable ones); Pinned is
	// free memory in split blocks (inactive_split_bytes); Room is what the
	// device has beyond the reserved memory.
	Releasable, Pinned, Room int64
	// Peak is max_memory_reserved() and Allocs num_device_alloc after the request.
	Peak, Allocs int64
	// Err is the request's error (an out-of-memory error), nil if served.
	Err error
}

// Try runs a remedy in a 4 GiB lab and makes the 1.5 GiB request.
func Try(r Remedy) (o Outcome, err error) {
	l, err := memlab.Open(memlab.Budget(Device), memlab.AllocConf(r.Conf), memlab.NotCurrent())
	if err != nil {
		return o, fmt.Errorf("ch2: remedy %s: %w", r.Name, err)
	}
	defer func() { err = errors.Join(err, l.Close()) }()
	w := Fragmenting
	if r.Short != 0 {
		w.Short = r.Short
	}
	if r.Prealloc {
		if w.Buffer, err = tensor.Empty(l, tensor.Uint8, max(w.Long, w.Short)); err != nil {
			return o, fmt.Errorf("ch2: remedy %s: %w", r.Name, err)
		}
		defer func() { err = errors.Join(err, w.Buffer.Release()) }()
	}
	kept, err := w.Run(l, nil)
	if err != nil {
		return o, fmt.Errorf("ch2: remedy %s: %w", r.Name, err)
	}
	o.Remedy, o.Snapshot = r, l.Snapshot()
	for _, seg := range o.Snapshot.Segments {
		if seg.ActiveSize == 0 || seg.Expandable { // free pages of an expandable segment can be unmapped
			o.Releasable += seg.TotalSize - seg.ActiveSize
		}
	}
	o.Pinned = l.MemoryStats()["inactive_split_bytes.all.current"]
	free, _, err := l.MemGetInfo()
	if err != nil {
		return o, err
	}
	o.Room = min(int64(free), Device-l.MemoryReserved())
	t, err := tensor.Empty(l, tensor.Uint8, Request)
	switch {
	case err == nil:
		kept = append(kept, t)
	case memlab.IsOutOfMemory(err):
		o.Err = err
	default:
		return o, err
	}
	o.Peak, o.Allocs = l.MaxMemoryReserved(), l.MemoryStats()["num_device_alloc"]
	return o, tensor.ReleaseAll(kept...)
}

// TryAll tries each remedy in turn.
func TryAll(rs ...Remedy) ([]Outcome, error) {
	outs := make([]Outcome, 0, len(rs))
	for _, r := range rs {
		o, err := Try(r)
		if err != nil {
			return nil, err
		}
		outs = append(outs, o)
	}
	return outs, nil
}

// Table is one row an outcome: whether the request was served, how the free
// memory lay, the peak reserved memory and the cudaMalloc calls.
func Table(outs []Outcome) *memlab.Table {
	tab := memlab.NewTable("variant", "1.5 GiB request", "releasable", "pinned in split blocks",
		"room on the device", "peak reserved", "cudaMalloc calls")
	for _, o := range outs {
		tab.Row(o.Name, memlab.Outcome(o.Err), memlab.FormatBytes(o.Releasable), memlab.FormatBytes(o.Pinned),
			memlab.FormatBytes(o.Room), memlab.FormatBytes(o.Peak), o.Allocs)
	}
	return tab
}
