package nb05

/*md
# 05 · What if: your own snapshot under other allocator settings

A PyTorch memory snapshot records every allocation and free of a run. memlab replays that
history through its re-implementation of PyTorch's caching allocator under other
settings — `expandable_segments`, `max_split_size_mb`, `roundup_power2_divisions`, a cap
with `set_per_process_memory_fraction`, garbage collection — and reports what PyTorch
would have measured: peak allocated and reserved memory, `cudaMalloc`/`cudaFree` counts,
retries, out-of-memory errors (with the Python line that failed) and fragmentation. No
GPU is needed: the replay runs on memlab's simulated device.

The package is [`whatif`](../../whatif/whatif.go) (`go doc memlab.dev/memlab/whatif`); the
same is a command: `go run ./cmd/memlab whatif my_snapshot.pickle
--conf expandable_segments:True --conf max_split_size_mb:128 --plot cmp.png`.
Every "Measured:" line below is printed by its cell from the replay; the same cells run as
`go test ./notebooks/...` and, without Jupyter, as `go run ./cmd/memlab lab -run 05`.

## Record a snapshot of your own program

Two lines around the part of your script you want to study (PyTorch 2.1 or later):

```python
torch.cuda.memory._record_memory_history(max_entries=1_000_000)   # before the first CUDA allocation
# ... your training or inference steps ...
torch.cuda.memory._dump_snapshot("my_snapshot.pickle")
```

Start recording before the program allocates: a history that begins later (or a ring
buffer of `max_entries` that wrapped) still replays, but `whatif` warns that the blocks
alive before its first event were re-made in address order. The pickle is read by a
decoder that accepts only the plain values PyTorch writes; it never runs code from the
file. To use yours, read it with `snapshot.ReadFile("my_snapshot.pickle")` in place of
`workloads.Load(...)`, which reads the snapshots that ship with memlab.

## A shipped training snapshot

We use snapshots that ship with memlab (`reference/workloads-2.11/`): GPT-2 (6 layers)
trained for three steps on an H200 under PyTorch 2.11's default settings, and the same
program recorded under four other settings, with PyTorch's own figures for each run.
The cell reads the default run's snapshot; in Python you would look at it so:

```python
import pickle
with open("gpt2_train__default.pickle", "rb") as f:
    snap = pickle.load(f)   # only for files you trust: pickle can run code
trace = snap["device_traces"][0]
print(len(trace), sum(e["action"] == "alloc" for e in trace), len(snap["segments"]))
print(snap["allocator_settings"])
```
*/

/*md:zh-CN
# 05 · 假如换个设置：用你自己的显存快照重放其他分配器设置

PyTorch 的显存快照（memory snapshot）记录了一次运行中的每一次分配和释放。memlab 把这段历史交给它用 Go 重新实现的 PyTorch 缓存分配器（caching allocator），在其他设置下重放（replay）——`expandable_segments`、`max_split_size_mb`、`roundup_power2_divisions`、用 `set_per_process_memory_fraction` 设的显存上限（cap）、垃圾回收阈值——并给出 PyTorch 在那种设置下会测到的数字：已分配和已预留显存的峰值、`cudaMalloc`/`cudaFree` 次数、重试次数、显存不足（OOM）错误（连同出错的那行 Python 代码）以及碎片化程度。整个过程不需要 GPU：重放在 memlab 的模拟设备上进行。

对应的包是 [`whatif`](../../whatif/whatif.go)（`go doc memlab.dev/memlab/whatif`）；同样的功能也有命令行：`go run ./cmd/memlab whatif my_snapshot.pickle --conf expandable_segments:True --conf max_split_size_mb:128 --plot cmp.png`。下面每一行「实测：」都由所在单元格根据重放结果打印；同样的单元格也会在 `go test ./notebooks/...` 中运行，没有 Jupyter 时还可以用 `go run ./cmd/memlab lab -run 05` 运行。

## 为你自己的程序录一份快照

在脚本里你想研究的那一段前后各加一行（PyTorch 2.1 及以上）：

```python
torch.cuda.memory._record_memory_history(max_entries=1_000_000)   # 放在第一次 CUDA 分配之前
# ……你的训练或推理步骤……
torch.cuda.memory._dump_snapshot("my_snapshot.pickle")
```

要在程序分配显存之前就开始记录：开始得晚的历史（或者 `max_entries` 大小的环形缓冲区已经绕回）照样可以重放，但 `whatif` 会警告：第一个事件之前就存活的块，是按地址顺序重新造出来的。读 pickle 的解码器只接受 PyTorch 写入的那些普通值，绝不执行文件里的代码。要换成你自己的快照，把下面的 `workloads.Load(...)`（它读取随 memlab 附带的快照）换成 `snapshot.ReadFile("my_snapshot.pickle")`。

## 随 memlab 附带的训练快照

我们使用 memlab 自带的快照（`reference/workloads-2.11/`）：GPT-2（6 层）在 H200 上用 PyTorch 2.11 的默认设置训练三步，同一程序又在另外四种设置下各录了一次，每次运行都附有 PyTorch 自己测得的数字。下面的单元格读取默认设置那次运行的快照；在 Python 里这样查看它：

```python
import pickle
with open("gpt2_train__default.pickle", "rb") as f:
    snap = pickle.load(f)   # 只用于你信任的文件：pickle 可能执行代码
trace = snap["device_traces"][0]
print(len(trace), sum(e["action"] == "alloc" for e in trace), len(snap["segments"]))
print(snap["allocator_settings"])
```
*/

import (
	"fmt"

	"memlab.dev/memlab/experiments/workloads"
	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/snapshot"
	"memlab.dev/memlab/whatif"
)

//nb:cell
func loadSnapshot() {
	s := memlab.Must(workloads.Load("gpt2_train__default.pickle")) // yours: snapshot.ReadFile("my_snapshot.pickle")
	own := memlab.Must(whatif.SnapshotSetting(s))
	allocs := 0
	for _, e := range s.Traces[0] {
		if e.Action == snapshot.ActionAlloc {
			allocs++
		}
	}
	fmt.Printf(lang.Text("devices: %d; stack frames recorded: %v; segments held at the end: %d")+"\n",
		s.Devices(), s.HasFrames(), len(s.Segments))
	memlab.Measured("the snapshot holds %d trace entries on device 0 (%d allocations), recorded under PYTORCH_CUDA_ALLOC_CONF=%q",
		len(s.Traces[0]), allocs, own.Conf.String())
}
