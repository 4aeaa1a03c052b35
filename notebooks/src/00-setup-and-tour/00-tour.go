package nb00

import (
	"fmt"

	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/tensor"
)

/*md
# 00 · Set-up check and a five-minute tour

This notebook checks that the Go kernel reaches memlab's packages, tells you which
device you are on, makes a first tensor and draws a first memory curve. If every cell
below runs, the set-up is done: go on to `02-memory-mechanics.ipynb`.

**Two editions.** Every notebook comes in two editions made from the same source: the
folder `en/` (English, this one) and `zh-CN/` (Simplified Chinese, in the terms of the
course's chapters) beside it in JupyterLab's file browser. Their code cells are the same and
print the same figures; the prose differs, and so do the "Measured:" lines, which the first
cell's `%env MEMLAB_LANG=en` makes print in English. What you open here is your own working
copy (under `workbook/`, which git ignores): edit freely; `make restore NB=00 EDITION=en`
puts a notebook back as it shipped.

**How cells run.** The kernel is [GoNB](https://github.com/janpfeifer/gonb). Each cell is
compiled into a fresh Go program and run: *declarations* (imports, functions, types)
persist from cell to cell, *runtime state does not*. So every experiment cell opens its
own lab in one line (`l := memlab.MustOpen()`), runs, and closes it (`defer l.Close()`).
Lines after `%%` are the body of `main`: a statement such as `fmt.Println(1)` needs it, and
a cell of statements without `%%` answers `expected declaration, found fmt` (with the path
of GoNB's temporary `main.go`) — put `%%` on the cell's first line. `memlab.Must(x, err)` returns `x` or stops the
cell with `err`; `memlab.Check(err)` stops it on an error; `memlab.Show` draws a figure.
The first cell imports the packages every later cell uses; its `%noautoget` spares every
cell GoNB's `go get` (all of memlab is in the checkout already: a package from elsewhere
needs `!*go get PATH` once). In any code cell, Tab completes a name and Shift-Tab shows its
documentation (gopls, ready a few seconds after the kernel starts).

## Which device?

`memlab.MustOpen()` with no options opens the device named by `MEMLAB_DEVICE` if that is
set, otherwise the first CUDA GPU if one answers, otherwise the **simulated device** (host
memory behaving like an 80 GiB GPU, with a CUDA context that already occupies some of
it). In front of the device sits memlab's re-implementation of PyTorch's CUDA caching
allocator. `Describe` says what was chosen and why; `MemGetInfo` is the driver's view,
what `nvidia-smi` would show.

In PyTorch:

```python
import torch
print(torch.cuda.get_device_name())
free, total = torch.cuda.mem_get_info()   # the driver's view, as nvidia-smi shows it
print(f"{free} bytes free of {total}: {total - free} in use before any tensor (the CUDA context)")
```
*/

