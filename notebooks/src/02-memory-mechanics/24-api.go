package nb02

import (
	"fmt"
	"time"

	"memlab.dev/memlab/experiments/ch2"
	"memlab.dev/memlab/experiments/ch2/ch2plot"
	"memlab.dev/memlab/lang"
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

The chapter's table describes `memory_reserved()` as

> 教材原文：「缓存分配器从CUDA申请的总显存（字节）」
>
> In translation: "the total GPU memory the caching allocator has requested from CUDA
> (bytes)"

Is it the sum of the segments that `memory_snapshot()` lists — cached or in use? The cell
adds them up.

```python
MiB = 2**20
x = torch.empty(100 * MiB, dtype=torch.uint8, device="cuda")
y = torch.empty(50 * MiB, dtype=torch.uint8, device="cuda")
del y
torch.cuda.memory_allocated(), torch.cuda.memory_reserved(), torch.cuda.max_memory_allocated()
free, total = torch.cuda.mem_get_info()
stats = torch.cuda.memory_stats()                   # a dict: "num_device_alloc", "allocation.all.current", …
segments = torch.cuda.memory_snapshot()
torch.cuda.reset_peak_memory_stats()
torch.cuda.empty_cache()
torch.cuda.set_per_process_memory_fraction(1.5)     # ValueError: the fraction must lie in 0~1
print(torch.cuda.memory_summary())
```
*/

/*md:zh-CN
## 2.4 torch.cuda 显存 API (the `torch.cuda` memory API)

每个 `torch.cuda` 显存函数都有一个 Go 名字，既是 `*memlab.Lab` 的方法，也有包级函数（作用于当前 lab——最后打开的那个——就像 `torch.cuda` 作用于当前设备）。下面每个调用都在一个小负载之后运行：留下一个 100 MiB 的张量，释放一个 50 MiB 的张量。

教材的表格这样描述 `memory_reserved()`：

> 教材原文：「缓存分配器从CUDA申请的总显存（字节）」

它是不是 `memory_snapshot()` 列出的所有段（无论是缓存着还是正在使用）的总和？单元格会把它们加起来。

```python
MiB = 2**20
x = torch.empty(100 * MiB, dtype=torch.uint8, device="cuda")
y = torch.empty(50 * MiB, dtype=torch.uint8, device="cuda")
del y
torch.cuda.memory_allocated(), torch.cuda.memory_reserved(), torch.cuda.max_memory_allocated()
free, total = torch.cuda.mem_get_info()
stats = torch.cuda.memory_stats()                   # 一个字典："num_device_alloc"、"allocation.all.current" ……
segments = torch.cuda.memory_snapshot()
torch.cuda.reset_peak_memory_stats()
torch.cuda.empty_cache()
torch.cuda.set_per_process_memory_fraction(1.5)     # ValueError：比例必须在 0~1 之间
print(torch.cuda.memory_summary())
```
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
	tab.Row("memory_allocated()", "memlab.MemoryAllocated()", memlab.FormatBytes(memlab.MemoryAllocated())) // the current lab's
	tab.Row("memory_reserved()", "l.MemoryReserved()", memlab.FormatBytes(l.MemoryReserved()))
	tab.Row("max_memory_allocated()", "l.MaxMemoryAllocated()", memlab.FormatBytes(l.MaxMemoryAllocated()))
	tab.Row("mem_get_info()", "l.MemGetInfo()", fmt.Sprintf(lang.Text("free %s of %s"), memlab.FormatBytes(int64(free)), memlab.FormatBytes(int64(total))))
	tab.Row("memory_stats()", "l.MemoryStats()", fmt.Sprintf(lang.Text("%d keys; num_device_alloc %d, allocation.all.current %d"),
		len(st), st["num_device_alloc"], st["allocation.all.current"]))
	segments := int64(0)
	for _, seg := range l.Snapshot().Segments {
		segments += seg.TotalSize
	}
	tab.Row("memory_snapshot()", "l.Snapshot()", fmt.Sprintf(lang.Text("%d segments, %s"), len(l.Snapshot().Segments), memlab.FormatBytes(segments)))
	memlab.Judge("memory_reserved(): the total memory the caching allocator has requested from CUDA", memlab.HoldsIf(segments == l.MemoryReserved()),
		"memory_reserved() %s, the segments of memory_snapshot() %s", memlab.FormatBytes(l.MemoryReserved()), memlab.FormatBytes(segments))
	l.ResetPeakMemoryStats()
	tab.Row("reset_peak_memory_stats()", "l.ResetPeakMemoryStats()", fmt.Sprintf(lang.Text("max_memory_allocated() is now %s"), memlab.FormatBytes(l.MaxMemoryAllocated())))
	memlab.Check(l.EmptyCache())
	tab.Row("empty_cache()", "l.EmptyCache()", fmt.Sprintf(lang.Text("memory_reserved() is now %s"), memlab.FormatBytes(l.MemoryReserved())))
	tab.Show()
	fmt.Println("set_per_process_memory_fraction(1.5), l.SetPerProcessMemoryFraction(1.5):", memlab.ErrorText(l.SetPerProcessMemoryFraction(1.5)))
	l.ShowSummary() // memory_summary(), PyTorch's table byte for byte
	memlab.Check(x.Release())
}

/*md
`memory_reserved()` is the sum of the segments, cached or in use; after `empty_cache()`
only the live tensor's segment is left in it (the table's last rows). `ShowSummary` shows `MemorySummary()` as preformatted text so that the notebook does not
re-wrap it.

**Try it — predict first:** call `memlab.MemoryAllocated()` after `l.Close()`. What does it answer?

<details><summary>Answer</summary>

Nothing: with no lab open it stops the cell with a message that says to open one — memlab never opens a device behind your back, and never answers 0 for a device it does not have.
</details>

### The leak-check idiom

The chapter's idiom, written out: reset the peak, note `memory_allocated()` before,
run the code, read the peak, drop what the code returned, empty the cache, and compare
`memory_allocated()` after with before. The chapter's table gives `memory_allocated()`
this use:

> 教材原文：「监控模型真正用了多少，排除缓存干扰」
>
> In translation: "to watch what the model really uses, with the cache's noise left out"

Two versions of a loop that computes a 1 MiB output per step and keeps a history: one
keeps the tensors (`history.append(out)`), one keeps the number it needs
(`history.append(out[0, 0].item())`). Does `memory_allocated()` tell the leak from the
cache — and would `memory_reserved()`?

```python
w = torch.randn(256, 1024, device="cuda")
torch.cuda.reset_peak_memory_stats()
before = torch.cuda.memory_allocated()
history = []
for i in range(8):
    out = torch.randn(256, 256, device="cuda") @ w  # 1 MiB per step
    history.append(out)                             # keeps the tensor: the leak
    # history.append(out[0, 0].item())              # keeps a number: no leak
peak = torch.cuda.max_memory_allocated()
torch.cuda.empty_cache()
print(torch.cuda.memory_allocated() - before, peak)
```
*/

/*md:zh-CN
`memory_reserved()` 就是所有段（无论是缓存着还是正在使用）的总和；`empty_cache()` 之后，其中只剩下存活张量所在的那个段（见表格最后几行）。`ShowSummary` 把 `MemorySummary()` 作为预排版文本显示，免得笔记本把它重新折行。

**动手试试——先预测：** 在 `l.Close()` 之后调用 `memlab.MemoryAllocated()`。它会返回什么？

<details><summary>答案</summary>

什么也不返回：没有打开的 lab 时，它会停下单元格，并提示你先打开一个——memlab 从不在背后替你打开设备，也从不对一个并不存在的设备回答 0。
</details>

### 检查显存泄漏的惯用写法

把教材的惯用写法完整写出来：重置峰值，记下之前的 `memory_allocated()`，运行代码，读出峰值，丢掉代码返回的东西，清空缓存，再把之后的 `memory_allocated()` 和之前比较。教材的表格给 `memory_allocated()` 写的用途是：

> 教材原文：「监控模型真正用了多少，排除缓存干扰」

下面是一个循环的两个版本，每步算出 1 MiB 的输出并保留历史记录：一个留下张量本身（`history.append(out)`），另一个只留下需要的那个数（`history.append(out[0, 0].item())`）。`memory_allocated()` 能把泄漏和缓存区分开吗？`memory_reserved()` 能吗？

```python
w = torch.randn(256, 1024, device="cuda")
torch.cuda.reset_peak_memory_stats()
before = torch.cuda.memory_allocated()
history = []
for i in range(8):
    out = torch.randn(256, 256, device="cuda") @ w  # 每步 1 MiB
    history.append(out)                             # 留下张量：泄漏
    # history.append(out[0, 0].item())              # 只留下一个数：不泄漏
peak = torch.cuda.max_memory_allocated()
torch.cuda.empty_cache()
print(torch.cuda.memory_allocated() - before, peak)
```
*/

// train runs 8 steps of ch2.TrainStep and keeps a history: the outputs
// themselves (history.append(out)) when keepTensors, else one number of each
// (history.append(out[0, 0].item())), releasing the output. It returns the
// tensors kept and memory_allocated() − before after each step.
//
//nb:decl
func train(l *memlab.Lab, w *tensor.Tensor, keepTensors bool, before int64) (kept []*tensor.Tensor, grew []int64) {
	var history []float64
	for i := range 8 {
		out := memlab.Must(ch2.TrainStep(l, w, i)) // out = randn(256, 256) @ w
		if keepTensors {
			kept = append(kept, out) // history.append(out)
		} else {
			history = append(history, memlab.Must(ch2.Item(out))) // history.append(out[0, 0].item())
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
	leaked := map[string]int64{}
	for _, version := range []string{"keeps tensors", "keeps numbers"} {
		l.ResetPeakMemoryStats()
		before := l.MemoryAllocated()
		kept, grew := train(l, w, version == "keeps tensors", before) // the code under test
		peak := l.MaxMemoryAllocated()
		memlab.Check(l.EmptyCache())
		leaked[version] = l.MemoryAllocated() - before
		memlab.Measured("%s: memory_allocated after − before = %s after 8 steps (peak %s)",
			version, memlab.FormatBytes(leaked[version]), memlab.FormatBytes(peak))
		memlab.Check(tensor.ReleaseAll(kept...)) // drop what the code returned
		curves = append(curves, memplot.PerStep(version, grew))
	}
	memlab.Judge("memory_allocated() watches what the model really uses, with the cache's noise left out",
		memlab.HoldsIf(leaked["keeps tensors"] > 0 && leaked["keeps numbers"] == 0),
		"memory_allocated grew by %s keeping tensors and by %s keeping numbers",
		memlab.FormatBytes(leaked["keeps tensors"]), memlab.FormatBytes(leaked["keeps numbers"]))
	memlab.Show(memplot.Lines("2.4 the leak check: memory_allocated − before, per step", "step", curves...))
	memlab.Check(w.Release())
}

/*md
The version that keeps tensors grows by one output per step and leaves it all allocated;
the one that keeps numbers ends where it began. Compare `memory_allocated()`, never
`memory_reserved()`: reserved memory stays up after a release because of the cache, so
it would report a leak where there is none. (The idiom's `empty_cache()` does not change
`memory_allocated()`; it only makes `memory_reserved()` and `nvidia-smi` agree with it.)
`memlab.CheckLeaks(f)` wraps the same idiom.

**Try it — predict first:** in `train`, run 16 steps (`range 16`). What does each version leave? And keeping every second tensor only (`keepTensors && i%2 == 0`)?

<details><summary>Answer</summary>

With 16 steps the leak doubles and the fixed loop still leaves nothing; keeping every second tensor halves the leak.
</details>

### The per-epoch habit

> 教材原文：「个人习惯：我一般在训练脚本的每个epoch结束时，调用一次torch.cuda.empty_cache()和torch.cuda.reset_peak_memory_stats()。」
>
> In translation: "My own habit: at the end of every epoch of a training script, I call
> torch.cuda.empty_cache() and torch.cuda.reset_peak_memory_stats() once."

At the end of each epoch: `empty_cache()` (give back what the epoch cached, so the next
one — or another process — starts from what is live) and `reset_peak_memory_stats()`
(so that `max_memory_allocated()` reports this epoch's peak, not the run's). Three epochs
with shrinking batches, beside 64 MiB of weights: is each epoch's peak its own, and does
reserved memory fall back to the weights between epochs?

```python
for epoch in range(3):
    train_one_epoch()                               # your loop
    print(torch.cuda.max_memory_allocated(), torch.cuda.memory_reserved())
    torch.cuda.empty_cache()                        # give back what the epoch cached
    torch.cuda.reset_peak_memory_stats()            # the next peak is the next epoch's own
```
*/

/*md:zh-CN
留下张量的版本每步多一个输出，最后全部仍处于已分配状态；只留下数字的版本结束时回到了起点。要比较 `memory_allocated()`，千万别比较 `memory_reserved()`：因为有缓存，释放之后已预留显存并不下降，用它会在没有泄漏的地方报出泄漏。（写法里的 `empty_cache()` 不会改变 `memory_allocated()`；它只是让 `memory_reserved()` 和 `nvidia-smi` 跟它对得上。）`memlab.CheckLeaks(f)` 封装的就是这套写法。

**动手试试——先预测：** 在 `train` 里跑 16 步（`range 16`）。两个版本各留下多少？只保留每隔一步的张量（`keepTensors && i%2 == 0`）呢？

<details><summary>答案</summary>

16 步时泄漏翻倍，修好的循环依然什么也不留；只保留每隔一步的张量，泄漏减半。
</details>

### 每一轮结束时的习惯

> 教材原文：「个人习惯：我一般在训练脚本的每个epoch结束时，调用一次torch.cuda.empty_cache()和torch.cuda.reset_peak_memory_stats()。」

每一轮 (epoch) 结束时：调用 `empty_cache()`（把这一轮缓存的显存还回去，让下一轮——或别的进程——从真正存活的部分开始）和 `reset_peak_memory_stats()`（让 `max_memory_allocated()` 报告这一轮的峰值，而不是整个运行的峰值）。下面跑三轮，批一轮比一轮小，旁边放着 64 MiB 的权重：每一轮的峰值是不是它自己的？两轮之间，已预留显存会不会回落到只剩权重？

```python
for epoch in range(3):
    train_one_epoch()                               # 你的训练循环
    print(torch.cuda.max_memory_allocated(), torch.cuda.memory_reserved())
    torch.cuda.empty_cache()                        # 还回这一轮缓存的显存
    torch.cuda.reset_peak_memory_stats()            # 下一个峰值只属于下一轮
```
*/

//nb:cell
func perEpoch() {
	l := memlab.MustOpen()
	defer l.Close()
	weights := memlab.Must(tensor.Empty(l, tensor.Uint8, 64<<20))
	tab := memlab.NewTable("epoch", "batch activation", "max_memory_allocated (this epoch)", "peak since the start",
		"reserved at the end", "reserved after empty_cache()", "allocated after empty_cache()")
	runPeak, lastPeak, allocMoved, clean := int64(0), int64(0), int64(0), true
	for epoch, batch := range []int{512 << 20, 256 << 20, 128 << 20} {
		memlab.Check(ch2.Steps(l, 4, batch)) // four steps, one batch activation each, allocated and freed
		peak := l.MaxMemoryAllocated()
		runPeak, lastPeak = max(runPeak, peak), peak
		reserved, allocated := l.MemoryReserved(), l.MemoryAllocated()
		memlab.Check(l.EmptyCache())
		allocMoved += l.MemoryAllocated() - allocated
		clean = clean && peak == weights.Nbytes()+int64(batch) && l.MemoryReserved() == weights.Nbytes()
		tab.Row(epoch+1, memlab.FormatBytes(int64(batch)), memlab.FormatBytes(peak), memlab.FormatBytes(runPeak),
			memlab.FormatBytes(reserved), memlab.FormatBytes(l.MemoryReserved()), memlab.FormatBytes(l.MemoryAllocated()))
		l.ResetPeakMemoryStats()
	}
	tab.Show()
	memlab.Judge("with empty_cache() and reset_peak_memory_stats() at each epoch's end, each epoch's statistics are clean", memlab.HoldsIf(clean),
		"every epoch's peak was its own and reserved fell to the weights after it: %v; the last epoch peaked at %s, without the resets max_memory_allocated() would still say %s", clean, memlab.FormatBytes(lastPeak), memlab.FormatBytes(runPeak))
	memlab.Measured("empty_cache() moved memory_allocated by %s in all: it gives back cached memory, never a live tensor's",
		memlab.FormatBytes(allocMoved))
	memlab.Check(weights.Release())
}

/*md
Both calls do what the chapter wants: the peak column is each epoch's own, and reserved
memory drops to the weights between epochs. `empty_cache()` leaves `memory_allocated()`
where it was (the last column, and the second Measured line): it returns only what no
tensor uses. The price is that the next epoch's first allocations go back to `cudaMalloc`
— counted and timed in the next cell.

**Try it — predict first:** drop the `l.EmptyCache()` line. What does "reserved at the end"
show for epochs 2 and 3?

<details><summary>Answer</summary>

The first epoch's high-water mark, every time: the cached segment is never given back,
although later epochs need far less — and nothing else (another process, a later
larger request elsewhere) can use it.
</details>

### What the habit costs

Ten epochs of a hundred steps, each step one 256 MiB activation, with and without
`empty_cache()` at each epoch's end. On the simulated device `memlab.WithLatency()` makes
each `cudaMalloc` and `cudaFree` take the time it took on the H200 (memlab measured it);
on a GPU the calls take their own time.

```python
import time
for habit in (True, False):                         # one fresh process each
    start = time.perf_counter()
    for epoch in range(10):
        for step in range(100):
            act = torch.empty(256 * MiB, dtype=torch.uint8, device="cuda"); del act
        if habit:
            torch.cuda.empty_cache()
    torch.cuda.synchronize()
    s = torch.cuda.memory_stats()
    print(habit, s["num_device_alloc"], s["num_device_free"], time.perf_counter() - start)
```
*/

/*md:zh-CN
两个调用都达到了教材想要的效果：峰值一列是每一轮自己的峰值，已预留显存在两轮之间降到只剩权重。`empty_cache()` 不会改变 `memory_allocated()`（见最后一列和第二行实测）：它只还回没有任何张量在用的显存。代价是：下一轮最初的几次分配又得重新 `cudaMalloc`——下一个单元格会数一数、计一计时。

**动手试试——先预测：** 去掉 `l.EmptyCache()` 这一行。第 2、3 轮的“结束时已预留”会显示什么？

<details><summary>答案</summary>

每次都是第一轮的最高水位：缓存的段从不还回去，尽管后面几轮需要的少得多——别的东西（另一个进程、别处后来更大的申请）也用不上它。
</details>

### 这个习惯的代价

跑十轮，每轮一百步，每步一个 256 MiB 的激活值，分别在每一轮结束时调用和不调用 `empty_cache()`。在模拟设备上，`memlab.WithLatency()` 让每次 `cudaMalloc` 和 `cudaFree` 花掉它在 H200 上花的时间（memlab 实测过）；在 GPU 上，这些调用花的是它们自己的时间。

```python
import time
for habit in (True, False):                         # 各用一个全新的进程
    start = time.perf_counter()
    for epoch in range(10):
        for step in range(100):
            act = torch.empty(256 * MiB, dtype=torch.uint8, device="cuda"); del act
        if habit:
            torch.cuda.empty_cache()
    torch.cuda.synchronize()
    s = torch.cuda.memory_stats()
    print(habit, s["num_device_alloc"], s["num_device_free"], time.perf_counter() - start)
```
*/

//nb:cell
func perEpochCost() {
	for _, habit := range []bool{true, false} {
		l := memlab.MustOpen(memlab.WithLatency()) // the H200's cudaMalloc/cudaFree time, on the simulator
		start := time.Now()
		for range 10 { // epochs
			for range 100 { // steps: one 256 MiB activation each
				memlab.Check(memlab.Must(tensor.Empty(l, tensor.Uint8, 256<<20)).Release())
			}
			if habit {
				memlab.Check(l.EmptyCache())
			}
		}
		st := l.MemoryStats()
		memlab.Measured("empty_cache() every epoch: %v; cudaMalloc calls %d, cudaFree calls %d; the ten epochs took %s",
			habit, st["num_device_alloc"], st["num_device_free"], time.Since(start).Round(10*time.Microsecond))
		memlab.Check(l.Close())
	}
}

/*md
The habit costs one `cudaMalloc` and one `cudaFree` per cached segment per epoch — here
one of each per epoch, where the loop without it makes one `cudaMalloc` in all. Set the
Measured times beside the length of your own epoch: unless epochs are tiny, the calls
are lost in it. What the habit buys is the chapter's reason: memory the epoch cached is
given back for others.

**Try it — predict first:** make every step's activation a different size: loop
`for step := range 100` and allocate `(256 + step%4) << 20`. How many `cudaMalloc` calls does each habit make now?

<details><summary>Answer</summary>

With the habit, three an epoch — thirty in all; without it, three in all. Requests round up
to a multiple of 2 MiB, so the four sizes need three segments (256, 258 and 260 MiB), and
after each `empty_cache()` all three are made again. The habit's price grows with the
number of distinct sizes an epoch caches.
</details>
*/

/*md:zh-CN
这个习惯的代价，是每一轮、每个缓存的段都要多一次 `cudaMalloc` 和一次 `cudaFree`——这里每轮各一次，而不调用它的循环总共只 `cudaMalloc` 一次。把实测的时间和你自己一轮的时长放在一起比：除非一轮很短，这些调用都微不足道。这个习惯换来的，正是教材给出的理由：这一轮缓存的显存还给了别人。

**动手试试——先预测：** 让每一步的激活值大小都不同：循环改成 `for step := range 100`，申请 `(256 + step%4) << 20`。现在两种习惯各要调用多少次 `cudaMalloc`？

<details><summary>答案</summary>

调用这个习惯时每轮三次，总共三十次；不调用时总共只有三次。申请会向上取整到 2 MiB 的倍数，所以这四种大小只需要三个段（256、258 和 260 MiB），而每次 `empty_cache()` 之后三个段都要重新建。这个习惯的代价，随一轮里缓存的不同大小的数目而增长。
</details>
*/

/*md
### Two tenants on one device

> 教材原文：「比如你在一张卡上跑两个实验，各占50%，互不干扰。」
>
> In translation: "Say you run two experiments on one card, 50% each: they do not get in
> each other's way."

Two labs share one 8 GiB device, each with its own allocator, like two processes on one
GPU (`ch2.TwoTenants`: `memlab.Budget` opens the device, `memlab.SharedWith` puts the
second allocator on it — an 8 GiB device on every machine, a budget on a GPU as in 2.3).
Tenant A is greedy: it takes 1 GiB tensors until it runs out of memory. Then tenant B
asks for 3 GiB. First neither is capped, then both are capped at half the device
(`set_per_process_memory_fraction(0.5)`), and last both are capped at half and B asks for
its whole half, 4 GiB: the exact edge of the chapter's "50% each". In which cases is B
served?

```python
# in each process that shares the GPU, before its first allocation:
torch.cuda.set_per_process_memory_fraction(0.5)
held = []
try:                                                # the greedy tenant
    while True:
        held.append(torch.empty(2**30, dtype=torch.uint8, device="cuda"))
except torch.cuda.OutOfMemoryError as e:
    print(e)                                        # with a cap, the message says "allowed"
```
*/

/*md:zh-CN
### 一张卡上的两个租户

> 教材原文：「比如你在一张卡上跑两个实验，各占50%，互不干扰。」

两个 lab 共用一个 8 GiB 的设备，各有各的分配器，就像一块 GPU 上的两个进程（`ch2.TwoTenants`：`memlab.Budget` 打开设备，`memlab.SharedWith` 把第二个分配器放到它上面——在哪台机器上都是 8 GiB 的设备，在 GPU 上和 2.3 一样是卡上的一份额度）。租户 A 很贪婪：不停地申请 1 GiB 的张量，直到显存不足。然后租户 B 申请 3 GiB。先是两者都不设上限，再是两者都限制在设备的一半（`set_per_process_memory_fraction(0.5)`），最后两者都限制在一半、B 申请它的整整一半 4 GiB：这正是教材“各占50%”的边界。哪几种情形下 B 能得到满足？

```python
# 在共用这块 GPU 的每个进程里，第一次分配之前：
torch.cuda.set_per_process_memory_fraction(0.5)
held = []
try:                                                # 贪婪的租户
    while True:
        held.append(torch.empty(2**30, dtype=torch.uint8, device="cuda"))
except torch.cuda.OutOfMemoryError as e:
    print(e)                                        # 设了上限时，报错信息里有 "allowed"
```
*/

//nb:cell plot
func twoTenants() {
	runs := []ch2.Tenants{{Case: "neither capped", B: 3 << 30}, {Case: "both capped at half", B: 3 << 30}, {Case: "both at half, B asks 4 GiB", B: 4 << 30}}
	for i, c := range runs {
		runs[i] = memlab.Must(ch2.TwoTenants(c.Case, i > 0, c.B)) // an 8 GiB device, capped at half but in the first case: greedy A first, then B asks for c.B
		memlab.Measured("%s: greedy A holds %s; B's %s request: %s; the driver counts %s in use, %s of it outside both allocators", c.Case,
			memlab.FormatBytes(runs[i].A), memlab.FormatBytes(c.B), memlab.Outcome(runs[i].Err), memlab.FormatBytes(runs[i].Used), memlab.FormatBytes(runs[i].Outside))
	}
	memlab.Judge("set_per_process_memory_fraction limits how much memory the current process can use", memlab.HoldsIf(runs[1].A <= 4<<30 && runs[0].A > 4<<30),
		"greedy A held %s uncapped and %s capped at half", memlab.FormatBytes(runs[0].A), memlab.FormatBytes(runs[1].A))
	memlab.Judge("two experiments on one card, half of it each, do not get in each other's way", memlab.HoldsWhen(runs[1].Err == nil, runs[2].Err == nil),
		"capped at half, B's 3 GiB request: %s; its 4 GiB request: %s", memlab.Outcome(runs[1].Err), memlab.Outcome(runs[2].Err))
	memlab.Show(ch2plot.Tenants("2.4 two tenants on one device: what the driver counts", runs))
}

/*md
Uncapped, the greedy tenant takes every free byte and B's 3 GiB request fails; capped, A
stops at its half (its out-of-memory message names the cap, "… allowed") and B is served.
`set_per_process_memory_fraction` caps what *this* allocator may reserve; it does not see
anyone else. So a cap protects the *other* tenants, and the chapter is right only when
every experiment on the card sets its fraction.

The third case is the edge of "50% each". The fraction caps what an allocator reserves,
as a share of the device's *total*; the CUDA context's memory (the last bar) is in no
allocator and under no cap, yet takes room on the device. Here the two tenants share one
context; two real processes have one each, which leaves less room still. Two caps of 0.5
add up to the whole device and leave the context nowhere: the tenant that reaches its cap
second is refused *below* its cap. Fractions that leave room for the contexts (0.45 each,
say) keep the chapter's promise. And `mem_get_info()` would not have warned either
tenant: it reports the driver's free memory on the whole device, not what a tenant's cap
still allows.

**Try it — predict first:** in the second case, would capping only A be enough for B's 3 GiB? And capping only B? (Open the two labs yourself: `a := memlab.MustOpen(memlab.Budget(8 << 30))`, `b := memlab.MustOpen(memlab.SharedWith(a))`, then `ch2.CapHalf(a)` or `ch2.CapHalf(b)`, `ch2.Greedy(a)` and B's request.)

<details><summary>Answer</summary>

Capping only A, B is served. Capping only B, A takes the whole device first and B fails again: a cap protects the others, not its owner.
</details>


### Summary

- `memory_allocated()` is what live tensors hold; `memory_reserved()` the segments the
  allocator holds (cached or in use); `mem_get_info()` the driver's count of the whole
  device, the CUDA context and other processes included.
- The leak check compares `memory_allocated()` before and after, never
  `memory_reserved()`. The per-epoch habit keeps each epoch's statistics its own, at the
  price of a few `cudaMalloc` calls.
- `set_per_process_memory_fraction` caps one allocator; it protects the other tenants only
  if every tenant sets one, and caps that add up to the whole card leave the contexts no
  room.

**For discussion**

1. Two people share a GPU, each capped at 0.5. One of them still runs out of memory
   below the cap. What do you check first?
2. When is calling `empty_cache()` every epoch worth its `cudaMalloc` calls, and when not?
3. A test asserts that `memory_reserved()` returns to its starting value after a function
   runs. What does such a test catch, and what does it miss?
*/

/*md:zh-CN
不设上限时，贪婪的租户拿走了每一个空闲字节，B 申请 3 GiB 失败；设了上限后，A 停在自己的一半（它的 OOM 报错信息里写明了上限：“… allowed”），B 的申请得到满足。`set_per_process_memory_fraction` 限制的是*本*分配器能预留多少显存，它看不见别人。所以上限保护的是*其他*租户，教材的说法只有在卡上每个实验都设置了比例时才成立。

第三种情形正是“各占50%”的边界。比例限制的是分配器能预留的显存，以设备*总量*为基数；CUDA 上下文占的显存（最后一根柱子）不属于任何分配器，也不受任何上限约束，却实实在在占着设备上的空间。这里两个租户共用一个上下文；两个真实的进程各有一个，留下的空间还要更少。两个 0.5 加起来就是整个设备，给上下文留不出位置：第二个到达上限的租户会在*低于*自己上限的时候就被拒绝。给上下文留出余地的比例（比如各 0.45）才能兑现教材的承诺。`mem_get_info()` 也不会提醒任何一个租户：它报告的是驱动眼中整个设备的空闲显存，而不是某个租户的上限还允许多少。

**动手试试——先预测：** 在第二种情形里，只给 A 设上限够不够让 B 拿到 3 GiB？只给 B 设上限呢？（自己打开两个 lab：`a := memlab.MustOpen(memlab.Budget(8 << 30))`、`b := memlab.MustOpen(memlab.SharedWith(a))`，再调用 `ch2.CapHalf(a)` 或 `ch2.CapHalf(b)`、`ch2.Greedy(a)`，然后让 B 提出申请。）

<details><summary>答案</summary>

只给 A 设上限时，B 能得到满足。只给 B 设上限时，A 先拿走整个设备，B 再次失败：上限保护的是别人，而不是设上限的那一方。
</details>


### 小结

- `memory_allocated()` 是存活张量占用的显存；`memory_reserved()` 是分配器手里的段（无论缓存着还是在用）；`mem_get_info()` 是驱动眼中整个设备的情况，CUDA 上下文和其他进程都算在内。
- 检查泄漏要比较前后的 `memory_allocated()`，而不是 `memory_reserved()`。每一轮结束时的习惯让每一轮的统计只属于它自己，代价是多几次 `cudaMalloc`。
- `set_per_process_memory_fraction` 限制的是一个分配器；只有每个租户都设了上限，它才能保护别的租户，而加起来等于整张卡的上限不给上下文留任何余地。

**讨论**

1. 两个人共用一块 GPU，各自限制在 0.5。其中一个人仍然在低于上限时 OOM。你先查什么？
2. 每一轮都调用 `empty_cache()`，什么时候值得付出那些 `cudaMalloc`，什么时候不值得？
3. 一个测试断言函数运行之后 `memory_reserved()` 回到初始值。这样的测试能发现什么，又会漏掉什么？
*/
