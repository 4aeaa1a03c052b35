package nb02

import (
	"fmt"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/tensor"
)

/*md
## 2.3 Fragmentation (内存碎片)

### The chapter's sequence does not fragment

The chapter's example — allocate and free 1024, 512 and 256 MiB, then ask for 768 MiB —
is often told as an out-of-memory story. PyTorch serves it without one: the first 1 GiB
segment stays cached, each later request splits it, and freeing merges the pieces back
(2.2 compared every op with PyTorch 2.11's recording). The segment map right after the
768 MiB request:
*/

//nb:cell plot
func chapterSequenceNoOOM() {
	steps, at768 := chapterSequence("")
	step, _ := steps.Find("a3 = empty(768 MiB)")
	memlab.Measured("the 768 MiB request was served (error: %q) inside %d segment of %s; %d cudaMalloc call in the whole sequence",
		step.Err, len(at768), memlab.FormatBytes(step.Reserved), steps.Last().DeviceAllocs)
	memlab.Show(memplot.SegmentMap("2.3 after the 768 MiB request: one segment, split", at768))
}

/*md
### A sequence that really fragments

Fragmentation needs **live small tensors pinning segments**. In a 4 GiB device, six
batches each allocate and free a 512 MiB activation (a long batch), then a 496 MiB one (a
shorter batch: it splits the cached 512 MiB segment, leaving 16 MiB free at its end), and
keep a 16 MiB tensor (a logged metric, say), which best fit puts in exactly that
leftover. When the activations are freed, six 496 MiB holes are free in the cache — each
in a segment a live tensor pins, so neither `empty_cache()` nor the allocator's own
retry can release any. Then comes a request for 1536 MiB (`request` below).
*/

// request is the large request made after the workload.
//
//nb:decl
const request = 1536 << 20

// workload runs batches of the fragmenting workload on l: each allocates and
// frees a 512 MiB activation, then allocates a batch-byte activation and a
// 16 MiB tensor that it keeps. It frees the activations and returns the kept
// tensors; rec, if not nil, is marked after each batch.
//
//nb:decl
func workload(l *memlab.Lab, batches int, batch int, rec *memlab.Recorder) []*tensor.Tensor {
	var keep, acts []*tensor.Tensor
	for i := 1; i <= batches; i++ {
		long := memlab.Must(tensor.Empty(l, tensor.Uint8, 512<<20)) // a long batch
		memlab.Check(long.Release())
		acts = append(acts, memlab.Must(tensor.Empty(l, tensor.Uint8, batch)))  // a shorter one
		keep = append(keep, memlab.Must(tensor.Empty(l, tensor.Uint8, 16<<20))) // a logged metric
		if rec != nil {
			rec.Mark(fmt.Sprintf("batch %d", i))
		}
	}
	memlab.Check(tensor.ReleaseAll(acts...))
	if rec != nil {
		rec.Mark("activations freed")
	}
	return keep
}

//nb:cell plot
func fragment() {
	l := memlab.MustOpen(memlab.Budget(4 << 30))
	defer l.Close()
	rec := l.Record()
	keep := workload(l, 6, 496<<20, rec)
	snap := l.Snapshot()
	_, err := tensor.Empty(l, tensor.Uint8, request)
	rec.Stop()
	fmt.Println("empty(1.5 GiB):", err)
	memlab.Measured("%s free in the cache, the largest free block %s: the 1.5 GiB request failed with an out-of-memory error: %v",
		memlab.FormatBytes(snap.TotalFree()), memlab.FormatBytes(snap.LargestFreeBlock()), memlab.IsOutOfMemory(err))
	memlab.Show(memplot.SegmentMap("2.3 segments before the 1.5 GiB request", memlab.Segments(snap)))
	memlab.Show(rec.PlotFragmentation("2.3 free memory in the cache, batch by batch"))
	memlab.Check(tensor.ReleaseAll(keep...))
}

