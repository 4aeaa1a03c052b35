package nb02

import (
	"fmt"
	"strings"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/experiments/ch2"
	"memlab.dev/memlab/experiments/ch2/ch2plot"
	"memlab.dev/memlab/explore"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/tensor"
	"memlab.dev/memlab/whatif"
)

/*md
## 2.3 Fragmentation (内存碎片)

### Does the chapter's sequence fragment?

The chapter's example — allocate and free 1024, 512 and 256 MiB, then ask for 768 MiB —
is told as an out-of-memory story:

> 教材原文：「下次你要一个768MB的连续块，它找遍所有空闲块，拼不出一个连续的768MB。」
>
> In translation: "Next time you want a contiguous 768 MB block, it searches every free
> block and cannot piece together a contiguous 768 MB."

2.2 ran this sequence and compared every op with PyTorch 2.11's recording. Is the
768 MiB request refused? Predict, then look at the segment map right after it:

```python
MiB = 2**20
for n in (1024, 512, 256):
    a = torch.empty(n * MiB, dtype=torch.uint8, device="cuda")
    del a
a3 = torch.empty(768 * MiB, dtype=torch.uint8, device="cuda")   # refused?
print(len(torch.cuda.memory_snapshot()), torch.cuda.memory_reserved(),
      torch.cuda.memory_stats()["num_device_alloc"])
```
*/

/*md:zh-CN
## 2.3 显存碎片化 (fragmentation)

### 教材里的序列会产生碎片吗？

教材的例子——申请并释放 1024、512、256 MiB，再申请 768 MiB——讲的是一个显存不足 (OOM) 的故事：

> 教材原文：「下次你要一个768MB的连续块，它找遍所有空闲块，拼不出一个连续的768MB。」

2.2 已经跑过这个序列，并把每一步和 PyTorch 2.11 的录制结果逐一对照过。768 MiB 的申请会被拒绝吗？先预测，再看申请刚完成时的段分布图：

```python
MiB = 2**20
for n in (1024, 512, 256):
    a = torch.empty(n * MiB, dtype=torch.uint8, device="cuda")
    del a
a3 = torch.empty(768 * MiB, dtype=torch.uint8, device="cuda")   # 会被拒绝吗？
print(len(torch.cuda.memory_snapshot()), torch.cuda.memory_reserved(),
      torch.cuda.memory_stats()["num_device_alloc"])
```
*/

//nb:cell plot
func chapterSequenceNoOOM() {
	steps, at768 := memlab.Must2(ch2.ChapterSequence("")) // the Python above
	step, _ := steps.Find("a3 = empty(768 MiB)")
	memlab.Judge("after 1024, 512 and 256 MB come and go, no contiguous 768 MB block can be found", memlab.HoldsIf(step.Outcome() != "served"),
		"the 768 MiB request: %s; segments right after it: %d, reserved %s; cudaMalloc calls in the whole sequence: %d",
		step.Outcome(), len(at768), memlab.FormatBytes(step.Reserved), steps.Last().DeviceAllocs)
	memlab.Show(memplot.SegmentMap("2.3 after the 768 MiB request: one segment, split", at768))
}

/*md
PyTorch serves it: the first 1 GiB segment stays cached, each later request splits it,
and freeing merges the pieces back into one block.

**Try it — predict first:** run the sequence under `ch2.ChapterSequence("max_split_size_mb:128")`. How many segments are there right after the 768 MiB request?

<details><summary>Answer</summary>

Four, one per request, and reserved memory is far above the defaults': no block of 128 MiB or more is split, so nothing is cut from the first segment — and still no out-of-memory error.
</details>

### A sequence that really fragments

> 教材原文：「缓存分配器手里有很多小块，但连续的大块不够。」
>
> In translation: "The caching allocator has plenty of small blocks in hand, but not
> enough contiguous large ones."

Can it happen at all? Try a sequence with **live small tensors pinning segments**. In a 4 GiB device, six
batches each allocate and free a 512 MiB activation (a long batch), then a 496 MiB one (a
shorter batch: it splits the cached 512 MiB segment, leaving 16 MiB free at its end), and
keep a 16 MiB tensor (a logged metric, say), which best fit puts in exactly that
leftover. When the activations are freed, six 496 MiB holes are free in the cache — each
in a segment a live tensor pins. Then comes a request for 1536 MiB (`ch2.Request`
below), less than the free memory in the cache: is it served?

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
PyTorch 满足了这次申请：第一个 1 GiB 的段一直留在缓存里，之后的每次申请都从它分割出来，释放时碎块又合并回一整块。

**动手试试——先预测：** 改用 `ch2.ChapterSequence("max_split_size_mb:128")` 运行这个序列。768 MiB 的申请刚完成时有几个段？

<details><summary>答案</summary>

四个，每次申请一个，已预留显存远高于默认设置：128 MiB 及以上的块都不分割，所以没有哪次申请是从第一个段里切出来的——依然没有 OOM。
</details>

### 一个真正会产生碎片的序列

> 教材原文：「缓存分配器手里有很多小块，但连续的大块不够。」

这种情况会发生吗？试一个**有存活的小张量把段钉住**的序列。在一个 4 GiB 的设备上跑六个批次：每个批次先申请并释放一个 512 MiB 的激活值（一个长批次），再申请一个 496 MiB 的（一个短一些的批次：它从缓存的 512 MiB 段里分割出来，段末尾剩下 16 MiB 空闲），然后留下一个 16 MiB 的张量（比如记录下来的某个指标），最佳适配正好把它放进那块剩余空间。激活值释放后，缓存里空出六个 496 MiB 的洞——每个洞所在的段都被一个存活张量钉住。接着来一个 1536 MiB 的申请（下面的 `ch2.Request`），比缓存里的空闲显存少：它能得到满足吗？

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
//nb:cell plot
func fragment() {
	l := memlab.MustOpen(memlab.Budget(4 << 30))
	defer l.Close()
	rec := l.Record()                                // _record_memory_history()
	keep := memlab.Must(ch2.Fragmenting.Run(l, rec)) // the six batches of the Python above
	snap := l.Snapshot()
	_, err := tensor.Empty(l, tensor.Uint8, ch2.Request) // 1.5 GiB
	rec.Stop()
	fmt.Println("empty(1.5 GiB):", err)
	memlab.Judge("the caching allocator has plenty of small blocks in hand, but not enough contiguous large ones", memlab.HoldsIf(ch2.TooFragmented(snap, err)), // out of memory, with enough free bytes
		"%s free in the cache, the largest free block %s; the 1.5 GiB request: %s", memlab.FormatBytes(snap.TotalFree()), memlab.FormatBytes(snap.LargestFreeBlock()), memlab.Outcome(err))
	memlab.Show(memplot.SegmentMap("2.3 segments before the 1.5 GiB request", memlab.Segments(snap)))
	memlab.Show(memplot.FragmentationCurve("2.3 free memory in the cache, batch by batch", "", rec.Gauges()))
	memlab.Check(tensor.ReleaseAll(keep...))
}

/*md
The segment map shows six segments, each an orange hole (inactive split: free but
pinned) beside the blue 16 MiB tensor that pins it. The gauge shows how it happened:
while the batches run nothing is free (each small tensor fills its segment's leftover
exactly); freeing the activations opens the holes — total free far above the request,
the largest block far below. Neither `empty_cache()` nor the allocator's own retry can
release a pinned hole. The error message is PyTorch's, with its advice. So the chapter's
picture is right once live tensors pin the segments; its example just lacks them.

**Try it — predict first:** keep 8 MiB tensors instead of 16 MiB: replace the `Run` line
by `w := ch2.Fragmenting; w.Kept = 8 << 20; keep := memlab.Must(w.Run(l, rec))`. Is the
request served?

<details><summary>Answer</summary>

Yes. Each 16 MiB leftover now holds two kept tensors, best fit packs them in pairs, three
of the six segments are left with no kept tensor — whole and releasable — and the request
is served. Fragmentation depends on exactly how the sizes interlock.
</details>
*/

