package nb04

import (
	"fmt"
	"time"

	"memlab.dev/memlab/experiments/ch4"
	"memlab.dev/memlab/experiments/ch4/ch4plot"
	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/pool"
	"memlab.dev/memlab/tensor"
)

/*md
## 4.3 Memory pools (内存池)

### The chapter's `TensorPool`, then package `pool`'s

The chapter's class holds tensors of **one** shape, given to its constructor: `get` pops
one or allocates `self.shape`, `put` pushes back whatever it is given. Below it is in Go
twice: `chapterPool` is a variant keyed by shape and dtype, so that one pool serves every
buffer of a step (the chapter would make one `TensorPool` per shape, as the Python below
does) — that keying is ours, not the chapter's; `onePool`, further down, is the chapter's
class line for line. What the chapter expects of it:

> 教材原文：「比如，对于固定大小的中间张量（如注意力矩阵），可以预先分配一个池子，推理时直接从池子里取，用完归还，彻底避免分配开销。」
>
> *Chapter 4:* "For fixed-size intermediate tensors (attention matrices, say), you can
> allocate a pool in advance, take from it during inference and give back when done,
> avoiding the allocation overhead entirely."

```python
acts, scores = TensorPool((256, 1024)), TensorPool((64, 1024))   # the chapter's class, one per shape
calls = torch.cuda.memory_stats()["allocation.all.allocated"]
for step in range(100):
    a, b, s = acts.get(), acts.get(), scores.get()
    acts.put(a); acts.put(b); scores.put(s)
print(torch.cuda.memory_stats()["allocation.all.allocated"] - calls, torch.cuda.memory_allocated())
```
*/

/*md:zh-CN
## 4.3 显存池化 (memory pools)

### 教材里的 `TensorPool`，以及 `pool` 包里的版本

教材里的类只收**一种**形状的张量，形状在构造时给定：`get` 取出一个，没有就按 `self.shape` 新分配；`put` 不管收到什么都放回去。下面用 Go 写了两遍：`chapterPool` 是一个按形状和数据类型 (dtype) 分类的变体，这样一个池子就能供应一步里的所有缓冲区（教材的做法是每种形状建一个 `TensorPool`，如下面的 Python 代码）——按形状分类是我们加的，不是教材的；后面的 `onePool` 才是教材的类，逐行照搬。教材对它的期待是：

> 教材原文：「比如，对于固定大小的中间张量（如注意力矩阵），可以预先分配一个池子，推理时直接从池子里取，用完归还，彻底避免分配开销。」

```python
acts, scores = TensorPool((256, 1024)), TensorPool((64, 1024))   # 教材的类，每种形状一个
calls = torch.cuda.memory_stats()["allocation.all.allocated"]
for step in range(100):
    a, b, s = acts.get(), acts.get(), scores.get()
    acts.put(a); acts.put(b); scores.put(s)
print(torch.cuda.memory_stats()["allocation.all.allocated"] - calls, torch.cuda.memory_allocated())
```
*/

//nb:cell
func chapterTensorPool() {
	// 4.3 the chapter's pool, keyed by shape, then package pool's TensorPool
	l := memlab.MustOpen()
	defer l.Close()
	p := ch4.NewChapterPool(l) // the chapter's class, keyed by shape
	calls := ch4.AllocCalls(l)
	for step := 0; step < 100; step++ { // each step needs two activations and a score buffer
		a, b := p.Get(tensor.Float32, 256, 1024), p.Get(tensor.Float32, 256, 1024)
		s := p.Get(tensor.Float32, 64, 1024)
		p.Put(a)
		p.Put(b)
		p.Put(s)
	}
	memlab.Measured("the chapter's pool: %d hits, %d misses, %d allocator calls in 100 steps; it holds %s",
		p.Hits, p.Misses, ch4.AllocCalls(l)-calls, memlab.FormatBytes(l.MemoryAllocated()))
	memlab.Judge("a pool of fixed-size tensors avoids the allocation overhead entirely", memlab.HoldsIf(ch4.AllocCalls(l)-calls == int64(p.Misses)),
		"%d allocator calls in 100 steps, one per first-step miss", ch4.AllocCalls(l)-calls)
	p.Release()

	tp := memlab.Must(pool.NewTensorPool(l, tensor.Float32, []int{256, 1024}, 2)) // at most 2 tensors
	a, b := memlab.Must(tp.Get()), memlab.Must(tp.Get())
	_, err := tp.Get()
	ch4.Say("pool.TensorPool, a third Get beyond its limit: %v", err)
	other := memlab.Must(tensor.Empty(l, tensor.Float32, 64, 1024))
	ch4.Say("Put of a tensor of another shape: %v", tp.Put(other))
	memlab.Check(other.Release()) // refused, so still ours
	memlab.Check(tp.Put(a))
	ch4.Say("Put of the same tensor twice: %v", tp.Put(a))
	memlab.Check(tp.Put(b))
	ch4.Say("pool.TensorPool stats: %+v", tp.Stats())
	memlab.Check(tp.Release())
}