/*md
The segment map shows six segments, each an orange hole (inactive split: free but
pinned) beside the blue 16 MiB tensor that pins it. The gauge shows how it happened:
while the batches run nothing is free (each small tensor fills its segment's leftover
exactly); freeing the activations opens the holes — total free far above the request,
the largest block far below. The error message is PyTorch's, with its advice.

**Try it:** keep 8 MiB tensors instead of 16 MiB (`8<<20` in `workload`): each 16 MiB
leftover now holds two of them, best fit packs them in pairs, three of the six segments
are left with no kept tensor, and the request is served — fragmentation depends on
exactly how the sizes interlock. Or make the shorter batch `512<<20`: it is served too
(that is the "uniform sizes" remedy below).

### What `memory_summary()` says about it

PyTorch's own report of the fragmented state. Read *Non-releasable memory*: it is the
inactive split bytes, free yet impossible to give back.
*/

//nb:cell
func fragmentedSummary() {
	l := memlab.MustOpen(memlab.Budget(4 << 30))
	defer l.Close()
	keep := workload(l, 6, 496<<20, nil)
	_, err := tensor.Empty(l, tensor.Uint8, request)
	if !memlab.IsOutOfMemory(err) {
		panic(fmt.Sprintf("the request did not run out of memory (%v): no fragmentation to show", err))
	}
	l.ShowSummary()
	st := l.MemoryStats()
	memlab.Measured("inactive_split_bytes %s of reserved %s; %d out-of-memory error, %d allocator retry",
		memlab.FormatBytes(st["inactive_split_bytes.all.current"]), memlab.FormatBytes(st["reserved_bytes.all.current"]),
		st["num_ooms"], st["num_alloc_retries"])
	memlab.Check(tensor.ReleaseAll(keep...))
}

/*md
### Remedies, measured

The same workload with each remedy: **pre-allocation** (allocate the large buffer first
and serve the request from it, as a view: fewer batches fit beside it), **uniform sizes**
(every activation 512 MiB, so a cached segment is reused whole and never split),
**`max_split_size_mb:256`** and the chapter's **`max_split_size_mb:32`** (large segments
are never split: the small tensors get segments of their own, and free oversize
segments are released under pressure) and **`expandable_segments:True`** (one growing
segment mapped page by page; free pages are unmapped when the device runs short).
What decides the request is how the free memory lies: *releasable* (whole free
segments, which the allocator gives back and re-requests as one, or free pages of an
expandable segment, which it unmaps), *pinned in split
blocks* (`inactive_split_bytes`, useless for a larger request) and room on the device.
*/

// remedy is one variant of the fragmenting workload.
//
//nb:decl
type remedy struct {
	name, conf string
	batch      int  // the shorter batches' activation
	prealloc   bool // allocate the request's buffer first and serve it from there
}

// outcome is how the free memory lay before the request, and what came of it.
//
//nb:decl
type outcome struct {
	remedy
	snap                                   allocator.Snapshot
	releasable, pinned, room, peak, allocs int64
	err                                    error
}

// try runs a remedy in a 4 GiB lab and makes the 1.5 GiB request.
//
//nb:decl
func try(r remedy) (o outcome) {
	l := memlab.MustOpen(memlab.Budget(4<<30), memlab.AllocConf(r.conf))
	defer l.Close()
	o.remedy, o.room = r, 4<<30
	batches, keep := 6, []*tensor.Tensor{}
	if r.prealloc {
		keep = append(keep, memlab.Must(tensor.Empty(l, tensor.Uint8, request)))
		batches = 3 // the buffer takes the room of three batches
	}
	keep = append(keep, workload(l, batches, r.batch, nil)...)
	o.snap = l.Snapshot()
	for _, seg := range o.snap.Segments {
		if seg.ActiveSize == 0 || seg.Expandable { // free pages of an expandable segment can be unmapped
			o.releasable += seg.TotalSize - seg.ActiveSize
		}
	}
	o.pinned = l.MemoryStats()["inactive_split_bytes.all.current"]
	free, _ := memlab.Must2(l.MemGetInfo())
	o.room = min(int64(free), o.room-l.MemoryReserved())
	var t *tensor.Tensor
	if r.prealloc {
		t, o.err = keep[0].Narrow(0, 0, request) // served by the buffer: a view, no allocation
	} else {
		t, o.err = tensor.Empty(l, tensor.Uint8, request)
	}
	if o.err == nil {
		keep = append(keep, t)
	}
	o.peak, o.allocs = l.MaxMemoryReserved(), l.MemoryStats()["num_device_alloc"]
	memlab.Check(tensor.ReleaseAll(keep...))
	return o
}

