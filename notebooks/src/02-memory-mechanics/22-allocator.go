package nb02

import (
	"fmt"
	"os"

	"memlab.dev/memlab/experiments/ch2"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/tensor"
)

/*md
## 2.2 The caching allocator (缓存分配器)

Allocating device memory (`cudaMalloc`) is slow and synchronising, so PyTorch keeps
what it gets: a released tensor's block goes back to the allocator's cache, not to the
device. Three numbers follow from that: **allocated** (live tensors' blocks),
**reserved** (all segments the allocator holds) and **driver-used** (what `nvidia-smi`
shows: reserved plus the CUDA context and other processes).

The chapter says `memory_allocated()` does not drop after `del`:

> 教材原文：「明明把Tensor删了，torch.cuda.memory_allocated()显示显存没降。」
>
> In translation: "You did delete the tensor, yet torch.cuda.memory_allocated() shows
> that memory has not gone down."

and Chapter 4 that the caching allocator pre-allocates one big block up front:

> 教材原文：「它会预先申请一大块显存，然后按需分配给张量，用完不立即释放，而是放回池子里复用。」（第 4 章）
>
> In translation (Chapter 4): "It requests a big block of GPU memory in advance, hands it
> out to tensors as needed, and after use does not free it at once but puts it back in
> the pool for reuse."

Predict three numbers before you run the cell: `memory_reserved()` before any tensor,
`memory_allocated()` right after `del x`, and the number of `cudaMalloc` calls once `y`,
the same size as `x`, has been allocated.

```python
MiB = 2**20
print(torch.cuda.memory_reserved())                 # before any tensor
x = torch.empty(256 * MiB, dtype=torch.uint8, device="cuda")
del x
print(torch.cuda.memory_allocated(), torch.cuda.memory_reserved())
y = torch.empty(256 * MiB, dtype=torch.uint8, device="cuda")   # the same size again
del y
print(torch.cuda.memory_stats()["num_device_alloc"])           # cudaMalloc calls so far
torch.cuda.empty_cache()
free, total = torch.cuda.mem_get_info()
print(total - free)                                 # the driver's count, as nvidia-smi shows it
```
*/

/*md:zh-CN
## 2.2 缓存分配器 (caching allocator)

向设备申请显存（`cudaMalloc`）又慢又会引起同步，所以 PyTorch 拿到的显存就不再轻易交出：释放的张量所占的块回到分配器的缓存里，而不是还给设备。由此有三个数：**已分配** (allocated，存活张量占用的块)、**已预留** (reserved，分配器手里的全部段) 和**驱动占用** (driver-used，即 `nvidia-smi` 显示的数：已预留显存加上 CUDA 上下文和其他进程)。

教材说 `del` 之后 `memory_allocated()` 不会下降：

> 教材原文：「明明把Tensor删了，torch.cuda.memory_allocated()显示显存没降。」

第 4 章则说缓存分配器会先申请一大块显存：

> 教材原文：「它会预先申请一大块显存，然后按需分配给张量，用完不立即释放，而是放回池子里复用。」（第 4 章）

运行单元格之前先预测三个数：还没有任何张量时的 `memory_reserved()`，`del x` 刚执行完时的 `memory_allocated()`，以及分配完和 `x` 一样大的 `y` 之后 `cudaMalloc` 的调用次数。

```python
MiB = 2**20
print(torch.cuda.memory_reserved())                 # 还没有任何张量
x = torch.empty(256 * MiB, dtype=torch.uint8, device="cuda")
del x
print(torch.cuda.memory_allocated(), torch.cuda.memory_reserved())
y = torch.empty(256 * MiB, dtype=torch.uint8, device="cuda")   # 同样大小再来一次
del y
print(torch.cuda.memory_stats()["num_device_alloc"])           # 到目前为止的 cudaMalloc 次数
torch.cuda.empty_cache()
free, total = torch.cuda.mem_get_info()
print(total - free)                                 # 驱动占用，即 nvidia-smi 看到的数
```
*/

