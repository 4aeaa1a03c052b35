package nb02

import (
	"fmt"
	"strings"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/replay"
	"memlab.dev/memlab/tensor"
)

/*md
## 2.2 The caching allocator (缓存分配器)

Allocating device memory (`cudaMalloc`) is slow and synchronising, so PyTorch keeps
what it gets: a released tensor's block goes back to the allocator's cache, not to the
device. Three numbers follow from that: **allocated** (live tensors' blocks),
**reserved** (all segments the allocator holds) and **driver-used** (what `nvidia-smi`
shows: reserved plus the CUDA context and other processes).

The chapter says `memory_allocated()` does not drop after `del`, and that the caching
allocator pre-allocates one big block up front. PyTorch does neither: `del` gives the
block back to the cache at once, so `memory_allocated()` drops (it is `memory_reserved()`
that stays up), and nothing is reserved until the first tensor asks, then only a
segment sized for that request.
*/

//nb:cell plot
func allocatedVsReserved() {
	l := memlab.MustOpen()
	defer l.Close()
	steps := l.Steps()
	start := steps.Add("start")
	x := memlab.Must(tensor.Empty(l, tensor.Uint8, 256<<20)) // 256 MiB
	steps.Add("x = empty(256 MiB)")
	memlab.Check(x.Release())
	afterDel := steps.Add("del x")
	y := memlab.Must(tensor.Empty(l, tensor.Uint8, 256<<20))
	steps.Add("y = empty(256 MiB)")
	memlab.Check(y.Release())
	steps.Add("del y")
	memlab.Check(l.EmptyCache())
	steps.Add("empty_cache()")
	steps.Table().Show()
	memlab.Measured("reserved before any tensor: %s; after del x allocated is %s and reserved %s; "+
		"y took no new cudaMalloc (%d in all); empty_cache() brought the driver's count back to %s",
		memlab.FormatBytes(start.Reserved), memlab.FormatBytes(afterDel.Allocated), memlab.FormatBytes(afterDel.Reserved),
		steps.Last().DeviceAllocs, memlab.FormatBytes(steps.Last().DriverUsed))
	memlab.Show(steps.Plot("2.2 allocated, reserved and driver-used memory"))
}

/*md
The driver's count does not start at zero: the CUDA context is there before any tensor.

**Try it:** allocate `y` 300 MiB instead of 256: the cached 256 MiB segment is too small,
so the allocator makes a second segment (cudaMalloc calls go to 2) and reserved memory
peaks at their sum.

### The rules in five allocations

Five requests — 24 bytes, 1 MiB, 1 MiB + 1 byte, 12 MiB and 600 MiB — show every sizing
rule of the allocator: each request is rounded up to a multiple of **512 bytes**;
requests up to 1 MiB come from the **small pool**, whose segments are **2 MiB**; larger
ones from the **large pool**, whose segments are **20 MiB** for requests under 10 MiB and
otherwise the request rounded up to 2 MiB. Within a pool the allocator takes the
**best fit** (the smallest free block that is large enough) and **splits** it; freed
neighbours **merge** again. The table shows the block each request got and a few
`memory_stats()` rows after each.
*/

// locate finds the segment and block of the allocator's snapshot that holds p.
//
//nb:decl
func locate(s allocator.Snapshot, p tensor.Ptr) (allocator.Segment, allocator.Block) {
	for _, seg := range s.Segments {
		for _, b := range seg.Blocks {
			if uint64(p) >= b.Address && uint64(p) < b.Address+uint64(b.Size) {
				return seg, b
			}
		}
	}
	panic(fmt.Sprintf("no block holds address %#x", p))
}

// locateBlock is the block that holds t's data.
//
//nb:decl
func locateBlock(l *memlab.Lab, t *tensor.Tensor) allocator.Block {
	_, b := locate(l.Snapshot(), t.DataPtr())
	return b
}

// blocks prints each segment's blocks in address order: "20.00 MiB large: 12.00 MiB A | 8.00 MiB free".
//
//nb:decl
func blocks(s allocator.Snapshot) string {
	var lines []string
	for _, seg := range s.Segments {
		var bs []string
		for _, b := range seg.Blocks {
			state := "A"
			if b.State == allocator.StateInactive {
				state = "free"
			}
			bs = append(bs, memlab.FormatBytes(b.Size)+" "+state)
		}
		lines = append(lines, fmt.Sprintf("%s %s segment: %s", memlab.FormatBytes(seg.TotalSize), seg.Pool, strings.Join(bs, " | ")))
	}
	return strings.Join(lines, "\n")
}

