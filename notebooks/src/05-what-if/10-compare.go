package nb05

import (
	"memlab.dev/memlab/experiments/workloads"
	"memlab.dev/memlab/explore"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/whatif"
)

/*md
**Try it — predict first:** load `resnet_multiscale_train__default.pickle` instead. More trace entries and allocations than GPT-2's, or fewer?

<details><summary>Answer</summary>

More — about three times as many of each: the ResNet trains on images of several sizes, and every step allocates its own feature maps.
</details>
*/

/*md:zh-CN
**动手试试——先预测：** 改为加载 `resnet_multiscale_train__default.pickle`。它的轨迹记录和分配次数比 GPT-2 多还是少？

<details><summary>答案</summary>

更多——每一项都大约是 GPT-2 的三倍：这个 ResNet 用多种尺寸的图像训练，每一步都要分配自己的特征图。
</details>
*/

/*md
### The history, event by event

PyTorch's viewer (https://pytorch.org/memory_viz, *Allocator State History*) replays a
snapshot's trace into the allocator's state after every event. `explore` does the same
here: move the slider, and the segment map beside the memory curve shows every segment
and its blocks after the event that the red line marks. The slider steps through a sample
of the events, evenly spaced, with the peaks among them; the view opens at the
fragmentation peak. It is the history the replays below start from: each of them
re-runs these events under another setting.
*/

/*md:zh-CN
### 逐个事件地看这段历史

PyTorch 的查看器（https://pytorch.org/memory_viz 的 *Allocator State History* 视图）会把快照里的轨迹逐个事件重放，画出每个事件之后分配器的状态。`explore` 在这里做同样的事：拖动滑块，显存曲线旁边的段分布图就显示红线所标事件之后的每个段和其中的块。滑块走过的是均匀抽取的一部分事件，几个峰值都在其中；视图打开时停在碎片峰值。下面的各次重放都从这段历史出发：它们在别的设置下把这些事件重新跑一遍。
*/

//nb:cell plot
func snapshotHistory() {
	s := memlab.Must(workloads.Load("gpt2_train__default.pickle"))
	h := memlab.Must(explore.FromSnapshot("GPT-2 training: the allocator's history", s))
	h.Show()
	at := h.FragmentationPeak()
	memlab.Measured("the fragmentation peak is event %d of %d (%s): %s inactive split in %d segments, %s allocated, %s reserved",
		at, h.Len(), h.Event(at).Action, memlab.FormatBytes(h.InactiveSplit(at)), len(memlab.Must(h.Segments(at))),
		memlab.FormatBytes(h.Allocated(at)), memlab.FormatBytes(h.Reserved(at)))
}

/*md
**Try it — predict first:** show `gpt2_train__expandable_segments_True.pickle` instead,
the same program recorded under `expandable_segments:True`. How many segments does the
map hold where the view opens, and at which peak does it open?

<details><summary>Answer</summary>

Two, one per pool: each expandable segment is one mapped range that grows as the program
asks for more, and the map draws a contiguous mapped range as one segment. Nothing is
ever inactive split — a free block of an expandable segment is not pinned, its pages can
be unmapped; PyTorch measured a peak of zero in that run — so the view opens at the
reserved peak, and its caption says so.
</details>

## 1 Compare settings

`whatif.ParseSettings` turns `PYTORCH_CUDA_ALLOC_CONF` strings into settings (`""` is
PyTorch's defaults); `whatif.Replay` replays the history under each of them (in
parallel) and returns one run per setting, with the figures `torch.cuda` would report
and the memory curves. `memlab.TableOf(res)` shows its table (the one `memlab whatif`
prints, settings in short: `expandable` for `expandable_segments:True`, `max_split 128`
for `max_split_size_mb:128`); `Plot` draws each setting's reserved (solid) and
allocated (dashed) memory over the trace's events, one colour per setting.

One of the settings is the one Chapter 2 recommends against fragmentation:

> 教材原文：「我建议，如果你的模型显存波动大，把这个值设小一点，比如max_split_size_mb:32，能减少碎片化。」
> — Chapter 2, 2.2, of `max_split_size_mb`: "My advice: if your model's memory use swings a
> lot, set this value smaller, e.g. max_split_size_mb:32; it reduces fragmentation."

In PyTorch each setting is a run of its own: the allocator reads `PYTORCH_CUDA_ALLOC_CONF`
once, before the first CUDA allocation, so the variable is set on the command line
(`PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128 python train.py`) and the figures are read
at the end of the run:

```python
s = torch.cuda.memory_stats()
print(s["allocated_bytes.all.peak"], s["reserved_bytes.all.peak"],
      s["num_device_alloc"], s["inactive_split_bytes.all.peak"])
```
*/