//nb:cell plot
func allocatedVsReserved() {
	l := memlab.MustOpen()
	defer l.Close()
	steps := l.Steps()
	start := steps.Add("start")
	x := memlab.Must(tensor.Empty(l, tensor.Uint8, 256<<20)) // 256 MiB
	first := steps.Add("x = empty(256 MiB)")
	memlab.Check(x.Release())
	afterDel := steps.Add("del x")
	y := memlab.Must(tensor.Empty(l, tensor.Uint8, 256<<20))
	steps.Add("y = empty(256 MiB)")
	memlab.Check(y.Release())
	steps.Add("del y")
	memlab.Check(l.EmptyCache())
	steps.Add("empty_cache()")
	steps.Table().Show()
	memlab.Judge("after del, memory_allocated() does not go down", memlab.HoldsIf(afterDel.Allocated >= first.Allocated),
		"memory_allocated %s after x, %s after del x; memory_reserved %s after del x", memlab.FormatBytes(first.Allocated),
		memlab.FormatBytes(afterDel.Allocated), memlab.FormatBytes(afterDel.Reserved))
	memlab.Judge("the allocator requests a big block in advance and puts freed blocks back in the pool for reuse",
		memlab.HoldsPartly(start.Reserved > 0, steps.Last().DeviceAllocs == first.DeviceAllocs),
		"reserved before any tensor: %s, after x: %s; cudaMalloc calls after x: %d, after y: %d", memlab.FormatBytes(start.Reserved),
		memlab.FormatBytes(first.Reserved), first.DeviceAllocs, steps.Last().DeviceAllocs)
	memlab.Show(memplot.Curve("2.2 allocated, reserved and driver-used memory", steps))
}

/*md
`del` gives the block back to the cache at once, so `memory_allocated()` drops; it is
`memory_reserved()` that stays up (the chapter's 8 GB in `nvidia-smi`). Nothing is
reserved until the first tensor asks, and then only a segment sized for that request;
the end of Chapter 4's sentence is right: the freed block stays in the pool and `y` reuses
it. The driver's count does not start at zero: the CUDA context is there before any
tensor. `empty_cache()` gave the cached 256 MiB segment back (the last row).

**Try it — predict first:** allocate `y` 300 MiB instead of 256. How many cudaMalloc calls now, and where does reserved memory peak?

<details><summary>Answer</summary>

Two calls: the cached 256 MiB segment is too small, so the allocator makes a second segment, and reserved memory peaks at their sum. The second verdict turns to "does not hold": nothing was reused.
</details>

### Does `empty_cache()` free every unused block?

> 教材原文：「它会释放所有未使用的缓存块，还给CUDA驱动。但注意，这不会释放正在被使用的Tensor。」
>
> In translation: "It releases all the unused cached blocks and gives them back to the
> CUDA driver. But note: it does not free tensors still in use."

Above, the cache held one wholly free segment. Here it holds two kinds of free memory: a
64 MiB segment with nothing in it, and the 16 MiB left beside a live 4 MiB tensor in its
20 MiB segment. Which of them does `empty_cache()` give back?

```python
MiB = 2**20
live = torch.empty(4 * MiB, dtype=torch.uint8, device="cuda")    # a 20 MiB segment, split
tmp = torch.empty(64 * MiB, dtype=torch.uint8, device="cuda"); del tmp   # a wholly free segment
free = torch.cuda.memory_reserved() - torch.cuda.memory_allocated()
torch.cuda.empty_cache()
print(free, torch.cuda.memory_reserved() - torch.cuda.memory_allocated())
```
*/

/*md:zh-CN
`del` 立即把块还给缓存，所以 `memory_allocated()` 会下降；保持不变的是 `memory_reserved()`（也就是教材在 `nvidia-smi` 里看到的 8GB）。在第一个张量提出申请之前什么也不预留，之后也只预留一个与这次申请大小相称的段；第 4 章那句话的后半句是对的：释放的块留在池子里，`y` 复用了它。驱动占用并不是从零开始的：还没有任何张量时，CUDA 上下文就已经在那里了。`empty_cache()` 把缓存着的 256 MiB 段还了回去（最后一行）。

**动手试试——先预测：** 把 `y` 改成 300 MiB。现在有几次 cudaMalloc？已预留显存的峰值在哪里？

<details><summary>答案</summary>

两次：缓存里的 256 MiB 段不够大，分配器只好再建一个段，已预留显存的峰值是两段之和。第二条结论变成“不成立”：没有任何复用。
</details>

### `empty_cache()` 会释放所有空闲块吗？

> 教材原文：「它会释放所有未使用的缓存块，还给CUDA驱动。但注意，这不会释放正在被使用的Tensor。」

上面的缓存里只有一个整段空闲的段。这里的缓存里有两种空闲显存：一个什么也没放的 64 MiB 段，以及一个 20 MiB 段里、存活的 4 MiB 张量旁边剩下的 16 MiB。`empty_cache()` 会把哪些还回去？

```python
MiB = 2**20
live = torch.empty(4 * MiB, dtype=torch.uint8, device="cuda")    # 一个 20 MiB 的段，被分割
tmp = torch.empty(64 * MiB, dtype=torch.uint8, device="cuda"); del tmp   # 一个整段空闲的段
free = torch.cuda.memory_reserved() - torch.cuda.memory_allocated()
torch.cuda.empty_cache()
print(free, torch.cuda.memory_reserved() - torch.cuda.memory_allocated())
```
*/