/*md
The pool works — after the first step every `get` is a hit and no allocator call is
made — but nothing bounds it, and a tensor put back twice is handed out to two users.
Keyed by shape, a tensor of an unexpected shape silently starts a new list; the chapter's
own class, with its one shape, does worse: its `put` takes the tensor and the next `get`
hands it out as if it had the pool's shape. `onePool` is that class line for line:

```python
pool = TensorPool((1024, 1024))                 # the chapter's class, as printed
pool.put(torch.empty(64, 1024, device="cuda"))  # a tensor of another shape: accepted
attn = pool.get()                               # … and handed out
print(attn.shape)
```
*/

/*md:zh-CN
这个池子是能用的——第一步之后每次 `get` 都命中，不再调用分配器——但它没有上限；同一个张量放回两次，就会被发给两个使用者。按形状分类时，形状不对的张量会悄无声息地另起一个列表；教材自己的类只有一种形状，情况更糟：它的 `put` 照单全收，下一次 `get` 就把这个张量当成池子的形状发出去。`onePool` 就是逐行照搬的那个类：

```python
pool = TensorPool((1024, 1024))                 # 教材的类，原样照搬
pool.put(torch.empty(64, 1024, device="cuda"))  # 另一种形状的张量：照收
attn = pool.get()                               # ……并且发了出去
print(attn.shape)
```
*/

//nb:cell
func chapterPoolWrongShape() {
	// 4.3 the chapter's class as printed, given a tensor of another shape
	l := memlab.MustOpen()
	defer l.Close()
	p := &ch4.OnePool{Dev: l, Shape: []int{1024, 1024}} // TensorPool((1024, 1024))
	p.Put(memlab.Must(tensor.Empty(l, tensor.Float32, 64, 1024)))
	attn := p.Get()
	memlab.Measured("the chapter's TensorPool((1024, 1024)) took a [64, 1024] tensor and get() handed it out: shape %v, %s, where the pool promises %v",
		attn.Shape(), memlab.FormatBytes(attn.Nbytes()), tensor.Shape(p.Shape))
	memlab.Check(attn.Release())
}

/*md
`pool.TensorPool` (the first cell's second half) is the same idea with one shape, a
limit, and an error for each of these: a tensor of another shape or put twice is refused
(and stays the caller's to release), a `Get` beyond the limit fails.

**Try it:** in the cell "the chapter's pool, keyed by shape" (its first comment line), put
`a` back twice in the chapter's pool (`p.Put(a); p.Put(a)`), then `get` two tensors.
Predict: two buffers or one? And in the cell "the chapter's class as printed", use `attn` as the pool promises: `attn.View(1024, 1024)`. What
happens?

<details><summary>Answer</summary>

One buffer: both `get`s return the same storage (`DataPtr()` equal) — two users of one
buffer, and no error (`pool.TensorPool` refuses the second put). `attn.View(1024, 1024)`
is refused with PyTorch's "shape '[1024, 1024]' is invalid for input of size …": the
wrong-shaped tensor is found where it is used, far from the `put` that caused it.
</details>
*/

/*md:zh-CN
`pool.TensorPool`（第一个单元格的后半部分）是同一个思路，只管一种形状、有上限，并且对这几种情况都返回错误：形状不对或放回两次的张量会被拒收（仍归调用者释放），超过上限的 `Get` 会失败。

**动手试试：** 在“the chapter's pool, keyed by shape”那个单元格（看它的第一行注释）里把 `a` 往教材的池子里放回两次（`p.Put(a); p.Put(a)`），再 `get` 两个张量。先预测：是两个缓冲区还是一个？再在“the chapter's class as printed”那个单元格里按池子承诺的形状使用 `attn`：`attn.View(1024, 1024)`。会怎样？

<details><summary>答案</summary>

一个缓冲区：两次 `get` 返回同一块存储（`DataPtr()` 相等）——一个缓冲区，两个使用者，而且没有任何报错（`pool.TensorPool` 会拒收第二次放回）。`attn.View(1024, 1024)` 会以 PyTorch 的 “shape '[1024, 1024]' is invalid for input of size …” 被拒绝：形状不对的张量要到被使用时才暴露，离造成它的那次 `put` 已经很远。
</details>
*/

/*md
### PyTorch's own pools: `torch.cuda.MemPool` and graph capture

The chapter's `TensorPool` keeps whole tensors for reuse. PyTorch 2.11 also keeps pools of
*memory*: `torch.cuda.MemPool()` is a private pool of the caching allocator, and inside
`with torch.cuda.use_mem_pool(pool):` every allocation comes from that pool's own segments.
A block freed there stays in the pool: it never serves a tensor allocated outside, and the
pool's memory goes back to the device only once the pool is deleted (and the cache
emptied). A CUDA graph capture does the same with a pool of its own, so that the addresses
baked into the graph stay reserved for its replays. In memlab the pool is `l.NewMemPool()`
and `pool.Use(func() error { … })`, the capture `l.CaptureGraph(func() error { … })`:

```python
pool = torch.cuda.MemPool()                       # a private pool of the caching allocator
with torch.cuda.use_mem_pool(pool):
    kv = torch.empty(1024, 1024, device="cuda")   # 4 MiB from the pool's own segment
    tmp = torch.empty(1024, 1024, device="cuda"); del tmp   # freed: stays in the pool
x = torch.empty(1024, 1024, device="cuda")        # outside: the default pool
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):                         # the capture allocates from g's own pool
    out = torch.empty(256, 1024, device="cuda")
print([(s["segment_pool_id"], s["total_size"]) for s in torch.cuda.memory_snapshot()])
del kv, out, x; torch.cuda.empty_cache()          # the pools' segments stay while they live
del pool, g; torch.cuda.empty_cache()             # now they go back
```
*/

