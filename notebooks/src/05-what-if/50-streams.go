package nb05

import (
	"fmt"
	"maps"
	"slices"

	"memlab.dev/memlab/experiments/workloads"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/snapshot"
	"memlab.dev/memlab/whatif"
)

/*md
## 5 Several streams

Real jobs allocate on side streams (prefetch, communication, parallel branches). PyTorch
keeps free blocks per stream and reuses a block only on its own stream; a block handed to
another stream with `record_stream` becomes free only when that stream's work is done:
its `free_completed` entry comes later than its `free_requested`. The replay follows the
recorded stream of every event and completes those frees where the snapshot did. The
shipped `multistream_branches` runs two branches of a model on two side streams, as
one writes it in PyTorch:

```python
main = torch.cuda.current_stream()
s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
s1.wait_stream(main); s2.wait_stream(main)
with torch.cuda.stream(s1):
    a = branch_a(x)        # allocated on s1
with torch.cuda.stream(s2):
    b = branch_b(x)        # allocated on s2
x.record_stream(s1); x.record_stream(s2)
main.wait_stream(s1); main.wait_stream(s2)
a.record_stream(main); b.record_stream(main)   # freed for reuse only once main's work on them is done
y = a + b
```
*/

/*md:zh-CN
## 5 多个流

真实的作业会在侧流（side stream）上分配显存（预取、通信、并行分支）。PyTorch 按流（CUDA stream）分别保存空闲块，一个块只在它自己的流上被复用；用 `record_stream` 交给另一个流使用的块，要等那个流的工作完成才算真正空闲：它的 `free_completed` 条目出现得比 `free_requested` 晚。重放会跟随每个事件记录下来的流，并在快照里完成这些释放的位置完成它们。附带的 `multistream_branches` 在两个侧流上运行模型的两个分支，用 PyTorch 写出来是这样：

```python
main = torch.cuda.current_stream()
s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
s1.wait_stream(main); s2.wait_stream(main)
with torch.cuda.stream(s1):
    a = branch_a(x)        # 在 s1 上分配
with torch.cuda.stream(s2):
    b = branch_b(x)        # 在 s2 上分配
x.record_stream(s1); x.record_stream(s2)
main.wait_stream(s1); main.wait_stream(s2)
a.record_stream(main); b.record_stream(main)   # 要等主流上用到它们的工作完成，才能被释放复用
y = a + b
```
*/

//nb:cell plot
func severalStreams() {
	s := memlab.Must(workloads.Load("multistream_branches__default.pickle"))
	streams := map[uint64]int{}
	for _, e := range s.Traces[0] {
		if e.Action == snapshot.ActionAlloc {
			streams[e.Stream]++
		}
	}
	perStream := memlab.NewTable("stream", "allocations")
	for _, id := range slices.Sorted(maps.Keys(streams)) {
		perStream.Row(map[bool]string{true: "0 (the default stream)", false: fmt.Sprint(id)}[id == 0], streams[id])
	}
	perStream.Show()
	settings := memlab.Must(whatif.ParseSettings("", "expandable_segments:True", "max_split_size_mb:128"))
	res := memlab.Must(whatif.Replay(s, settings, whatif.Options{}))
	memlab.TableOf(res).Without("cudaFree", "retries", "OOMs").Show() // 0 in every run
	memlab.Measured("%d streams allocate; %d frees completed later than requested (cross-stream)", len(streams), workloads.DeferredFrees(s.Traces[0]))
	memlab.Measured("peak reserved %s by default, %s with expandable segments",
		memlab.FormatBytes(res.Runs[0].MaxReserved), memlab.FormatBytes(res.Runs[1].MaxReserved))
	memlab.Show(memplot.Compare("multistream_branches: reserved and allocated under three settings", res))
}

/*md
A figure with `[low, high]` beside it depends on GPU timing: the replay also completed
the cross-stream frees under other timings — as early as PyTorch could (the next
allocation), as late as the recording allows (a few times the wait the snapshot
recorded, by its clock; the next synchronisation for a free it did not time), and many
timings between —
and the brackets hold the figure's range over those replays (`Run.TimingRange`;
`Run.TimingSchedules` says how many); the figure itself is the one with the snapshot's
own timing.

**Try it — predict first:** load `resnet_multiscale_train__default.pickle` instead. How many streams allocate, and how many frees complete later than requested?

<details><summary>Answer</summary>

One stream, and no such free: a single-stream program has nothing that depends on GPU timing, which is why its predictions (section 2's Try it) hold in every figure.
</details>


### Where the prediction depends on GPU timing

When the GPU lets a cross-stream free complete is a matter of timing: PyTorch checks, at
the start of a later `malloc`, whether the other stream's work is done. Another run of the
same program completes those frees at other points, and no snapshot holds another run's
timing. The cell compares the replay of the default snapshot under each recorded setting
with what PyTorch measured in that run, as section 2 did for GPT-2, and lists every
figure that differs with the replay's range. PyTorch's side of the comparison is the
facts file of each run:

```python
import json
f = json.load(open("multistream_branches__max_split_size_mb_128.facts.json"))
print(f["memory_stats"]["inactive_split_bytes.all.peak"])
```
*/

