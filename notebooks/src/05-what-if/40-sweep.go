package nb05

import (
	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/experiments/workloads"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/whatif"
)

/*md
## 4 Search the settings

`whatif.Sweep` tries `max_split_size_mb` × `roundup_power2_divisions` ×
`expandable_segments` (and, under a cap, `garbage_collection_threshold`) around a base
setting. Its `Runs` are the settings whose replay ran through, lowest reserved peak first;
its `Stopped` are those whose replay ran out of memory where the recorded run did not (or
served a request the recorded run failed) and stopped there.

In PyTorch the same search is one run of the program per setting, each on the GPU:

```python
import itertools, os, subprocess
for ms, rd, ex in itertools.product(["", "max_split_size_mb:128,"], ["", "roundup_power2_divisions:4,"],
                                    ["expandable_segments:False", "expandable_segments:True"]):
    env = {**os.environ, "PYTORCH_CUDA_ALLOC_CONF": ms + rd + ex}
    subprocess.run(["python", "train.py"], env=env, check=True)   # train.py prints memory_stats()
```
*/

/*md:zh-CN
## 4 搜索设置

`whatif.Sweep` 围绕一个基准设置，尝试 `max_split_size_mb` × `roundup_power2_divisions` × `expandable_segments` 的各种组合（设了显存上限时还有 `garbage_collection_threshold`），结果的 `Runs` 是重放跑完全程的设置，已预留峰值最低的排在最前面；`Stopped` 是重放中途停下的设置：在录制的运行没有 OOM 的地方显存不足，或者满足了录制的运行失败的那次请求。

在 PyTorch 里，同样的搜索意味着每种设置都在 GPU 上把程序跑一遍：

```python
import itertools, os, subprocess
for ms, rd, ex in itertools.product(["", "max_split_size_mb:128,"], ["", "roundup_power2_divisions:4,"],
                                    ["expandable_segments:False", "expandable_segments:True"]):
    env = {**os.environ, "PYTORCH_CUDA_ALLOC_CONF": ms + rd + ex}
    subprocess.run(["python", "train.py"], env=env, check=True)   # train.py 打印 memory_stats()
```
*/

//nb:cell plot
func sweepSettings() {
	s := memlab.Must(workloads.Load("gpt2_train__default.pickle"))
	base := whatif.Setting{Conf: allocator.DefaultConfig()}
	sweep := memlab.Must(whatif.Sweep(s, base, whatif.Options{}))
	runs, kept := sweep.Runs, 0
	var sameAsDefaults []string
	for _, r := range runs {
		kept += 1 + len(r.Alike) // one row for every setting with the same figures
		if r.Setting.Label() == "default" {
			for _, a := range r.Alike {
				sameAsDefaults = append(sameAsDefaults, a.Label())
			}
		}
	}
	top := runs[:min(8, len(runs))]
	memlab.TableOf(&whatif.Result{Runs: top}).Without("cudaFree", "retries").Show() // 0 in every run
	var names []string
	reserved := memplot.BarSeries{Name: "peak reserved"}
	allocated := memplot.BarSeries{Name: "peak allocated"}
	for _, r := range top {
		names = append(names, r.Setting.ShortLabel())
		reserved.Values = append(reserved.Values, float64(r.MaxReserved)/(1<<20))
		allocated.Values = append(allocated.Values, float64(r.MaxAllocated)/(1<<20))
	}
	memlab.Measured("%d of %d settings replayed without OOM, %d different results; the lowest reserved peak, %s, is %s",
		kept, sweep.Tried, len(runs), memlab.FormatBytes(top[0].MaxReserved), top[0].Setting.Label())
	memlab.Measured("the default setting's figures, also under %s", sameAsDefaults)
	memlab.Show(memplot.Bars("GPT-2: the settings with the lowest reserved peak", "MiB", names, reserved, allocated))
}

/*md
The best settings are the ones that let the cache shrink and grow without fragmenting;
the allocated bars show what rounding costs in memory the tensors do not use. Settings
with the same figures are one row, the one with the fewest options set; the others are
in its run's `Alike`. The defaults' row stands for the `max_split_size_mb` values the
second Measured line names: no block reaches those limits, so they change nothing. Every
smaller limit the sweep tries reserves more than the defaults (print all of `runs` to see
them), which is section 1's answer to the chapter's advice again.

**Try it — predict first:** sweep around a cap, `base := whatif.Setting{Conf: allocator.DefaultConfig(), Cap: 6 << 30}`. More settings tried, or fewer? And the highest reserved peak among the runs kept?

<details><summary>Answer</summary>

More: `garbage_collection_threshold` joins the search once there is a cap (the Measured line counts them). No run kept reserves more than the 6 GiB cap.
</details>

*/

/*md:zh-CN
最好的设置，是能让缓存自由伸缩而不产生碎片的设置；已分配那一列柱子则显示取整的代价——张量用不上、却被占掉的显存。数字完全相同的几种设置只占一行，用其中改动选项最少的那一种代表，其余的放在这次运行的 `Alike` 里。默认设置那一行同时代表第二行「实测：」列出的那几个 `max_split_size_mb` 取值：没有哪个块大到这些限制，所以它们什么也没改变。搜索尝试的每一个更小的限制，已预留显存都比默认设置多（把 `runs` 全部打印出来就能看到），这再一次印证了第 1 节对教材建议的回答。

**动手试试——先预测：** 围绕一个显存上限来搜索，`base := whatif.Setting{Conf: allocator.DefaultConfig(), Cap: 6 << 30}`。尝试的设置会更多还是更少？留下来的运行里，已预留峰值最高是多少？

<details><summary>答案</summary>

更多：有了上限，`garbage_collection_threshold` 也加入了搜索（实测一行会数出来）。留下来的运行没有一个的已预留显存超过 6 GiB 的上限。
</details>

*/