/*md:zh-CN
段分布图上有六个段，每个段里都有一个橙色的洞（非活跃分割块：空闲却被钉住），旁边是钉住它的蓝色 16 MiB 张量。折线图展示了它是怎么形成的：批次运行期间没有任何空闲（每个小张量正好填满所在段的剩余空间）；激活值一释放，洞就出现了——空闲总量远大于申请，最大的空闲块却远小于申请。被钉住的洞，无论是 `empty_cache()` 还是分配器自己的重试，都释放不了。报错信息就是 PyTorch 的原话，连同它给的建议。所以教材描述的现象是真实的，只要有存活张量钉住段；它举的例子恰恰缺了这一点。

**动手试试——先预测：** 把留下的张量从 16 MiB 改成 8 MiB：把 `Run` 那一行换成 `w := ch2.Fragmenting; w.Kept = 8 << 20; keep := memlab.Must(w.Run(l, rec))`。申请能满足吗？

<details><summary>答案</summary>

能。每块 16 MiB 的剩余空间现在能放两个留存张量，最佳适配把它们两两挤在一起，六个段中有三个没有留下任何张量——整段空闲、可以释放——申请得到满足。碎片化取决于各个尺寸如何咬合。
</details>
*/

/*md
### The same history, event by event

PyTorch's viewer of a dumped snapshot (https://pytorch.org/memory_viz, *Allocator State
History*) replays the recorded history into the state after every event. `explore.Show`
does the same for the lab's allocator: the memory curve, with a red line at one event,
beside the segment map after that event. Move the slider to walk through the six batches;
the view opens at the fragmentation peak, the event after which the most memory is free
in segments that also hold live blocks.

```python
torch.cuda.memory._record_memory_history()          # before the six batches
# ... the loop and the 1536 MiB request above ...
torch.cuda.memory._dump_snapshot("fragment.pickle") # drag it into https://pytorch.org/memory_viz
```
*/

/*md:zh-CN
### 同一段历史，逐个事件地看

PyTorch 自带的快照查看器（https://pytorch.org/memory_viz 的 *Allocator State History* 视图）会把录下的历史逐个事件重放，画出每个事件之后的状态。`explore.Show` 对 lab 的分配器做同样的事：左边是显存曲线，红线标出某一个事件；右边是这个事件之后的段分布图。拖动滑块，就能把六个批次一步步走一遍；视图打开时停在碎片峰值，也就是“仍有存活块的段里空闲显存最多”的那个事件之后。

```python
torch.cuda.memory._record_memory_history()          # 在六个批次之前开始记录
# ……上面的循环和 1536 MiB 的申请……
torch.cuda.memory._dump_snapshot("fragment.pickle") # 拖进 https://pytorch.org/memory_viz 查看
```
*/

//nb:cell plot
func fragmentHistory() {
	l := memlab.MustOpen(memlab.Budget(4 << 30))
	defer l.Close()
	l.Allocator().RecordHistory(allocator.HistoryOptions{Enabled: true}) // _record_memory_history()
	keep := memlab.Must(ch2.Fragmenting.Run(l, nil))                     // the six batches
	_, err := tensor.Empty(l, tensor.Uint8, ch2.Request)                 // the 1.5 GiB request
	h := memlab.Must(explore.FromLab("2.3 the fragmenting loop, event by event", l))
	h.Show()
	at := h.FragmentationPeak()
	memlab.Measured("the fragmentation peak is event %d of %d (%s): %s free in segments that also hold live blocks, %s allocated; the 1.5 GiB request: %s",
		at, h.Len(), h.Event(at).Action, memlab.FormatBytes(h.InactiveSplit(at)), memlab.FormatBytes(h.Allocated(at)), memlab.Outcome(err))
	memlab.Check(tensor.ReleaseAll(keep...))
}

