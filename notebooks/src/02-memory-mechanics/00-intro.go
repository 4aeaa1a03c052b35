package nb02

//nb:meta {"memlab": {"plot_per_section": true}}

/*md
# 02 · Memory mechanics

Chapter 2 in experiments: how a tensor sits in device memory (2.1), how PyTorch's
caching allocator hands memory out and keeps it (2.2), how that memory fragments and
what helps (2.3), and the `torch.cuda` functions that show all of it (2.4).

Every experiment's code is in its cell: tensor calls (`tensor.Empty`, `View`, `Narrow`,
`Release` — Python's `del`) and the `torch.cuda` memory API under its Go name
(`MemoryAllocated`, `EmptyCache`, …). Before each cell, a `python` block gives the
PyTorch lines the experiment stands for. Where a cell checks one of the chapter's claims,
the chapter's sentence is quoted in the original Chinese (教材原文) with a translation,
and the text before the cell asks what will happen; the cell answers with one verdict
line, computed from what it measured —
`Chapter: … | measured: … → holds` (or `does not hold`, `depends`, `partly holds`) — and
the text after it explains. "Measured:" lines report the other numbers. Each experiment
ends with a **Try it**: a change to make and a question — predict the answer, run the
changed cell, then open the collapsed answer. Each section ends with a summary and
questions for discussion. Helper code that would stand in the way of the idea (the
comparison with PyTorch's recordings, the fragmenting workload, the remedies' table, the
two tenants) lives in the package `experiments/ch2` (`go doc memlab.dev/memlab/experiments/ch2`).

**How cells run.** GoNB compiles each cell into a fresh Go program: declarations
(imports, functions, types) persist from cell to cell, runtime state does not, so every
experiment opens its own lab (`memlab.MustOpen()`: a GPU if there is one, otherwise the
simulated device) and closes it at the end. Experiments about running out of memory open
a device of a given size, `memlab.Budget(n)`: the simulator is made that large, and on a
GPU the lab gets an n-byte budget on the card, so the verdicts are the same on both. Lines after `%%` are the body of `main`.
`memlab.Must` and `memlab.Check` stop a cell at the first error; `memlab.Show` draws a
figure. Every "Measured:" line is printed by the cell from what it measured; the same
cells run as `go test ./notebooks/...` and, without Jupyter, as `go run ./cmd/memlab lab`.
*/

/*md:zh-CN
# 02 · 显存机制 (memory mechanics)

用实验把第 2 章走一遍：张量在显存里怎样存放（2.1），PyTorch 的缓存分配器 (caching allocator) 怎样把显存分出去、又怎样把它留在自己手里（2.2），这些显存怎样变得碎片化、哪些办法真正管用（2.3），以及能把这一切看清楚的 `torch.cuda` 函数（2.4）。

每个实验的代码都在它自己的单元格里：张量操作（`tensor.Empty`、`View`、`Narrow`、`Release`——相当于 Python 的 `del`），以及换成 Go 名字的 `torch.cuda` 显存 API（`MemoryAllocated`、`EmptyCache` ……）。每个单元格前面有一段 `python` 代码，写出这个实验在 PyTorch 里对应的几行。凡是检验教材论断的地方，都先引用教材原文，单元格之前的文字只提问：会发生什么？单元格根据自己的测量结果打印一行结论——`教材：… ｜ 实测：… → 成立`（或 `不成立`、`视情况`、`部分成立`）——之后的文字再做解释。“实测：”各行报告其余的数字。每个实验最后都有一条 **动手试试**：改动一处，回答一个问题——先预测答案，运行改过的单元格，再展开折叠的答案核对。每一节末尾有小结和几个供讨论的问题。那些会挡住思路的辅助代码（与 PyTorch 录制结果的对照、会产生碎片的工作负载、各种缓解办法的汇总表、两个租户的实验）放在 `experiments/ch2` 包里（`go doc memlab.dev/memlab/experiments/ch2`）。

**单元格怎样运行。** GoNB 把每个单元格编译成一个全新的 Go 程序：声明（import、函数、类型）在单元格之间保留，运行时状态则不保留。所以每个实验都打开自己的 lab（`memlab.MustOpen()`：有 GPU 就用 GPU，没有就用模拟设备），并在结束时关闭它。关于显存不足的实验会打开一个指定大小的设备 `memlab.Budget(n)`：模拟设备就建成这么大，在 GPU 上 lab 则在卡上得到 n 字节的额度，所以两种设备上的结论相同。`%%` 之后的各行就是 `main` 的函数体。`memlab.Must` 和 `memlab.Check` 遇到第一个错误就让单元格停下；`memlab.Show` 负责画图。每一行“实测：”都由单元格根据自己的测量结果打印；同样的单元格也会作为 `go test ./notebooks/...` 运行，不用 Jupyter 时还可以用 `go run ./cmd/memlab lab` 运行。
*/
