package nb04

import "memlab.dev/memlab/progress"

/*md
## Exercises and progress (练习与进度)

Six exercises go with this notebook, one concept each: you write the code, the tests
say in words what PyTorch would have done and why; 17–19 work on memlab's own lab, as
the notebook's cells do.

- §4.1 In-place operations:
  [14 · Catching in-place changes with version counters](../../exercises/14-version-counter/README.md),
  [17 · An in-place block, without the version-counter error](../../exercises/17-inplace-block/README.md)
- §4.3 Memory pools:
  [12 · A fixed-shape tensor pool](../../exercises/12-tensor-pool/README.md),
  [13 · A paged KV-cache block table](../../exercises/13-kv-block-table/README.md),
  [18 · Serving from a pool of your own](../../exercises/18-my-pool/README.md)
- §4.4 All together: [19 · Lowering a forward pass's peak](../../exercises/19-lower-the-peak/README.md)
- and from chapter 2 (notebook 02's list): exercise 11, *A view keeps its base alive*
  (`11-views-keep-alive`), which is what raised the `views` peak in 4.4

Solve each in your working copy, `workbook/exercises/` (git ignores it; the tracked
`exercises/` is the instructor's): in notebook `06-exercises.ipynb`, whose cells save your
code there and check it, or in an editor (`workbook/exercises/12-tensor-pool/tensorpool.go`), then
check it from the repository's root (a terminal, or JupyterLab's File → New → Terminal) —
exercise 12 here (12 and 14 are about concurrency: add `--race`):

```sh
go run ./cmd/memlab exercises check 12
```

`go run ./cmd/memlab exercises hint 12` shows its next hint. The cell below shows where you
stand on this notebook's exercises, in your working copy: it runs their tests as
`memlab exercises list` does (an exercise you have not touched is "not started" at once; the tests run only for those you
changed, and again only when they change). Every
term the notebook uses, in Chinese, English, PyTorch and memlab: the
[glossary](../../notebooks/GLOSSARY.md). Next notebook: `05-what-if.ipynb`.
*/

/*md:zh-CN
## 练习与进度 (Exercises and progress)

本笔记本配有六道练习，每道只讲一个概念：由你来写代码，测试会用文字告诉你 PyTorch 会怎么做、为什么；17–19 像本笔记本的单元格一样，直接用 memlab 的实验环境。

- §4.1 原地操作：
  [14 · 用版本计数器发现原地修改](../../exercises/14-version-counter/README.md)、
  [17 · 不触发版本计数器报错的原地块](../../exercises/17-inplace-block/README.md)
- §4.3 显存池：
  [12 · 固定形状的张量池](../../exercises/12-tensor-pool/README.md)、
  [13 · 分页 KV 缓存的块表](../../exercises/13-kv-block-table/README.md)、
  [18 · 用你自己的池供给](../../exercises/18-my-pool/README.md)
- §4.4 三者合用：[19 · 降低一次前向计算的峰值](../../exercises/19-lower-the-peak/README.md)
- 以及第 2 章（笔记本 02 的练习表）的练习 11《视图会保住基张量》（`11-views-keep-alive`）——这正是 4.4 节中 `views` 峰值升高的原因

练习的说明目前是英文的。每道练习都在你的工作副本 `workbook/exercises/` 里完成（git 不跟踪它；仓库里的 `exercises/`
是讲师用的）：可以在笔记本 `06-exercises.ipynb` 里做，它的单元格把你的代码存进工作副本并检查；也可以用编辑器改
`workbook/exercises/12-tensor-pool/tensorpool.go`，再在仓库根目录（终端，或 JupyterLab 的
File → New → Terminal）检查它——以练习 12 为例（12 和 14 涉及并发，可加 `--race`）：

```sh
go run ./cmd/memlab exercises check 12
```

`go run ./cmd/memlab exercises hint 12` 显示它的下一条提示。下面的单元格显示你在本笔记本各练习上的进度（读的是你的工作副本）：
它像 `memlab exercises list` 一样运行这些练习的测试（没动过的练习直接显示「未开始」；只运行你改过的练习的测试，之后也只在它们又有改动时重跑）。笔记本里用到的每个术语的中文、英文、
PyTorch 与 memlab 对照见[术语表](../../notebooks/GLOSSARY.md)。下一个笔记本：`05-what-if.ipynb`。
*/

//nb:cell
func exerciseProgress() {
	progress.Show("04")
}