/*md:zh-CN
**动手试试——先预测：** 改为显示 `gpt2_train__expandable_segments_True.pickle`，也就是同一个程序在 `expandable_segments:True` 下录的快照。视图打开的那一帧里，段分布图上有几个段？视图停在哪个峰值？

<details><summary>答案</summary>

两个，每个内存池一个：每个可扩展段都是一段映射区间，程序要得越多它就长得越大，而段分布图把一段连续的映射区间画成一个段。任何时刻都没有非活跃分割块——可扩展段里的空闲块没有被钉住，它的页可以解除映射；PyTorch 在那次运行中测得的峰值也是零——所以视图停在已预留峰值，说明文字也会写明。
</details>

## 1 比较几种设置

`whatif.ParseSettings` 把 `PYTORCH_CUDA_ALLOC_CONF` 字符串解析成设置（`""` 表示 PyTorch 的默认设置）；`whatif.Replay` 在每种设置下（并行地）重放这段历史，每种设置返回一次运行（run），其中有 `torch.cuda` 会报告的数字和显存曲线。`memlab.TableOf(res)` 显示它的表格（就是 `memlab whatif` 打印的那张，设置用简称：`expandable` 指 `expandable_segments:True`，`max_split 128` 指 `max_split_size_mb:128`）；`Plot` 按轨迹中的事件顺序画出每种设置的已预留显存（实线）和已分配显存（虚线），每种设置一种颜色。

其中一种设置正是第 2 章为减少碎片化推荐的做法：

> 教材原文：「我建议，如果你的模型显存波动大，把这个值设小一点，比如max_split_size_mb:32，能减少碎片化。」（第 2 章 2.2 节）

在 PyTorch 里，每种设置都要单独跑一次：分配器只在第一次 CUDA 分配之前读一次 `PYTORCH_CUDA_ALLOC_CONF`，所以要在命令行里设置这个变量（`PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128 python train.py`），运行结束时再读这些数字：

```python
s = torch.cuda.memory_stats()
print(s["allocated_bytes.all.peak"], s["reserved_bytes.all.peak"],
      s["num_device_alloc"], s["inactive_split_bytes.all.peak"])
```
*/

//nb:cell plot
func compareSettings() {
	s := memlab.Must(workloads.Load("gpt2_train__default.pickle"))
	settings := memlab.Must(whatif.ParseSettings("", "expandable_segments:True",
		"max_split_size_mb:128", "roundup_power2_divisions:4"))
	res := memlab.Must(whatif.Replay(s, settings, whatif.Options{}))
	memlab.TableOf(res).Show()
	def := res.Runs[0]
	for _, r := range res.Runs[1:] {
		memlab.Measured("%s: peak reserved %s (%+.1f %% against the defaults' %s), peak inactive split %s",
			r.Setting.Label(), memlab.FormatBytes(r.MaxReserved),
			100*float64(r.MaxReserved-def.MaxReserved)/float64(def.MaxReserved),
			memlab.FormatBytes(def.MaxReserved), memlab.FormatBytes(r.PeakInactiveSplit))
	}
	memlab.Show(memplot.Compare("GPT-2 training: reserved and allocated under four settings", res))
}

