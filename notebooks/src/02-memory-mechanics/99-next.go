package nb02

import "memlab.dev/memlab/progress"

/*md
## Exercises and progress (练习与进度)

Thirteen exercises go with this notebook, one concept each: you write the code, the
tests say in words what PyTorch would have done and why. Do them in order; 15 and 16
work on memlab's own lab, as the notebook's cells do.

- §2.1 Tensor storage and views:
  [1 · Row-major strides](../../exercises/01-strides/README.md),
  [2 · Is it contiguous?](../../exercises/02-contiguous/README.md),
  [3 · When is `view` possible?](../../exercises/03-view/README.md),
  [11 · What a view keeps alive](../../exercises/11-views-keep-alive/README.md)
- §2.2 The caching allocator:
  [4 · Rounding a request: `round_size`](../../exercises/04-round-size/README.md),
  [5 · Which pool, and how big a segment?](../../exercises/05-segment-size/README.md),
  [6 · Best fit, and the oversize rules](../../exercises/06-best-fit/README.md),
  [7 · Splitting a block](../../exercises/07-split/README.md),
  [8 · Freeing and merging](../../exercises/08-merge/README.md)
- §2.3 Fragmentation: [10 · Measuring fragmentation](../../exercises/10-fragmentation/README.md),
  [15 · Fitting a workload in its budget](../../exercises/15-fit-the-budget/README.md)
- §2.4 The `torch.cuda` memory API:
  [9 · `memory_allocated` vs `memory_reserved`](../../exercises/09-stats/README.md),
  [16 · The leak check, and two tenants on one card](../../exercises/16-leak-check/README.md)

Solve each in your working copy, `workbook/exercises/` (git ignores it; the tracked
`exercises/` is the instructor's): in notebook `06-exercises.ipynb`, whose cells save your
code there and check it, or in an editor (`workbook/exercises/01-strides/strides.go`), then
check it from the repository's root (a terminal, or JupyterLab's File → New → Terminal) —
exercise 1 here:

```sh
go run ./cmd/memlab exercises check 1
```

`go run ./cmd/memlab exercises hint 1` shows its next hint. The cell below shows where you
stand on this notebook's exercises, in your working copy: it runs their tests as
`memlab exercises list` does (an exercise you have not touched is "not started" at once; the tests run only for those you
changed, and again only when they change). Every term the notebook uses, in Chinese, English, PyTorch and memlab:
the [glossary](../../notebooks/GLOSSARY.md). Next notebook: `04-reuse-and-sharing.ipynb`.
*/

/*md:zh-CN
## 练习与进度 (Exercises and progress)

本笔记本配有十三道练习，每道只讲一个概念：由你来写代码，测试会用文字告诉你 PyTorch 会怎么做、为什么。
请按顺序完成；15 和 16 像本笔记本的单元格一样，直接用 memlab 的实验环境。

- §2.1 张量存储与视图：
  [1 · 行优先的步长](../../exercises/01-strides/README.md)、
  [2 · 是否连续？](../../exercises/02-contiguous/README.md)、
  [3 · `view` 何时可行？](../../exercises/03-view/README.md)、
  [11 · 视图让什么继续存活](../../exercises/11-views-keep-alive/README.md)
- §2.2 缓存分配器：
  [4 · 请求的取整：`round_size`](../../exercises/04-round-size/README.md)、
  [5 · 进哪个池、段有多大？](../../exercises/05-segment-size/README.md)、
  [6 · 最佳适配与超大块规则](../../exercises/06-best-fit/README.md)、
  [7 · 分割一个块](../../exercises/07-split/README.md)、
  [8 · 释放与合并](../../exercises/08-merge/README.md)
- §2.3 显存碎片：[10 · 度量碎片化](../../exercises/10-fragmentation/README.md)、
  [15 · 在预算内放下一个工作负载](../../exercises/15-fit-the-budget/README.md)
- §2.4 `torch.cuda` 显存 API：
  [9 · `memory_allocated` 与 `memory_reserved`](../../exercises/09-stats/README.md)、
  [16 · 泄漏检查，以及一张卡上的两个租户](../../exercises/16-leak-check/README.md)

每道练习都在你的工作副本 `workbook/exercises/` 里完成（git 不跟踪它；仓库里的 `exercises/`
是讲师用的）：可以在笔记本 `06-exercises.ipynb` 里做，它的单元格把你的代码存进工作副本并检查；也可以用编辑器改
`workbook/exercises/01-strides/strides.go`，再在仓库根目录（终端，或 JupyterLab 的
File → New → Terminal）检查它——以练习 1 为例：

```sh
go run ./cmd/memlab exercises check 1
```

`go run ./cmd/memlab exercises hint 1` 显示它的下一条提示。下面的单元格显示你在本笔记本各练习上的进度（读的是你的工作副本）：
它像 `memlab exercises list` 一样运行这些练习的测试（没动过的练习直接显示「未开始」；只运行你改过的练习的测试，之后也只在它们又有改动时重跑）。笔记本里用到的每个术语的中文、英文、
PyTorch 与 memlab 对照见[术语表](../../notebooks/GLOSSARY.md)。下一个笔记本：`04-reuse-and-sharing.ipynb`。
*/

//nb:cell
func exerciseProgress() {
	progress.Show("02")
}