/*md:zh-CN
### PyTorch 自己的池子：`torch.cuda.MemPool` 和图捕获

教材的 `TensorPool` 缓存的是整个张量。PyTorch 2.11 还有缓存*显存*的池子：`torch.cuda.MemPool()` 是缓存分配器里的一个私有显存池 (private pool)，在 `with torch.cuda.use_mem_pool(pool):` 里面，所有分配都从这个池子自己的段里来。在里面释放的块留在池子里：它绝不会分给池子外面分配的张量，池子的显存也要等池子被删除（并清空缓存）之后才还给设备。CUDA 图捕获 (graph capture) 也一样，只是用它自己的池子，这样图里写死的地址在每次重放时都还归它用。在 memlab 里，池子是 `l.NewMemPool()` 加 `pool.Use(func() error { … })`，捕获是 `l.CaptureGraph(func() error { … })`：

```python
pool = torch.cuda.MemPool()                       # 缓存分配器里的一个私有池
with torch.cuda.use_mem_pool(pool):
    kv = torch.empty(1024, 1024, device="cuda")   # 4 MiB，来自池子自己的段
    tmp = torch.empty(1024, 1024, device="cuda"); del tmp   # 释放了：留在池子里
x = torch.empty(1024, 1024, device="cuda")        # 池子外面：默认池
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):                         # 捕获时从 g 自己的池子分配
    out = torch.empty(256, 1024, device="cuda")
print([(s["segment_pool_id"], s["total_size"]) for s in torch.cuda.memory_snapshot()])
del kv, out, x; torch.cuda.empty_cache()          # 池子还活着，它们的段就留着
del pool, g; torch.cuda.empty_cache()             # 现在才还回去
```
*/

//nb:cell
func memPoolBesideTensorPool() {
	l := memlab.MustOpen()
	defer l.Close()
	mp := memlab.Must(l.NewMemPool()) // torch.cuda.MemPool()
	var kv *tensor.Tensor
	memlab.Check(mp.Use(func() error { // with torch.cuda.use_mem_pool(pool):
		kv = memlab.Must(tensor.Empty(l, tensor.Float32, 1024, 1024))
		return memlab.Must(tensor.Empty(l, tensor.Float32, 1024, 1024)).Release() // tmp, freed in the pool
	}))
	x := memlab.Must(tensor.Empty(l, tensor.Float32, 1024, 1024)) // outside: the default pool
	var out *tensor.Tensor
	g := memlab.Must(l.CaptureGraph(func() error { // with torch.cuda.graph(g):
		out = memlab.Must(tensor.Empty(l, tensor.Float32, 256, 1024))
		return nil
	}))
	for _, s := range l.Snapshot().Segments {
		ch4.Say("segment_pool_id %v: %s %s segment, %s allocated", s.PoolID, memlab.FormatBytes(s.TotalSize), lang.Text(s.Pool), memlab.FormatBytes(s.AllocatedSize))
	}
	xSeg, _, _ := l.BlockOf(x)
	poolFree := mp.Reserved() - kv.Nbytes() // the pool's segment less kv
	memlab.Check(tensor.ReleaseAll(kv, out, x))
	memlab.Check(l.EmptyCache())
	kept := l.MemoryReserved()
	memlab.Check(mp.Close()) // del pool
	memlab.Check(g.Reset())  // del g
	memlab.Check(l.EmptyCache())
	ch4.Say("verdict: x was served from the pool's free memory: %v", xSeg.PoolID == mp.ID())
	memlab.Measured("x is in a %s segment of pool %v while the pool held %s free; with every tensor freed, empty_cache kept %s reserved (the private pools' segments) until the pool and the graph were deleted, then %s",
		memlab.FormatBytes(xSeg.TotalSize), xSeg.PoolID, memlab.FormatBytes(poolFree), memlab.FormatBytes(kept), memlab.FormatBytes(l.MemoryReserved()))
}

/*md
The pool's segment and the graph's carry their pool ids (`(0, 1)`: a user's pool; `(1, 0)`:
a graph's own); `x` is in the default pool, `(0, 0)`. Unlike a `TensorPool`, a `MemPool`
hands out any size and never gives one buffer to two users: it is the caching allocator,
fenced off. The price is the fence: memory a pool caches is memory nothing else can use
for as long as the pool lives.

**Try it:** allocate `x` inside `mp.Use`, after the temporary's release. Predict: does `x`
still get a segment of its own, and how much does `empty_cache` keep before the pool is
deleted?

<details><summary>Answer</summary>

No segment of its own: inside the pool the allocator caches and reuses as usual, so `x`
takes the 4 MiB block the temporary freed, and the default pool holds nothing (the verdict
line now prints `true`). `empty_cache` keeps the same bytes as before — the pool's and the
graph's segments; the default pool's segment it used to give back was never made.
</details>
*/

