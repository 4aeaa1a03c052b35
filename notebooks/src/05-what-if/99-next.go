package nb05

import "memlab.dev/memlab/progress"

/*md
## Exercises and progress (练习与进度)

This notebook has no exercises of its own: its exercise is your own snapshot (the two
lines at the top). The course's nineteen exercises go with notebooks 02 and 04 (notebook 06 solves them in JupyterLab);
[exercises/README.md](../../exercises/README.md) lists them. You solve each in your working
copy, `workbook/exercises/`, and check it from the repository's root (a terminal, or
JupyterLab's File → New → Terminal) — exercise 1 here:

```sh
go run ./cmd/memlab exercises check 1
```

The cell below shows where you stand on all of them, in your working copy: it runs their
tests as `memlab exercises list` does (an exercise you have not touched is "not started" at once; the tests run only for those you
changed, and again only when they change). Every term the notebooks use, in Chinese,
English, PyTorch and memlab: the [glossary](../../notebooks/GLOSSARY.md).
*/

/*md:zh-CN
## 练习与进度 (Exercises and progress)

本笔记本没有自己的练习：它的练习就是你自己的快照（开头那两行代码）。课程的十九道练习分属笔记本 02 和 04（在笔记本 06 里可以直接完成），
[exercises/README.md](../../exercises/README.md) 列出了全部；每道练习都在你的工作副本 `workbook/exercises/` 里完成，
在仓库根目录（终端，或 JupyterLab 的 File → New → Terminal）检查——以练习 1 为例：

```sh
go run ./cmd/memlab exercises check 1
```

下面的单元格显示你在全部练习上的进度（读的是你的工作副本）：它像 `memlab exercises list` 一样运行这些练习的测试（没动过的练习直接显示「未开始」；只运行你改过的练习的测试，之后也只在它们又有改动时重跑）。
笔记本里用到的每个术语的中文、英文、PyTorch 与 memlab 对照见[术语表](../../notebooks/GLOSSARY.md)。
*/

//nb:cell
func exerciseProgress() {
	progress.Show("05")
}
