package nb04

import "memlab.dev/memlab/progress"

/*md
## Exercises and progress (练习与进度)

Three exercises go with this notebook, one concept each: you write the code, the tests
say in words what PyTorch would have done and why.

- §4.1 In-place operations:
  [14 · Catching in-place changes with version counters](../../exercises/14-version-counter/README.md)
- §4.3 Memory pools:
  [12 · A fixed-shape tensor pool](../../exercises/12-tensor-pool/README.md),
  [13 · A paged KV-cache block table](../../exercises/13-kv-block-table/README.md)

Edit the exercise's `.go` file, then check it from the repository's root (a terminal, or
JupyterLab's File → New → Terminal) — exercise 12 here (12 and 14 are about concurrency:
add `--race`):

```sh
go run ./cmd/memlab exercises check 12
```

`go run ./cmd/memlab exercises hint 12` shows its next hint. The cell below shows where
you stand on this notebook's exercises: it runs their tests as `memlab exercises list`
does (a few seconds). Every term the notebook uses, in Chinese, English, PyTorch and
memlab: the [glossary](../GLOSSARY.md). Next notebook: `05-what-if.ipynb`.
*/

/*md:zh-CN
## 练习与进度 (Exercises and progress)

本笔记本配有三道练习，每道只讲一个概念：由你来写代码，测试会用文字告诉你 PyTorch 会怎么做、为什么。

- §4.1 原地操作：
  [14 · 用版本计数器发现原地修改](../../exercises/14-version-counter/README.md)
- §4.3 显存池：
  [12 · 固定形状的张量池](../../exercises/12-tensor-pool/README.md)、
  [13 · 分页 KV 缓存的块表](../../exercises/13-kv-block-table/README.md)

练习的说明目前是英文的。改好练习的 `.go` 文件后，在仓库根目录（终端，或 JupyterLab 的
File → New → Terminal）检查它——以练习 12 为例（12 和 14 涉及并发，可加 `--race`）：

```sh
go run ./cmd/memlab exercises check 12
```

`go run ./cmd/memlab exercises hint 12` 显示它的下一条提示。下面的单元格显示你在本笔记本各练习上的进度：
它像 `memlab exercises list` 一样运行这些练习的测试（需要几秒钟）。笔记本里用到的每个术语的中文、英文、
PyTorch 与 memlab 对照见[术语表](../GLOSSARY.md)。下一个笔记本：`05-what-if.ipynb`。
*/

//nb:cell
func exerciseProgress() {
	progress.Show("04")
}