/*md:zh-CN
池子的段和图的段都带着各自的池编号（`(0, 1)`：用户建的池；`(1, 0)`：图自己的池）；`x` 在默认池 `(0, 0)` 里。和 `TensorPool` 不同，`MemPool` 什么大小都能分，也绝不会把一个缓冲区同时发给两个使用者：它就是缓存分配器，只是圈了起来。代价正是这道围栏：池子缓存着的显存，只要池子还在，别的张量就用不上。

**动手试试：** 把 `x` 放到 `mp.Use` 里面、在临时张量释放之后分配。先预测：`x` 还会有自己的段吗？删除池子之前，`empty_cache` 会留下多少？

<details><summary>答案</summary>

不会有自己的段：在池子里面，分配器照常缓存、照常复用，于是 `x` 拿到了临时张量释放的那块 4 MiB，默认池里什么也没有（结论那一行这次打印 `true`）。`empty_cache` 留下的字节数和原来一样——池子的段和图的段；原本会被它还回去的那个默认池的段，根本没有分配出来。
</details>
*/

/*md
### What a pool saves: time per buffer

Getting a 1 MiB buffer and giving it back, 200 times, three ways: a fresh allocation with
`empty_cache()` after each free (so every step is a `cudaMalloc` and a `cudaFree`), a fresh
allocation served by the caching allocator, and `TensorPool.Get`/`Put`. On the simulated
device each `cudaMalloc`/`cudaFree` costs what it took on an H200 (`memlab.WithLatency`).
The chapter's two sentences under test — why pool at all, and that the caching allocator
already is a pool:

> 教材原文：「GPU显存的分配和释放是有开销的，频繁的 cudaMalloc 和 cudaFree 不仅慢，还会导致显存碎片化。」
>
> *Chapter 4:* "Allocating and freeing GPU memory has a cost: frequent cudaMalloc and
> cudaFree calls are slow, and they fragment GPU memory as well."

> 教材原文：「它会预先申请一大块显存，然后按需分配给张量，用完不立即释放，而是放回池子里复用。」
>
> *Chapter 4 (of the caching allocator):* "It requests a large block of GPU memory up
> front, hands it out to tensors as needed, and does not free it right after use but puts
> it back into the pool for reuse."

```python
import time
pool = TensorPool((256, 1024))                 # the chapter's class
def step(way):
    if way == "pool":
        pool.put(pool.get())
        return
    t = torch.empty(256, 1024, device="cuda")
    del t
    if way == "empty_cache":
        torch.cuda.empty_cache()               # so the next torch.empty is a cudaMalloc again
for way in ("empty_cache", "caching allocator", "pool"):
    times = []
    for _ in range(200):
        torch.cuda.synchronize(); t0 = time.perf_counter()
        step(way)
        torch.cuda.synchronize(); times.append(time.perf_counter() - t0)
    print(way, sorted(times)[100], torch.cuda.memory_stats()["num_device_alloc"])
```
*/

/*md:zh-CN
### 池子省下了什么：每个缓冲区的耗时

取一个 1 MiB 的缓冲区再还回去，重复 200 次，用三种方式：每次释放后都 `empty_cache()` 的全新分配（于是每一步都是一次 `cudaMalloc` 加一次 `cudaFree`）、由缓存分配器供给的全新分配，以及 `TensorPool.Get`/`Put`。在模拟设备上，每次 `cudaMalloc`/`cudaFree` 的耗时取自 H200 上的实测（`memlab.WithLatency`）。这里检验教材的两句话——为什么要池化，以及缓存分配器本身就是一个池子：

> 教材原文：「GPU显存的分配和释放是有开销的，频繁的 cudaMalloc 和 cudaFree 不仅慢，还会导致显存碎片化。」

> 教材原文：「它会预先申请一大块显存，然后按需分配给张量，用完不立即释放，而是放回池子里复用。」

```python
import time
pool = TensorPool((256, 1024))                 # 教材的类
def step(way):
    if way == "pool":
        pool.put(pool.get())
        return
    t = torch.empty(256, 1024, device="cuda")
    del t
    if way == "empty_cache":
        torch.cuda.empty_cache()               # 让下一次 torch.empty 重新 cudaMalloc
for way in ("empty_cache", "caching allocator", "pool"):
    times = []
    for _ in range(200):
        torch.cuda.synchronize(); t0 = time.perf_counter()
        step(way)
        torch.cuda.synchronize(); times.append(time.perf_counter() - t0)
    print(way, sorted(times)[100], torch.cuda.memory_stats()["num_device_alloc"])
```
*/

