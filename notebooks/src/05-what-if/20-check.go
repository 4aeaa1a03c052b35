package nb05

/*md
## 2 Is the prediction right? Check it against PyTorch

The same program was also run on the H200 under each of four other settings, and PyTorch's
own figures for every run are in `*.facts.json` beside the snapshots. The cell below
replays the *default* snapshot under each run's setting (with the run's cap, if it had
one) and compares eight figures with what PyTorch measured in that other run: the peaks,
device allocations and frees, retries, OOMs, the segment peak and the fragmentation peak.

Each facts file was written at the end of its run, in a fresh process per setting
(memlab's recorder, `scripts/record/record_programs.py`, does this):

```python
# PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128 python train.py
import json, os
json.dump({"conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
           "total_memory": torch.cuda.mem_get_info()[1],
           "memory_stats": torch.cuda.memory_stats()},
          open("train__max_split_size_mb_128.facts.json", "w"))
```
*/

/*md:zh-CN
## 2 预测对不对？拿 PyTorch 来核对

同一个程序还在 H200 上分别用另外四种设置各跑了一次，每次运行 PyTorch 自己测得的数字都放在快照旁边的 `*.facts.json` 里。下面的单元格在每次运行的设置下（如果那次运行设了显存上限，也带上同样的上限）重放*默认设置*的快照，再把八个数字和 PyTorch 在那次运行中实测的值逐一比较：两个峰值、设备分配与释放次数、重试次数、OOM 次数、段数峰值和碎片峰值。

每个 facts 文件都是在各自运行结束时写下的，每种设置一个全新的进程（memlab 的录制脚本 `scripts/record/record_programs.py` 就是这样做的）：

```python
# PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128 python train.py
import json, os
json.dump({"conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
           "total_memory": torch.cuda.mem_get_info()[1],
           "memory_stats": torch.cuda.memory_stats()},
          open("train__max_split_size_mb_128.facts.json", "w"))
```
*/

import (
	"fmt"

	"memlab.dev/memlab/experiments/workloads"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
)

//nb:cell plot
func checkAgainstPyTorch() {
	s := memlab.Must(workloads.Load("gpt2_train__default.pickle"))
	tab := memlab.NewTable("recorded under", "peak reserved: replay", "PyTorch", "cudaMalloc: replay", "PyTorch", "figures equal")
	pred, torch := memplot.BarSeries{Name: "replay of the default snapshot"}, memplot.BarSeries{Name: "PyTorch, measured"}
	var names []string
	equal := 0
	for _, tag := range workloads.Settings {
		f := memlab.Must(workloads.ReadRun("gpt2_train__" + tag)) // PyTorch's figures of that run
		r := memlab.Must(workloads.Predict(s, f))                 // the replay under its setting
		n := workloads.Agree(r, f)                                // how many figures equal PyTorch's
		equal += n
		tab.Row(r.Setting.ShortLabel(), memlab.FormatBytes(r.MaxReserved), memlab.FormatBytes(f.Stats["reserved_bytes.all.peak"]),
			r.DeviceAllocs, f.Stats["num_device_alloc"], fmt.Sprintf("%d/%d", n, len(workloads.Figures)))
		names = append(names, r.Setting.ShortLabel())
		pred.Values = append(pred.Values, float64(r.MaxReserved)/(1<<20))
		torch.Values = append(torch.Values, float64(f.Stats["reserved_bytes.all.peak"])/(1<<20))
	}
	tab.Show()
	memlab.Measured("%d of %d figures of the GPT-2 replays equal what PyTorch measured under those settings", equal, len(workloads.Figures)*len(workloads.Settings))
	memlab.Show(memplot.Bars("GPT-2: peak reserved, predicted from the default snapshot vs measured", "MiB", names, pred, torch))
}

/*md
The prediction is not fitted to these files: the replay re-runs PyTorch's policy (the
same rules, in memlab's `allocator` package) on the default run's requests, and the
recorded runs of the other settings are only read here to compare. Where the policy makes
a device allocation that the default run did not, the replay must guess the address the
driver returns; that matters only when free blocks of equal size compete (`Run.Guessed`
counts such allocations).

**Try it — predict first:** replace `"gpt2_train__"` by `"resnet_multiscale_train__"` and load `resnet_multiscale_train__default.pickle`: a ResNet trained on images of several sizes — the case of the chapter's multi-scale warning (notebook 02, 2.3). How many of its figures equal PyTorch's?

<details><summary>Answer</summary>

All of them again, every figure under every recorded setting: a single-stream program's history fixes every figure the allocator reports. Load the same snapshot in section 1's cell too: expandable segments take its peak inactive split to zero; in section 3's cell they let it run under a smaller cap.
</details>

*/

/*md:zh-CN
这个预测不是对着这些文件拟合出来的：重放是把 PyTorch 的策略（同样的规则，实现在 memlab 的 `allocator` 包里）用在默认设置那次运行的请求上，其他设置的录制结果在这里只是读来比较的。当策略做了一次默认运行里没有的设备分配时，重放只能猜测驱动会返回哪个地址；只有在几个同样大小的空闲块相互竞争时，这一点才有影响（`Run.Guessed` 统计这样的分配）。

**动手试试——先预测：** 把 `"gpt2_train__"` 换成 `"resnet_multiscale_train__"`，并加载 `resnet_multiscale_train__default.pickle`：一个用多种尺寸的图像训练的 ResNet——正是教材里多尺度训练的那个警告（笔记本 02 的 2.3 节）。它有多少个数字和 PyTorch 相等？

<details><summary>答案</summary>

又是全部相等，每种录制过的设置下的每个数字都相等：单流程序的分配历史决定了分配器报告的每一个数字。把这个快照也放进第 1 节的单元格：可扩展段同样把它的非活跃分割块峰值降到零；放进第 3 节的单元格：用了可扩展段，它在更小的显存上限下也能跑完。
</details>

*/
