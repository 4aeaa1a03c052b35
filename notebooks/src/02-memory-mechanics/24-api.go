package nb02

import (
	"errors"
	"fmt"

	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/tensor"
)

/*md
## 2.4 The `torch.cuda` memory API (torch.cuda 内存 API)

Every `torch.cuda` memory function has a Go name, as a method of a `*memlab.Lab` and at
package level (acting on the current lab — the last one opened — as `torch.cuda` acts on
the current device). Each call below runs after a small workload: a 100 MiB tensor kept,
a 50 MiB one released.
*/

//nb:cell
func apiTour() {
	l := memlab.MustOpen()
	defer l.Close()
	x := memlab.Must(tensor.Empty(l, tensor.Uint8, 100<<20))
	y := memlab.Must(tensor.Empty(l, tensor.Uint8, 50<<20))
	memlab.Check(y.Release())
	free, total := memlab.Must2(l.MemGetInfo())
	st := l.MemoryStats()
	tab := memlab.NewTable("torch.cuda", "memlab", "result")
	tab.Row("memory_allocated()", "l.MemoryAllocated()", memlab.FormatBytes(l.MemoryAllocated()))
	tab.Row("memory_allocated()", "memlab.MemoryAllocated() (the current lab)", memlab.FormatBytes(memlab.MemoryAllocated()))
	tab.Row("memory_reserved()", "l.MemoryReserved()", memlab.FormatBytes(l.MemoryReserved()))
	tab.Row("max_memory_allocated()", "l.MaxMemoryAllocated()", memlab.FormatBytes(l.MaxMemoryAllocated()))
	tab.Row("mem_get_info()", "l.MemGetInfo()", fmt.Sprintf("free %s of %s", memlab.FormatBytes(int64(free)), memlab.FormatBytes(int64(total))))
	tab.Row("memory_stats()", "l.MemoryStats()", fmt.Sprintf("%d keys; num_device_alloc %d, allocation.all.current %d",
		len(st), st["num_device_alloc"], st["allocation.all.current"]))
	tab.Row("memory_snapshot()", "l.Snapshot()", fmt.Sprintf("%d segments", len(l.Snapshot().Segments)))
	l.ResetPeakMemoryStats()
	tab.Row("reset_peak_memory_stats()", "l.ResetPeakMemoryStats()", "max_memory_allocated() is now "+memlab.FormatBytes(l.MaxMemoryAllocated()))
	memlab.Check(l.EmptyCache())
	tab.Row("empty_cache()", "l.EmptyCache()", "memory_reserved() is now "+memlab.FormatBytes(l.MemoryReserved()))
	tab.Row("set_per_process_memory_fraction(1.5)", "l.SetPerProcessMemoryFraction(1.5)", fmt.Sprint(l.SetPerProcessMemoryFraction(1.5)))
	tab.Show()
	l.ShowSummary() // memory_summary(), PyTorch's table byte for byte
	memlab.Check(x.Release())
}

/*md
`ShowSummary` shows `MemorySummary()` as preformatted text so that the notebook does not
re-wrap it.

**Try it:** call `memlab.MemoryAllocated()` after `l.Close()`: with no lab open it stops
the cell with a message that says to open one — memlab never opens a device behind your
back, and never answers 0 for a device it does not have.

### The leak-check idiom

The chapter's idiom, written out: reset the peak, note `memory_allocated()` before,
run the code, read the peak, drop what the code returned, empty the cache, and compare
`memory_allocated()` after with before. Two versions of a loop that computes a 1 MiB
output per step and keeps a history: one keeps the tensors (`history.append(out)`), one
keeps the number it needs (`history.append(out[0, 0].item())`).
*/

// trainStep computes one step's 1 MiB output, out = x @ w, from a fresh batch.
//
//nb:decl
func trainStep(l *memlab.Lab, w *tensor.Tensor, i int) *tensor.Tensor {
	x := memlab.Must(tensor.Randn(l, uint64(i), tensor.Float32, 256, 256))
	out := memlab.Must(x.Matmul(w))
	memlab.Check(x.Release())
	return out
}

