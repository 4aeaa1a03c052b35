package nb04

//nb:meta {"memlab": {"plot_per_section": true}}

/*md
# 04 · Reuse and sharing

Chapter 4 in experiments: reusing memory instead of allocating it again — in-place
operations and their hazards (4.1), views that share storage and the operations that
quietly copy (4.2), pools: the caching allocator, a fixed-shape `TensorPool` and KV-cache
pools (4.3) — and all three together in a small transformer serving variable-length
requests (4.4).

Every experiment's code is in its cell: tensor calls (`Relu_`, `Add_`, `View`, `Narrow`,
`Release` — Python's `del`), the pools of package [`pool`](../../pool/doc.go) and the
transformer of package [`model`](../../model/model.go), with the `torch.cuda` memory API
under its Go name (`MemoryAllocated`, `MaxMemoryAllocated`, `ResetPeakMemoryStats`, …).
Each cell opens its own lab (`memlab.MustOpen()`: a GPU if there is one, the simulated
device otherwise) and closes it: GoNB keeps declarations between cells, not state. Every
"Measured:" line is printed by the cell from what it measured, and each experiment ends
with a **Try it**. The same cells run as `go test ./notebooks/...` and, without Jupyter,
as `go run ./cmd/memlab lab -run 04`; section 4.4 on a GPU is
`go run ./cmd/memlab ch4 -device cuda -size large`.
*/

/*md:zh-CN
# 04 · 显存复用与张量共享 (reuse and sharing)

用实验走一遍第 4 章：与其重新分配显存，不如复用已有的显存——原地操作 (in-place operation) 及其陷阱（4.1）；共享同一块存储的张量视图 (view)，以及那些悄悄拷贝数据的操作（4.2）；显存池化 (memory pooling)：作为池子的缓存分配器 (caching allocator)、固定形状的 `TensorPool` 和 KV 缓存池（4.3）；最后把三者合在一起，用在一个处理变长请求的小型 Transformer 推理服务上（4.4）。

每个实验的代码都写在它自己的单元格里：张量调用（`Relu_`、`Add_`、`View`、`Narrow`、`Release`——相当于 Python 的 `del`）、[`pool`](../../pool/doc.go) 包里的各种池、[`model`](../../model/model.go) 包里的 Transformer，以及换成 Go 名字的 `torch.cuda` 显存 API（`MemoryAllocated`、`MaxMemoryAllocated`、`ResetPeakMemoryStats` 等）。每个单元格自己打开一个实验环境（`memlab.MustOpen()`：有 GPU 就用 GPU，否则用模拟设备），用完即关闭：GoNB 在单元格之间只保留声明，不保留运行状态。每一行“实测：”都是单元格根据自己的测量结果打印出来的；每个实验最后都有一个 **动手试试**。同样的单元格也可以用 `go test ./notebooks/...` 运行，或者不经 Jupyter，直接 `go run ./cmd/memlab lab -run 04`；4.4 节在 GPU 上的完整版本是 `go run ./cmd/memlab ch4 -device cuda -size large`。
*/