/*md
Read the table from the left: the allocated peak is what the tensors need (it moves only
with rounding: `roundup_power2_divisions` rounds requests up), the reserved peak is what
the process holds from the GPU, and the gap between them is the cache. `peak inactive
split` is PyTorch's measure of fragmentation: free pieces of segments that also hold live
blocks, which cannot be given back. Expandable segments grow one mapped range instead of
making a segment per request, so that gap closes; `max_split_size_mb:128` keeps large
blocks from being split, which here costs more segments and a higher reserved peak. A
`{low, high}` beside a figure says that it depends on where the CUDA driver would put
device allocations — those the default run never made, and under another setting even
the ones it did make, which a run can get at other addresses or in another order: the
snapshot cannot say (the driver's choice also depends on memory outside PyTorch's
allocator), so the replay tried other placements and prints the figure's range over
them; the figure itself is the one with memlab's model of the driver.

Against the chapter's advice: `max_split_size_mb:128` does bring the peak inactive split
below the defaults' (the table's `default` row) — less fragmentation, as the chapter
says — but the reserved peak rises: the process holds more memory from the GPU, not
less. Expandable segments take the peak inactive split to zero and the reserved peak
down with it; they are also what PyTorch's own out-of-memory message recommends
(section 3).

**Try it — predict first:** add `"max_split_size_mb:512"` to the list. How does its row compare with the defaults'? Then add the chapter's own `"max_split_size_mb:32"`: where do its peak inactive split and its reserved peak land?

<details><summary>Answer</summary>

The 512 row equals the defaults': no block this program allocates is as large as 512 MiB, so the limit never applies — pick a limit below the sizes you want kept whole. With 32 the peak inactive split falls lower still, but the reserved peak is the highest in the list: the large blocks it no longer splits are held as more, whole segments.
</details>

*/

/*md:zh-CN
从左往右读这张表：已分配峰值是张量真正需要的显存（只随取整变化：`roundup_power2_divisions` 会把请求向上取整），已预留峰值是进程从 GPU 持有的显存，两者之差就是缓存。`peak inactive split`（非活跃分割块峰值）是 PyTorch 衡量碎片化的指标：那些同时还装着存活块的段里，被分割出来的空闲小块——段里还有块在用，这部分显存就还不回去。可扩展段（expandable segments）让同一段映射区间不断增长，而不是每个请求新建一个段，于是这个差距就消失了；`max_split_size_mb:128` 不让大块被分割，在这里的代价是更多的段和更高的已预留峰值。数字旁边的 `{low, high}` 表示这个数字取决于 CUDA 驱动把设备分配放在哪个地址——不光是默认运行里从未有过的那些，换了设置以后，连默认运行做过的同一批分配也可能落在别的地址、或者换了先后次序：快照回答不了这个问题（驱动的选择还取决于 PyTorch 分配器之外的显存），所以重放试了别的放法，花括号里是这个数字在这些放法下的范围；数字本身是按 memlab 的驱动模型得到的那个。

对照教材的建议：`max_split_size_mb:128` 确实让非活跃分割块峰值低于默认设置（表中 `default` 一行）——碎片少了，和教材说的一样——但已预留峰值反而升高：进程从 GPU 占住的显存更多了，而不是更少。可扩展段则把非活跃分割块峰值降到零，已预留峰值也跟着下降；PyTorch 自己的显存不足（OOM）报错信息推荐的也正是它（见第 3 节）。

**动手试试——先预测：** 在列表里加上 `"max_split_size_mb:512"`。它这一行和默认设置相比如何？再加上教材自己给的 `"max_split_size_mb:32"`：它的非活跃分割块峰值和已预留峰值会落在哪里？

<details><summary>答案</summary>

512 这一行和默认设置完全相同：这个程序分配的块没有一个达到 512 MiB，这个上限根本用不上——上限要设在你希望保持完整的那些块的大小之下。设成 32 时，非活跃分割块峰值还要更低，但已预留峰值是整个列表里最高的：不再分割的那些大块，变成了更多完整的段占在手里。
</details>

*/