/*md:zh-CN
`[low, high]` 标在旁边的数字取决于 GPU 的时序：重放还在其他时序下完成了这些跨流释放——最早到 PyTorch 可能完成的时刻（下一次分配），最晚到录制允许的时刻（按快照的时钟，是它记录的等待时间的几倍；快照没有计时的释放则到下一次同步），以及两者之间的许多种时序——方括号里就是这个数字在这些重放中的取值范围（`Run.TimingRange`；`Run.TimingSchedules` 说明试了多少种时序）；数字本身是按快照自己的时序得到的那个。

**动手试试——先预测：** 改为加载 `resnet_multiscale_train__default.pickle`。有几个流在分配？有几次释放比请求完成得晚？

<details><summary>答案</summary>

一个流，一次也没有：单流程序里没有任何取决于 GPU 时序的东西，所以它的预测（第 2 节的「动手试试」）每个数字都成立。
</details>


### 预测在哪里取决于 GPU 时序

GPU 什么时候让一次跨流释放完成，是个时序问题：PyTorch 在之后某次 `malloc` 开始时，才检查另一个流的工作是否已经完成。同一个程序再跑一次，这些释放会在别的时刻完成，而任何快照都不包含另一次运行的时序。下面的单元格像第 2 节对 GPT-2 那样，在每种录制过的设置下重放默认设置的快照，与 PyTorch 在那次运行中的实测值比较，并列出每个不相等的数字及其在重放中的范围。PyTorch 一侧的数字来自每次运行的 facts 文件：

```python
import json
f = json.load(open("multistream_branches__max_split_size_mb_128.facts.json"))
print(f["memory_stats"]["inactive_split_bytes.all.peak"])
```
*/

//nb:cell
func streamsVsPyTorch() {
	s := memlab.Must(workloads.Load("multistream_branches__default.pickle"))
	tab := memlab.NewTable("recorded under, figure", "replay", "range", "PyTorch")
	equal, differ, inside := 0, 0, 0
	for _, tag := range workloads.Settings {
		f := memlab.Must(workloads.ReadRun("multistream_branches__" + tag))
		r := memlab.Must(workloads.Predict(s, f))
		label := r.Setting.ShortLabel() + ":"
		for _, k := range workloads.Figures {
			if r.Stats[k] == f.Stats[k] {
				equal++
				continue
			}
			if differ++; label != "" {
				tab.Row(label) // the setting, then its figures that differ
				label = ""
			}
			lr, flagged := r.TimingRange[k]
			inside += map[bool]int{true: 1}[flagged && lr[0] <= f.Stats[k] && f.Stats[k] <= lr[1]]
			tab.Row(k, workloads.Format(k, r.Stats[k]), "["+workloads.Format(k, lr[0])+", "+workloads.Format(k, lr[1])+"]",
				workloads.Format(k, f.Stats[k]))
		}
	}
	tab.Show()
	memlab.Measured("%d of %d figures equal what PyTorch measured; of the %d that differ, %d lie inside the replay's timing range",
		equal, len(workloads.Figures)*len(workloads.Settings), differ, inside)
}

/*md
**Try it — predict first:** in the cell above, replace `"multistream_branches__"` by `"gpt2_train__"` and load `gpt2_train__default.pickle`. How many rows does the table of differing figures get?

<details><summary>Answer</summary>

None: a single-stream program has no cross-stream frees, and every figure equals PyTorch's — the table is empty.
</details>

Is that a fault of the replay, or does PyTorch itself measure different figures when the
same program runs again? The repository ships eight more runs of `multistream_branches`
under each setting, recorded one after another on the H200
(`reference/workloads-2.11/repeats/`). The cell collects, per setting, every figure that
PyTorch did not measure the same in all eight runs, and checks each measured value
against the replay's range. In PyTorch that is the same program run eight times, one
process after another, under one setting:

```python
import subprocess
for run in range(8):   # the same program and setting, one fresh process after another
    subprocess.run(["python", "train.py"], check=True)   # train.py prints memory_stats() at its end
```
*/

