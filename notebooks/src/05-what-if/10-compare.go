package nb05

/*md
**Try it — predict first:** load `resnet_multiscale_train__default.pickle` instead. More trace entries and allocations than GPT-2's, or fewer?

<details><summary>Answer</summary>

More — about three times as many of each: the ResNet trains on images of several sizes, and every step allocates its own feature maps.
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
**动手试试——先预测：** 改为加载 `resnet_multiscale_train__default.pickle`。它的轨迹记录和分配次数比 GPT-2 多还是少？

<details><summary>答案</summary>

更多——每一项都大约是 GPT-2 的三倍：这个 ResNet 用多种尺寸的图像训练，每一步都要分配自己的特征图。
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

import (
	"memlab.dev/memlab/experiments/workloads"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/whatif"
)

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
	memlab.Show(res.Plot("GPT-2 training: reserved and allocated under four settings"))
}

/*md
Read the table from the left: the allocated peak is what the tensors need (it moves only
with rounding: `roundup_power2_divisions` rounds requests up), the reserved peak is what
the process holds from the GPU, and the gap between them is the cache. `peak inactive
split` is PyTorch's measure of fragmentation: free pieces of segments that also hold live
blocks, which cannot be given back. Expandable segments grow one mapped range instead of
making a segment per request, so that gap closes; `max_split_size_mb:128` keeps large
blocks from being split, which here costs more segments and a higher reserved peak.

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
从左往右读这张表：已分配峰值是张量真正需要的显存（只随取整变化：`roundup_power2_divisions` 会把请求向上取整），已预留峰值是进程从 GPU 持有的显存，两者之差就是缓存。`peak inactive split`（空闲拆分块峰值）是 PyTorch 衡量碎片化的指标：那些同时还装着存活块的段里，被拆分出来的空闲小块——段里还有块在用，这部分显存就还不回去。可扩展段（expandable segments）让同一段映射区间不断增长，而不是每个请求新建一个段，于是这个差距就消失了；`max_split_size_mb:128` 不让大块被拆分，在这里的代价是更多的段和更高的已预留峰值。

对照教材的建议：`max_split_size_mb:128` 确实让空闲拆分块峰值低于默认设置（表中 `default` 一行）——碎片少了，和教材说的一样——但已预留峰值反而升高：进程从 GPU 占住的显存更多了，而不是更少。可扩展段则把空闲拆分块峰值降到零，已预留峰值也跟着下降；PyTorch 自己的显存不足（OOM）报错信息推荐的也正是它（见第 3 节）。

**动手试试——先预测：** 在列表里加上 `"max_split_size_mb:512"`。它这一行和默认设置相比如何？再加上教材自己给的 `"max_split_size_mb:32"`：它的空闲拆分块峰值和已预留峰值会落在哪里？

<details><summary>答案</summary>

512 这一行和默认设置完全相同：这个程序分配的块没有一个达到 512 MiB，这个上限根本用不上——上限要设在你希望保持完整的那些块的大小之下。设成 32 时，空闲拆分块峰值还要更低，但已预留峰值是整个列表里最高的：不再拆分的那些大块，变成了更多完整的段占在手里。
</details>

*/