//nb:cell plot
func poolLatency() {
	ways := ch4.T("cudaMalloc every step (empty_cache)", "caching allocator", "TensorPool")
	tab := memlab.NewTable(ch4.T("way", "allocator calls", "cudaMalloc", "median step")...)
	medians := memplot.BarSeries{Name: lang.Text("median µs per step")}
	var stranded uint64 // device memory the cudaMalloc-every-step loop left unusable
	for w, way := range ways {
		l := memlab.MustOpen(memlab.WithLatency())
		tp := memlab.Must(pool.NewTensorPool(l, tensor.Float32, []int{256, 1024}, 0))
		calls, mallocs := ch4.AllocCalls(l), l.MemoryStats()["num_device_alloc"]
		free0, _, _ := l.MemGetInfo()
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
		if free, _, _ := l.MemGetInfo(); w == 0 && free < free0 {
			stranded = free0 - free
		}
		medians.Values = append(medians.Values, float64(ch4.Median(times))/float64(time.Microsecond))
		tab.Row(way, ch4.AllocCalls(l)-calls, l.MemoryStats()["num_device_alloc"]-mallocs, fmt.Sprintf("%.2f µs", medians.Values[w]))
		memlab.Check(tp.Release())
		memlab.Check(l.Close())
	}
	tab.Show()
	memlab.Show(memplot.BarsLog(lang.Text("4.3 getting a 1 MiB buffer: median time per step"), lang.Text("µs per step"), ways, medians))
	memlab.Measured("median step: %.1f µs with a cudaMalloc each time, %.2f µs from the caching allocator, %.2f µs from the TensorPool (%.0f× and %.0f× faster)",
		medians.Values[0], medians.Values[1], medians.Values[2], medians.Values[0]/medians.Values[1], medians.Values[0]/medians.Values[2])
	memlab.Judge("frequent cudaMalloc and cudaFree are slow", memlab.HoldsIf(medians.Values[0] > 10*medians.Values[1]),
		"%.0f× the caching allocator's time per step", medians.Values[0]/medians.Values[1])
	memlab.Judge("…and fragment device memory", memlab.HoldsIf(stranded > 0),
		"after 200 cudaMalloc/cudaFree pairs the device's free memory is %s lower", memlab.FormatBytes(int64(stranded)))
}

/*md
The value axis is logarithmic: a `cudaMalloc`/`cudaFree` pair is orders of magnitude slower
than either pool. The caching allocator already *is* a pool — one `cudaMalloc` for all the
steps — and its hit costs a small fraction of a `cudaMalloc`; what a `TensorPool` adds is no
allocator call at all and a hard bound on memory, not much speed. The
cost the chapter warns of is paid only where the cache is emptied (or a request finds no
cached block that fits).

**Try it:** make the buffer `[16, 1024]` (64 KiB, the small pool). Predict: does the
`empty_cache` row still pay a `cudaMalloc` per step?

<details><summary>Answer</summary>

Yes, one per step: `empty_cache` gives back the small pool's 2 MiB segment too, so every
step allocates a new one. The other two rows still make one.
</details>
*/

/*md:zh-CN
纵轴是对数刻度：一对 `cudaMalloc`/`cudaFree` 比两种池子慢好几个数量级。缓存分配器本身*就是*一个池子——所有步骤只用了一次 `cudaMalloc`——而它的一次命中只花 `cudaMalloc` 的一小部分时间；`TensorPool` 多给的是完全不调用分配器，以及显存的硬上限，速度上并没有多出多少。它警告的那份开销，只在缓存被清空（或者请求找不到合适的缓存块）时才需要支付。

**动手试试：** 把缓冲区改成 `[16, 1024]`（64 KiB，属于小块池）。先预测：`empty_cache` 那一行还会每步付一次 `cudaMalloc` 吗？

<details><summary>答案</summary>

会，每步一次：`empty_cache` 把小块池的 2 MiB 段也还了回去，于是每一步都要重新分配一个。另外两行仍然只有一次。
</details>
*/

/*md
### `max_split_size_mb` and merging

The chapter's own pitfall, in 4.3:

> 教材原文：「避坑指南：我曾经调试一个服务，发现每次推理后显存占用都在涨，以为是内存泄漏。查了两天，最后发现是缓存池的 max_split_size_mb 设置不合理，导致大量碎片无法合并。调小这个值后，问题解决。」
>
> *Chapter 4:* "Pitfall: I once debugged a service whose memory grew after every
> inference; I thought it was a leak. After two days I found the cache's
> `max_split_size_mb` was set badly, so that many fragments could not merge. Lowering it
> solved the problem."

Below, under three settings, a 100 MiB block is cached, then three 30 MiB tensors are
taken and all freed again — with the same requests in each setting. Does the setting
decide whether the freed neighbours merge back into one block?

```python
# one process per setting: PYTORCH_CUDA_ALLOC_CONF="" / "max_split_size_mb:20" / "max_split_size_mb:128"
del torch.empty(25 * 2**20, device="cuda")           # a 100 MiB block, cached
xs = [torch.empty(30 * 2**18, device="cuda") for _ in range(3)]
del xs
for seg in torch.cuda.memory_snapshot():
    print(seg["total_size"], [b["state"] for b in seg["blocks"]])
```
*/

/*md:zh-CN
### `max_split_size_mb` 与合并

教材在 4.3 节自己踩过的坑：

> 教材原文：「避坑指南：我曾经调试一个服务，发现每次推理后显存占用都在涨，以为是内存泄漏。查了两天，最后发现是缓存池的 max_split_size_mb 设置不合理，导致大量碎片无法合并。调小这个值后，问题解决。」

下面在三种设置下，先缓存一个 100 MiB 的块，再取三个 30 MiB 的张量，然后全部释放——每种设置下的请求完全相同。释放后相邻的空闲块能不能合并回一个块，是由这个设置决定的吗？

```python
# 每种设置一个进程：PYTORCH_CUDA_ALLOC_CONF="" / "max_split_size_mb:20" / "max_split_size_mb:128"
del torch.empty(25 * 2**20, device="cuda")           # 一个 100 MiB 的块，留在缓存里
xs = [torch.empty(30 * 2**18, device="cuda") for _ in range(3)]
del xs
for seg in torch.cuda.memory_snapshot():
    print(seg["total_size"], [b["state"] for b in seg["blocks"]])
```
*/

