package nb04

import (
	"fmt"

	"memlab.dev/memlab/experiments/ch4"
	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/tensor"
)

/*md
## 4.1 In-place operations (原地操作)

`y = x.relu()` allocates `y` while `x` is still alive; `x.relu_()` overwrites `x` and
allocates nothing. The chapter puts a figure on it:

> 教材原文：「我的经验：有一次优化一个BERT推理管线，发现仅仅把几个激活函数改成in-place版本，显存占用就降了12%。」
>
> *Chapter 4:* "From experience: optimising a BERT inference pipeline, I found that just
> switching a few activation functions to their in-place versions cut memory use by 12%."

Below, one 1024 × 1024 float32 activation (4 MiB): the memory after each step, and the
peak (`max_memory_allocated`) of each version. What such a saving is worth in a whole
model's peak, 4.4 measures. In PyTorch:

```python
x = torch.randn(1024, 1024, device="cuda")
torch.cuda.reset_peak_memory_stats()
y = x.relu()                    # a new tensor: x and y alive together
out_of_place = torch.cuda.max_memory_allocated()
del x, y

x = torch.randn(1024, 1024, device="cuda")
torch.cuda.reset_peak_memory_stats()
x.relu_()                       # torch.relu_(x): overwrites x
in_place = torch.cuda.max_memory_allocated()
```
*/

/*md:zh-CN
## 4.1 原地操作 (in-place operations)

`y = x.relu()` 在 `x` 还活着的时候为 `y` 分配新显存；`x.relu_()` 直接改写 `x`，一个字节也不分配。教材给过一个数字：

> 教材原文：「我的经验：有一次优化一个BERT推理管线，发现仅仅把几个激活函数改成in-place版本，显存占用就降了12%。」

下面用一个 1024 × 1024 的 float32 激活值（4 MiB）来看：每一步之后的显存，以及两种写法各自的峰值 (`max_memory_allocated`)。这点节省放到整个模型的峰值里值多少，留给 4.4 节去测。PyTorch 的写法：

```python
x = torch.randn(1024, 1024, device="cuda")
torch.cuda.reset_peak_memory_stats()
y = x.relu()                    # 新张量：x 与 y 同时存活
out_of_place = torch.cuda.max_memory_allocated()
del x, y

x = torch.randn(1024, 1024, device="cuda")
torch.cuda.reset_peak_memory_stats()
x.relu_()                       # 即 torch.relu_(x)：原地改写 x
in_place = torch.cuda.max_memory_allocated()
```
*/

//nb:cell plot
func reluVsReluInPlace() {
	l := memlab.MustOpen()
	defer l.Close()
	steps := l.Steps()
	x := memlab.Must(tensor.Randn(l, 1, tensor.Float32, 1024, 1024))
	steps.Add("x = randn(1024, 1024)")
	y := memlab.Must(x.Relu())
	steps.Add("y = x.relu()")
	outOfPlace := l.MaxMemoryAllocated()
	memlab.Check(tensor.ReleaseAll(x, y))
	steps.Add("del x, y")

	l.ResetPeakMemoryStats()
	x = memlab.Must(tensor.Randn(l, 1, tensor.Float32, 1024, 1024))
	steps.Add("x = randn(1024, 1024)")
	memlab.Check(x.Relu_())
	steps.Add("x.relu_()")
	inPlace := l.MaxMemoryAllocated()
	memlab.Check(x.Release())
	steps.Add("del x")
	steps.Table().Show()
	memlab.Show(memplot.AllocatorCurve("4.1 y = x.relu() vs x.relu_()", steps))
	memlab.Measured("y = x.relu() peaks at %s, x.relu_() at %s: %.0f %% less, exactly the output's size",
		memlab.FormatBytes(outOfPlace), memlab.FormatBytes(inPlace), 100*float64(outOfPlace-inPlace)/float64(outOfPlace))
	memlab.Judge("an in-place activation allocates no output", memlab.HoldsIf(outOfPlace-inPlace == x.Nbytes()),
		"x.relu_() peaks %s below x.relu(), the output's size", memlab.FormatBytes(outOfPlace-inPlace))
}