/*md
**Try it — predict first:** before you move the slider: does orange (inactive split)
appear while the six batches run, or only after them? Then open the lab with
`memlab.AllocConf("expandable_segments:True")` as a second option of `MustOpen`: at which
event does the view open now, and is the request served?

<details><summary>Answer</summary>

Both. In each batch the 496 MiB activation splits the cached 512 MiB segment and leaves a
16 MiB orange sliver for one event, until the kept tensor fills it. The large holes open
only after the batches, one per freed activation: six `free_completed` events, the orange
growing by 496 MiB at each while reserved memory stays flat, and then the request fails.
With expandable segments nothing is ever inactive split — a free block of an expandable
segment is not pinned, its pages can be unmapped — so the view opens at the reserved
peak (the caption says so); at the end six `segment_unmap` events give the activations'
pages back, and the request is served.
</details>

### "Why is 200 MB free, yet 100 MB cannot be allocated?"

> 教材原文：「2.3 显存碎片化问题：为什么显存还有200MB，却申请不了100MB的Tensor？」「你看着torch.cuda.memory_reserved()显示还剩2GB，但一申请个512MB的Tensor就OOM。」
>
> In translation: "2.3 Fragmentation: why is there still 200 MB of GPU memory, yet a
> 100 MB tensor cannot be allocated?" "You see torch.cuda.memory_reserved() showing 2 GB
> left, yet asking for a 512 MB tensor runs out of memory."

The chapter's title question, at its own sizes: a 1 GiB device, 600 MiB of weights, and
the loop above made smaller (five batches of 50, 40 and a kept 10 MiB), then a 100 MiB
request. Is it refused with 200 MiB free? And what do `memory_reserved()`,
`memory_allocated()` and `mem_get_info()` say at that moment — which of them tells you
what is left?

The device is 1 GiB on every machine. On a GPU, `memlab.Budget(1 << 30)` opens a 1 GiB
budget on the card: it counts a 1 GiB device's CUDA context and every allocation, refuses
what would not fit, and its `mem_get_info()` answers for those 1 GiB, so the cell meets
the same device on a GPU as on the simulator. PyTorch's `set_per_process_memory_fraction`,
in the Python below, is not quite that: it caps what the allocator may reserve, but
`torch.cuda.mem_get_info()` still reports the driver's free memory on the whole card —
not the cap's headroom, which is `fraction × total − memory_reserved()`.

```python
torch.cuda.set_per_process_memory_fraction(2**30 / torch.cuda.mem_get_info()[1])   # a 1 GiB device
weights = torch.empty(600 * MiB, dtype=torch.uint8, device="cuda")
# ... the loop above with 50, 40 and 10 MiB, five batches ...
try:
    torch.empty(100 * MiB, dtype=torch.uint8, device="cuda")
except torch.cuda.OutOfMemoryError as e:
    print(e)                                        # "... X is reserved by PyTorch but unallocated"
print(torch.cuda.memory_reserved(), torch.cuda.memory_allocated(), torch.cuda.mem_get_info()[0])
```
*/

/*md:zh-CN
**动手试试——先预测：** 先别拖滑块：橙色（非活跃分割块）是在六个批次运行期间就出现，还是批次结束之后才出现？然后给 `MustOpen` 加上第二个选项 `memlab.AllocConf("expandable_segments:True")` 再运行：这回视图停在哪个事件？申请能满足吗？

<details><summary>答案</summary>

两者都有。每个批次里，496 MiB 的激活值分割缓存中的 512 MiB 段，留下一条 16 MiB 的橙色窄条，只存在一个事件，随后就被留存的张量填满。大洞要到批次结束之后才出现，每释放一个激活值出现一个：六个 `free_completed` 事件，橙色每次增加 496 MiB，已预留显存却纹丝不动，接着申请失败。用可扩展段时，任何时刻都没有非活跃分割块——可扩展段里的空闲块并没有被钉住，它的页可以解除映射——所以视图停在已预留峰值（说明文字会写明）；最后六个 `segment_unmap` 事件把激活值的页还回去，申请得到满足。
</details>

### “为什么显存还有 200MB，却申请不了 100MB？”

> 教材原文：「2.3 显存碎片化问题：为什么显存还有200MB，却申请不了100MB的Tensor？」「你看着torch.cuda.memory_reserved()显示还剩2GB，但一申请个512MB的Tensor就OOM。」

按教材标题里的尺寸重现这个问题：一个 1 GiB 的设备、600 MiB 的权重，以及缩小了的上述循环（五个批次，50、40 MiB 和留下的 10 MiB），然后申请 100 MiB。有 200 MiB 空闲时，它会被拒绝吗？此刻 `memory_reserved()`、`memory_allocated()` 和 `mem_get_info()` 各说什么——哪一个告诉你还剩多少？

在哪台机器上，这个设备都是 1 GiB。在 GPU 上，`memlab.Budget(1 << 30)` 在卡上开出 1 GiB 的额度：它按 1 GiB 设备的规格计入 CUDA 上下文和每一次分配，放不下的申请就拒绝，它的 `mem_get_info()` 也只回答这 1 GiB 的情况，所以这个单元格在 GPU 上和在模拟设备上遇到的是同一个设备。下面 Python 里 PyTorch 的 `set_per_process_memory_fraction` 与此不完全相同：它限制分配器能预留多少，但 `torch.cuda.mem_get_info()` 报告的仍是驱动眼中整张卡的空闲显存——而不是上限下还剩的余量，后者是 `fraction × total − memory_reserved()`。

```python
torch.cuda.set_per_process_memory_fraction(2**30 / torch.cuda.mem_get_info()[1])   # 模拟 1 GiB 的设备
weights = torch.empty(600 * MiB, dtype=torch.uint8, device="cuda")
# ……上面的循环，改成 50、40 和 10 MiB，五个批次……
try:
    torch.empty(100 * MiB, dtype=torch.uint8, device="cuda")
except torch.cuda.OutOfMemoryError as e:
    print(e)                                        # "... X is reserved by PyTorch but unallocated"
print(torch.cuda.memory_reserved(), torch.cuda.memory_allocated(), torch.cuda.mem_get_info()[0])
```
*/

//nb:cell
func freeButFails() {
	l := memlab.MustOpen(memlab.Budget(1 << 30))
	defer l.Close()
	weights := memlab.Must(tensor.Empty(l, tensor.Uint8, 600<<20))
	keep := memlab.Must(ch2.Workload{Batches: 5, Long: 50 << 20, Short: 40 << 20, Kept: 10 << 20}.Run(l, nil)) // the loop above, smaller
	req, err := tensor.Empty(l, tensor.Uint8, 100<<20)
	fmt.Println(err)
	free, cached := memlab.Must(ch2.DeviceFree(l)), l.MemoryReserved()-l.MemoryAllocated() // mem_get_info()'s free; the cache's
	memlab.Judge("there is still 200 MB free, yet a 100 MB tensor cannot be allocated", memlab.HoldsIf(memlab.IsOutOfMemory(err) && cached >= 2*(100<<20)),
		"the 100 MiB request: %s with %s free in the cache, its largest block %s; mem_get_info() free: %s", memlab.Outcome(err), memlab.FormatBytes(cached), memlab.FormatBytes(l.Snapshot().LargestFreeBlock()), memlab.FormatBytes(free))
	memlab.Judge("memory_reserved() shows how much memory is left", memlab.HoldsIf(l.MemoryReserved() == cached || l.MemoryReserved() == free),
		"memory_reserved() %s, memory_allocated() %s, free in the cache %s, free on the device %s", memlab.FormatBytes(l.MemoryReserved()), memlab.FormatBytes(l.MemoryAllocated()), memlab.FormatBytes(cached), memlab.FormatBytes(free))
	memlab.Check(tensor.ReleaseLive(append(keep, weights, req)...))
}