//nb:cell
func emptyCacheAll() {
	l := memlab.MustOpen()
	defer l.Close()
	live := memlab.Must(tensor.Empty(l, tensor.Uint8, 4<<20))                  // a 20 MiB segment, split
	memlab.Check(memlab.Must(tensor.Empty(l, tensor.Uint8, 64<<20)).Release()) // a wholly free segment
	free, allocated := l.MemoryReserved()-l.MemoryAllocated(), l.MemoryAllocated()
	memlab.Check(l.EmptyCache())
	released := free - (l.MemoryReserved() - l.MemoryAllocated())
	memlab.Judge("empty_cache() releases all the unused cached blocks to the CUDA driver", memlab.HoldsPartly(released > 0, released == free),
		"%s free in the cache, %s given back, %s kept beside the live tensor", memlab.FormatBytes(free), memlab.FormatBytes(released), memlab.FormatBytes(free-released))
	memlab.Judge("empty_cache() does not free tensors still in use", memlab.HoldsIf(l.MemoryAllocated() == allocated),
		"memory_allocated %s before empty_cache(), %s after", memlab.FormatBytes(allocated), memlab.FormatBytes(l.MemoryAllocated()))
	memlab.Check(live.Release())
}

/*md
`empty_cache()` gives back whole free segments only: a free block that shares its segment
with a live tensor (an *inactive split*, below) stays, since a `cudaFree` can only return a
whole `cudaMalloc`. In 2.3 that is the whole story of fragmentation.

**Try it — predict first:** make `live` 20 MiB instead of 4. What is given back now?

<details><summary>Answer</summary>

All of it: a 20 MiB request gets a segment of exactly 20 MiB (requests of 10 MiB or more
are rounded to 2 MiB), so nothing free sits beside it, and the first verdict turns to
"holds".
</details>

### The rules in five allocations

> 教材原文：「申请显存时，它先找大小匹配的空闲块；找不到就向CUDA申请新块。」
>
> In translation: "When memory is requested, it first looks for a free block of a
> matching size; if it finds none, it asks CUDA for a new block."

What "matching" and "a new block" mean is a handful of rules, and five requests —
24 bytes, 1 MiB, 1 MiB + 1 byte, 12 MiB and 600 MiB — show them all:
each request is rounded up to a multiple of **512 bytes**;
requests up to 1 MiB come from the **small pool**, whose segments are **2 MiB**; larger
ones from the **large pool**, whose segments are **20 MiB** for requests under 10 MiB and
otherwise the request rounded up to 2 MiB. Within a pool the allocator takes the
**best fit** (the smallest free block that is large enough) and **splits** it; freed
neighbours **merge** again. The table shows the block each request got and a few
`memory_stats()` rows after each. Which of the five requests will make a `cudaMalloc`?

```python
MiB = 2**20
ts = []
for n in (24, MiB, MiB + 1, 12 * MiB, 600 * MiB):
    ts.append(torch.empty(n, dtype=torch.uint8, device="cuda"))
    s = torch.cuda.memory_stats()
    print(n, s["allocated_bytes.all.current"], s["reserved_bytes.all.current"],
          s["segment.small_pool.current"], s["segment.large_pool.current"])
for seg in torch.cuda.memory_snapshot():            # every segment and its blocks
    print(seg["total_size"], seg["segment_type"], [(b["size"], b["state"]) for b in seg["blocks"]])
```
*/

/*md:zh-CN
`empty_cache()` 只还回整段空闲的段：和存活张量共处一段的空闲块（即下文的*非活跃分割块*）留在原处，因为一次 `cudaFree` 只能归还一整次 `cudaMalloc`。到了 2.3，显存碎片化的来龙去脉就在这里。

**动手试试——先预测：** 把 `live` 从 4 MiB 改成 20 MiB。现在会还回多少？

<details><summary>答案</summary>

全部：20 MiB 的申请得到一个正好 20 MiB 的段（10 MiB 及以上的申请按 2 MiB 取整），它旁边没有空闲部分，第一条结论变成“成立”。
</details>

### 五次申请看懂分配规则

> 教材原文：「申请显存时，它先找大小匹配的空闲块；找不到就向CUDA申请新块。」

“匹配”和“新块”具体是什么意思，要靠几条规则说清楚。五次申请——24 字节、1 MiB、1 MiB + 1 字节、12 MiB 和 600 MiB——就能把它们全部展示出来：每次申请先向上取整到 **512 字节**的倍数；不超过 1 MiB 的申请来自**小块池** (small pool)，它的段是 **2 MiB**；更大的申请来自**大块池** (large pool)，小于 10 MiB 的申请对应 **20 MiB** 的段，否则段的大小是申请大小向上取整到 2 MiB。在同一个池里，分配器采用**最佳适配** (best fit，选能装下的最小空闲块)，并把它**分割** (split)；释放后相邻的空闲块会重新**合并** (merge)。表格列出每次申请拿到的块，以及每次申请后 `memory_stats()` 的几项数据。五次申请中，哪几次会触发 `cudaMalloc`？

```python
MiB = 2**20
ts = []
for n in (24, MiB, MiB + 1, 12 * MiB, 600 * MiB):
    ts.append(torch.empty(n, dtype=torch.uint8, device="cuda"))
    s = torch.cuda.memory_stats()
    print(n, s["allocated_bytes.all.current"], s["reserved_bytes.all.current"],
          s["segment.small_pool.current"], s["segment.large_pool.current"])
for seg in torch.cuda.memory_snapshot():            # 每个段及其中的块
    print(seg["total_size"], seg["segment_type"], [(b["size"], b["state"]) for b in seg["blocks"]])
```
*/