//nb:cell plot
func fiveAllocations() {
	l := memlab.MustOpen()
	defer l.Close()
	tab := memlab.NewTable("request", "block", "pool", "its segment", "allocated_bytes", "reserved_bytes", "segment.small_pool", "segment.large_pool")
	var ts []*tensor.Tensor
	for _, r := range []struct {
		name string
		n    int
	}{{"24 B", 24}, {"1 MiB", 1 << 20}, {"1 MiB + 1 B", 1<<20 + 1}, {"12 MiB", 12 << 20}, {"600 MiB", 600 << 20}} {
		t := memlab.Must(tensor.Empty(l, tensor.Uint8, r.n))
		ts = append(ts, t)
		seg, b := locate(l.Snapshot(), t.DataPtr())
		st := l.MemoryStats()
		tab.Row(r.name, memlab.FormatBytes(b.Size), seg.Pool, memlab.FormatBytes(seg.TotalSize),
			memlab.FormatBytes(st["allocated_bytes.all.current"]), memlab.FormatBytes(st["reserved_bytes.all.current"]),
			st["segment.small_pool.current"], st["segment.large_pool.current"])
	}
	tab.Show()
	fmt.Println(blocks(l.Snapshot()))
	memlab.Measured("24 bytes took a %s block; the five requests made %d segments (%d cudaMalloc calls)",
		memlab.FormatBytes(locateBlock(l, ts[0]).Size), len(l.Snapshot().Segments), l.MemoryStats()["num_device_alloc"])
	memlab.Show(l.SegmentMap("2.2 the segments after five allocations (S small pool, L large)"))
	memlab.Check(tensor.ReleaseAll(ts...))
}

/*md
Read the "its segment" column against the rules: the 1 MiB request is small-pool and
shares the 2 MiB segment of the 24-byte one; 1 MiB + 1 byte is large-pool and makes a
20 MiB segment; the 12 MiB request is served by best fit from the free rest of that
20 MiB segment, which is split; 600 MiB needs a segment of its own.

**Try it:** make the fourth request 20 MiB: nothing cached is large enough, so it gets a
segment of exactly 20 MiB (a request of 10 MiB or more is rounded to 2 MiB, not to 20).

### Best fit, split and merge

Best fit picks the *smallest* free block that is large enough, not the first one. Below,
a 20 MiB segment holds `a` (4 MiB), `c` (8 MiB) and an 8 MiB free tail; after `del a`
there are two free blocks, 4 and 8 MiB, and a 2 MiB request takes the 4 MiB one.
*/

//nb:cell
func splitAndMerge() {
	l := memlab.MustOpen()
	defer l.Close()
	a := memlab.Must(tensor.Empty(l, tensor.Uint8, 4<<20)) // a new 20 MiB segment, split
	c := memlab.Must(tensor.Empty(l, tensor.Uint8, 8<<20)) // cut from its free rest
	fmt.Println("a = empty(4 MiB); c = empty(8 MiB):  " + blocks(l.Snapshot()))
	hole := a.DataPtr()
	memlab.Check(a.Release())
	fmt.Println("del a:                               " + blocks(l.Snapshot()))
	b := memlab.Must(tensor.Empty(l, tensor.Uint8, 2<<20))
	fmt.Println("b = empty(2 MiB):                    " + blocks(l.Snapshot()))
	split := l.MemoryStats()["inactive_split_bytes.all.current"]
	memlab.Check(tensor.ReleaseAll(b, c))
	fmt.Println("del b, c (the blocks merge):         " + blocks(l.Snapshot()))
	snap := l.Snapshot()
	memlab.Measured("b took a's 4 MiB hole (same address: %v); %s sat free in split blocks before del b, c; "+
		"afterwards %d free block in %d segment (%d cudaMalloc call)", b.DataPtr() == hole, memlab.FormatBytes(split),
		len(snap.Segments[0].Blocks), len(snap.Segments), l.MemoryStats()["num_device_alloc"])
}

/*md
A free block inside a segment that still has a live block is an **inactive split**
(`inactive_split_bytes`): free, but `empty_cache()` cannot give it back — the seed of
fragmentation (2.3).

**Try it:** make `b` 6 MiB: the 4 MiB hole is too small, so best fit takes the 8 MiB
tail instead; make it 9 MiB and nothing fits: a second 20 MiB segment appears.

### `max_split_size_mb`

`PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128` stops the allocator from splitting
cached blocks of 128 MiB or more, and from handing them to much smaller requests. Run
the chapter's sequence (allocate and free 1024, 512, 256 MiB, then allocate 768 MiB)
with the defaults, with 128, and with the chapter's own advice, 32. The PyTorch columns
are PyTorch 2.11's own numbers for the same ops on an H200, read from the ground truth
that ships in `reference/torch-2.11/`.
*/