//nb:cell
func maxSplitMerging() {
	// 4.3 does max_split_size_mb stop freed blocks from merging?
	tab := ch4.NewMergeTable()
	for _, conf := range []string{"", "max_split_size_mb:20", "max_split_size_mb:128"} {
		l := memlab.MustOpen(memlab.AllocConf(conf), memlab.NotCurrent())
		memlab.Check(memlab.Must(tensor.Empty(l, tensor.Float32, 25<<20)).Release()) // 100 MiB, cached
		xs := []*tensor.Tensor{memlab.Must(tensor.Empty(l, tensor.Float32, 30<<18)), memlab.Must(tensor.Empty(l, tensor.Float32, 30<<18)), memlab.Must(tensor.Empty(l, tensor.Float32, 30<<18))}
		inUse := ch4.Blocks(l)
		memlab.Check(tensor.ReleaseAll(xs...))
		tab.Add(conf, l, inUse) // segments, and blocks after del: one free block per segment if they merged
		memlab.Check(l.Close())
	}
	tab.Show()
	tab.Judge() // it holds if some segment did not merge back into one free block
}

/*md
The setting decides which cached blocks may be *split* (blocks above it serve only large
requests, whole), not whether freed neighbours *merge*: a freed block always joins the
free blocks beside it in its segment. What `max_split_size_mb` changes is how many
segments the same requests take, and so how much stays cached — memory that grows after
inferences and looks like a leak, which the chapter's smaller value cut.

**Try it:** in the cell "does max_split_size_mb stop freed blocks from merging?", keep one
of the three tensors (release only `xs[0]` and `xs[2]`) before counting. Predict: under the
default setting, how many free blocks does the 100 MiB segment hold, and why not one?

<details><summary>Answer</summary>

Two: `xs[1]`, still allocated, sits between them, so the blocks freed on either side have
no free neighbour to merge with (the one after `xs[2]` merges with the segment's
remainder). Merging needs a free neighbour, not a setting — free `xs[1]` and the segment
is one block again.
</details>
*/

/*md:zh-CN
这个设置决定的是哪些缓存块可以被*分割*（超过它的块只整块供应大请求），而不是释放后相邻的块能否*合并*：一个块释放后总会与段里紧挨着它的空闲块合并。`max_split_size_mb` 改变的，是同样的请求要占多少个段、因而有多少显存留在缓存里——这些显存会在一次次推理之后增长，看上去像泄漏，教材调小这个值，削减的正是它。

**动手试试：** 在“does max_split_size_mb stop freed blocks from merging?”那个单元格里，留下三个张量中的一个（只释放 `xs[0]` 和 `xs[2]`）再计数。先预测：在默认设置下，那个 100 MiB 的段里有几个空闲块？为什么不是一个？

<details><summary>答案</summary>

两个：仍被占用的 `xs[1]` 夹在中间，它两侧释放出来的块没有空闲的邻居可以合并（`xs[2]` 后面那块会和段里剩下的部分合并）。合并要的是一个空闲的邻居，而不是某个设置——把 `xs[1]` 也释放掉，这个段就又是一个块了。
</details>
*/

/*md
### KV caches: `torch.cat` growth, preallocated, paged

A paged cache (vLLM's) keeps keys and values in fixed-size blocks of one arena; each
sequence has a block table. First the API, on three short sequences:

```python
k_arena = torch.empty(8, 2, 16, 64, device="cuda")   # 8 blocks × heads × 16 tokens × head_dim (v_arena alike)
free_blocks, block_table = list(range(8)), {}
def allocate(seq, tokens):                            # the blocks a sequence of `tokens` needs
    block_table[seq] = [free_blocks.pop(0) for _ in range(-(-tokens // 16))]
def free(seq):                                        # its blocks serve any other sequence
    free_blocks.extend(block_table.pop(seq))
```
*/