//nb:cell plot
func fiveAllocations() {
	l := memlab.MustOpen()
	defer l.Close()
	tab := ch2.AllocTable() // a row a request: its block, pool and segment, memory_stats() after it
	var ts []*tensor.Tensor
	rule := true // a request calls cudaMalloc exactly when no cached free block is large enough
	for _, r := range []struct {
		name string
		n    int
	}{{"24 B", 24}, {"1 MiB", 1 << 20}, {"1 MiB + 1 B", 1<<20 + 1}, {"12 MiB", 12 << 20}, {"600 MiB", 600 << 20}} {
		fits, calls := l.Snapshot().LargestFreeBlock() >= int64(r.n), l.MemoryStats()["num_device_alloc"]
		ts = append(ts, memlab.Must(tensor.Empty(l, tensor.Uint8, r.n)))
		rule = rule && fits == (l.MemoryStats()["num_device_alloc"] == calls)
		memlab.Check(ch2.AllocRow(tab, l, r.name, ts[len(ts)-1]))
	}
	tab.Show()
	fmt.Println(memlab.Blocks(l.Snapshot())) // each segment's blocks, in address order
	_, first, _ := l.BlockOf(ts[0])
	memlab.Judge("it first looks for a free block of a matching size; if it finds none, it asks CUDA for a new block", memlab.HoldsIf(rule),
		"24 bytes took a %s block; %d cudaMalloc calls for five requests, each where no cached free block was large enough: %v", memlab.FormatBytes(first.Size), l.MemoryStats()["num_device_alloc"], rule)
	memlab.Show(memplot.SegmentMap("2.2 the segments after five allocations (S small pool, L large)", l.Segments()))
	memlab.Check(tensor.ReleaseAll(ts...))
}

/*md
Read the "its segment" column against the rules: the 1 MiB request is small-pool and
shares the 2 MiB segment of the 24-byte one; 1 MiB + 1 byte is large-pool and makes a
20 MiB segment; the 12 MiB request is served by best fit from the free rest of that
20 MiB segment, which is split; 600 MiB needs a segment of its own.

**Try it — predict first:** make the fourth request 20 MiB. Which segment serves it, and how large is that segment?

<details><summary>Answer</summary>

A new one of exactly 20 MiB: nothing cached is large enough, and a request of 10 MiB or more is rounded to 2 MiB, not to 20.
</details>

### Best fit, split and merge

Best fit picks the *smallest* free block that is large enough, not the first one. Below,
a 20 MiB segment holds `a` (4 MiB), `c` (8 MiB) and an 8 MiB free tail; after `del a`
there are two free blocks, 4 and 8 MiB, and a 2 MiB request takes the 4 MiB one.

> 教材原文：「释放时，块标记为空闲，但物理内存不归还。」
>
> In translation: "On release, the block is marked free, but the physical memory is not
> given back."

Once `b` and `c` are gone too, is the segment's memory given back, or kept? And in how
many blocks?

```python
MiB = 2**20
a = torch.empty(4 * MiB, dtype=torch.uint8, device="cuda")   # a new 20 MiB segment, split
c = torch.empty(8 * MiB, dtype=torch.uint8, device="cuda")   # cut from its free rest
hole = a.data_ptr()
del a
b = torch.empty(2 * MiB, dtype=torch.uint8, device="cuda")   # best fit: a's 4 MiB hole
print(b.data_ptr() == hole, torch.cuda.memory_stats()["inactive_split_bytes.all.current"])
del b, c
seg = torch.cuda.memory_snapshot()[0]
print(len(seg["blocks"]), seg["blocks"][0]["state"])         # how many blocks, in what state?
```
*/