/*md
PyTorch's out-of-memory message states the chapter's "200 MB free" exactly: it is the
memory *reserved by PyTorch but unallocated*. The second sentence misreads
`memory_reserved()`: it is not what is left but what the allocator holds — live tensors
included. What is free in the cache is `memory_reserved() - memory_allocated()`; what is
free on the device is `mem_get_info()`. Reading `memory_reserved()` as free memory would
have promised far more than the 100 MiB; the cache's free memory covers the request too,
but in blocks smaller than it, each in a segment a kept tensor pins; and the device has no
room for a new segment.

**Try it — predict first:** release the weights before the request
(`memlab.Check(weights.Release())` above the `tensor.Empty` line). Served?

<details><summary>Answer</summary>

Yes: the weights' 600 MiB segment is then free, and best fit cuts the request from it —
`memory_reserved()` does not move. The holes are still there, but they are no longer all
the free memory there is.
</details>
*/

/*md:zh-CN
PyTorch 的 OOM 报错信息把教材说的“还有 200MB”讲得很准确：那是 *reserved by PyTorch but unallocated*（已被 PyTorch 预留、却没有分配出去）的显存。第二句话误读了 `memory_reserved()`：它不是剩下多少，而是分配器手里有多少——包括存活张量占着的部分。缓存里空闲的是 `memory_reserved() - memory_allocated()`；设备上空闲的是 `mem_get_info()`。把 `memory_reserved()` 当成空闲显存，会以为远不止 100 MiB；缓存里空闲的显存总量也够这次申请，但都是比它小的块，每块所在的段都被一个留存张量钉住；设备上又没有空间再建一个新段。

**动手试试——先预测：** 在申请之前释放权重（在 `tensor.Empty` 那一行之前加上 `memlab.Check(weights.Release())`）。能满足吗？

<details><summary>答案</summary>

能：权重那个 600 MiB 的段这时空闲了，最佳适配直接从它里面切出这次申请——`memory_reserved()` 纹丝不动。空洞还在，但已不是仅有的空闲显存了。
</details>
*/

/*md
### What `memory_summary()` says about it

> 教材原文：「用torch.cuda.memory_summary()查看碎片情况：它会列出所有缓存块的状态。」
>
> In translation: "Use torch.cuda.memory_summary() to look at fragmentation: it lists the
> state of every cached block."

(This is the fragmenting loop of six batches again.) Below, PyTorch's report and then
`torch.cuda.memory_snapshot()`, block by block. Does the report show the fragmentation?
Does it list the blocks?

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
### `memory_summary()` 怎么说

> 教材原文：「用torch.cuda.memory_summary()查看碎片情况：它会列出所有缓存块的状态。」

（这里又是那个六个批次、会产生碎片的循环。）下面先是 PyTorch 的这份报告，然后是逐块列出的 `torch.cuda.memory_snapshot()`。报告能反映碎片化吗？它列出各个块了吗？

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
	keep := memlab.Must(ch2.Fragmenting.Run(l, nil))
	_, err := tensor.Empty(l, tensor.Uint8, ch2.Request)
	fmt.Println(err)                         // PyTorch's out-of-memory message
	l.ShowSummary()                          // print(torch.cuda.memory_summary()): totals
	fmt.Println(memlab.Blocks(l.Snapshot())) // torch.cuda.memory_snapshot(): every block
	st, snap := l.MemoryStats(), l.Snapshot()
	blocks, free := memlab.CountBlocks(snap)
	memlab.Measured("inactive_split_bytes %s of reserved %s; %d out-of-memory error, %d allocator retry",
		memlab.FormatBytes(st["inactive_split_bytes.all.current"]), memlab.FormatBytes(st["reserved_bytes.all.current"]),
		st["num_ooms"], st["num_alloc_retries"])
	shows := st["inactive_split_bytes.all.current"] > 0 && strings.Contains(l.MemorySummary(), "Non-releasable memory")
	named := ch2.BlocksNamed(l.MemorySummary(), snap) // blocks the report names by address
	memlab.Judge("memory_summary() lists the state of every cached block", memlab.HoldsPartly(shows, named == blocks),
		"memory_summary() shows the non-releasable bytes: %v, and names %d of the %d blocks (%d free) that memory_snapshot() lists",
		shows, named, blocks, free)
	memlab.Check(tensor.ReleaseAll(keep...))
}

/*md
PyTorch's report does show the fragmentation, but as totals — it lists no block. Read
*Non-releasable memory*: it is the inactive split bytes, free yet impossible to give back.
The block-by-block list is `torch.cuda.memory_snapshot()`, which the segment maps above draw.

**Try it — predict first:** call `memlab.Check(l.EmptyCache())` before `l.ShowSummary()`. Does *Non-releasable memory* go down?

<details><summary>Answer</summary>

No: `inactive_split_bytes` stays where it was. `empty_cache()` releases only whole free segments, and every free block here shares its segment with a live tensor.
</details>

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

and, from 2.2, `max_split_size_mb` — with `expandable_segments`, the setting PyTorch's own
out-of-memory message above recommends. Each remedy below is one cell: the workload of
the Python above (`ch2.Fragmenting`) in a 4 GiB lab, changed as the remedy says, then the
1536 MiB request: which of them serve it? What decides the request is how the free memory lies: *releasable*
(whole free segments, which the allocator gives back and re-requests as one, or free
pages of an expandable segment, which it unmaps), *pinned in split blocks*
(`inactive_split_bytes`, useless for a larger request) and room on the device.

#### Pre-allocation

The activations' 512 MiB buffer is made before training, and every batch's activations
are views of it, reused: the allocator never sees them. Is the request served, and at
what peak?

```python
buf = torch.empty(512 * MiB, dtype=torch.uint8, device="cuda")   # the placeholder, before training
for _ in range(6):
    long = buf[:512 * MiB]                          # a view: no allocation
    act = buf[:496 * MiB]
    keep.append(torch.empty(16 * MiB, dtype=torch.uint8, device="cuda"))
torch.empty(1536 * MiB, dtype=torch.uint8, device="cuda")
print(torch.cuda.max_memory_reserved(), torch.cuda.memory_stats()["num_device_alloc"])
```
*/