/*md
On one activation the in-place version saves exactly the output. Reserved memory does
not move: the caching allocator takes one 20 MiB segment for requests between 1 and
10 MiB (notebook 02), and both tensors fit in it. The saving is real only if nobody needs
`x` afterwards — the hazards below.

**Try it:** make the activation 4096 × 4096 (64 MiB, more than the requests that share
a 20 MiB segment). Predict: do the `cudaMalloc` count and reserved memory now show the
difference too?

<details><summary>Answer</summary>

Yes: `y` gets a segment of its own — a second `cudaMalloc`, and reserved memory grows by
the output's size — while `relu_` makes none. Allocated memory falls by the same share as
before.
</details>

### `a = a + 1` against `a += 1`

Python's `a = a + 1` computes a new tensor while the old `a` is alive, then rebinds the
name (the old tensor dies with its last reference); `a += 1` is `a.add_(1)`.

> 教材原文：「前者会创建一个新张量，后者直接在原地址上加1。」
>
> *Chapter 4:* "The former creates a new tensor, the latter adds 1 right at the original
> address."

```python
a = torch.zeros(1024, 1024, device="cuda")
ptr, base = a.data_ptr(), torch.cuda.memory_allocated()
torch.cuda.reset_peak_memory_stats()
a = a + 1                       # new storage; the old a is freed when the name moves on
print(a.data_ptr() == ptr, a._version, torch.cuda.max_memory_allocated() - base)
torch.cuda.reset_peak_memory_stats()
ptr = a.data_ptr()
a += 1                          # a.add_(1): same storage, a._version + 1
print(a.data_ptr() == ptr, a._version, torch.cuda.max_memory_allocated() - base)
```
*/

/*md:zh-CN
对单个激活值来说，原地版本省下的恰好是一个输出张量。已预留显存 (reserved) 纹丝不动：缓存分配器对 1 到 10 MiB 之间的请求会拿一个 20 MiB 的段 (segment)（见笔记本 02），两个张量都装得下。只有之后再也没人需要 `x`，这份节省才算数——这正是下面要讲的陷阱。

**动手试试：** 把激活值改成 4096 × 4096（64 MiB，超过了可以合用一个 20 MiB 段的请求大小）。先预测：`cudaMalloc` 次数和已预留显存这回也会显出差别吗？

<details><summary>答案</summary>

会：`y` 要单独占一个段——多一次 `cudaMalloc`，已预留显存增加一个输出张量的大小——而 `relu_` 一次也不需要。已分配显存降低的比例和之前一样。
</details>

### `a = a + 1` 与 `a += 1`

Python 的 `a = a + 1` 先在旧的 `a` 还活着时算出一个新张量，再把名字 `a` 绑到新张量上（旧张量随最后一个引用消失而被释放）；而 `a += 1` 就是 `a.add_(1)`。

> 教材原文：「前者会创建一个新张量，后者直接在原地址上加1。」

```python
a = torch.zeros(1024, 1024, device="cuda")
ptr, base = a.data_ptr(), torch.cuda.memory_allocated()
torch.cuda.reset_peak_memory_stats()
a = a + 1                       # 新的存储；名字改绑后旧的 a 被释放
print(a.data_ptr() == ptr, a._version, torch.cuda.max_memory_allocated() - base)
torch.cuda.reset_peak_memory_stats()
ptr = a.data_ptr()
a += 1                          # 即 a.add_(1)：同一块存储，a._version 加 1
print(a.data_ptr() == ptr, a._version, torch.cuda.max_memory_allocated() - base)
```
*/

//nb:cell
func rebindVsAddInPlace() {
	l := memlab.MustOpen()
	defer l.Close()
	one := memlab.Must(tensor.Full(l, tensor.Float32, 1)) // the scalar 1, broadcast
	a := memlab.Must(tensor.Zeros(l, tensor.Float32, 1024, 1024))
	ptr, base := a.DataPtr(), l.MemoryAllocated()

	l.ResetPeakMemoryStats()
	b := memlab.Must(a.Add(one)) // a + 1
	memlab.Check(a.Release())    // a = …: the old tensor's last reference goes
	a = b
	rebind := l.MaxMemoryAllocated() - base
	rebindSame := a.DataPtr() == ptr
	ch4.Say("a = a + 1: same storage %v, version %d", rebindSame, a.Version())

	l.ResetPeakMemoryStats()
	ptr = a.DataPtr()
	memlab.Check(a.Add_(one)) // a += 1
	inPlace := l.MaxMemoryAllocated() - base
	inPlaceSame := a.DataPtr() == ptr
	ch4.Say("a += 1:    same storage %v, version %d, a[0, 0] = %v", inPlaceSame, a.Version(), ch4.First(a))
	memlab.Measured("a = a + 1 needs %s beyond a at its peak, a += 1 needs %s", memlab.FormatBytes(rebind), memlab.FormatBytes(inPlace))
	memlab.Judge("a = a + 1 creates a new tensor, a += 1 adds at the original address", memlab.HoldsIf(!rebindSame && inPlaceSame && inPlace == 0),
		"new storage for a + 1: %v; the same address for a += 1: %v", !rebindSame, inPlaceSame)
	memlab.Check(tensor.ReleaseAll(a, one))
}

