package nb05

import (
	"fmt"

	"memlab.dev/memlab/experiments/workloads"
	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/whatif"
)

/*md
## 3 Under a cap: would it run out of memory?

A cap on reserved memory (`torch.cuda.set_per_process_memory_fraction`, or `Cap` in
bytes) makes the allocator free its cache and retry before it gives up. `whatif.MinCap`
finds, for a setting, the smallest cap under which the job still runs (it bisects to
2 MiB); the cell then replays 2 MiB below it: the first OOM comes with PyTorch's message
and, when the snapshot recorded them, the Python frames of the allocation that failed.

Such an OOM is what Chapter 2 explains in 2.3: memory is still there, in the cache, but
not in one piece large enough for the request —

> 教材原文：「缓存分配器手里有很多小块，但连续的大块不够。」
> — Chapter 2, 2.3: "The caching allocator holds many small blocks, but not enough
> contiguous large ones."

In PyTorch a cap is a fraction of the card, set before the run:

```python
cap = 5 << 30   # bytes
torch.cuda.set_per_process_memory_fraction(cap / torch.cuda.get_device_properties(0).total_memory)
try:
    train()
except torch.OutOfMemoryError as e:
    print(e)   # "CUDA out of memory. Tried to allocate ..."
```
*/

/*md:zh-CN
## 3 设了显存上限：会不会 OOM？

给已预留显存设一个上限（`torch.cuda.set_per_process_memory_fraction`，或者以字节为单位的 `Cap`），分配器在放弃之前会先释放缓存、再重试一次。`whatif.MinCap` 为一种设置找出作业仍能跑完的最小上限（用二分法，精确到 2 MiB）；单元格随后在比它低 2 MiB 的上限下重放：第一次 OOM 会带着 PyTorch 的报错信息出现，如果快照录下了 Python 调用栈，还会给出失败的那次分配所在的 Python 代码行。

这样的 OOM 正是教材 2.3 节讲的情形：显存其实还有，就在缓存里，只是没有一整块大到能满足这次请求——

> 教材原文：「缓存分配器手里有很多小块，但连续的大块不够。」（第 2 章 2.3 节）

在 PyTorch 里，上限是整张卡的一个比例，在运行之前设置：

```python
cap = 5 << 30   # 字节
torch.cuda.set_per_process_memory_fraction(cap / torch.cuda.get_device_properties(0).total_memory)
try:
    train()
except torch.OutOfMemoryError as e:
    print(e)   # "CUDA out of memory. Tried to allocate ..."
```
*/

//nb:cell plot
func underCap() {
	s := memlab.Must(workloads.Load("gpt2_train__default.pickle"))
	var below []whatif.Setting
	for _, st := range memlab.Must(whatif.ParseSettings("", "expandable_segments:True")) {
		c := memlab.Must(whatif.MinCap(s, st, whatif.Options{}))
		memlab.Measured("%s: the smallest cap without OOM is %s", st.Label(), memlab.FormatBytes(c))
		st.Cap = c - 2<<20
		below = append(below, st)
	}
	res := memlab.Must(whatif.Replay(s, below, whatif.Options{}))
	for _, r := range res.Runs {
		if o := r.FirstOOM; o != nil {
			fmt.Printf(lang.Text("%s: %d OOMs; the first at event %d:")+"\n  %s\n", lang.Label(r.Setting.Label()), r.OOMs, o.Event, o.Message)
			if n := r.ExpandableNote(); n != "" {
				fmt.Printf("  %s\n", lang.Text(n))
			}
			for _, fr := range o.Frames[:min(3, len(o.Frames))] {
				fmt.Printf("    %s:%d %s\n", fr.Filename, fr.Line, fr.Name)
			}
			if len(o.Frames) == 0 {
				fmt.Println("  " + lang.Text("(the snapshot recorded no Python frames for this allocation)"))
			}
		}
	}
	memlab.Show(memplot.Compare("GPT-2 training, 2 MiB below each setting's smallest cap", res))
}

/*md
Expandable segments need a smaller cap: the cache they keep can be unmapped page by page
when the cap is reached, while fixed segments are released only whole. The message is
the one PyTorch prints, with the cap ("allowed") and what the cache held at that moment.
Read it as the chapter's 2.3: the memory "reserved by PyTorch but unallocated" was free
when the request failed, yet no free block was large enough — and the message's own
advice is `expandable_segments:True`, "to avoid fragmentation".

**Try it — predict first:** set `st.Cap = c` instead of `c - 2<<20`. How many OOM messages are printed?

<details><summary>Answer</summary>

None: at exactly the smallest cap both replays run to the end without an OOM — that is what `MinCap` promises. Load `resnet_multiscale_train__default.pickle`, the chapter's multi-scale case: again expandable segments get by with a smaller cap.
</details>

*/

/*md:zh-CN
可扩展段需要的上限更小：到达上限时，它缓存着的显存可以一页一页地解除映射，而固定的段只能整段释放。报错信息就是 PyTorch 打印的那条，里面有上限（"allowed"）以及那一刻缓存里有多少显存。按教材 2.3 节来读：失败的那一刻，"reserved by PyTorch but unallocated"（已预留但未分配）的那部分显存是空闲的，可没有一个空闲块大到够用——而报错信息自己给出的建议就是 `expandable_segments:True`，"to avoid fragmentation"（以避免碎片化）。

**动手试试——先预测：** 把 `st.Cap = c - 2<<20` 改成 `st.Cap = c`。会打印几条 OOM 信息？

<details><summary>答案</summary>

一条也没有：正好在最小上限时，两次重放都一路跑到底、不会 OOM——这正是 `MinCap` 所保证的。再换成教材里多尺度训练那个例子的快照 `resnet_multiscale_train__default.pickle`：同样是可扩展段用更小的上限就够了。
</details>

*/
