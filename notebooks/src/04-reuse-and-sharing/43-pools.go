package nb04

import (
	"fmt"
	"slices"
	"time"

	"memlab.dev/memlab/experiments/ch4"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/pool"
	"memlab.dev/memlab/tensor"
)

/*md
## 4.3 Memory pools (内存池)

### The chapter's `TensorPool`, then package `pool`'s

The chapter's pool keeps freed tensors by shape and dtype and hands them out again: `get`
pops one or allocates, `put` pushes it back. Here it is in Go, exactly that.
*/

// chapterPool is the chapter's TensorPool: free tensors kept by (shape,
// dtype); get pops one or allocates a new one, put pushes it back.
//
//nb:decl
type chapterPool struct {
	dev          tensor.Device
	free         map[string][]*tensor.Tensor
	hits, misses int
}

func newChapterPool(dev tensor.Device) *chapterPool {
	return &chapterPool{dev: dev, free: map[string][]*tensor.Tensor{}}
}

func (p *chapterPool) get(dtype tensor.DType, shape ...int) *tensor.Tensor {
	key := fmt.Sprint(dtype, tensor.Shape(shape))
	if n := len(p.free[key]); n > 0 {
		t := p.free[key][n-1]
		p.free[key] = p.free[key][:n-1]
		p.hits++
		return t
	}
	p.misses++
	return memlab.Must(tensor.Empty(p.dev, dtype, shape...))
}

func (p *chapterPool) put(t *tensor.Tensor) {
	key := fmt.Sprint(t.DType(), t.Shape())
	p.free[key] = append(p.free[key], t)
}

func (p *chapterPool) release() {
	for _, ts := range p.free {
		memlab.Check(tensor.ReleaseAll(ts...))
	}
	clear(p.free)
}

// allocCalls is allocation.all.allocated: requests to the caching allocator.
func allocCalls(l *memlab.Lab) int64 { return l.MemoryStats()["allocation.all.allocated"] }

//nb:cell
func chapterTensorPool() {
	l := memlab.MustOpen()
	defer l.Close()
	p := newChapterPool(l)
	calls := allocCalls(l)
	for step := 0; step < 100; step++ { // each step needs two activations and a score buffer
		a, b := p.get(tensor.Float32, 256, 1024), p.get(tensor.Float32, 256, 1024)
		s := p.get(tensor.Float32, 64, 1024)
		p.put(a)
		p.put(b)
		p.put(s)
	}
	memlab.Measured("the chapter's pool: %d hits, %d misses, %d allocator calls in 100 steps; it holds %s",
		p.hits, p.misses, allocCalls(l)-calls, memlab.FormatBytes(l.MemoryAllocated()))
	p.release()

	tp := memlab.Must(pool.NewTensorPool(l, tensor.Float32, []int{256, 1024}, 2)) // at most 2 tensors
	a, b := memlab.Must(tp.Get()), memlab.Must(tp.Get())
	_, err := tp.Get()
	fmt.Println("pool.TensorPool, a third Get beyond its limit:", err)
	other := memlab.Must(tensor.Empty(l, tensor.Float32, 64, 1024))
	fmt.Println("Put of a tensor of another shape:", tp.Put(other))
	memlab.Check(other.Release()) // refused, so still ours
	memlab.Check(tp.Put(a))
	fmt.Println("Put of the same tensor twice:", tp.Put(a))
	memlab.Check(tp.Put(b))
	fmt.Printf("pool.TensorPool stats: %+v\n", tp.Stats())
	memlab.Check(tp.Release())
}

/*md
The chapter's pool works — after the first step every `get` is a hit and no allocator call
is made — but nothing bounds it, a tensor put back twice is handed out to two users, and a
tensor of an unexpected shape silently starts a new list. `pool.TensorPool` is the same
idea with one shape, a limit, and an error for each of those (a refused tensor stays the
caller's to release).

**Try it:** put `a` back twice in the chapter's pool (`p.put(a); p.put(a)`) and `get` two
tensors: both are the same storage (`x.DataPtr()` equal) — two users of one buffer.

### What a pool saves: time per buffer

Getting a 1 MiB buffer and giving it back, 200 times, three ways: a fresh allocation with
`empty_cache()` after each free (so every step is a `cudaMalloc` and a `cudaFree`), a fresh
allocation served by the caching allocator, and `TensorPool.Get`/`Put`. On the simulated
device each `cudaMalloc`/`cudaFree` costs what it took on an H200 (`memlab.WithLatency`).
*/

// median returns the median of ds.
//
//nb:decl
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