/*md:zh-CN
### KV 缓存：`torch.cat` 增长、预分配、分页

分页缓存（vLLM 的做法）把键和值存放在同一块显存区 (arena) 里大小固定的块中；每个序列有一张块表 (block table)。先在三个短序列上看看它的 API：

```python
k_arena = torch.empty(8, 2, 16, 64, device="cuda")   # 8 个块 × 头数 × 16 个词元 × head_dim（v_arena 同理）
free_blocks, block_table = list(range(8)), {}
def allocate(seq, tokens):                            # 长 tokens 个词元的序列需要的块
    block_table[seq] = [free_blocks.pop(0) for _ in range(-(-tokens // 16))]
def free(seq):                                        # 释放的块可以给任何其他序列用
    free_blocks.extend(block_table.pop(seq))
```
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
		ch4.Say("sequence %d: %d tokens in blocks %v", seq, tokens, memlab.Must(c.Blocks(seq)))
	}
	fmt.Printf("%+v\n", c.Stats())
	memlab.Check(c.Free(1))
	ch4.Say("after freeing sequence 1: %+v", c.Stats())
	memlab.Measured("one arena of %s, allocated once: %s in use by the lab", memlab.FormatBytes(c.Nbytes()), memlab.FormatBytes(l.MemoryAllocated()))
	memlab.Check(c.Release())
}

/*md
Each sequence wastes at most one block's tail (`Waste`), and a freed sequence's blocks serve
any other: no external fragmentation.

**Try it:** after the loop, add a fourth sequence of 60 tokens (`c.Allocate(3)`, then
`c.Append(3, 0, k4, k4)` with `k4` of 60 tokens) and print the error; append it again
after `c.Free(1)`. Predict: does it fit the first time? the second?

<details><summary>Answer</summary>

The first append fails with `pool: KV cache full` — it needs 4 blocks and 2 are free —
and changes nothing; once sequence 1 is freed, 4 blocks are free and it fits.
</details>

Now 16 sequences of 16–320 tokens decoded 4 at a time (a new one starts when one
finishes), 8 heads × 128 dimensions, with three caches: each sequence's keys and values
grown with `torch.cat`, a `pool.KVCache` preallocated for 320 tokens per sequence, and one
`pool.PagedKVCache` of 16-token blocks whose arena holds 4 × 320 tokens. The workload is
longer than a cell should be; it is [`ch4.KVStrategies`](../../experiments/ch4/pooling.go).
The chapter's sentence on KV caches:

> 教材原文：「因为KV Cache的大小在推理过程中是固定的，用池化可以避免每次生成token时都重新分配显存，推理延迟能降5-10%。」
>
> *Chapter 4:* "Because the KV cache's size is fixed during inference, pooling avoids
> reallocating memory for every generated token, and cuts inference latency by 5–10%."

```python
# torch.cat growth: a new, longer cache at every token
k_cache = torch.cat([k_cache, k_new], dim=1)         # [heads, tokens + 1, head_dim]
# preallocated: one buffer for the longest sequence, written in place
k_cache = torch.empty(heads, max_len, head_dim, device="cuda")
k_cache[:, t] = k_new[:, 0]                          # token t: no allocation
# paged: token t goes to its block of the arena
k_arena[block_table[seq][t // 16], :, t % 16] = k_new[:, 0]
calls = torch.cuda.memory_stats()["allocation.all.allocated"]
```
*/

/*md:zh-CN
每个序列最多浪费一个块的尾部（`Waste`），释放掉的序列的块可以给任何其他序列用：没有外部碎片。

**动手试试：** 在循环之后加入第四个长 60 个词元 (token) 的序列（`c.Allocate(3)`，再用含 60 个词元的 `k4` 调用 `c.Append(3, 0, k4, k4)`），打印返回的错误；在 `c.Free(1)` 之后再追加一次。先预测：第一次放得下吗？第二次呢？

<details><summary>答案</summary>

第一次追加以 `pool: KV cache full` 失败——它需要 4 个块，空闲的只有 2 个——并且什么也没改；序列 1 释放之后，空闲块有 4 个，就放得下了。
</details>

接下来是 16 个长度在 16–320 个词元之间的序列，每次同时解码 4 个（一个结束就开始下一个），8 个头 × 128 维，比较三种缓存：每个序列的键和值用 `torch.cat` 逐步拼接增长；一个为每个序列预分配 320 个词元的 `pool.KVCache`；以及一个由每块 16 个词元的块组成、显存区容纳 4 × 320 个词元的 `pool.PagedKVCache`。这个工作负载太长，不适合放在一个单元格里，代码在 [`ch4.KVStrategies`](../../experiments/ch4/pooling.go)。教材关于 KV 缓存的原话：

> 教材原文：「因为KV Cache的大小在推理过程中是固定的，用池化可以避免每次生成token时都重新分配显存，推理延迟能降5-10%。」

```python
# torch.cat 增长：每个词元都生成一个更长的新缓存
k_cache = torch.cat([k_cache, k_new], dim=1)         # [heads, tokens + 1, head_dim]
# 预分配：按最长序列分配一个缓冲区，原地写入
k_cache = torch.empty(heads, max_len, head_dim, device="cuda")
k_cache[:, t] = k_new[:, 0]                          # 第 t 个词元：不分配
# 分页：第 t 个词元写进显存区中它所在的块
k_arena[block_table[seq][t // 16], :, t % 16] = k_new[:, 0]
calls = torch.cuda.memory_stats()["allocation.all.allocated"]
```
*/