/*md:zh-CN
对照规则看 “its segment” 一列：1 MiB 的申请属于小块池，和 24 字节的申请共用一个 2 MiB 的段；1 MiB + 1 字节属于大块池，建了一个 20 MiB 的段；12 MiB 的申请按最佳适配，从这个 20 MiB 段剩下的空闲部分里切出来，段被分割；600 MiB 则需要一个独立的段。

**动手试试——先预测：** 把第四次申请改成 20 MiB。哪个段满足它？那个段有多大？

<details><summary>答案</summary>

一个新段，正好 20 MiB：缓存里没有足够大的块，而 10 MiB 及以上的申请按 2 MiB 取整，而不是按 20 MiB。
</details>

### 最佳适配、分割与合并

最佳适配选的是能装下申请的*最小*空闲块，而不是找到的第一个。下面一个 20 MiB 的段里放着 `a`（4 MiB）、`c`（8 MiB）和末尾 8 MiB 的空闲部分；`del a` 之后有两个空闲块，4 MiB 和 8 MiB，这时一个 2 MiB 的申请会选中 4 MiB 那个。

> 教材原文：「释放时，块标记为空闲，但物理内存不归还。」

`b` 和 `c` 也释放之后，这个段的显存是还回去了，还是留着？分成几块？

```python
MiB = 2**20
a = torch.empty(4 * MiB, dtype=torch.uint8, device="cuda")   # 新建一个 20 MiB 的段并分割
c = torch.empty(8 * MiB, dtype=torch.uint8, device="cuda")   # 从段剩下的空闲部分切出
hole = a.data_ptr()
del a
b = torch.empty(2 * MiB, dtype=torch.uint8, device="cuda")   # 最佳适配：a 留下的 4 MiB 空洞
print(b.data_ptr() == hole, torch.cuda.memory_stats()["inactive_split_bytes.all.current"])
del b, c
seg = torch.cuda.memory_snapshot()[0]
print(len(seg["blocks"]), seg["blocks"][0]["state"])         # 几个块？什么状态？
```
*/

//nb:cell
func splitAndMerge() {
	l := memlab.MustOpen()
	defer l.Close()
	a := memlab.Must(tensor.Empty(l, tensor.Uint8, 4<<20)) // a new 20 MiB segment, split
	c := memlab.Must(tensor.Empty(l, tensor.Uint8, 8<<20)) // cut from its free rest
	fmt.Println("a = empty(4 MiB); c = empty(8 MiB):\n  " + memlab.Blocks(l.Snapshot()))
	hole := a.DataPtr()
	memlab.Check(a.Release())
	fmt.Println("del a:\n  " + memlab.Blocks(l.Snapshot()))
	b := memlab.Must(tensor.Empty(l, tensor.Uint8, 2<<20))
	fmt.Println("b = empty(2 MiB):\n  " + memlab.Blocks(l.Snapshot()))
	split, reserved := l.MemoryStats()["inactive_split_bytes.all.current"], l.MemoryReserved()
	memlab.Check(tensor.ReleaseAll(b, c))
	fmt.Println("del b, c:\n  " + memlab.Blocks(l.Snapshot()))
	memlab.Measured("b took a's 4 MiB hole (same address: %v); %s sat free in split blocks before del b, c", b.DataPtr() == hole, memlab.FormatBytes(split))
	memlab.Judge("on release, the block is marked free, but the physical memory is not given back", memlab.HoldsIf(l.MemoryReserved() == reserved),
		"after del b, c: allocated %s, reserved %s (%s before), in %d free block", memlab.FormatBytes(l.MemoryAllocated()),
		memlab.FormatBytes(l.MemoryReserved()), memlab.FormatBytes(reserved), len(l.Snapshot().Segments[0].Blocks))
}

/*md
The segment stays reserved, and more: freed neighbours merge, so once `b` and `c` are gone
it is a single free block again — which `empty_cache()` can return. A free block inside a
segment that still has a live block is an **inactive split**
(`inactive_split_bytes`): free, but `empty_cache()` cannot give it back — the seed of
fragmentation (2.3).

**Try it — predict first:** make `b` 6 MiB. Where does it go? And at 9 MiB?

<details><summary>Answer</summary>

At 6 MiB the 4 MiB hole is too small, so best fit takes the 8 MiB tail instead; at 9 MiB nothing fits, and a second 20 MiB segment appears.
</details>

### `max_split_size_mb`

`PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128` stops the allocator from splitting
cached blocks of 128 MiB or more, and from handing them to much smaller requests. Run
the chapter's sequence (allocate and free 1024, 512, 256 MiB, then allocate 768 MiB)
with the defaults, with 128, and with the chapter's own advice, 32:

> 教材原文：「我建议，如果你的模型显存波动大，把这个值设小一点，比如max_split_size_mb:32，能减少碎片化。」
>
> In translation: "My advice: if your model's memory use swings a lot, set this value
> lower, say max_split_size_mb:32, to reduce fragmentation."

The PyTorch columns are PyTorch 2.11's own numbers for the same ops on an H200, read
from the ground truth that ships in `reference/torch-2.11/`. Predict first: on this
sequence, does a smaller `max_split_size_mb` lower reserved memory's peak, or raise it?

```python
# run as: PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128 python seq.py  (read when CUDA starts)
import torch
MiB = 2**20
for n in (1024, 512, 256):
    a = torch.empty(n * MiB, dtype=torch.uint8, device="cuda")
    del a
a3 = torch.empty(768 * MiB, dtype=torch.uint8, device="cuda")
torch.cuda.empty_cache()
del a3
torch.cuda.empty_cache()
print(torch.cuda.max_memory_reserved())
```
*/