// item is out[0, 0].item(): one number, copied to the host.
//
//nb:decl
func item(out *tensor.Tensor) float64 {
	row := memlab.Must(out.Select(0, 0))
	v := memlab.Must(row.Select(0, 0))
	defer func() { memlab.Check(tensor.ReleaseAll(row, v)) }()
	return memlab.Must(v.Item())
}

// perStep is a staircase of bytes per step 1, 2, …, for memplot.Lines.
//
//nb:decl
func perStep(name string, ys []int64) memplot.Series {
	s := memplot.Series{Name: name, Y: ys, Step: true}
	for i := range ys {
		s.X = append(s.X, float64(i+1))
	}
	return s
}

// train runs 8 steps of trainStep and keeps a history: the outputs
// themselves (history.append(out)) when keepTensors, else one number of each
// (history.append(out[0, 0].item())), releasing the output. It returns the
// tensors kept and memory_allocated() − before after each step.
//
//nb:decl
func train(l *memlab.Lab, w *tensor.Tensor, keepTensors bool, before int64) (kept []*tensor.Tensor, grew []int64) {
	var history []float64
	for i := range 8 {
		out := trainStep(l, w, i)
		if keepTensors {
			kept = append(kept, out)
		} else {
			history = append(history, item(out))
			memlab.Check(out.Release())
		}
		grew = append(grew, l.MemoryAllocated()-before)
	}
	return kept, grew
}

//nb:cell plot
func leakCheck() {
	l := memlab.MustOpen()
	defer l.Close()
	w := memlab.Must(tensor.Randn(l, 7, tensor.Float32, 256, 1024))
	var curves []memplot.Series
	for _, version := range []string{"keeps tensors", "keeps numbers"} {
		l.ResetPeakMemoryStats()
		before := l.MemoryAllocated()
		kept, grew := train(l, w, version == "keeps tensors", before) // the code under test
		peak := l.MaxMemoryAllocated()
		memlab.Check(l.EmptyCache())
		memlab.Measured("%s: memory_allocated after − before = %s after 8 steps (peak %s)",
			version, memlab.FormatBytes(l.MemoryAllocated()-before), memlab.FormatBytes(peak))
		memlab.Check(tensor.ReleaseAll(kept...)) // drop what the code returned
		curves = append(curves, perStep(version, grew))
	}
	memlab.Show(memplot.Lines("2.4 the leak check: memory_allocated − before, per step", "step", curves...))
	memlab.Check(w.Release())
}

/*md
The version that keeps tensors grows by one output per step and leaves it all allocated;
the one that keeps numbers ends where it began. Compare `memory_allocated()`, never
`memory_reserved()`: reserved memory stays up after a release because of the cache, so
it would report a leak where there is none. `memlab.CheckLeaks(f)` wraps the same idiom.

**Try it:** in `train`, run 16 steps (`range 16`): the leak doubles, the fixed loop still
leaves nothing; keep every second tensor only (`keepTensors && i%2 == 0`) and the leak
halves.

### The per-epoch habit

At the end of each epoch: `empty_cache()` (give back what the epoch cached, so the next
one — or another process — starts from what is live) and `reset_peak_memory_stats()`
(so that `max_memory_allocated()` reports this epoch's peak, not the run's). Three epochs
with shrinking batches, beside 64 MiB of weights:
*/

//nb:cell
func perEpoch() {
	l := memlab.MustOpen()
	defer l.Close()
	weights := memlab.Must(tensor.Empty(l, tensor.Uint8, 64<<20))
	tab := memlab.NewTable("epoch", "batch activation", "max_memory_allocated (this epoch)", "peak since the start",
		"reserved at the end", "reserved after empty_cache()")
	runPeak, lastPeak := int64(0), int64(0)
	for epoch, batch := range []int{512 << 20, 256 << 20, 128 << 20} {
		for step := 0; step < 4; step++ {
			act := memlab.Must(tensor.Empty(l, tensor.Uint8, batch))
			memlab.Check(act.Release())
		}
		peak := l.MaxMemoryAllocated()
		runPeak, lastPeak = max(runPeak, peak), peak
		reserved := l.MemoryReserved()
		memlab.Check(l.EmptyCache())
		tab.Row(epoch+1, memlab.FormatBytes(int64(batch)), memlab.FormatBytes(peak), memlab.FormatBytes(runPeak),
			memlab.FormatBytes(reserved), memlab.FormatBytes(l.MemoryReserved()))
		l.ResetPeakMemoryStats()
	}
	tab.Show()
	memlab.Measured("the last epoch peaked at %s; without the resets max_memory_allocated() would still say %s",
		memlab.FormatBytes(lastPeak), memlab.FormatBytes(runPeak))
	memlab.Check(weights.Release())
}