/*md
The chapter is right on both counts: the out-of-place version gets new storage and holds
two copies of `a` for a moment — the same 2× as `relu`; in a loop over layers that moment
recurs every iteration. The in-place one keeps the address and bumps the version counter.

**Try it:** write `a = a * 2 + 1` (here `t := a.Scale(2)`, `b := t.Add(one)`, then release
`t`) and its in-place form `a.mul_(2).add_(1)` (`Scale_(2)`, then `Add_(one)`). Predict:
how much beyond `a` does each need at its peak, and what is `a`'s version after the
in-place pair?

<details><summary>Answer</summary>

`a = a * 2 + 1` needs two tensors of `a`'s size beyond it: the temporary `a * 2` is still
alive when `+ 1` allocates the result. The in-place pair needs nothing and bumps the
version twice, once per in-place operation.
</details>

### Hazard: a tensor two branches read

`out = relu(x) + 2·x`: `x` feeds two branches. Doing branch A's relu in place rewrites the
`x` that branch B reads next — the chapter's own accident:

> 教材原文：「避坑指南：我曾经在推理时对一个被多个分支引用的张量做了in-place修改，结果下游分支全乱了。」
>
> *Chapter 4:* "Pitfall: once, in inference, I modified in place a tensor that several
> branches referenced, and every downstream branch came out wrong."

```python
x = torch.tensor([1, -2, 3, -4, 0.5, -0.5], device="cuda")
right = torch.relu(x) + 2 * x
v = x._version
x.relu_()                       # branch A in place …
wrong = x + 2 * x               # … and branch B reads the rewritten x
print((right != wrong).sum().item(), "wrong;", v, "→", x._version)
```
*/

/*md:zh-CN
教材两点都说对了：非原地版本拿到了新的存储，并且有一瞬间同时持有两份 `a`——和 `relu` 一样是 2 倍；在逐层循环里，这一瞬间每次迭代都会重来一遍。原地版本保持地址不变，只把版本计数器 (version counter) 加一。

**动手试试：** 写 `a = a * 2 + 1`（这里是 `t := a.Scale(2)`、`b := t.Add(one)`，再释放 `t`），以及它的原地写法 `a.mul_(2).add_(1)`（`Scale_(2)` 再 `Add_(one)`）。先预测：两种写法在峰值时各需要比 `a` 多出多少显存？原地那一对操作之后，`a` 的版本号是多少？

<details><summary>答案</summary>

`a = a * 2 + 1` 需要多出两个和 `a` 一样大的张量：`+ 1` 分配结果时，临时张量 `a * 2` 还活着。原地那一对操作一点也不多要，版本号加了两次，每个原地操作一次。
</details>

### 陷阱：被两个分支读取的张量

`out = relu(x) + 2·x`：`x` 同时喂给两个分支。如果分支 A 的 relu 原地执行，就改写了分支 B 接下来要读的 `x`——这正是教材自己踩过的坑：

> 教材原文：「避坑指南：我曾经在推理时对一个被多个分支引用的张量做了in-place修改，结果下游分支全乱了。」

```python
x = torch.tensor([1, -2, 3, -4, 0.5, -0.5], device="cuda")
right = torch.relu(x) + 2 * x
v = x._version
x.relu_()                       # 分支 A 原地执行……
wrong = x + 2 * x               # ……分支 B 读到的是改写后的 x
print((right != wrong).sum().item(), "wrong;", v, "→", x._version)
```
*/