// chapterSequence runs the chapter's ops on a 4 GiB lab with allocator
// configuration conf and returns the memory after each op, with the segments
// right after the 768 MiB request.
//
//nb:decl
func chapterSequence(conf string) (*memlab.Steps, []memplot.Segment) {
	l := memlab.MustOpen(memlab.Budget(4<<30), memlab.AllocConf(conf))
	defer l.Close()
	steps := l.Steps()
	for i, mib := range []int{1024, 512, 256} {
		a := memlab.Must(tensor.Empty(l, tensor.Uint8, mib<<20))
		steps.Add(fmt.Sprintf("a%d = empty(%d MiB)", i, mib))
		memlab.Check(a.Release())
		steps.Add(fmt.Sprintf("del a%d", i))
	}
	a3 := memlab.Must(tensor.Empty(l, tensor.Uint8, 768<<20))
	steps.Add("a3 = empty(768 MiB)")
	at768 := memlab.Segments(l.Snapshot())
	memlab.Check(l.EmptyCache())
	steps.Add("empty_cache()")
	memlab.Check(a3.Release())
	steps.Add("del a3")
	memlab.Check(l.EmptyCache())
	steps.Add("empty_cache() again")
	return steps, at768
}

// pytorch reads PyTorch 2.11's state after each op of a ground-truth trace.
//
//nb:decl
func pytorch(file string) []replay.State {
	tr := memlab.Must(replay.ReadFile(memlab.Must(reference.File(reference.Torch211, file))))
	return tr.States
}

// compare shows memlab's and PyTorch's allocated and reserved memory op by op
// and returns how many ops differ.
//
//nb:decl
func compare(steps *memlab.Steps, torch []replay.State) (differ int) {
	tab := memlab.NewTable("op", "allocated", "reserved", "PyTorch 2.11 allocated", "PyTorch reserved", "same")
	for i, st := range steps.List {
		ta, tr := *torch[i].MemoryAllocated, *torch[i].MemoryReserved
		same := st.Allocated == ta && st.Reserved == tr
		if !same {
			differ++
		}
		tab.Row(st.Label, memlab.FormatBytes(st.Allocated), memlab.FormatBytes(st.Reserved), memlab.FormatBytes(ta), memlab.FormatBytes(tr), same)
	}
	tab.Show()
	return differ
}

//nb:cell plot
func maxSplitSize() {
	reserved := func(s memlab.Step) int64 { return s.Reserved }
	var lines []memplot.Series
	var labels []string
	for _, c := range []struct{ name, conf, torch string }{
		{"defaults", "", "a__default.jsonl.gz"},
		{"max_split_size_mb:128", "max_split_size_mb:128", "a__max_split_size_mb_128.jsonl.gz"},
		{"max_split_size_mb:32 (the chapter's advice)", "max_split_size_mb:32", ""},
	} {
		steps, _ := chapterSequence(c.conf)
		peak := int64(0)
		for _, s := range steps.List {
			peak = max(peak, s.Reserved)
		}
		compared := "no PyTorch recording of this configuration"
		if c.torch != "" {
			fmt.Println(c.name + ":")
			compared = fmt.Sprintf("%d of %d ops differ from PyTorch 2.11", compare(steps, pytorch(c.torch)), len(steps.List))
		}
		memlab.Measured("%s: reserved memory peaks at %s; %s", c.name, memlab.FormatBytes(peak), compared)
		lines, labels = append(lines, steps.Series(c.name, reserved)), steps.Labels()
	}
	fig := memlab.Must(memplot.Lines("2.2 reserved memory over the chapter's sequence", "", lines...))
	fig.LabelX(labels...)
	memlab.Show(fig, nil)
}

/*md
With the defaults every request is cut from the first 1 GiB segment, so reserved memory
never exceeds 1 GiB; with `max_split_size_mb:128` (or 32) no large block is split, each
request gets a segment of its own and reserved memory climbs until `empty_cache()`. The
option does not save memory by itself; what it buys is shown in 2.3: oversize free
segments are released first when memory runs short, and small requests stop pinning
large segments.

**Try it:** set the 768 MiB request to 1024 MiB: with the defaults it reuses the cached
1 GiB segment whole; the PyTorch columns then no longer apply (the recording is of 768).
*/