/*md:zh-CN
这个段仍然留在已预留显存里；不仅如此，相邻的空闲块会合并，所以 `b` 和 `c` 都释放之后，整个段又变回一个空闲块——这样的段 `empty_cache()` 才能还给驱动。如果一个空闲块所在的段里还有存活的块，它就是一个**非活跃分割块** (inactive split，对应 `inactive_split_bytes`)：它是空闲的，`empty_cache()` 却还不回去——这正是碎片化的种子（2.3）。

**动手试试——先预测：** 把 `b` 改成 6 MiB。它会落在哪里？改成 9 MiB 呢？

<details><summary>答案</summary>

6 MiB 时 4 MiB 的空洞太小，最佳适配改选末尾 8 MiB 的空闲块；9 MiB 时哪里都放不下，出现第二个 20 MiB 的段。
</details>

### `max_split_size_mb`

`PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128` 让分配器不再分割 128 MiB 及以上的缓存块，也不再把它们交给小得多的申请。用默认设置、128，以及教材自己建议的 32，分别跑一遍教材里的序列（申请并释放 1024、512、256 MiB，再申请 768 MiB）：

> 教材原文：「我建议，如果你的模型显存波动大，把这个值设小一点，比如max_split_size_mb:32，能减少碎片化。」

表中 PyTorch 各列是 PyTorch 2.11 在 H200 上执行同样操作时自己报告的数字，读自仓库中 `reference/torch-2.11/` 里的基准数据 (ground truth)。先预测：在这个序列上，调小 `max_split_size_mb` 会降低已预留显存的峰值，还是抬高它？

```python
# 运行方式：PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128 python seq.py（CUDA 初始化时读取）
import torch
MiB = 2**20
for n in (1024, 512, 256):
    a = torch.empty(n * MiB, dtype=torch.uint8, device="cuda")
    del a
a3 = torch.empty(768 * MiB, dtype=torch.uint8, device="cuda")
torch.cuda.empty_cache()
del a3
torch.cuda.empty_cache()
print(torch.cuda.max_memory_reserved())
```
*/

//nb:cell plot
func maxSplitSize() {
	var lines []memplot.Series
	var ops []string
	for _, c := range []struct{ name, conf, torch string }{ // torch: PyTorch 2.11's recording in reference/torch-2.11
		{"defaults", "", "a__default.jsonl.gz"},
		{"max_split_size_mb:128", "max_split_size_mb:128", "a__max_split_size_mb_128.jsonl.gz"},
		{"max_split_size_mb:32 (the chapter's advice)", "max_split_size_mb:32", ""},
	} {
		steps, _ := memlab.Must2(ch2.ChapterSequence(c.conf)) // the Python above, under PYTORCH_CUDA_ALLOC_CONF=conf
		if c.torch == "" {
			memlab.Measured("%s: reserved memory peaks at %s; no PyTorch recording of this configuration", c.name, memlab.FormatBytes(steps.MaxReserved()))
		} else {
			tab, differ := memlab.Must2(ch2.Compare(steps, memlab.Must(ch2.PyTorch(c.torch))))
			tab.Show()
			memlab.Measured("%s: reserved memory peaks at %s; %d of %d ops differ from PyTorch 2.11", c.name, memlab.FormatBytes(steps.MaxReserved()), differ, len(steps.List))
		}
		lines, ops = append(lines, steps.Series(c.name, func(s memlab.Step) int64 { return s.Reserved })), steps.Labels()
	}
	memlab.Show(memplot.LabelledLines("2.2 reserved memory over the chapter's sequence", ops, lines...))
}