/*md:zh-CN
# 00 · 环境检查与五分钟导览

这个笔记本检查 Go 内核能否找到 memlab 的各个包，告诉你当前用的是哪个设备，创建第一个张量（tensor），再画出第一条显存曲线。下面的单元格全部跑通，环境就配好了，接着打开 `02-memory-mechanics.ipynb`。

**两个版本。** 每个笔记本都有两个版本，出自同一份源码：JupyterLab 文件浏览器里的 `zh-CN/` 文件夹是简体中文版（就是你正在读的这一版，用的是课程教材里的术语），旁边的 `en/` 是英文版。两版的代码单元格一模一样，跑出的数字也一样；不同的只是说明文字，以及单元格打印的「实测：」行——第一个单元格里的 `%env MEMLAB_LANG=zh-CN` 让它们用中文打印。想对照英文说法时，打开英文版的同名笔记本即可。你打开的是自己的工作副本（在 git 忽略的 `workbook/` 目录下），可以随意修改；想恢复成发布时的样子，运行 `make restore NB=00 EDITION=zh-CN`。

**单元格是怎么运行的。** 内核是 [GoNB](https://github.com/janpfeifer/gonb)。每个单元格都会被编译成一个全新的 Go 程序再运行：*声明*（import、函数、类型）在单元格之间保留，*运行时状态不保留*。所以每个实验单元格都用一行代码打开自己的实验环境（`l := memlab.MustOpen()`），跑完再关掉（`defer l.Close()`）。`%%` 之后的各行就是 `main` 函数的函数体：像 `fmt.Println(1)` 这样的语句需要它；一个只有语句、没有 `%%` 的单元格会报 `expected declaration, found fmt`（附带 GoNB 临时 `main.go` 的路径）——在单元格第一行加上 `%%` 即可。`memlab.Must(x, err)` 返回 `x`，出错时用 `err` 终止本单元格；`memlab.Check(err)` 遇到错误就终止本单元格；`memlab.Show` 负责画图。第一个单元格导入后面所有单元格都要用的包；其中的 `%noautoget` 让 GoNB 不必在每个单元格之前都跑一遍 `go get`（memlab 的包都已在仓库里；要用别处的包，先运行一次 `!*go get 包路径`）。在任何代码单元格里，按 Tab 补全名字，按 Shift-Tab 查看它的文档（由 gopls 提供，内核启动几秒后即可使用）。

## 用的是哪个设备？

不带参数的 `memlab.MustOpen()` 这样选设备：设置了 `MEMLAB_DEVICE` 就用它指定的设备；否则，如果有 CUDA GPU 响应，就用第一块 GPU；再否则就用**模拟设备**（simulated device）——用主机内存模拟一块 80 GiB 的 GPU，其中一部分已经被 CUDA 上下文占用。设备前面是 memlab 用 Go 重新实现的 PyTorch CUDA 缓存分配器（caching allocator）。`Describe` 说明选中了哪个设备、为什么选它；`MemGetInfo` 是驱动眼中的显存，也就是 `nvidia-smi` 显示的数字。

用 PyTorch 写是这样：

```python
import torch
print(torch.cuda.get_device_name())
free, total = torch.cuda.mem_get_info()   # 驱动眼中的显存，与 nvidia-smi 一致
print(f"共 {total} 字节，空闲 {free}：还没有任何张量，已占用 {total - free}（CUDA 上下文）")
```
*/

//nb:cell
func whichDevice() {
	l := memlab.MustOpen()
	defer l.Close()
	fmt.Println(l.Describe())
	free, total := memlab.Must2(l.MemGetInfo())
	memlab.Measured("the driver reports %s free of %s: %s in use before any tensor (the CUDA context)",
		memlab.FormatBytes(int64(free)), memlab.FormatBytes(int64(total)), memlab.FormatBytes(int64(total-free)))
}

/*md
**Try it:** open `memlab.MustOpen(memlab.Sim("24GiB"))` instead: a simulated 24 GiB card,
whatever machine you are on. `memlab.AllocConf("max_split_size_mb:128")` as a second
option sets the allocator's `PYTORCH_CUDA_ALLOC_CONF`; `Describe` shows both.

## A first tensor

A tensor is a storage (one block of device memory from the allocator) plus a shape,
strides and a dtype. Even a 24-byte tensor takes a whole allocator block: requests are
rounded up to 512 bytes, and small ones are carved out of a 2 MiB segment that the
allocator asks the device for (one `cudaMalloc`) and then keeps. When the tensor is
released, its block goes back to the allocator's cache, not to the device — the
chapter's claim that the cell's last line checks:

> 教材原文：「你释放一个Tensor，它不立刻把显存还给操作系统，而是留在自己的缓存池里。」
> — Chapter 2, 2.2: "When you free a tensor, it does not give the memory back to the
> operating system at once, but keeps it in its own cache pool."

In PyTorch:

```python
x = torch.randn(2, 3, device="cuda")
print(x)
print("x.shape", x.shape, "x.stride()", x.stride(), "x.dtype", x.dtype, "x.device", x.device)
print(x.nbytes, torch.cuda.memory_allocated(), torch.cuda.memory_reserved())
del x
print(torch.cuda.memory_allocated(), torch.cuda.memory_reserved())   # the segment stays cached
```
*/

/*md:zh-CN
**动手试试：** 改用 `memlab.MustOpen(memlab.Sim("24GiB"))`：不论在什么机器上，得到的都是一块模拟的 24 GiB 显卡。再加上第二个选项 `memlab.AllocConf("max_split_size_mb:128")`，就设定了分配器的 `PYTORCH_CUDA_ALLOC_CONF`；`Describe` 会把两者都显示出来。

## 第一个张量

张量 = 一份张量存储（storage，分配器给出的一块显存，教材里叫「数据区」）+ 形状（shape）、步长（stride）和数据类型（dtype）这些元信息。哪怕只有 24 字节的张量，也要占分配器的一整个块（block）：请求的大小先向上取整到 512 字节的倍数，小请求再从一个 2 MiB 的段（segment）里切出来——这个段是分配器向设备申请来的（一次 `cudaMalloc`），申请之后就一直留在手里。张量释放后，它的块回到分配器的缓存里，而不是还给设备。这正是教材的说法，单元格的最后一行就来检验它：

> 教材原文：「你释放一个Tensor，它不立刻把显存还给操作系统，而是留在自己的缓存池里。」（第 2 章 2.2 节）

用 PyTorch 写是这样：

```python
x = torch.randn(2, 3, device="cuda")
print(x)
print("x.shape", x.shape, "x.stride()", x.stride(), "x.dtype", x.dtype, "x.device", x.device)
print(x.nbytes, torch.cuda.memory_allocated(), torch.cuda.memory_reserved())
del x
print(torch.cuda.memory_allocated(), torch.cuda.memory_reserved())   # 段仍留在缓存里
```
*/