//nb:cell plot
func poolLatency() {
	ways := []string{"cudaMalloc every step (empty_cache)", "caching allocator", "TensorPool"}
	tab := memlab.NewTable("way", "allocator calls", "cudaMalloc", "median step")
	medians := memplot.BarSeries{Name: "median µs per step"}
	for w, way := range ways {
		l := memlab.MustOpen(memlab.WithLatency())
		tp := memlab.Must(pool.NewTensorPool(l, tensor.Float32, []int{256, 1024}, 0))
		calls, mallocs := allocCalls(l), l.MemoryStats()["num_device_alloc"]
		times := make([]time.Duration, 200)
		for i := range times {
			t0 := time.Now()
			if w == 2 {
				memlab.Check(tp.Put(memlab.Must(tp.Get())))
			} else {
				memlab.Check(memlab.Must(tensor.Empty(l, tensor.Float32, 256, 1024)).Release())
				if w == 0 {
					memlab.Check(l.EmptyCache())
				}
			}
			times[i] = time.Since(t0)
		}
		medians.Values = append(medians.Values, float64(median(times))/float64(time.Microsecond))
		tab.Row(way, allocCalls(l)-calls, l.MemoryStats()["num_device_alloc"]-mallocs, fmt.Sprintf("%.2f µs", medians.Values[w]))
		memlab.Check(tp.Release())
		memlab.Check(l.Close())
	}
	tab.Show()
	memlab.Show(memplot.BarsLog("4.3 getting a 1 MiB buffer: median time per step", "µs per step", ways, medians))
	memlab.Measured("median step: %.1f µs with a cudaMalloc each time, %.2f µs from the caching allocator, %.2f µs from the TensorPool (%.0f× and %.0f× faster)",
		medians.Values[0], medians.Values[1], medians.Values[2], medians.Values[0]/medians.Values[1], medians.Values[0]/medians.Values[2])
}

/*md
The value axis is logarithmic: a `cudaMalloc`/`cudaFree` pair is orders of magnitude slower
than either pool. The caching allocator already *is* a pool — one `cudaMalloc` for all the
steps — and its hit costs a small fraction of a `cudaMalloc`; what a `TensorPool` adds is no
allocator call at all and a hard bound on memory, not much speed.

**Try it:** make the buffer `[16, 1024]` (64 KiB, the small pool): the `empty_cache` row
still pays a `cudaMalloc` per step — of a 2 MiB segment.

### KV caches: `torch.cat` growth, preallocated, paged

A paged cache (vLLM's) keeps keys and values in fixed-size blocks of one arena; each
sequence has a block table. First the API, on three short sequences:
*/

//nb:cell
func pagedCacheAPI() {
	l := memlab.MustOpen()
	defer l.Close()
	cfg := pool.PagedConfig{Layers: 1, Heads: 2, HeadDim: 64, BlockSize: 16, Blocks: 8}
	c := memlab.Must(pool.NewPagedKVCache(l, tensor.Float32, cfg))
	for seq, tokens := range []int{5, 20, 40} {
		memlab.Check(c.Allocate(seq))
		k := memlab.Must(tensor.Randn(l, uint64(seq), tensor.Float32, cfg.Heads, tokens, cfg.HeadDim))
		memlab.Check(c.Append(seq, 0, k, k)) // keys and values, copied into blocks
		memlab.Check(k.Release())
		fmt.Printf("sequence %d: %d tokens in blocks %v\n", seq, tokens, memlab.Must(c.Blocks(seq)))
	}
	fmt.Printf("%+v\n", c.Stats())
	memlab.Check(c.Free(1))
	fmt.Printf("after freeing sequence 1: %+v\n", c.Stats())
	memlab.Measured("one arena of %s, allocated once: %s in use by the lab", memlab.FormatBytes(c.Nbytes()), memlab.FormatBytes(l.MemoryAllocated()))
	memlab.Check(c.Release())
}

/*md
Each sequence wastes at most one block's tail (`Waste`), and a freed sequence's blocks serve
any other: no external fragmentation.

**Try it:** append a fourth sequence of 60 tokens (4 blocks): with 8 blocks in the arena,
it fails with `pool: KV cache full` until sequence 1 is freed — then it fits.

Now 16 sequences of 16–320 tokens decoded 4 at a time (a new one starts when one
finishes), 8 heads × 128 dimensions, with three caches: each sequence's keys and values
grown with `torch.cat`, a `pool.KVCache` preallocated for 320 tokens per sequence, and one
`pool.PagedKVCache` of 16-token blocks whose arena holds 4 × 320 tokens. The workload is
longer than a cell should be; it is [`ch4.KVStrategies`](../experiments/ch4/pooling.go).
*/

//nb:cell plot
func kvStrategies() {
	r := memlab.Must(ch4.KVStrategies(ch4.Setup{}, ch4.DefaultKVWorkload))
	r.Table().Show()
	memlab.Show(r.Plot())
	memlab.Show(r.PlotSegments("torch.cat"))
	memlab.Show(r.PlotSegments("paged"))
	cat, _ := r.Row("torch.cat")
	pre, _ := r.Row("preallocated")
	paged, _ := r.Row("paged")
	memlab.Measured("torch.cat: %d allocator calls, %d cudaMallocs, %s reserved at its peak; preallocated: %d calls, up to %d token slots unused; paged: %d call, at most %d slots unused, %s reserved",
		cat.AllocCalls, cat.DeviceMallocs, memlab.FormatBytes(cat.PeakReserved), pre.AllocCalls, pre.MaxWaste, paged.AllocCalls, paged.MaxWaste, memlab.FormatBytes(paged.PeakReserved))
}

/*md
`torch.cat` holds exactly the live keys and values but copies the whole cache at every
step, and every step asks for a new size, so the caching allocator ends up holding
segments the short caches outgrew (grey in the first segment map: cached, empty) and a
large segment partly free. Preallocation makes one allocation per sequence but holds the
longest length whatever the sequence. The paged cache makes a single allocation and
wastes at most a block's tail per sequence; its segment map is one segment, wholly
allocated.

**Try it:** set `w := ch4.DefaultKVWorkload; w.BlockSize = 64` and pass `w`: fewer, larger
blocks waste more slots: up to 63 per sequence, so "max unused slots" (summed over the 4
sequences decoded at once) grows to 4 × 63.
*/