//nb:cell
func sharedBranch() {
	l := memlab.MustOpen()
	defer l.Close()
	data := []float32{1, -2, 3, -4, 0.5, -0.5}
	x := memlab.Must(tensor.FromFloat32(l, data))
	a, b := memlab.Must(x.Relu()), memlab.Must(x.Scale(2)) // relu(x), 2·x
	right := ch4.Values(memlab.Must(a.Add(b)))
	memlab.Check(tensor.ReleaseAll(a, b))

	before := x.Version()
	memlab.Check(x.Relu_())     // branch A in place: a is x itself now
	b = memlab.Must(x.Scale(2)) // branch B reads the rewritten x
	wrong := ch4.Values(memlab.Must(x.Add(b)))
	tab := memlab.NewTable("x", "relu(x) + 2x", "x.relu_(); x + 2x", "")
	bad := 0
	for i := range data {
		mark := ""
		if right[i] != wrong[i] {
			mark, bad = lang.Text("← wrong"), bad+1
		}
		tab.Row(data[i], right[i], wrong[i], mark)
	}
	tab.Show()
	memlab.Measured("%d of %d results wrong and no error; x._version went %d → %d", bad, len(data), before, x.Version())
	memlab.Judge("in place on a tensor several branches read corrupts the branches downstream", memlab.HoldsIf(bad > 0),
		"%d of %d results wrong, with no error", bad, len(data))
	memlab.Check(tensor.ReleaseAll(b, x))
}

/*md
Only the version counter (`x._version`, here `x.Version()`) saw it: in-place writes are
counted, not forbidden — outside autograd nothing checks the counter, so the wrong results
come with no error.

**Try it:** make every input positive. Predict: how many results are wrong, and does
`x._version` still move?

<details><summary>Answer</summary>

None is wrong: `relu` leaves positive numbers alone, so the in-place version is right by
luck — which is why such bugs survive tests. The version still goes up: autograd would
still refuse a saved `x` (next cell).
</details>

### Hazard: autograd's saved tensors

Autograd *does* check the counter of the tensors it saved for backward. `exp` saves its
output; changing that output in place makes backward fail with PyTorch's error.

> 教材原文：「PyTorch的自动求导机制会记录计算图，如果你在训练时对需要梯度的张量做in-place修改，会破坏计算图，导致反向传播出错。」
>
> *Chapter 4:* "PyTorch's autograd records the computation graph; if during training you
> modify in place a tensor that requires grad, you break the graph and backward fails."

```python
x = torch.randn(256, 256, device="cuda", requires_grad=True)
y = x.exp()                     # exp saves its output y for backward
y.mul_(2)                       # in place: y._version 0 → 1
y.sum().backward()              # RuntimeError: … modified by an inplace operation …
# out of place instead: z = y * 2; z.sum().backward() succeeds
```
*/

/*md:zh-CN
只有版本计数器（`x._version`，这里是 `x.Version()`）记下了这件事：原地写入只会被计数，不会被禁止——在自动求导 (autograd) 之外没有谁检查这个计数器，所以错误的结果不会带任何报错。

**动手试试：** 把所有输入都改成正数。先预测：会有几个结果出错？`x._version` 还会变吗？

<details><summary>答案</summary>

一个都没算错：`relu` 不改变正数，所以原地版本碰巧算对了——这也正是这类 bug 能混过测试的原因。版本号照样增加：自动求导仍然会拒绝一个被保存的 `x`（见下一个单元格）。
</details>

### 陷阱：自动求导保存的张量

自动求导*确实*会检查它为反向传播保存的那些张量的计数器。`exp` 保存的是自己的输出；原地改动这个输出，反向传播就会以 PyTorch 的那条报错失败。

> 教材原文：「PyTorch的自动求导机制会记录计算图，如果你在训练时对需要梯度的张量做in-place修改，会破坏计算图，导致反向传播出错。」

```python
x = torch.randn(256, 256, device="cuda", requires_grad=True)
y = x.exp()                     # exp 为反向传播保存了输出 y
y.mul_(2)                       # 原地修改：y._version 0 → 1
y.sum().backward()              # RuntimeError: … modified by an inplace operation …
# 改用非原地：z = y * 2; z.sum().backward() 正常
```
*/