/*md:zh-CN
PyTorch 的这份报告确实能反映碎片化，但给的是汇总数字，并不逐块列出。看 *Non-releasable memory*（不可释放显存）一行：它就是非活跃分割块的字节数，空闲却还不回去。逐块的清单要用 `torch.cuda.memory_snapshot()`，上面的段分布图画的就是它。

**动手试试——先预测：** 在 `l.ShowSummary()` 之前调用 `memlab.Check(l.EmptyCache())`。*Non-releasable memory* 会下降吗？

<details><summary>答案</summary>

不会：`inactive_split_bytes` 纹丝不动。`empty_cache()` 只能释放整段空闲的段，而这里的每个空闲块都和一个存活张量共处一段。
</details>

### 缓解办法，逐一实测

教材给出的头两个办法：

> 教材原文：「预分配大块：训练前先创建几个大Tensor占位，用完再复用。」

> 教材原文：「统一Tensor大小：尽量让batch size、特征图尺寸保持一致。」

再加上 2.2 讲过的 `max_split_size_mb`，以及上面 PyTorch 自己的 OOM 报错信息所推荐的 `expandable_segments`。下面每种办法一个单元格：在 4 GiB 的 lab 里运行上面 Python 代码里的工作负载（`ch2.Fragmenting`），按这种办法改动，然后发出 1536 MiB 的申请：哪几种办法能满足它？申请能否成功，取决于空闲显存处在什么状态：*可释放*（整段空闲的段，分配器把它们还回去，再作为一整块重新申请；或者可扩展段中的空闲页，分配器把它们解除映射）、*钉死在分割块里*（`inactive_split_bytes`，对更大的申请毫无用处），以及设备上剩余的空间。

#### 预分配 (pre-allocation)

训练前先建好激活值用的 512 MiB 缓冲区，每个批次的激活值都是它的视图，反复复用：分配器根本看不到它们。申请能得到满足吗？峰值是多少？

```python
buf = torch.empty(512 * MiB, dtype=torch.uint8, device="cuda")   # 占位张量，训练前建好
for _ in range(6):
    long = buf[:512 * MiB]                          # 视图：不分配显存
    act = buf[:496 * MiB]
    keep.append(torch.empty(16 * MiB, dtype=torch.uint8, device="cuda"))
torch.empty(1536 * MiB, dtype=torch.uint8, device="cuda")
print(torch.cuda.max_memory_reserved(), torch.cuda.memory_stats()["num_device_alloc"])
```
*/

//nb:cell plot
func preAllocation() {
	l := memlab.MustOpen(memlab.Budget(4 << 30))
	defer l.Close()
	w := ch2.Fragmenting                                           // the workload above
	w.Buffer = memlab.Must(tensor.Empty(l, tensor.Uint8, 512<<20)) // the placeholder, made before training
	keep := memlab.Must(w.Run(l, nil))                             // every activation is a view of w.Buffer
	req, err := tensor.Empty(l, tensor.Uint8, ch2.Request)
	memlab.Judge("pre-allocating large placeholder tensors before training and reusing them relieves fragmentation", memlab.HoldsIf(err == nil),
		"the 1.5 GiB request after the six batches: %s; peak reserved %s; cudaMalloc calls: %d",
		memlab.Outcome(err), memlab.FormatBytes(l.MaxMemoryReserved()), l.MemoryStats()["num_device_alloc"])
	memlab.Show(memplot.SegmentMap("2.3 pre-allocation: the segments after the request", l.Segments()))
	memlab.Check(tensor.ReleaseAll(append(keep, w.Buffer, req)...))
}

/*md
The buffer's segment is in use from the first batch to the last; the kept tensors sit in
segments of their own, and the request gets a new one.

**Try it — predict first:** make the request 3 GiB (`3 << 30` in place of `ch2.Request`).
Is it served?

<details><summary>Answer</summary>

No: the buffer, the kept tensors and the CUDA context leave less than 3 GiB of the 4 GiB
device, and nothing cached can be released — the Measured line says "out of memory".
Pre-allocation removes the fragmentation, not the need for room.
</details>

#### Uniform sizes

Every activation is 512 MiB (`w.Short = 512 << 20`; in the Python, `496` becomes `512`).
Is anything split now, and is the request served?
*/

/*md:zh-CN
缓冲区所在的段从第一个批次到最后一个批次一直在用；留下的张量待在各自的段里，申请则得到一个新段。

**动手试试——先预测：** 把申请改成 3 GiB（用 `3 << 30` 代替 `ch2.Request`）。能满足吗？

<details><summary>答案</summary>

不能：缓冲区、留下的张量和 CUDA 上下文占去之后，4 GiB 的设备剩下的不到 3 GiB，缓存里也没有可以释放的东西——实测一行会显示 “out of memory”。预分配消除的是碎片，而不是对空间的需求。
</details>

#### 统一尺寸 (uniform sizes)

每个激活值都是 512 MiB（`w.Short = 512 << 20`；在 Python 里把 `496` 改成 `512`）。现在还有块被分割吗？申请能得到满足吗？
*/

//nb:cell
func uniformSizes() {
	l := memlab.MustOpen(memlab.Budget(4 << 30))
	defer l.Close()
	w := ch2.Fragmenting
	w.Short = 512 << 20 // every activation the same size
	keep := memlab.Must(w.Run(l, nil))
	req, err := tensor.Empty(l, tensor.Uint8, ch2.Request)
	memlab.Judge("keeping tensor sizes uniform relieves fragmentation", memlab.HoldsIf(err == nil),
		"the 1.5 GiB request after the six batches: %s; peak reserved %s; cudaMalloc calls: %d",
		memlab.Outcome(err), memlab.FormatBytes(l.MaxMemoryReserved()), l.MemoryStats()["num_device_alloc"])
	memlab.Check(tensor.ReleaseAll(append(keep, req)...))
}