/*md
**Try it:** drop the `l.EmptyCache()` line: reserved memory at each epoch's end stays at
the first epoch's high-water mark, although later epochs need far less.

### Two tenants on one device

`set_per_process_memory_fraction` caps what *this* allocator may reserve; it does not
see anyone else. Two labs share one 8 GiB device, each with its own allocator, like two
processes on one GPU. Tenant A is greedy: it takes 1 GiB tensors until it runs out of
memory. Then tenant B asks for 3 GiB. First neither is capped, then both are capped at
half the device.
*/

// greedy allocates 1 GiB tensors on l until it runs out of memory, and returns them.
//
//nb:decl
func greedy(l *memlab.Lab) []*tensor.Tensor {
	var ts []*tensor.Tensor
	for {
		t, err := tensor.Empty(l, tensor.Uint8, 1<<30)
		if memlab.IsOutOfMemory(err) {
			return ts
		}
		memlab.Check(err)
		ts = append(ts, t)
	}
}

// servedOr says "served", or "out of memory" when err is one.
//
//nb:decl
func servedOr(err error) string {
	if memlab.IsOutOfMemory(err) {
		return "out of memory"
	}
	memlab.Check(err)
	return "served"
}

//nb:cell plot
func twoTenants() {
	cases := []string{"neither capped", "both capped at half"}
	aRes, bRes := memplot.BarSeries{Name: "A (greedy) reserved"}, memplot.BarSeries{Name: "B reserved"}
	for i, capped := range []bool{false, true} {
		a := memlab.MustOpen(memlab.Budget(8 << 30)) // the device, and tenant A
		b := memlab.MustOpen(memlab.SharedWith(a))   // tenant B: its own allocator
		if capped {
			_, total := memlab.Must2(a.MemGetInfo())
			half := float64(4<<30) / float64(total)
			memlab.Check(a.SetPerProcessMemoryFraction(half))
			memlab.Check(b.SetPerProcessMemoryFraction(half))
		}
		held := greedy(a)
		x, err := tensor.Empty(b, tensor.Uint8, 3<<30)
		memlab.Measured("%s: greedy A holds %s; B's 3 GiB request: %s; the driver counts %s in use", cases[i],
			memlab.FormatBytes(a.MemoryReserved()), servedOr(err), memlab.FormatBytes(memlab.Must(a.DriverUsed())))
		aRes.Values, bRes.Values = append(aRes.Values, float64(a.MemoryReserved())/(1<<30)), append(bRes.Values, float64(b.MemoryReserved())/(1<<30))
		if err == nil {
			memlab.Check(x.Release())
		}
		memlab.Check(tensor.ReleaseAll(held...))
		memlab.Check(errors.Join(b.Close(), a.Close()))
	}
	memlab.Show(memplot.Bars("2.4 two tenants on one 8 GiB device", "GiB", cases, aRes, bRes))
}

/*md
Uncapped, the greedy tenant takes every free byte and B's request fails although B did
nothing wrong; capped, A stops at its half (its out-of-memory message names the cap, "…
allowed") and B is served. A cap protects the *other* tenants, so every tenant needs one.
On a real GPU `Budget(8 << 30)` caps tenant A instead of shrinking the card, so there B
is not starved even uncapped: the card has room to spare.

**Try it:** cap only A (`b.SetPerProcessMemoryFraction` removed): B is still served. Cap
only B: A takes the whole device first and B fails again.

## Exercises

In `exercises/` (run one with `cd exercises && go test ./01-strides`; each folder has a
README and hints):

- 2.1: `01-strides`, `02-contiguous`, `03-view`, `11-views-keep-alive`;
- 2.2: `04-round-size`, `05-segment-size`, `06-best-fit`, `07-split`, `08-merge`;
- 2.3: `10-fragmentation`;
- 2.4: `09-stats` (`memory_allocated` vs `memory_reserved`).
*/