/*md
With the defaults every request is cut from the first 1 GiB segment, so reserved memory
never exceeds 1 GiB; with `max_split_size_mb:128` (or 32) no large block is split, each
request gets a segment of its own and reserved memory climbs until `empty_cache()`. The
option does not save memory by itself: on this sequence the chapter's advice raises the
peak. What it buys is shown in 2.3: oversize free segments are released first when
memory runs short, and small requests stop pinning large segments.

**Try it — predict first:** add `{"max_split_size_mb:1024", "max_split_size_mb:1024", ""}`
to the list. The first segment is exactly 1024 MiB: does the new line follow the defaults?

<details><summary>Answer</summary>

No: it climbs like `max_split_size_mb:128`. A block counts as oversize when its size is
*at least* the limit, so a 1024 MiB segment under a 1024 MiB limit is never split. Try
`max_split_size_mb:1025`: that line follows the defaults.
</details>

### When `PYTORCH_CUDA_ALLOC_CONF` is read

Chapter 4 sets the variable from Python:

> 教材原文：「os.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'max_split_size_mb:128'」（第 4 章）

Does the line configure the allocator wherever it stands in a program? A lab's
allocator reads the variable when the lab opens, as PyTorch's reads it when CUDA
initialises (`memlab.AllocConf` gives the setting explicitly). Below, one lab opens
before the variable is set and one after; each then allocates and frees 1 GiB and asks
for 512 MiB, which the defaults cut from the cached 1 GiB segment and
`max_split_size_mb:128` does not. Which of the two labs uses the setting?

```python
import torch
x = torch.empty(1, device="cuda")                   # CUDA initialises: the variable is read now
import os
os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:128"   # after CUDA started
a = torch.empty(2**30, dtype=torch.uint8, device="cuda"); del a
b = torch.empty(2**29, dtype=torch.uint8, device="cuda")
print(torch.cuda.memory_reserved())                 # split the cached segment, or add one?
```
*/

/*md:zh-CN
默认设置下，每次申请都从第一个 1 GiB 的段里切出来，所以已预留显存从不超过 1 GiB；设成 `max_split_size_mb:128`（或 32）时，大块不再被分割，每次申请各占一个段，已预留显存一路上涨，直到 `empty_cache()`。这个选项本身并不省显存：在这个序列上，教材的建议反而抬高了峰值。它真正的好处要到 2.3 才看得到：显存紧张时，超大的空闲段会被优先释放，小申请也不会再把大段钉住。

**动手试试——先预测：** 在列表里加上 `{"max_split_size_mb:1024", "max_split_size_mb:1024", ""}`。第一个段正好是 1024 MiB：新的这条线会和默认设置一样吗？

<details><summary>答案</summary>

不会：它像 `max_split_size_mb:128` 那样一路上涨。块的大小只要*不小于*上限就算超大块，所以在 1024 MiB 的上限下，1024 MiB 的段永远不会被分割。试试 `max_split_size_mb:1025`：那条线就和默认设置一样了。
</details>

### `PYTORCH_CUDA_ALLOC_CONF` 什么时候被读取

第 4 章在 Python 里设置这个环境变量：

> 教材原文：「os.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'max_split_size_mb:128'」（第 4 章）

这一行不管写在程序的什么位置都能配置分配器吗？lab 的分配器在 lab 打开时读取这个变量，就像 PyTorch 的分配器在 CUDA 初始化时读取它一样（`memlab.AllocConf` 则显式给出设置）。下面一个 lab 在设置变量之前打开，另一个在之后打开；两者都先申请并释放 1 GiB，再申请 512 MiB——默认设置会从缓存的 1 GiB 段里切出它，`max_split_size_mb:128` 则不会。两个 lab 中哪一个用上了这个设置？

```python
import torch
x = torch.empty(1, device="cuda")                   # CUDA 初始化：此刻读取环境变量
import os
os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:128"   # CUDA 已经初始化之后
a = torch.empty(2**30, dtype=torch.uint8, device="cuda"); del a
b = torch.empty(2**29, dtype=torch.uint8, device="cuda")
print(torch.cuda.memory_reserved())                 # 分割缓存的段，还是再建一个？
```
*/