/*md
Each batch reuses the cached 512 MiB segment whole, so nothing is split, and no kept
tensor shares a segment with an activation.

**Try it — predict first:** make the activations *almost* uniform, `w.Short = 508 << 20`.
Served?

<details><summary>Answer</summary>

Yes. A 508 MiB activation still splits the cached 512 MiB segment, but the 4 MiB it leaves
is too small for the 16 MiB kept tensor, so the kept tensors get segments of their own and
nothing live shares a segment with an activation: freed, the 512 MiB segments are whole
and releasable. What pins a hole is a live tensor in the same segment — fragmentation
depends on how the sizes interlock.
</details>

#### `max_split_size_mb`

PyTorch reads `PYTORCH_CUDA_ALLOC_CONF` once, when CUDA starts (the cell shows it below, in
2.4), so each value is a run of its own: `PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:256
python train.py`. In memlab the setting is given when the lab opens. 2.2 quoted the
chapter's advice, `max_split_size_mb:32` "to reduce fragmentation", and found that it
raises the peak of the chapter's sequence; on this workload, which really fragments, is
the request served under 256, and under the chapter's 32?
*/

/*md:zh-CN
每个批次都整块复用缓存里的 512 MiB 段，什么也不会被分割，也没有留存张量和激活值共处一段。

**动手试试——先预测：** 把激活值改成*几乎*一样大，`w.Short = 508 << 20`。能满足吗？

<details><summary>答案</summary>

能。508 MiB 的激活值照样会分割缓存里的 512 MiB 段，但剩下的 4 MiB 放不下 16 MiB 的留存张量，于是留存张量各自占了独立的段，没有任何存活张量和激活值共处一段：激活值释放后，512 MiB 的段整段空闲、可以释放。钉住空洞的是同一段里的存活张量——碎片化取决于各个尺寸如何咬合。
</details>

#### `max_split_size_mb`

PyTorch 只在 CUDA 初始化时读一次 `PYTORCH_CUDA_ALLOC_CONF`（下面 2.4 的单元格会演示这一点），所以每个取值都要单独跑一次：`PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:256 python train.py`。在 memlab 里，这个设置在打开 lab 时给出。2.2 引用了教材的建议——设成 `max_split_size_mb:32` “能减少碎片化”——并发现它抬高了教材序列的峰值；在这个真正会产生碎片的负载上，设成 256、设成教材的 32，申请能得到满足吗？
*/

//nb:cell plot
func maxSplitRemedy() {
	outs := memlab.Must(ch2.TryAll(ch2.Fragmented, // each in a 4 GiB lab opened with its setting: the workload, then the request
		ch2.Remedy{Name: "max_split_size_mb:256", Conf: "max_split_size_mb:256"},
		ch2.Remedy{Name: "max_split_size_mb:32", Conf: "max_split_size_mb:32"})) // the chapter's advice
	ch2.Table(outs).Show()
	memlab.Judge("setting max_split_size_mb:32 reduces fragmentation", memlab.HoldsIf(outs[2].Err == nil && outs[0].Err != nil),
		"the 1.5 GiB request after the six batches: %s with the defaults, %s with max_split_size_mb:32",
		memlab.Outcome(outs[0].Err), memlab.Outcome(outs[2].Err))
	memlab.Show(memplot.SegmentMap("2.3 segments before the request: max_split_size_mb:256", memlab.Segments(outs[1].Snapshot)))
}

/*md
The segment map shows why it works: large segments are never split, so the small tensors
sit in segments of their own and every 512 MiB segment is wholly free — released and
re-requested as one under pressure.

**Try it — predict first:** add `ch2.Remedy{Name: "max_split_size_mb:600", Conf: "max_split_size_mb:600"}` to the list. Served?

<details><summary>Answer</summary>

No: the 512 MiB segments are now *below* the limit, so they are split as with the
defaults and the request fails again. The limit must be below the segments you want kept
whole.
</details>

#### Expandable segments

`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`: one growing segment mapped page by
page (2 MiB pages on a GPU, 20 MiB here for the large pool); free pages are unmapped when
the device runs short.
*/

/*md:zh-CN
段分布图说明了它为什么管用：大段从不分割，所以小张量待在各自的段里，每个 512 MiB 的段都是整段空闲——显存紧张时整段释放、再作为一整块重新申请。

**动手试试——先预测：** 在列表里加上 `ch2.Remedy{Name: "max_split_size_mb:600", Conf: "max_split_size_mb:600"}`。能满足吗？

<details><summary>答案</summary>

不能：512 MiB 的段现在*低于*上限，于是像默认设置一样被分割，申请再次失败。上限必须低于你想保持完整的那些段的大小。
</details>

#### 可扩展段 (expandable segments)

`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`：一个按页映射、不断增长的段；设备显存不够时，空闲的页会被解除映射。
*/

//nb:cell
func expandableRemedy() {
	l := memlab.MustOpen(memlab.Budget(4<<30), memlab.AllocConf("expandable_segments:True"))
	defer l.Close()
	keep := memlab.Must(ch2.Fragmenting.Run(l, nil))
	req, err := tensor.Empty(l, tensor.Uint8, ch2.Request)
	memlab.Measured("%s: the 1.5 GiB request: %s; peak reserved %s; cudaMalloc calls: %d", "expandable_segments:True",
		memlab.Outcome(err), memlab.FormatBytes(l.MaxMemoryReserved()), l.MemoryStats()["num_device_alloc"])
	memlab.Check(tensor.ReleaseAll(append(keep, req)...))
}

/*md
**Try it — predict first:** ask for 3 GiB instead (`3 << 30`). Served?

<details><summary>Answer</summary>

Yes: the free pages the activations left are unmapped, and the whole device but the kept
tensors and the CUDA context is there for the request. Ask for `3584 << 20` (3584 MiB)
and it fails: a 4 GiB device has no such room, however the memory lies.
</details>

#### All the remedies side by side

The same six runs, one row each (`ch2.Remedies`), with where the free memory lay before
the request and what each remedy cost.
*/

/*md:zh-CN
**动手试试——先预测：** 改成申请 3 GiB（`3 << 30`）。能满足吗？

<details><summary>答案</summary>

能：激活值留下的空闲页被解除映射，除了留存的张量和 CUDA 上下文，整个设备都可以用来满足这次申请。改成申请 `3584 << 20`（3584 MiB）就会失败：不管显存怎样分布，4 GiB 的设备都没有这么多空间。
</details>

#### 各种办法放在一起比较

同样的六次运行，每次一行（`ch2.Remedies`），列出申请之前空闲显存处在什么状态，以及每种办法的代价。
*/