/*md:zh-CN
**动手试试——先预测：** 在上面的单元格里，把 `"multistream_branches__"` 换成 `"gpt2_train__"`，并加载 `gpt2_train__default.pickle`。不相等的数字组成的表格有几行？

<details><summary>答案</summary>

一行也没有：单流程序没有跨流释放，每个数字都和 PyTorch 的相等——表格是空的。
</details>

这是重放的毛病，还是同一个程序再跑一次时，PyTorch 自己就会测出不同的数字？仓库里另外附带了 `multistream_branches` 在每种设置下的八次运行，是在 H200 上一次接一次录下来的（`reference/workloads-2.11/repeats/`）。下面的单元格按设置收集八次运行中 PyTorch 测得的值不完全相同的每一个数字，并检查每个实测值是否落在重放的范围里。在 PyTorch 里，这就是在同一种设置下把同一个程序一个进程接一个进程地跑八次：

```python
import subprocess
for run in range(8):   # 同一个程序、同一种设置，一次一个全新的进程
    subprocess.run(["python", "train.py"], check=True)   # train.py 在结束时打印 memory_stats()
```
*/

//nb:cell
func repeatedRuns() {
	s := memlab.Must(workloads.Load("multistream_branches__default.pickle"))
	tab := memlab.NewTable("setting, figure", "PyTorch measured", "runs of 8", "replay range")
	varying, values, inside, flaggedN := 0, 0, 0, 0
	for _, tag := range workloads.Settings {
		runs := memlab.Must(workloads.Repeats("multistream_branches", tag)) // eight runs of one setting
		r := memlab.Must(workloads.Predict(s, runs[0]))
		tab.Row(r.Setting.ShortLabel() + ":") // the setting; below it, each figure that varied
		for _, k := range workloads.Figures {
			seen := workloads.Values(runs, k) // value → how many runs measured it
			if len(seen) < 2 {
				continue
			}
			lr, flagged := r.TimingRange[k]
			varying, flaggedN = varying+1, flaggedN+map[bool]int{true: 1}[flagged]
			name, span := k, "["+workloads.Format(k, lr[0])+", "+workloads.Format(k, lr[1])+"]"
			for _, v := range slices.Sorted(maps.Keys(seen)) {
				values, inside = values+1, inside+map[bool]int{true: 1}[flagged && lr[0] <= v && v <= lr[1]]
				tab.Row(name, workloads.Format(k, v), seen[v], span)
				name, span = "", "" // once a figure
			}
		}
	}
	tab.Show()
	memlab.Measured("%d figures took more than one value in eight runs of one program under one setting; the replay flags %d of them", varying, flaggedN)
	memlab.Measured("%d of the %d values PyTorch measured for them lie inside the replay's timing range", inside, values)
}

/*md
So for a multi-stream program the exact figure under another setting is not a property of
the program and the setting: the same run repeated gives different peaks of reserved
memory, device allocations and fragmentation, depending on how far the GPU lagged behind
the CPU when each `malloc` looked. What the replay can give — and gives — is every figure
that does not depend on timing exactly, each one that does with the range of timings it
tried, and, given a run's own completion points, that run's figures exactly: memlab's
tests (`go test -run 'TestPredictsRecordedSettings|TestRepeatedRuns' ./whatif`) move
each recorded run's completion points into the default snapshot and then every figure is
equal, so the policy is not what differs; see [BENCHMARKS.md](../../BENCHMARKS.md). For your
own multi-stream job: trust the figures without brackets, and read a bracketed one as a
range.

**Try it — predict first:** keep only the first two runs (`workloads.Values(runs[:2], k)`). Fewer figures varying than in eight runs, or none? And which figure never varies?

<details><summary>Answer</summary>

Fewer, but not none: two runs of one program under one setting already disagree. The allocated peak never varies — only figures that depend on when cross-stream frees complete do.
</details>

*/

/*md:zh-CN
所以对多流程序来说，某个设置下的确切数字并不是「程序 + 设置」本身的属性：同一次运行重复一遍，已预留显存的峰值、设备分配次数和碎片都会不同，取决于每次 `malloc` 检查时 GPU 落后 CPU 多远。重放能给出的——也确实给出了——是：每个不取决于时序的数字都精确；每个取决于时序的数字，都附上它所尝试过的时序下的范围；给定某次运行自己的完成时刻，就能精确给出那次运行的所有数字。memlab 的测试（`go test -run 'TestPredictsRecordedSettings|TestRepeatedRuns' ./whatif`）把每次录制运行的完成时刻移进默认设置的快照，之后每个数字都相等，可见不同的并不是策略；详见 [BENCHMARKS.md](../../BENCHMARKS.md)。对你自己的多流作业：不带方括号的数字可以放心用，带方括号的数字要当作一个范围来读。

**动手试试——先预测：** 只保留前两次运行（改成 `workloads.Values(runs[:2], k)`）。变化的数字会比八次运行时少，还是一个都没有？哪个数字从不变化？

<details><summary>答案</summary>

少一些，但不是没有：同一程序在同一设置下只跑两次，就已经不一致了。已分配峰值从不变化——会变的只是取决于跨流释放何时完成的那些数字。
</details>

*/
