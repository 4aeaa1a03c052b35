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
is told as an out-of-memory story:

> 教材原文：「下次你要一个768MB的连续块，它找遍所有空闲块，拼不出一个连续的768MB。」
>
> In translation: "Next time you want a contiguous 768 MB block, it searches every free
> block and cannot piece together a contiguous 768 MB."

PyTorch serves it without one: the first 1 GiB
segment stays cached, each later request splits it, and freeing merges the pieces back
(2.2 compared every op with PyTorch 2.11's recording). The segment map right after the
768 MiB request:

```python
MiB = 2**20
for n in (1024, 512, 256):
    a = torch.empty(n * MiB, dtype=torch.uint8, device="cuda")
    del a
a3 = torch.empty(768 * MiB, dtype=torch.uint8, device="cuda")   # no out-of-memory error
print(len(torch.cuda.memory_snapshot()), torch.cuda.memory_reserved(),
      torch.cuda.memory_stats()["num_device_alloc"])
```
*/

/*md:zh-CN
## 2.3 显存碎片化 (fragmentation)

### 教材里的序列并不会产生碎片

教材的例子——申请并释放 1024、512、256 MiB，再申请 768 MiB——讲的是一个显存不足 (OOM) 的故事：

> 教材原文：「下次你要一个768MB的连续块，它找遍所有空闲块，拼不出一个连续的768MB。」

PyTorch 执行这个序列并不会 OOM：第一个 1 GiB 的段一直留在缓存里，之后的每次申请都从它分割出来，释放时碎块又合并回去（2.2 已经把每一步和 PyTorch 2.11 的录制结果逐一对照过）。下面是 768 MiB 申请刚完成时的段分布图：

```python
MiB = 2**20
for n in (1024, 512, 256):
    a = torch.empty(n * MiB, dtype=torch.uint8, device="cuda")
    del a
a3 = torch.empty(768 * MiB, dtype=torch.uint8, device="cuda")   # 不会 OOM
print(len(torch.cuda.memory_snapshot()), torch.cuda.memory_reserved(),
      torch.cuda.memory_stats()["num_device_alloc"])
```
*/

//nb:cell plot
func chapterSequenceNoOOM() {
	steps, at768 := chapterSequence("")
	step, _ := steps.Find("a3 = empty(768 MiB)")
	memlab.Measured("the 768 MiB request: %s; segments right after it: %d, reserved %s; cudaMalloc calls in the whole sequence: %d",
		step.Outcome(), len(at768), memlab.FormatBytes(step.Reserved), steps.Last().DeviceAllocs)
	memlab.Show(memplot.SegmentMap("2.3 after the 768 MiB request: one segment, split", at768))
}

/*md
### A sequence that really fragments

> 教材原文：「缓存分配器手里有很多小块，但连续的大块不够。」
>
> In translation: "The caching allocator has plenty of small blocks in hand, but not
> enough contiguous large ones."

That does happen, but it needs **live small tensors pinning segments**. In a 4 GiB device, six
batches each allocate and free a 512 MiB activation (a long batch), then a 496 MiB one (a
shorter batch: it splits the cached 512 MiB segment, leaving 16 MiB free at its end), and
keep a 16 MiB tensor (a logged metric, say), which best fit puts in exactly that
leftover. When the activations are freed, six 496 MiB holes are free in the cache — each
in a segment a live tensor pins, so neither `empty_cache()` nor the allocator's own
retry can release any. Then comes a request for 1536 MiB (`request` below).

```python
MiB = 2**20
torch.cuda.set_per_process_memory_fraction(4096 * MiB / torch.cuda.mem_get_info()[1])  # a 4 GiB device
torch.cuda.memory._record_memory_history()          # record every allocation, for a timeline
keep, acts = [], []
for _ in range(6):
    long = torch.empty(512 * MiB, dtype=torch.uint8, device="cuda")
    del long
    acts.append(torch.empty(496 * MiB, dtype=torch.uint8, device="cuda"))
    keep.append(torch.empty(16 * MiB, dtype=torch.uint8, device="cuda"))   # a logged metric
del acts
try:
    torch.empty(1536 * MiB, dtype=torch.uint8, device="cuda")
except torch.cuda.OutOfMemoryError as e:
    print(e)
torch.cuda.memory._dump_snapshot("fragment.pickle") # open it in https://pytorch.org/memory_viz
```
*/

/*md:zh-CN
### 一个真正会产生碎片的序列

> 教材原文：「缓存分配器手里有很多小块，但连续的大块不够。」

这种情况确实会发生，但前提是**有存活的小张量把段钉住**。在一个 4 GiB 的设备上跑六个批次：每个批次先申请并释放一个 512 MiB 的激活值（一个长批次），再申请一个 496 MiB 的（一个短一些的批次：它从缓存的 512 MiB 段里分割出来，段末尾剩下 16 MiB 空闲），然后留下一个 16 MiB 的张量（比如记录下来的某个指标），最佳适配正好把它放进那块剩余空间。激活值释放后，缓存里空出六个 496 MiB 的洞——每个洞所在的段都被一个存活张量钉住，所以无论是 `empty_cache()` 还是分配器自己的重试，都一个也释放不了。接着来一个 1536 MiB 的申请（下面的 `request`）。

```python
MiB = 2**20
torch.cuda.set_per_process_memory_fraction(4096 * MiB / torch.cuda.mem_get_info()[1])  # 模拟 4 GiB 的设备
torch.cuda.memory._record_memory_history()          # 记录每次分配，用来画时间线
keep, acts = [], []
for _ in range(6):
    long = torch.empty(512 * MiB, dtype=torch.uint8, device="cuda")
    del long
    acts.append(torch.empty(496 * MiB, dtype=torch.uint8, device="cuda"))
    keep.append(torch.empty(16 * MiB, dtype=torch.uint8, device="cuda"))   # 记录下来的指标
del acts
try:
    torch.empty(1536 * MiB, dtype=torch.uint8, device="cuda")
except torch.cuda.OutOfMemoryError as e:
    print(e)
torch.cuda.memory._dump_snapshot("fragment.pickle") # 在 https://pytorch.org/memory_viz 中打开
```
*/

// request is the large request made after the workload.
//
//nb:decl
const request = 1536 << 20

// workload runs batches of the fragmenting workload on l: each allocates and
// frees a 512 MiB activation, then allocates a batch-byte activation and a
// 16 MiB tensor that it keeps. It frees the activations and returns the kept
// tensors; rec, if not nil, is marked after each batch. With a buffer buf
// (pre-allocation) the activations are views of it, allocating nothing.
//
//nb:decl
func workload(l *memlab.Lab, batches int, batch int, rec *memlab.Recorder, buf ...*tensor.Tensor) []*tensor.Tensor {
	activation := func(n int) *tensor.Tensor {
		if len(buf) > 0 {
			return memlab.Must(buf[0].Narrow(0, 0, n)) // buf[:n], reused every batch
		}
		return memlab.Must(tensor.Empty(l, tensor.Uint8, n))
	}
	var keep, acts []*tensor.Tensor
	for i := 1; i <= batches; i++ {
		long := activation(512 << 20) // a long batch
		memlab.Check(long.Release())
		acts = append(acts, activation(batch))                                  // a shorter one
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
the largest block far below. The error message is PyTorch's, with its advice. So the
chapter's picture is right once live tensors pin the segments; its example just lacks them.

**Try it:** keep 8 MiB tensors instead of 16 MiB (`8<<20` in `workload`): each 16 MiB
leftover now holds two of them, best fit packs them in pairs, three of the six segments
are left with no kept tensor, and the request is served — fragmentation depends on
exactly how the sizes interlock. Or make the shorter batch `512<<20`: it is served too
(that is the "uniform sizes" remedy below).

### What `memory_summary()` says about it

> 教材原文：「用torch.cuda.memory_summary()查看碎片情况：它会列出所有缓存块的状态。」
>
> In translation: "Use torch.cuda.memory_summary() to look at fragmentation: it lists the
> state of every cached block."

Half right: PyTorch's report does show the fragmentation, but as totals — it lists no
block. Read *Non-releasable memory*: it is the inactive split bytes, free yet impossible
to give back. The block-by-block list is `torch.cuda.memory_snapshot()`, which the
segment maps above draw.

```python
print(torch.cuda.memory_summary())
s = torch.cuda.memory_stats()
print(s["inactive_split_bytes.all.current"], s["reserved_bytes.all.current"],
      s["num_ooms"], s["num_alloc_retries"])
for seg in torch.cuda.memory_snapshot():            # the blocks themselves
    print(seg["total_size"], [(b["size"], b["state"]) for b in seg["blocks"]])
```
*/

/*md:zh-CN
段分布图上有六个段，每个段里都有一个橙色的洞（非活跃分割块：空闲却被钉住），旁边是钉住它的蓝色 16 MiB 张量。折线图展示了它是怎么形成的：批次运行期间没有任何空闲（每个小张量正好填满所在段的剩余空间）；激活值一释放，洞就出现了——空闲总量远大于申请，最大的空闲块却远小于申请。报错信息就是 PyTorch 的原话，连同它给的建议。所以教材描述的现象是真实的，只要有存活张量钉住段；它举的例子恰恰缺了这一点。

**动手试试：** 把留下的张量从 16 MiB 改成 8 MiB（`workload` 里的 `8<<20`）：每块 16 MiB 的剩余空间现在能放两个，最佳适配把它们两两挤在一起，六个段中有三个没有留下任何张量，申请得到满足——碎片化取决于各个尺寸如何咬合。或者把短批次改成 `512<<20`：申请同样能满足（这就是下面的“统一尺寸”办法）。

### `memory_summary()` 怎么说

> 教材原文：「用torch.cuda.memory_summary()查看碎片情况：它会列出所有缓存块的状态。」

只对了一半：PyTorch 的这份报告确实能反映碎片化，但给的是汇总数字，并不逐块列出。看 *Non-releasable memory*（不可释放显存）一行：它就是非活跃分割块的字节数，空闲却还不回去。逐块的清单要用 `torch.cuda.memory_snapshot()`，上面的段分布图画的就是它。

```python
print(torch.cuda.memory_summary())
s = torch.cuda.memory_stats()
print(s["inactive_split_bytes.all.current"], s["reserved_bytes.all.current"],
      s["num_ooms"], s["num_alloc_retries"])
for seg in torch.cuda.memory_snapshot():            # 逐块列出
    print(seg["total_size"], [(b["size"], b["state"]) for b in seg["blocks"]])
```
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

The chapter's first two remedies:

> 教材原文：「预分配大块：训练前先创建几个大Tensor占位，用完再复用。」
>
> In translation: "Pre-allocate big blocks: before training, create a few large tensors
> as placeholders and reuse them."

> 教材原文：「统一Tensor大小：尽量让batch size、特征图尺寸保持一致。」
>
> In translation: "Uniform tensor sizes: keep the batch size and the feature-map sizes the
> same as far as you can."

The same workload with each remedy: **pre-allocation** (the activations' 512 MiB buffer
is made before training and every batch's activations are views of it, reused: the
allocator never sees them), **uniform sizes**
(every activation 512 MiB, so a cached segment is reused whole and never split),
**`max_split_size_mb:256`** and the chapter's **`max_split_size_mb:32`** (large segments
are never split: the small tensors get segments of their own, and free oversize
segments are released under pressure) and **`expandable_segments:True`** (one growing
segment mapped page by page; free pages are unmapped when the device runs short).
What decides the request is how the free memory lies: *releasable* (whole free
segments, which the allocator gives back and re-requests as one, or free pages of an
expandable segment, which it unmaps), *pinned in split
blocks* (`inactive_split_bytes`, useless for a larger request) and room on the device.

```python
# pre-allocation: the placeholder is made before training and reused by every batch
buf = torch.empty(512 * MiB, dtype=torch.uint8, device="cuda")
for _ in range(6):
    long = buf[:512 * MiB]                          # a view: no allocation
    act = buf[:496 * MiB]
    keep.append(torch.empty(16 * MiB, dtype=torch.uint8, device="cuda"))
torch.empty(1536 * MiB, dtype=torch.uint8, device="cuda")
# uniform sizes: every activation 512 * MiB, in the loop above
# allocator settings, one per run (read when CUDA starts):
#   PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:256
#   PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:32
#   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
print(torch.cuda.max_memory_reserved(), torch.cuda.memory_stats()["num_device_alloc"])
```
*/

/*md:zh-CN
### 缓解办法，逐一实测

教材给出的头两个办法：

> 教材原文：「预分配大块：训练前先创建几个大Tensor占位，用完再复用。」

> 教材原文：「统一Tensor大小：尽量让batch size、特征图尺寸保持一致。」

用同一个工作负载逐一试验每种办法：**预分配** (pre-allocation，训练前先建好激活值用的 512 MiB 缓冲区，每个批次的激活值都是它的视图，反复复用：分配器根本看不到它们)、**统一尺寸** (uniform sizes，每个激活值都是 512 MiB，缓存的段整块复用、从不分割)、**`max_split_size_mb:256`** 和教材建议的 **`max_split_size_mb:32`**（大段从不分割：小张量各自占用独立的段，显存紧张时超大的空闲段会被释放），以及 **`expandable_segments:True`**（一个按页映射、不断增长的可扩展段 (expandable segment)；设备显存不够时，空闲的页会被解除映射）。申请能否成功，取决于空闲显存处在什么状态：*可释放*（整段空闲的段，分配器把它们还回去，再作为一整块重新申请；或者可扩展段中的空闲页，分配器把它们解除映射）、*钉死在分割块里*（`inactive_split_bytes`，对更大的申请毫无用处），以及设备上剩余的空间。

```python
# 预分配：训练前先建好占位张量，每个批次都复用它
buf = torch.empty(512 * MiB, dtype=torch.uint8, device="cuda")
for _ in range(6):
    long = buf[:512 * MiB]                          # 视图：不分配显存
    act = buf[:496 * MiB]
    keep.append(torch.empty(16 * MiB, dtype=torch.uint8, device="cuda"))
torch.empty(1536 * MiB, dtype=torch.uint8, device="cuda")
# 统一尺寸：上面循环里的每个激活值都用 512 * MiB
# 分配器设置，每次运行一种（CUDA 初始化时读取）：
#   PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:256
#   PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:32
#   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
print(torch.cuda.max_memory_reserved(), torch.cuda.memory_stats()["num_device_alloc"])
```
*/

// remedy is one variant of the fragmenting workload.
//
//nb:decl
type remedy struct {
	name, conf string
	batch      int  // the shorter batches' activation
	prealloc   bool // allocate the activations' buffer before training and reuse it
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
	var keep, buf []*tensor.Tensor
	if r.prealloc {
		buf = append(buf, memlab.Must(tensor.Empty(l, tensor.Uint8, 512<<20))) // the placeholder, made before training
	}
	keep = append(keep, workload(l, 6, r.batch, nil, buf...)...)
	o.snap = l.Snapshot()
	for _, seg := range o.snap.Segments {
		if seg.ActiveSize == 0 || seg.Expandable { // free pages of an expandable segment can be unmapped
			o.releasable += seg.TotalSize - seg.ActiveSize
		}
	}
	o.pinned = l.MemoryStats()["inactive_split_bytes.all.current"]
	free, _ := memlab.Must2(l.MemGetInfo())
	o.room = min(int64(free), o.room-l.MemoryReserved())
	t, err := tensor.Empty(l, tensor.Uint8, request)
	if o.err = err; err == nil {
		keep = append(keep, t)
	}
	o.peak, o.allocs = l.MaxMemoryReserved(), l.MemoryStats()["num_device_alloc"]
	memlab.Check(tensor.ReleaseAll(append(keep, buf...)...))
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
	for _, o := range outs[1:] {
		memlab.Measured("%s: peak reserved %s against the fragmented run's %s; cudaMalloc calls: %d against %d",
			o.name, memlab.FormatBytes(o.peak), memlab.FormatBytes(outs[0].peak), o.allocs, outs[0].allocs)
	}
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
Only the fragmented run fails: the chapter's remedies all work on this workload. With
uniform sizes or `max_split_size_mb` the free memory
lies in whole segments, which the allocator releases and re-requests as one; with
expandable segments the holes are unmapped page by page; with pre-allocation the
activations never reach the allocator, so nothing is split and nothing is left to
release. The segment map of `max_split_size_mb:256` shows why the settings work: the
small tensors sit in segments of their own, and every 512 MiB segment is wholly free.
Each remedy's price is in the last two columns, against the fragmented run's: the
Measured lines under the table compare them one by one — the remedies that release and
re-request whole segments pay most in `cudaMalloc` calls, and pre-allocation has the
lowest reserved peak.

**Try it:** add `{"max_split_size_mb:600", "max_split_size_mb:600", 496 << 20, false}` to
`remedyVariants` and re-run both cells: the 512 MiB segments are now below the limit, so they are split as with the
defaults, and the request fails again. The limit must be below the segments you want
kept whole.
*/

/*md:zh-CN
只有碎片化的那次运行失败：教材的几种办法在这个负载上都管用。统一尺寸或设置 `max_split_size_mb` 时，空闲显存都是整段的，分配器把它们释放掉，再作为一整块重新申请；用可扩展段时，洞被逐页解除映射；预分配时激活值根本到不了分配器，没有块被分割，也就没有什么需要释放。`max_split_size_mb:256` 的段分布图说明了这几种设置为什么管用：小张量待在各自的段里，每个 512 MiB 的段都是整段空闲。每种办法的代价在表格最后两列，要和碎片化那次运行比：表格下面的“实测”行逐一比较——靠释放整段再重新申请的办法，多付出的 `cudaMalloc` 调用最多；预分配的已预留峰值最低。

**动手试试：** 在 `remedyVariants` 里加上 `{"max_split_size_mb:600", "max_split_size_mb:600", 496 << 20, false}`，再把两个单元格都重新运行一遍：512 MiB 的段现在低于上限，于是像默认设置一样被分割，申请再次失败。上限必须低于你想保持完整的那些段的大小。
*/
