package nb00

import "memlab.dev/memlab/progress"

/*md
## Exercises and progress (练习与进度)

This notebook has no exercises of its own. The course's nineteen go with notebooks 02
(Chapter 2: strides, views, the caching allocator's rules, fragmentation, the memory API)
and 04 (Chapter 4: version counters, pools, a KV-cache block table); each notebook ends
with links to its own, and [exercises/README.md](../../exercises/README.md) lists them
all. You solve each in your working copy, `workbook/exercises/` (git ignores it; the
tracked `exercises/` is the instructor's): in notebook `06-exercises.ipynb`, whose cells
save your code there and check it, or in any editor, checking it from the repository's
root (a terminal, or JupyterLab's File → New → Terminal) — exercise 1 here:

```sh
go run ./cmd/memlab exercises check 1
```

The cell below shows where you stand on all of them, in your working copy: it runs their
tests as `memlab exercises list` does (an exercise you have not touched is "not started" at once; the tests run only for those you
changed, and again only when they change). Every
term the notebooks use, in Chinese, English, PyTorch and memlab: the
[glossary](../../notebooks/GLOSSARY.md). Next: `02-memory-mechanics.ipynb`.
*/

/*md:zh-CN
## 练习与进度 (Exercises and progress)

本笔记本没有自己的练习。课程的十九道练习分属笔记本 02（第 2 章：步长、视图、缓存分配器的规则、显存碎片、
显存 API）和 04（第 4 章：版本计数器、显存池、KV 缓存的块表）；每个笔记本的结尾都链接了它自己的练习，
[exercises/README.md](../../exercises/README.md) 列出了全部。每道练习都在你的工作副本
`workbook/exercises/` 里完成（git 不跟踪它；仓库里的 `exercises/` 是讲师用的）：可以在笔记本
`06-exercises.ipynb` 里做，它的单元格把你的代码存进工作副本并检查；也可以用任何编辑器，再在仓库根目录
（终端，或 JupyterLab 的 File → New → Terminal）检查——以练习 1 为例：

```sh
go run ./cmd/memlab exercises check 1
```

下面的单元格显示你在全部练习上的进度（读的是你的工作副本）：它像 `memlab exercises list` 一样运行这些练习的测试
（没动过的练习直接显示「未开始」；只运行你改过的练习的测试，之后也只在它们又有改动时重跑）。笔记本里用到的每个术语的中文、英文、PyTorch 与 memlab 对照见
[术语表](../../notebooks/GLOSSARY.md)。下一步：`02-memory-mechanics.ipynb`。
*/

//nb:cell
func exerciseProgress() {
	progress.Show("00")
}