//nb:cell
func firstTensor() {
	l := memlab.MustOpen()
	defer l.Close()
	x := memlab.Must(tensor.Randn(l, 0, tensor.Float32, 2, 3))
	fmt.Println(x)
	fmt.Println("x.shape", x.Shape(), "x.stride()", x.Strides(), "x.dtype", x.DType(), "x.device", x.Device())
	memlab.Measured("x.Nbytes() is %d bytes; memory_allocated() is %s and memory_reserved() %s",
		x.Nbytes(), memlab.FormatBytes(memlab.MemoryAllocated()), memlab.FormatBytes(memlab.MemoryReserved()))
	memlab.Check(x.Release()) // Python's del x
	memlab.Measured("after x.Release(): memory_allocated() %s, memory_reserved() %s (the segment stays cached)",
		memlab.FormatBytes(memlab.MemoryAllocated()), memlab.FormatBytes(memlab.MemoryReserved()))
}

/*md
`memlab.MemoryAllocated()` acts on the current lab — the last one opened — as
`torch.cuda.memory_allocated()` acts on the current device; `l.MemoryAllocated()` names
the lab. With no lab open the package-level functions stop the cell with a message
instead of answering 0.

**Try it:** make `x` 1000×1000 (4 million bytes): it no longer fits the small pool
(over 1 MiB), so the allocator reserves a 20 MiB large-pool segment instead of 2 MiB.

## A first memory curve

A `Recorder` listens to the allocator's events and records three numbers after each
one: **allocated** (bytes in blocks that live tensors hold), **reserved** (bytes in
segments the allocator holds from the device, in use or cached) and **driver-used**
(what the driver counts: reserved memory plus the CUDA context). Below, four tensors of
256 MiB to 1 GiB are allocated and released, then the cache is emptied. Watch
allocated fall at the releases while reserved stays up until `EmptyCache`, which gives
the cached segments back to the device:

> 教材原文：「它会释放所有未使用的缓存块，还给CUDA驱动。」
> — Chapter 2, 2.2, of `torch.cuda.empty_cache()`: "It releases all unused cached blocks
> and gives them back to the CUDA driver."

In PyTorch (the snapshot draws the same curve at https://pytorch.org/memory_viz):

```python
torch.cuda.memory._record_memory_history()      # record the allocator's events
ts = [torch.empty(i * 64, 1024, 1024, device="cuda") for i in range(1, 5)]   # i × 256 MiB
del ts
torch.cuda.empty_cache()
print(torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved(),
      torch.cuda.memory_stats()["num_device_alloc"])   # peaks and cudaMalloc calls
torch.cuda.memory._dump_snapshot("first_curve.pickle")
```
*/

/*md:zh-CN
`memlab.MemoryAllocated()` 作用于当前的实验环境（最后打开的那个），就像 `torch.cuda.memory_allocated()` 作用于当前设备；`l.MemoryAllocated()` 则指明是哪个实验环境。一个实验环境都没打开时，这些包级函数会给出一条说明并终止单元格，而不是返回 0。

**动手试试：** 把 `x` 改成 1000×1000（四百万字节）：它超过了 1 MiB，小块池（small pool）放不下，分配器于是预留一个 20 MiB 的大块池（large pool）段，而不是 2 MiB 的段。

## 第一条显存曲线

`Recorder` 监听分配器的事件，每个事件之后记下三个数：**已分配**（allocated，存活张量所占块的字节数）、**已预留**（reserved，分配器从设备拿到并持有的段的字节数，不论块是在用还是缓存着）和**驱动占用**（driver-used，驱动占用：已预留显存加上 CUDA 上下文）。下面先分配四个张量，从 256 MiB 到 1 GiB，再全部释放，最后清空缓存。注意看：释放时已分配曲线往下掉，已预留曲线却一直不动，直到 `EmptyCache` 把缓存着的段还给设备：

> 教材原文：「它会释放所有未使用的缓存块，还给CUDA驱动。」（第 2 章 2.2 节，说的是 `torch.cuda.empty_cache()`）

用 PyTorch 写是这样（导出的快照拖进 https://pytorch.org/memory_viz 就能看到同样的曲线）：

```python
torch.cuda.memory._record_memory_history()      # 开始记录分配器事件
ts = [torch.empty(i * 64, 1024, 1024, device="cuda") for i in range(1, 5)]   # i × 256 MiB
del ts
torch.cuda.empty_cache()
print(torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved(),
      torch.cuda.memory_stats()["num_device_alloc"])   # 峰值与 cudaMalloc 次数
torch.cuda.memory._dump_snapshot("first_curve.pickle")
```
*/