//nb:cell
func allocConfTooLate() {
	defer os.Setenv("PYTORCH_CUDA_ALLOC_CONF", os.Getenv("PYTORCH_CUDA_ALLOC_CONF")) // restored after the cell
	os.Unsetenv("PYTORCH_CUDA_ALLOC_CONF")
	early := memlab.MustOpen(memlab.Budget(4<<30), memlab.NotCurrent()) // CUDA initialises: the variable is read now
	defer early.Close()
	os.Setenv("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:128")      // the chapter's line, too late for early
	late := memlab.MustOpen(memlab.Budget(4<<30), memlab.NotCurrent()) // a new process: the variable is set before CUDA starts
	defer late.Close()
	// on each: a = empty(1 GiB); del a; b = empty(512 MiB), cut from the cached 1 GiB or not; del b
	memlab.Check(ch2.GiBThenHalf(early, late))
	applied := func(l *memlab.Lab) bool { return l.Allocator().Config().String() == "max_split_size_mb:128" }
	memlab.Judge("setting os.environ['PYTORCH_CUDA_ALLOC_CONF'] in Python configures the allocator", memlab.HoldsWhen(applied(early), applied(late)),
		"set after the lab opened: reserved %s, allocator settings %q; set before: reserved %s, settings %q",
		memlab.FormatBytes(early.MemoryReserved()), early.Allocator().Config().String(), memlab.FormatBytes(late.MemoryReserved()), late.Allocator().Config().String())
}

/*md
It depends on when: PyTorch reads the variable once, when CUDA initialises — at the first
CUDA call, not at `import torch`. Set before that (as the chapter's snippet does, above
its `import torch`), it applies; set after the first tensor on the GPU, it changes nothing
for the rest of the process.

**Try it — predict first:** open `early` with `memlab.AllocConf("max_split_size_mb:128")`
and leave the rest. What does `early` report now?

<details><summary>Answer</summary>

The same as `late`: an explicit setting at open is the `PYTORCH_CUDA_ALLOC_CONF` of a
process started with the variable set; only changing it *after* the open does nothing.
</details>
*/

/*md:zh-CN
要看什么时候设置：PyTorch 只在 CUDA 初始化时读取它一次——也就是第一次 CUDA 调用时，而不是 `import torch` 时。在那之前设置（就像教材的代码那样，写在 `import torch` 之前），它就生效；在 GPU 上已经有了第一个张量之后再设置，对这个进程余下的部分毫无作用。

**动手试试——先预测：** 打开 `early` 时加上 `memlab.AllocConf("max_split_size_mb:128")`，其余不变。`early` 现在报告什么？

<details><summary>答案</summary>

和 `late` 一样：打开时显式给出的设置，相当于一个启动时就设好了这个变量的进程里的 `PYTORCH_CUDA_ALLOC_CONF`；只有在打开*之后*再改，才毫无作用。
</details>
*/

/*md
### Summary

- `del` lowers `memory_allocated()` at once; the block stays in the allocator's cache, so
  `memory_reserved()` (and `nvidia-smi`) stay up. Nothing is reserved in advance: the
  first request makes a segment sized for it.
- Requests round up to 512 bytes; up to 1 MiB they come from 2 MiB small-pool segments,
  larger ones from large-pool segments (20 MiB under 10 MiB, else the request rounded to
  2 MiB). Best fit picks the smallest free block that fits, splits it, and freed
  neighbours merge.
- `empty_cache()` gives back only whole free segments, never a live tensor's memory.
- `max_split_size_mb` keeps large blocks whole; it is no way to save memory by itself, and
  it takes effect only if set before CUDA initialises.

**For discussion**

1. A colleague watches `nvidia-smi` during training and reports a leak because the figure
   never falls. Which two numbers would you ask for, and what would each tell you?
2. Why does the allocator round a 24-byte request to 512 bytes, and keep small and large
   requests in separate pools? What would go wrong with one pool?
3. Your script sets `PYTORCH_CUDA_ALLOC_CONF` in a module that is imported after the model
   is moved to the GPU. How would you find out that the setting is ignored?
*/

/*md:zh-CN
### 小结

- `del` 立即让 `memory_allocated()` 下降；块留在分配器的缓存里，所以 `memory_reserved()`（以及 `nvidia-smi`）居高不下。分配器不会预先申请：第一次申请才建一个与它大小相称的段。
- 申请向上取整到 512 字节；不超过 1 MiB 的来自 2 MiB 的小块池段，更大的来自大块池段（小于 10 MiB 时段为 20 MiB，否则为申请大小按 2 MiB 取整）。最佳适配选能装下的最小空闲块并分割它，释放后相邻空闲块会合并。
- `empty_cache()` 只还回整段空闲的段，从不动存活张量的显存。
- `max_split_size_mb` 让大块保持完整；它本身并不是省显存的办法，而且只有在 CUDA 初始化之前设置才生效。

**讨论**

1. 同事训练时盯着 `nvidia-smi`，因为那个数一直不降，就说有泄漏。你会向他要哪两个数？它们各能说明什么？
2. 分配器为什么把 24 字节的申请取整到 512 字节，又把小申请和大申请分在两个池里？只用一个池会出什么问题？
3. 你的脚本在一个模块里设置 `PYTORCH_CUDA_ALLOC_CONF`，而这个模块是在模型搬上 GPU 之后才导入的。你怎样发现这个设置没有生效？
*/