//nb:cell
func savedTensorError() {
	l := memlab.MustOpen()
	defer l.Close()
	refused := map[bool]bool{}
	for _, inPlace := range []bool{true, false} {
		tape := tensor.NewTape()
		x := memlab.Must(tensor.Randn(l, 3, tensor.Float32, 256, 256))
		memlab.Check(tape.Watch(x))
		y := memlab.Must(x.Exp()) // exp saves its output y for backward
		var z *tensor.Tensor
		if inPlace {
			memlab.Check(y.Scale_(2)) // y.mul_(2)
		} else {
			z = memlab.Must(y.Scale(2)) // z = y * 2
		}
		fmt.Printf(lang.Text("in place %v: tape %v, saved %s; backward:")+" ", inPlace, tape.Nodes(), memlab.FormatBytes(tape.SavedBytes()))
		if err := tape.Backward(); err != nil {
			fmt.Println(memlab.ErrorText(err))
			refused[inPlace] = true
		} else {
			fmt.Println("ok")
		}
		memlab.Check(tensor.ReleaseLive(z, y, x))
		memlab.Check(tape.Release())
	}
	memlab.Judge("in place on a tensor autograd saved breaks backward", memlab.HoldsIf(refused[true] && !refused[false]),
		"backward refused after the in-place change: %v; after the out-of-place one: %v", refused[true], refused[false])
}

/*md
The out-of-place `z = y * 2` keeps `y` intact and backward succeeds. What backward refuses
is precisely a saved tensor whose version moved since it was saved — the error names it
and both versions. In inference there is no tape, which is why 4.4 can use in-place
operations freely, as the chapter advises ("推理场景放心用，训练场景慎用": freely in
inference, with care in training).

**Try it:** make `x` 1024 × 1024. Predict: how many bytes does the tape save now, and
does backward's error change?

<details><summary>Answer</summary>

The tape saves as many bytes as `x` itself (exp's output) — saved tensors are memory that
stays allocated until backward, or until the tape is released. The error is the same, with
the new shape in it.
</details>
*/

/*md:zh-CN
非原地的 `z = y * 2` 不动 `y`，反向传播顺利完成。反向传播拒绝的，恰恰是“保存之后版本号变了”的那个被保存张量——报错里点了它的名，也给出了前后两个版本号（中文版打印的是这条报错的译文；PyTorch 的英文原文以 `one of the variables needed for gradient computation has been modified by an inplace operation` 开头，搜索时用它）。推理时没有计算图（这里的 tape），所以 4.4 节可以放心使用原地操作，正如教材所说：“推理场景放心用，训练场景慎用”。

**动手试试：** 把 `x` 改成 1024 × 1024。先预测：tape 这回保存多少字节？反向传播的报错会变吗？

<details><summary>答案</summary>

tape 保存的字节数和 `x` 本身一样多（exp 的输出）——被保存的张量是一直占着、直到反向传播（或 tape 被释放）才归还的显存。报错不变，只是里面换成了新的形状。
</details>
*/

/*md
#### Summary

- An in-place operation writes its result over its input and allocates nothing; `a = a + 1`
  holds two copies of `a` for a moment, `a += 1` none.
- In-place writes are counted (the version counter), not forbidden: outside autograd a
  tensor that another branch still reads is silently corrupted.
- Autograd checks the counters of the tensors it saved and refuses backward when one
  changed; in inference there is no tape, so in place is safe where nobody reads the input
  again.

#### Questions for discussion

1. A tensor is read by two branches, and you want one of them in place. In which order
   must the branches run, and what would a test need to catch the mistake?
2. Why does autograd refuse a changed saved tensor rather than recompute it?
3. Which in-place operations of your own models save memory at the *peak*, and which only
   save allocator calls?
*/

/*md:zh-CN
#### 小结

- 原地操作把结果写在输入上，不分配任何显存；`a = a + 1` 有一瞬间同时持有两份 `a`，`a += 1` 一份也不多。
- 原地写入只被计数（版本计数器），不被禁止：在自动求导之外，另一个分支还要读的张量会被悄无声息地改坏。
- 自动求导检查它保存的张量的计数器，一旦变了就拒绝反向传播；推理时没有计算图，所以只要输入之后不再被读，原地操作就是安全的。

#### 讨论题

1. 一个张量被两个分支读取，你想让其中一个分支原地执行。两个分支必须按什么顺序执行？要抓住这个错误，测试需要什么？
2. 为什么自动求导选择拒绝一个被改动的保存张量，而不是重新计算它？
3. 在你自己的模型里，哪些原地操作能降低*峰值*，哪些只是省下了分配器调用？
*/
