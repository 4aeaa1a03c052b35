package nb00

import (
	"fmt"

	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/tensor"
)

/*md
# 00 · Set-up check and a five-minute tour

This notebook checks that the Go kernel reaches memlab's packages, tells you which
device you are on, makes a first tensor and draws a first memory curve. If every cell
below runs, the set-up is done: go on to `02-memory-mechanics.ipynb`.

**How cells run.** The kernel is [GoNB](https://github.com/janpfeifer/gonb). Each cell is
compiled into a fresh Go program and run: *declarations* (imports, functions, types)
persist from cell to cell, *runtime state does not*. So every experiment cell opens its
own lab in one line (`l := memlab.MustOpen()`), runs, and closes it (`defer l.Close()`).
Lines after `%%` are the body of `main`. `memlab.Must(x, err)` returns `x` or stops the
cell with `err`; `memlab.Check(err)` stops it on an error; `memlab.Show` draws a figure.
The first cell imports the packages every later cell uses.

## Which device?

`memlab.MustOpen()` with no options opens the device named by `MEMLAB_DEVICE` if that is
set, otherwise the first CUDA GPU if one answers, otherwise the **simulated device** (host
memory behaving like an 80 GiB GPU, with a CUDA context that already occupies some of
it). In front of the device sits memlab's re-implementation of PyTorch's CUDA caching
allocator. `Describe` says what was chosen and why; `MemGetInfo` is the driver's view,
what `nvidia-smi` would show.
*/

//nb:cell
func whichDevice() {
	l := memlab.MustOpen()
	defer l.Close()
	fmt.Println(l.Describe())
	free, total := memlab.Must2(l.MemGetInfo())
	memlab.Measured("the driver reports %s free of %s: %s in use before any tensor (the CUDA context)",
		memlab.FormatBytes(int64(free)), memlab.FormatBytes(int64(total)), memlab.FormatBytes(int64(total-free)))
}

/*md
**Try it:** open `memlab.MustOpen(memlab.Sim("24GiB"))` instead: a simulated 24 GiB card,
whatever machine you are on. `memlab.AllocConf("max_split_size_mb:128")` as a second
option sets the allocator's `PYTORCH_CUDA_ALLOC_CONF`; `Describe` shows both.

## A first tensor

A tensor is a storage (one block of device memory from the allocator) plus a shape,
strides and a dtype. Even a 24-byte tensor takes a whole allocator block: requests are
rounded up to 512 bytes, and small ones are carved out of a 2 MiB segment that the
allocator asks the device for (one `cudaMalloc`) and then keeps.
*/

//nb:cell
func firstTensor() {
	l := memlab.MustOpen()
	defer l.Close()
	x := memlab.Must(tensor.Randn(l, 0, tensor.Float32, 2, 3))
	fmt.Println(x)
	fmt.Println("shape", x.Shape(), "strides", x.Strides(), "dtype", x.DType(), "on", x.Device())
	memlab.Measured("x.Nbytes() is %d bytes; memory_allocated() is %s and memory_reserved() %s",
		x.Nbytes(), memlab.FormatBytes(memlab.MemoryAllocated()), memlab.FormatBytes(memlab.MemoryReserved()))
	memlab.Check(x.Release()) // Python's del x
	memlab.Measured("after x.Release(): memory_allocated() %s, memory_reserved() %s (the segment stays cached)",
		memlab.FormatBytes(memlab.MemoryAllocated()), memlab.FormatBytes(memlab.MemoryReserved()))
}

/*md
`memlab.MemoryAllocated()` acts on the current lab — the last one opened — as
`torch.cuda.memory_allocated()` acts on the current device; `l.MemoryAllocated()` names
the lab. With no lab open the package-level functions stop the cell with a message
instead of answering 0.

**Try it:** make `x` 1000×1000 (4 million bytes): it no longer fits the small pool
(over 1 MiB), so the allocator reserves a 20 MiB large-pool segment instead of 2 MiB.

## A first memory curve

A `Recorder` listens to the allocator's events and records three numbers after each
one: **allocated** (bytes in blocks that live tensors hold), **reserved** (bytes in
segments the allocator holds from the device, in use or cached) and **driver-used**
(what the driver counts: reserved memory plus the CUDA context). Below, four tensors of
256 MiB to 1 GiB are allocated and released, then the cache is emptied. Watch
allocated fall at the releases while reserved stays up until `EmptyCache`.
*/

//nb:cell plot
func firstCurve() {
	l := memlab.MustOpen()
	defer l.Close()
	rec := l.Record()
	rec.Mark("allocate")
	var ts []*tensor.Tensor
	for i := 1; i <= 4; i++ {
		ts = append(ts, memlab.Must(tensor.Empty(l, tensor.Float32, i*64, 1024, 1024))) // i × 256 MiB
	}
	rec.Mark("release")
	memlab.Check(tensor.ReleaseAll(ts...))
	rec.Mark("empty_cache")
	memlab.Check(l.EmptyCache())
	rec.Stop()
	a, r := rec.Peak()
	memlab.Measured("%d allocator events; peak allocated %s, peak reserved %s; %d cudaMalloc calls",
		rec.Events(), memlab.FormatBytes(a), memlab.FormatBytes(r), rec.SegmentAllocs())
	memlab.Show(rec.Plot("a first memory curve"))
}

/*md
**Try it:** release each tensor right after making it, largest first (`for i := 4; i >= 1;
i--`, with the `Release` in the loop): every later tensor is cut from the cached 1 GiB
segment, so there is one `cudaMalloc` and reserved memory peaks at 1 GiB. Smallest
first, each tensor is too large for what is cached, and all four segments are made.

## Where next

- `02-memory-mechanics.ipynb`: Chapter 2, how tensors sit in memory and how the caching
  allocator hands it out, caches it and fragments it.
- `04-reuse-and-sharing.ipynb`: Chapter 4, reusing memory (in-place operations, pools, a
  KV cache) in a small transformer.
- `05-what-if.ipynb`: for practitioners — your own PyTorch memory snapshot replayed under
  other allocator settings and caps, checked against what PyTorch measured.
- The exercises are in `exercises/` (one folder each, with a README and hints); run one
  with `cd exercises && go test ./01-strides`.
- On a machine without Jupyter, the same cells run as a program:
  `go run ./cmd/memlab lab` (add `-device cuda` on a GPU).
*/