// plotRemedies draws, per remedy, where the free memory lay against the request.
//
//nb:decl
func plotRemedies(outs []outcome) (*memplot.Figure, error) {
	var names []string
	rel := memplot.BarSeries{Name: "releasable (free segments or pages)"}
	pin := memplot.BarSeries{Name: "pinned in split blocks"}
	room := memplot.BarSeries{Name: "room on the device"}
	for _, o := range outs {
		names = append(names, o.name+map[bool]string{true: "", false: " (OOM)"}[o.err == nil])
		rel.Values = append(rel.Values, float64(o.releasable)/(1<<20))
		pin.Values = append(pin.Values, float64(o.pinned)/(1<<20))
		room.Values = append(room.Values, float64(o.room)/(1<<20))
	}
	f, err := memplot.Bars("2.3 free memory before the 1.5 GiB request, per remedy", "MiB", names, rel, pin, room)
	if err == nil {
		err = f.HLine(request/(1<<20), "the request, 1536 MiB")
	}
	return f, err
}

// remedyVariants are the fragmenting workload and its remedies: name,
// PYTORCH_CUDA_ALLOC_CONF, the shorter batches' activation, pre-allocation.
// The first is the fragmented run; remedies draws the segment map of the
// fourth.
//
//nb:decl
var remedyVariants = []remedy{
	{"fragmented (defaults)", "", 496 << 20, false},
	{"pre-allocation", "", 496 << 20, true},
	{"uniform sizes", "", 512 << 20, false},
	{"max_split_size_mb:256", "max_split_size_mb:256", 496 << 20, false},
	{"max_split_size_mb:32 (the chapter's)", "max_split_size_mb:32", 496 << 20, false},
	{"expandable_segments", "expandable_segments:True", 496 << 20, false},
}

//nb:cell plot
func remedies() {
	var outs []outcome
	tab := memlab.NewTable("variant", "1.5 GiB served", "releasable", "pinned in split blocks",
		"room on the device", "peak reserved", "device allocations")
	for _, r := range remedyVariants {
		o := try(r)
		outs = append(outs, o)
		tab.Row(o.name, o.err == nil, memlab.FormatBytes(o.releasable), memlab.FormatBytes(o.pinned), memlab.FormatBytes(o.room),
			memlab.FormatBytes(o.peak), o.allocs)
	}
	tab.Show()
	served := 0
	for _, o := range outs {
		served += map[bool]int{true: 1}[o.err == nil]
	}
	memlab.Measured("%d of %d variants served the 1.5 GiB request; the fragmented run had %s pinned in split blocks and %s releasable",
		served, len(outs), memlab.FormatBytes(outs[0].pinned), memlab.FormatBytes(outs[0].releasable))
	memlab.Show(plotRemedies(outs))
	memlab.Show(memplot.SegmentMap("2.3 segments before the request: max_split_size_mb:256", memlab.Segments(outs[3].snap)))
}

/*md
Only the fragmented run fails. With uniform sizes or `max_split_size_mb` the free memory
lies in whole segments, which the allocator releases and re-requests as one; with
expandable segments the holes are unmapped page by page; pre-allocation never asks the
allocator at all (at the price of fewer batches beside its buffer). The segment map of
`max_split_size_mb:256` shows why: the small tensors sit in segments of their own, and
every 512 MiB segment is wholly free. The
price of the remedies shows in the last columns: more segments, and a higher peak.

**Try it:** add `{"max_split_size_mb:600", "max_split_size_mb:600", 496 << 20, false}` to
`remedyVariants` and re-run both cells: the 512 MiB segments are now below the limit, so they are split as with the
defaults, and the request fails again. The limit must be below the segments you want
kept whole.
*/