//nb:cell plot
func remedies() {
	outs := memlab.Must(ch2.TryAll(ch2.Remedies...))
	ch2.Table(outs).Show()
	frag := outs[0] // no remedy
	memlab.Measured("the fragmented run: the request %s, %s pinned in split blocks and %s releasable",
		memlab.Outcome(frag.Err), memlab.FormatBytes(frag.Pinned), memlab.FormatBytes(frag.Releasable))
	for _, o := range outs[1:] {
		memlab.Measured("%s: the request %s; peak reserved %s against the fragmented run's %s; cudaMalloc calls: %d against %d",
			o.Name, memlab.Outcome(o.Err), memlab.FormatBytes(o.Peak), memlab.FormatBytes(frag.Peak), o.Allocs, frag.Allocs)
	}
	memlab.Show(ch2plot.Remedies(outs))
}

/*md
Only the fragmented run fails: the chapter's remedies all work on this workload. With
uniform sizes or `max_split_size_mb` the free memory lies in whole segments, which the
allocator releases and re-requests as one; with expandable segments the holes are
unmapped page by page; with pre-allocation the activations never reach the allocator, so
nothing is split and nothing is left to release. Each remedy's price is in the last two
columns, against the fragmented run's: the Measured lines under the table compare them one
by one — the remedies that release and re-request whole segments pay most in `cudaMalloc`
calls, and pre-allocation has the lowest reserved peak.

**Try it — predict first:** combine two remedies, `ch2.TryAll(append(ch2.Remedies,
ch2.Remedy{Name: "uniform + expandable", Short: 512 << 20, Conf: "expandable_segments:True"})...)`.
Does the combination make fewer `cudaMalloc` calls than expandable segments alone?

<details><summary>Answer</summary>

No: its row makes about as many calls as uniform sizes alone, more than expandable
segments alone. Remedies do not add up; pick the one that matches how your memory lies.
</details>
*/

/*md:zh-CN
只有碎片化的那次运行失败：教材的几种办法在这个负载上都管用。统一尺寸或设置 `max_split_size_mb` 时，空闲显存都是整段的，分配器把它们释放掉，再作为一整块重新申请；用可扩展段时，洞被逐页解除映射；预分配时激活值根本到不了分配器，没有块被分割，也就没有什么需要释放。每种办法的代价在表格最后两列，要和碎片化那次运行比：表格下面的“实测”行逐一比较——靠释放整段再重新申请的办法，多付出的 `cudaMalloc` 调用最多；预分配的已预留峰值最低。

**动手试试——先预测：** 把两种办法合起来：`ch2.TryAll(append(ch2.Remedies, ch2.Remedy{Name: "uniform + expandable", Short: 512 << 20, Conf: "expandable_segments:True"})...)`。合起来之后，`cudaMalloc` 调用会比单用可扩展段更少吗？

<details><summary>答案</summary>

不会：新的一行调用次数和单用统一尺寸差不多，比单用可扩展段更多。几种办法的效果并不能叠加；要选和你的显存分布情况相符的那一种。
</details>
*/

/*md
### The chapter's multi-scale model

> 教材原文：「避坑指南：我曾经在训练一个多尺度模型时，每步都创建不同分辨率的特征图，结果显存碎片化严重，训练到一半就OOM。后来改成预分配固定大小的缓冲区，问题解决。」
>
> In translation: "A pitfall: once, training a multi-scale model, I created feature maps
> of a different resolution at every step; GPU memory fragmented badly and training ran
> out of memory halfway. Switching to pre-allocated fixed-size buffers solved it."

memlab ships such a run: a ResNet trained on inputs whose resolution changes from step to
step, recorded on an H200 under PyTorch 2.11 (`reference/workloads-2.11/`, the snapshot
notebook 05 explains). The what-if replays its allocation history under other allocator
settings and says, for each, the reserved peak and the smallest device it trains on
without running out of memory; beside each, PyTorch's own peak, measured in a run of the
same program under that setting. The chapter's own fix, fixed-size buffers, changes the
program, so no replay can try it: the cells above tried it on the fragmenting loop. Does
the replay bear the story out — a cache fragmented badly, and a device the defaults run
out of memory on that another setting trains on?

```python
# PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python train_multiscale.py
torch.cuda.memory._record_memory_history(max_entries=1_000_000)
for step, size in enumerate(sizes):                 # a new resolution every step
    loss = model(torch.randn(batch, 3, size, size, device="cuda")).sum()
    loss.backward(); opt.step(); opt.zero_grad()
torch.cuda.memory._dump_snapshot("resnet_multiscale_train.pickle")
print(torch.cuda.memory_stats()["reserved_bytes.all.peak"])
```
*/

/*md:zh-CN
### 教材里的多尺度模型

> 教材原文：「避坑指南：我曾经在训练一个多尺度模型时，每步都创建不同分辨率的特征图，结果显存碎片化严重，训练到一半就OOM。后来改成预分配固定大小的缓冲区，问题解决。」

memlab 附带了这样一次运行：一个 ResNet，每一步输入的分辨率都不同，在 H200 上用 PyTorch 2.11 录下（`reference/workloads-2.11/`，笔记本 05 会详细介绍这种快照）。what-if 在其他分配器设置下重放它的分配历史，对每种设置给出已预留峰值，以及不发生 OOM 所需的最小设备；每个数字旁边是 PyTorch 自己的峰值——同一个程序在那种设置下实际跑一遍测得的。教材自己的解决办法（固定大小的缓冲区）改的是程序本身，重放无法尝试它：上面的单元格已经在那个会产生碎片的循环上试过了。重放能印证这个故事吗——缓存碎片化严重，而且存在一个默认设置会 OOM、换一种设置却能训练下去的设备？

```python
# PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python train_multiscale.py
torch.cuda.memory._record_memory_history(max_entries=1_000_000)
for step, size in enumerate(sizes):                 # 每一步换一种分辨率
    loss = model(torch.randn(batch, 3, size, size, device="cuda")).sum()
    loss.backward(); opt.step(); opt.zero_grad()
torch.cuda.memory._dump_snapshot("resnet_multiscale_train.pickle")
print(torch.cuda.memory_stats()["reserved_bytes.all.peak"])
```
*/

