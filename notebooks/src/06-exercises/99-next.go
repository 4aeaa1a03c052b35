package nb06

/*md
## Exercises and progress (练习与进度)

The check cells above are your progress: each runs one exercise's official tests on
your copy and says PASS, TODO or FAIL. [exercises/README.md](../../exercises/README.md)
lists the exercises with their notebooks; from a terminal at the repository's root the
same check of your copy of exercise 1 is

```sh
go run ./cmd/memlab exercises check 1
```

— it checks your working copy, `workbook/exercises/01-strides/`, as the cells do, and so do
`go run ./cmd/memlab exercises list` and the progress cells of the other notebooks (the
tracked `exercises/` is the instructor's: `--tracked` checks it). Every term the exercises use, in Chinese, English, PyTorch and memlab: the
[glossary](../../notebooks/GLOSSARY.md).
*/

/*md:zh-CN
## 练习与进度 (Exercises and progress)

上面那些检查单元格就是你的进度：每个都用一道练习的官方测试检查你的那份代码，给出 PASS、TODO 或 FAIL。[exercises/README.md](../../exercises/README.md) 按笔记本列出了全部练习；在仓库根目录的终端里，检查你那份练习 1 的同样命令是

```sh
go run ./cmd/memlab exercises check 1
```

——它和这些单元格一样检查你的工作副本 `workbook/exercises/01-strides/`；`go run ./cmd/memlab exercises list` 和其他笔记本结尾的进度单元格读的也是它（仓库里的 `exercises/` 是讲师用的：加 `--tracked` 才检查它）。

练习里用到的每个术语的中文、英文、PyTorch 与 memlab 对照见[术语表](../../notebooks/GLOSSARY.md)。
*/