//nb:cell plot
func kvStrategies() {
	r := memlab.Must(ch4.KVStrategies(ch4.Setup{}, ch4.DefaultKVWorkload))
	r.Table().Show()
	memlab.Show(ch4plot.KV(r))
	memlab.Show(ch4plot.KVSegments(r, "torch.cat"))
	memlab.Show(ch4plot.KVSegments(r, "paged"))
	cat, _ := r.Row("torch.cat")
	pre, _ := r.Row("preallocated")
	paged, _ := r.Row("paged")
	memlab.Measured("torch.cat: %d allocator calls, %d cudaMallocs, %s reserved at its peak; preallocated: %d calls, up to %d token slots unused; paged: %d call, at most %d slots unused, %s reserved",
		cat.AllocCalls, cat.DeviceMallocs, memlab.FormatBytes(cat.PeakReserved), pre.AllocCalls, pre.MaxWaste, paged.AllocCalls, paged.MaxWaste, memlab.FormatBytes(paged.PeakReserved))
	memlab.Judge("a fixed-size KV cache pool avoids reallocating memory for every token", memlab.HoldsIf(pre.AllocCalls < cat.AllocCalls),
		"allocator calls %d with torch.cat, %d preallocated", cat.AllocCalls, pre.AllocCalls)
}

/*md
`torch.cat` holds exactly the live keys and values but copies the whole cache at every
step, and every step asks for a new size, so the caching allocator ends up holding
segments the short caches outgrew (grey in the first segment map: cached, empty) and a
large segment partly free. Preallocation makes one allocation per sequence but holds the
longest length whatever the sequence. The paged cache makes a single allocation and
wastes at most a block's tail per sequence; its segment map is one segment, wholly
allocated.

So the chapter's premise is the wrong way round: a KV cache is *not* fixed in size — it
grows by one token per step, which is what makes `torch.cat` allocate at every step. A
pool is what *fixes* its size: at the longest length (preallocated, paying in unused
slots) or to the block (paged); then, as the chapter says, no generated token allocates.
Whether that buys 5–10% latency is a question for a GPU: 4.4's H200 runs measure it.

**Try it:** pass `w := ch4.DefaultKVWorkload; w.BlockSize = 64` instead. Predict: what
happens to the paged cache's "max unused slots", and to its allocator calls?

<details><summary>Answer</summary>

Fewer, larger blocks waste more: up to 63 slots per sequence, and the maximum reaches
its bound, 4 × 63 (summed over the 4 sequences decoded at once). Still one allocator
call: the arena.
</details>
*/

/*md:zh-CN
`torch.cat` 恰好只持有还活着的键和值，但每一步都要把整个缓存拷贝一遍，而且每一步请求的大小都不一样，于是缓存分配器最后会攥着一些早先装过较短的缓存、后来装不下而被腾空的段（第一张段分布图里的灰色：已缓存、空闲），外加一个部分空闲的大段。预分配对每个序列只分配一次，但不管序列多长都占着最长的长度。分页缓存只分配一次，每个序列最多浪费一个块的尾部；它的段分布图只有一个段，而且全部已分配。

所以教材的前提恰好说反了：KV 缓存的大小*并不*固定——它每一步都长一个词元，这正是 `torch.cat` 每步都要分配的原因。是池子*把*它的大小固定下来：固定在最长长度（预分配，代价是闲置的槽位），或者按块固定（分页）；这样一来，正如教材所说，生成词元时就不再分配显存了。至于能不能因此换来 5-10% 的延迟下降，得在 GPU 上回答：4.4 节的 H200 实测会给出结果。

**动手试试：** 改为传入 `w := ch4.DefaultKVWorkload; w.BlockSize = 64`。先预测：分页缓存的“最大闲置槽位”会怎样？它的分配器调用次数呢？

<details><summary>答案</summary>

块更少、更大，浪费也更多：每个序列最多 63 个槽位，最大值达到了它的上界 4 × 63（对同时解码的 4 个序列求和）。分配器调用仍然只有一次：那个显存区。
</details>
*/

/*md
#### Summary

- The caching allocator already is a pool: after the first step a request is served from
  its cache, without `cudaMalloc`; a `TensorPool` adds no allocator call at all and a
  bound on memory, at the price of memory held whether used or not.
- The chapter's own pool class has no limit and no checks: a tensor of another shape, or
  put twice, is handed out as if it were right.
- `max_split_size_mb` decides which cached blocks may be split, not whether freed
  neighbours merge; a KV cache grown with `torch.cat` allocates at every token, a
  preallocated or paged one does not.

#### Questions for discussion

1. When is a preallocated KV cache worse than `torch.cat` growth, and when is a paged one
   worth its block table?
2. What should a pool do when it is asked for more tensors than its limit — wait, fail,
   or allocate?
3. Memory that grows after every request: how would you tell a leak from cached blocks
   that the allocator keeps?
*/

/*md:zh-CN
#### 小结

- 缓存分配器本身就是一个池子：第一步之后，请求都由它的缓存供给，不再 `cudaMalloc`；`TensorPool` 多给的是完全不调用分配器，以及显存的上限，代价是不管用没用都占着显存。
- 教材自己的池子类没有上限，也不做检查：形状不对的张量、被放回两次的张量，都会被当成正确的发出去。
- `max_split_size_mb` 决定哪些缓存块可以被分割，而不是释放后相邻的块能否合并；用 `torch.cat` 增长的 KV 缓存每生成一个词元都要分配，预分配或分页的则不用。

#### 讨论题

1. 什么时候预分配的 KV 缓存比 `torch.cat` 增长更糟？分页缓存什么时候值得维护一张块表？
2. 当池子被要求给出超过上限的张量时，它应该等待、报错，还是去分配？
3. 每次请求之后显存都在涨：你怎样区分真正的泄漏和分配器留在缓存里的块？
*/