//nb:cell plot
func firstCurve() {
	l := memlab.MustOpen()
	defer l.Close()
	rec := l.Record()
	rec.Mark("allocate")
	var ts []*tensor.Tensor
	for i := 1; i <= 4; i++ {
		ts = append(ts, memlab.Must(tensor.Empty(l, tensor.Float32, i*64, 1024, 1024))) // i × 256 MiB
	}
	rec.Mark("release")
	memlab.Check(tensor.ReleaseAll(ts...))
	rec.Mark("empty_cache")
	memlab.Check(l.EmptyCache())
	rec.Stop()
	a, r := rec.Peak()
	memlab.Measured("%d allocator events; peak allocated %s, peak reserved %s; %d cudaMalloc calls",
		rec.Events(), memlab.FormatBytes(a), memlab.FormatBytes(r), rec.SegmentAllocs())
	memlab.Show(memplot.Curve("a first memory curve", rec))
}

/*md
**Try it:** release each tensor right after making it, largest first (`for i := 4; i >= 1;
i--`, with the `Release` in the loop): every later tensor is cut from the cached 1 GiB
segment, so there is one `cudaMalloc` and reserved memory peaks at 1 GiB. Smallest
first, each tensor is too large for what is cached, and all four segments are made.

## Where next

- `02-memory-mechanics.ipynb`: Chapter 2, how tensors sit in memory and how the caching
  allocator hands it out, caches it and fragments it.
- `04-reuse-and-sharing.ipynb`: Chapter 4, reusing memory (in-place operations, pools, a
  KV cache) in a small transformer.
- `05-what-if.ipynb`: for practitioners — your own PyTorch memory snapshot replayed under
  other allocator settings and caps, checked against what PyTorch measured.
- The exercises are in `exercises/` (one folder each, with a README and hints); you solve
  them in your working copy, `workbook/exercises/`, in notebook `06-exercises.ipynb` or an
  editor, and check one from the repository root with `go run ./cmd/memlab exercises check 1`.
- On a machine without Jupyter, the same cells run as a program:
  `go run ./cmd/memlab lab` (add `-device cuda` on a GPU).
*/

/*md:zh-CN
**动手试试：** 每个张量一创建就释放，并且从大到小来（`for i := 4; i >= 1; i--`，把 `Release` 放进循环里）：后面的张量都从缓存着的 1 GiB 段里切出来，于是只有一次 `cudaMalloc`，已预留显存的峰值就是 1 GiB。从小到大时，每个张量都比缓存里现有的块大，四个段一个也省不了。

## 接下来

- `02-memory-mechanics.ipynb`：第 2 章，张量在显存里怎么存放，缓存分配器怎样分配显存、缓存显存，又怎样造成碎片化（fragmentation）。
- `04-reuse-and-sharing.ipynb`：第 4 章，在一个小型 Transformer 里复用显存（原地操作、显存池、KV 缓存）。
- `05-what-if.ipynb`：面向实践者——把你自己程序的 PyTorch 显存快照（memory snapshot）放到别的分配器设置和显存上限下重放，并与 PyTorch 的实测数字核对。
- 练习在 `exercises/` 目录里（每个练习一个文件夹，附 README 和提示）；你在自己的工作副本 `workbook/exercises/` 里完成它们（在笔记本 `06-exercises.ipynb` 或编辑器里），在仓库根目录检查其中一个：`go run ./cmd/memlab exercises check 1`。
- 没有 Jupyter 的机器上，同样的单元格可以当作程序运行：`go run ./cmd/memlab lab`（在 GPU 上加 `-device cuda`）。
*/