//nb:cell plot
func multiScale() {
	s := memlab.Must(ch2.Snapshot(ch2.MultiScale, "default")) // recorded under the defaults
	settings := memlab.Must(whatif.ParseSettings("", "expandable_segments:True", "max_split_size_mb:128", "roundup_power2_divisions:4"))
	res := memlab.Must(whatif.Replay(s, settings, whatif.Options{}))
	memlab.TableOf(res).Without("cudaFree", "retries", "OOMs").Show() // the counts that are zero in every row left out
	def, smallest := res.Runs[0], make([]int64, len(res.Runs))
	for i, r := range res.Runs {
		torch := memlab.Must(ch2.PyTorchStats(ch2.MultiScale, ch2.Tag(r.Setting.Conf.String()))) // PyTorch's run under r's setting
		smallest[i] = memlab.Must(whatif.MinCap(s, r.Setting, whatif.Options{}))
		memlab.Measured("%s: peak reserved %s (PyTorch measured %s), %+.1f %% against the defaults; the smallest device it trains on: %s",
			r.Setting.Label(), memlab.FormatBytes(r.MaxReserved), memlab.FormatBytes(torch["reserved_bytes.all.peak"]),
			100*float64(r.MaxReserved-def.MaxReserved)/float64(def.MaxReserved), memlab.FormatBytes(smallest[i]))
	}
	above := func(a, b int64) float64 { return 100 * float64(a-b) / float64(b) } // a's excess over b, in %
	exp := res.Runs[1]                                                           // expandable segments: no fragmentation
	memlab.Judge("changing resolutions at every step fragmented memory badly, and training ran out of memory halfway",
		memlab.HoldsPartly(above(def.MaxReserved, exp.MaxReserved) > 10, above(smallest[0], smallest[1]) > 10),
		"the defaults' peak reserved is %.1f %% above expandable segments', the smallest device the defaults train on %.1f %% above theirs",
		above(def.MaxReserved, exp.MaxReserved), above(smallest[0], smallest[1]))
	memlab.Show(memplot.Compare("2.3 multi-scale ResNet training: reserved and allocated under four settings", res))
}

/*md
The chapter's story holds in part: changing resolutions leave the defaults' cache a large
gap between reserved and allocated memory (the table's `peak inactive split`), and
expandable segments close most of it. But read the last figure of each line: under
pressure the allocator frees its cached segments and retries before it gives up, so the
smallest device each setting trains on differs far less than the reserved peaks do. On a
device between the expandable and the default figure, the defaults run out of memory
"halfway" and expandable segments train; `max_split_size_mb:128`, the chapter's 2.2
advice, raises the peak here.

**Try it — predict first:** add `"max_split_size_mb:64,garbage_collection_threshold:0.6"`
to the settings (PyTorch recorded that run too, under a cap). Will its reserved peak be
below the defaults'?

<details><summary>Answer</summary>

No — its reserved peak is the highest of all. `garbage_collection_threshold` is a share
of the cap set with `set_per_process_memory_fraction`; with no cap in the replay it never
acts, and `max_split_size_mb:64` alone keeps more, whole segments. The "PyTorch measured"
figure on its line is far lower because PyTorch's run of that setting had a cap: a
setting's figures hold for the cap they were measured under.
</details>
*/

/*md:zh-CN
教材讲的现象部分属实：分辨率不断变化，让默认设置下的缓存在已预留和已分配之间留下很大的差距（表中的 `peak inactive split`），可扩展段能消除其中大部分。但请看每一行的最后一个数：显存紧张时，分配器会先释放缓存的段并重试，实在不行才放弃，所以各种设置所需的最小设备之间的差别，远小于已预留峰值之间的差别。设备大小介于可扩展段和默认设置这两个数之间时，默认设置会“训练到一半就 OOM”，可扩展段则能训练下去；而教材在 2.2 建议的 `max_split_size_mb:128` 在这里反而抬高了峰值。

**动手试试——先预测：** 在设置列表里加上 `"max_split_size_mb:64,garbage_collection_threshold:0.6"`（PyTorch 也录下了这种设置的运行，带显存上限）。它的已预留峰值会低于默认设置吗？

<details><summary>答案</summary>

不会——它的已预留峰值是所有设置里最高的。`garbage_collection_threshold` 是相对于 `set_per_process_memory_fraction` 所设上限的一个比例；重放里没有上限，它就根本不起作用，单靠 `max_split_size_mb:64` 只会留住更多完整的段。它那一行“PyTorch 实测”的数字低得多，是因为 PyTorch 跑这种设置时设了上限：一种设置的数字，只对测量时的那个上限成立。
</details>
*/

/*md
### Summary

- Fragmentation is free memory that cannot serve a request: free blocks smaller than the
  request, each in a segment that a live tensor pins (`inactive_split_bytes`, the
  *Non-releasable memory* of `memory_summary()`). Allocating and freeing sizes in turn
  does not cause it; live small tensors beside the holes do.
- The out-of-memory message says how much is "reserved by PyTorch but unallocated";
  `memory_reserved()` is what the allocator holds, not what is left.
- Every remedy of the chapter works on a workload that fragments — pre-allocation, uniform
  sizes, `max_split_size_mb`, expandable segments — each at its own price in reserved
  memory or `cudaMalloc` calls.

**For discussion**

1. Your training loop keeps a 4 MiB tensor of metrics each step and runs out of memory
   after hours with gigabytes "reserved but unallocated". Which remedy would you try first,
   and what would you look for in a memory snapshot before choosing?
2. Why does `empty_cache()` not help against fragmentation, while expandable segments do?
3. The multi-scale replay shows reserved peaks differing far more than the smallest
   device each setting trains on. Which of the two figures should decide what GPU to buy?
*/

/*md:zh-CN
### 小结

- 碎片就是无法满足申请的空闲显存：空闲块都比申请小，而且各自所在的段都被一个存活张量钉住（`inactive_split_bytes`，即 `memory_summary()` 里的 *Non-releasable memory*）。轮流申请、释放不同大小本身不会造成碎片；空洞旁边存活的小张量才会。
- OOM 报错信息会说明有多少显存 “reserved by PyTorch but unallocated”；`memory_reserved()` 是分配器手里有多少，而不是还剩多少。
- 在真正会产生碎片的负载上，教材的每种办法都管用——预分配、统一尺寸、`max_split_size_mb`、可扩展段——各自以已预留显存或 `cudaMalloc` 调用为代价。

**讨论**

1. 你的训练循环每一步都留下一个 4 MiB 的指标张量，跑了几个小时后 OOM，报错说有好几 GB “reserved but unallocated”。你会先试哪种办法？选之前要在显存快照里找什么？
2. 为什么 `empty_cache()` 对付不了碎片，可扩展段却可以？
3. 多尺度重放显示，各种设置的已预留峰值相差很大，而各自所需的最小设备相差很小。决定买哪块 GPU 时，该看哪一个数？
*/
