package nb06

/*md
## Exercises and progress (练习与进度)

The check cells above are your progress: each runs one exercise's official tests on
your copy and says PASS, TODO or FAIL. [exercises/README.md](../../exercises/README.md)
lists the exercises with their notebooks; from a terminal at the repository's root the
same check of your copy of exercise 1 is

```sh
go run ./cmd/memlab exercises check 1 --student workbook/exercises/01-strides
```

and `go run ./cmd/memlab exercises check 1` (no `--student`) checks the exercise's own
folder, `exercises/01-strides/`, the way the other notebooks' endings describe. Every term the exercises use, in Chinese, English, PyTorch and memlab: the
[glossary](../../notebooks/GLOSSARY.md).
*/

/*md:zh-CN
## 练习与进度 (Exercises and progress)

上面那些检查单元格就是你的进度：每个都用一道练习的官方测试检查你的那份代码，给出 PASS、TODO 或 FAIL。[exercises/README.md](../../exercises/README.md) 按笔记本列出了全部练习；在仓库根目录的终端里，检查你那份练习 1 的同样命令是

```sh
go run ./cmd/memlab exercises check 1 --student workbook/exercises/01-strides
```

不加 `--student` 的 `go run ./cmd/memlab exercises check 1` 检查的是练习自己的目录 `exercises/01-strides/`，也就是其他笔记本结尾介绍的做法。

练习里用到的每个术语的中文、英文、PyTorch 与 memlab 对照见[术语表](../../notebooks/GLOSSARY.md)。
*/
