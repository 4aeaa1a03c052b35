package nb04

import (
	"errors"
	"fmt"
	"strings"

	"memlab.dev/memlab/experiments/ch4"
	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/tensor"
)

/*md
## 4.2 Views (视图)

A view is new metadata over the same storage; a copy is a new allocation. The chapter's
claim, and its example: `y = x.view(…)`, then `y[0, 0] = 999` — and `x` has changed too.

> 教材原文：「但用 view() 或 reshape()，只是改了张量的元数据，底层数据指针没变。」
>
> *Chapter 4:* "But with view() or reshape(), only the tensor's metadata changes; the
> underlying data pointer stays the same."

```python
x = torch.arange(12., device="cuda")
base = torch.cuda.memory_allocated()
y = x.view(3, 4)
y[0, 0] = 999
print(x)                        # x[0] is 999 too
print(y.untyped_storage().data_ptr() == x.untyped_storage().data_ptr(), x._version, y._version)
print(torch.cuda.memory_allocated() - base)   # what the view allocated
```
*/

/*md:zh-CN
## 4.2 张量视图 (views)

视图是同一块存储 (storage) 之上的一套新元数据；拷贝则是一次新的分配。教材的说法和它的例子：`y = x.view(…)`，然后 `y[0, 0] = 999`——`x` 也跟着变了。

> 教材原文：「但用 view() 或 reshape()，只是改了张量的元数据，底层数据指针没变。」

```python
x = torch.arange(12., device="cuda")
base = torch.cuda.memory_allocated()
y = x.view(3, 4)
y[0, 0] = 999
print(x)                        # x[0] 也变成了 999
print(y.untyped_storage().data_ptr() == x.untyped_storage().data_ptr(), x._version, y._version)
print(torch.cuda.memory_allocated() - base)   # 视图分配了多少显存
```
*/

//nb:cell
func viewWriteThrough() {
	l := memlab.MustOpen()
	defer l.Close()
	x := memlab.Must(tensor.Arange(l, tensor.Float32, 0, 12, 1)) // x = torch.arange(12.)
	base := l.MemoryAllocated()
	y := memlab.Must(x.View(3, 4)) // y = x.view(3, 4)
	row := memlab.Must(y.Select(0, 0))
	y00 := memlab.Must(row.Select(0, 0)) // y[0, 0], a 0-d view
	memlab.Check(ch4.Fill(y00, 999))     // y[0, 0] = 999
	ch4.Say("x = %v; y shares x's storage: %v; x._version %d, y._version %d", memlab.Must(x.Float32s()), y.SharesStorage(x), x.Version(), y.Version())
	memlab.Judge("view() and reshape() change only metadata; the data pointer stays", memlab.HoldsIf(ch4.First(x) == 999 && l.MemoryAllocated() == base),
		"the views allocated %s and write through to x: %v", memlab.FormatBytes(l.MemoryAllocated()-base), ch4.First(x) == 999)
	memlab.Check(tensor.ReleaseAll(y00, row, y, x))
}

/*md
Views share one version counter with their base, as in PyTorch: the write through `y`
bumps `x._version` too, which is how autograd notices an in-place change made through a
view.

**Try it:** take `y := x.Slice(0, 0, 12, 3)` (`x[::3]`, four elements) and write
`y[1] = 999` (`row := memlab.Must(y.Narrow(0, 1, 1))`, then `row.Select(0, 0)` as the
element to write). Predict: which element of `x` changes?

<details><summary>Answer</summary>

`x[3]`: `y`'s stride is 3, so its element 1 sits at offset 3 of the same storage.
</details>

### Which operations copy

Whether an operation copies depends on the layout it is given, not on its name. Each row
below runs one operation on a 1024 × 1024 float32 `x` (4 MiB) and reads
`memory_allocated` before and after. The chapter warns about one of them:

> 教材原文：「这时候可以用 reshape()，它会自动处理连续性——但注意，reshape() 在无法返回视图时会默默拷贝数据。」
>
> *Chapter 4:* "Then you can use reshape(), which handles contiguity for you — but note
> that reshape() silently copies the data when it cannot return a view."

```python
x = torch.randn(1024, 1024, device="cuda")
for op in (lambda x: x.view(512, 2048), lambda x: x.t().reshape(-1),
           lambda x: x[:, ::2].contiguous(), lambda x: x.expand(4, 1024, 1024)):
    before = torch.cuda.memory_allocated()
    y = op(x)
    print(torch.cuda.memory_allocated() - before,          # bytes the operation allocated
          y.untyped_storage().data_ptr() == x.untyped_storage().data_ptr(), y.is_contiguous())
    del y
```
*/

/*md:zh-CN
和 PyTorch 一样，视图与它的基张量 (base) 共用一个版本计数器：通过 `y` 写入，`x._version` 也会加一——自动求导正是靠这一点发现“经由视图做的原地修改”。

**动手试试：** 取 `y := x.Slice(0, 0, 12, 3)`（即 `x[::3]`，四个元素），再写 `y[1] = 999`（`row := memlab.Must(y.Narrow(0, 1, 1))`，再以 `row.Select(0, 0)` 作为要写的元素）。先预测：`x` 的哪个元素会变？

<details><summary>答案</summary>

`x[3]`：`y` 的步长是 3，所以它的第 1 个元素位于同一块存储的偏移 3 处。
</details>

### 哪些操作会拷贝

一个操作拷不拷贝，取决于交给它的张量的内存布局，而不是它叫什么名字。下表每一行对一个 1024 × 1024 的 float32 张量 `x`（4 MiB）执行一个操作，并在前后各读一次 `memory_allocated`。教材特别提醒过其中一个：

> 教材原文：「这时候可以用 reshape()，它会自动处理连续性——但注意，reshape() 在无法返回视图时会默默拷贝数据。」

```python
x = torch.randn(1024, 1024, device="cuda")
for op in (lambda x: x.view(512, 2048), lambda x: x.t().reshape(-1),
           lambda x: x[:, ::2].contiguous(), lambda x: x.expand(4, 1024, 1024)):
    before = torch.cuda.memory_allocated()
    y = op(x)
    print(torch.cuda.memory_allocated() - before,          # 这个操作分配的字节数
          y.untyped_storage().data_ptr() == x.untyped_storage().data_ptr(), y.is_contiguous())
    del y
```
*/

//nb:cell plot
func viewCopies() {
	// 4.2 which operations copy: x is 1024 × 1024 float32, n = 1024
	viewOps := []struct {
		expr string
		f    func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error)
	}{
		{"x.view(512, 2048)", func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error) { return x.View(512, 2048) }},
		{"x.reshape(2048, 512)", func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error) { return x.Reshape(2048, 512) }},
		{"x.flatten()", func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error) { return x.Flatten(0, -1) }},
		{"x[:256]", func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error) { return x.Narrow(0, 0, 256) }},
		{"x.t()", func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error) { return x.T() }},
		{"x.t().view(-1)", func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error) {
			return memlab.Must(s.Track(x.T())).View(-1)
		}},
		{"x.t().reshape(-1)", func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error) {
			return memlab.Must(s.Track(x.T())).Reshape(-1)
		}},
		{"x.t().contiguous()", func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error) {
			return memlab.Must(s.Track(x.T())).Contiguous()
		}},
		{"x[:, ::2]", func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error) { return x.Slice(1, 0, 1024, 2) }},
		{"x[:, ::2].view(1024, 256, 2)", func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error) {
			return memlab.Must(s.Track(x.Slice(1, 0, 1024, 2))).View(1024, 256, 2)
		}},
		{"x[:, ::2].contiguous()", func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error) {
			return memlab.Must(s.Track(x.Slice(1, 0, 1024, 2))).Contiguous()
		}},
		{"x.expand(4, n, n)", func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error) { return x.Expand(4, 1024, 1024) }},
		{"x.expand(4, n, n).contiguous()", func(x *tensor.Tensor, s *tensor.Scope) (*tensor.Tensor, error) {
			return memlab.Must(s.Track(x.Expand(4, 1024, 1024))).Contiguous()
		}},
	}
	l := memlab.MustOpen()
	defer l.Close()
	x := memlab.Must(tensor.Randn(l, 1, tensor.Float32, 1024, 1024))
	tab := memlab.NewTable(ch4.T("operation", "allocated", "shares x's storage", "contiguous", "error")...)
	var names, refused []string
	copied := memplot.BarSeries{Name: lang.Text("allocated")}
	grewBy := map[string]int64{}
	for _, op := range viewOps {
		s := tensor.NewScope()
		before := l.MemoryAllocated()
		y, err := op.f(x, s)
		grew := l.MemoryAllocated() - before
		var te *tensor.Error
		switch {
		case errors.As(err, &te):
			tab.Row(op.expr, memlab.FormatBytes(grew), "", "", lang.Text("refused (below)"))
			refused = append(refused, op.expr+": "+memlab.PyTorchText(te))
		case err != nil:
			panic(err)
		default:
			tab.Row(op.expr, memlab.FormatBytes(grew), y.SharesStorage(x), y.IsContiguous(), "")
			memlab.Check(y.Release())
		}
		memlab.Check(s.Release())
		names, copied.Values, grewBy[op.expr] = append(names, op.expr), append(copied.Values, float64(grew)/(1<<20)), grew
	}
	tab.Show()
	fmt.Println(strings.Join(refused, "\n"))
	memlab.Show(memplot.Bars(lang.Text("4.2 memory each operation allocates (x is 4 MiB)"), "MiB", names, copied))
	memlab.Check(x.Release())
	memlab.Judge("reshape() copies silently when it cannot return a view", memlab.HoldsIf(grewBy["x.t().reshape(-1)"] > 0),
		"x.t().reshape(-1) allocated %s with no error; x.reshape(2048, 512) %s", memlab.FormatBytes(grewBy["x.t().reshape(-1)"]), memlab.FormatBytes(grewBy["x.reshape(2048, 512)"]))
}

/*md
Each copy is exactly one allocator call of the result's size; everything else, `t()`, the
strided slice and `expand` included, is metadata. `x.t().view(-1)` is refused with
PyTorch's message, and `reshape` copies instead — silently, as the chapter says: only
`memory_allocated` shows it.

**Try it:** add a row to `viewOps`: `{"x.t().t().view(-1)", …}` returning
`memlab.Must(s.Track(memlab.Must(s.Track(x.T())).T())).View(-1)`. Predict: refused like
`x.t().view(-1)`, a copy, or a view?

<details><summary>Answer</summary>

A view, no bytes: transposing twice gives back `x`'s own layout, which is contiguous —
what decides is the layout, not the operations that made it.
</details>

**The chapter says** `view()` needs a contiguous tensor:

> 教材原文：「如果张量经过转置、切片等操作变得不连续，view() 会报错。」
>
> *Chapter 4:* "If a tensor has become non-contiguous through a transpose, a slice or the
> like, view() raises an error."

Does `view` refuse every tensor that a transpose or a slice made non-contiguous? The next
cell tries both — `x.t().view(-1)` and the strided slice `x[:, ::2]` viewed as
`(1024, 256, 2)` — and prints the strides (memlab's view follows PyTorch 2.11's rule).

```python
x = torch.randn(1024, 1024, device="cuda")
half = x[:, ::2]
print(half.is_contiguous(), half.stride())
v = half.view(1024, 256, 2)     # no error: a view over x's storage
print(v.shape, v.stride(), v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr())
x.t().view(-1)                  # RuntimeError: view size is not compatible with input tensor's size and stride …
```
*/

/*md:zh-CN
每一次拷贝都恰好是一次分配器调用，大小等于结果张量；其余的操作，包括 `t()`、带步长的切片和 `expand`，都只是元数据。`x.t().view(-1)` 会被拒绝，报的是 PyTorch 的原话；`reshape` 则改为拷贝——正如教材所说，是“默默”拷贝：只有 `memory_allocated` 能看出来。

**动手试试：** 给 `viewOps` 加一行：`{"x.t().t().view(-1)", …}`，返回 `memlab.Must(s.Track(memlab.Must(s.Track(x.T())).T())).View(-1)`。先预测：会像 `x.t().view(-1)` 那样被拒绝、拷贝，还是一个视图？

<details><summary>答案</summary>

一个视图，不占字节：转置两次就回到了 `x` 自己的布局，它是连续的——决定结果的是布局，而不是产生这个布局的那些操作。
</details>

**教材说** `view()` 要求张量是连续 (contiguous) 的：

> 教材原文：「如果张量经过转置、切片等操作变得不连续，view() 会报错。」

凡是被转置或切片弄得不连续的张量，`view` 都会拒绝吗？下一个单元格把两种都试一试——`x.t().view(-1)`，以及把带步长的切片 `x[:, ::2]` 看作 `(1024, 256, 2)`——并打印出步长 (stride)（memlab 的 view 遵循 PyTorch 2.11 的规则）。

```python
x = torch.randn(1024, 1024, device="cuda")
half = x[:, ::2]
print(half.is_contiguous(), half.stride())
v = half.view(1024, 256, 2)     # 不报错：仍是 x 存储上的视图
print(v.shape, v.stride(), v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr())
x.t().view(-1)                  # RuntimeError: view size is not compatible with input tensor's size and stride …
```
*/

//nb:cell
func viewNonContiguous() {
	l := memlab.MustOpen()
	defer l.Close()
	x := memlab.Must(tensor.Randn(l, 1, tensor.Float32, 1024, 1024))
	half := memlab.Must(x.Slice(1, 0, 1024, 2)) // x[:, ::2]
	v := memlab.Must(half.View(1024, 256, 2))
	ch4.Say("x[:, ::2] is contiguous: %v; x[:, ::2].view(1024, 256, 2): shape %v strides %v, shares storage %v", half.IsContiguous(), v.Shape(), v.Strides(), v.SharesStorage(x))
	t := memlab.Must(x.T())
	_, err := t.View(-1)
	memlab.Judge("view() fails on a tensor made non-contiguous by transposing or slicing", ch4.Partly(err != nil && !v.SharesStorage(x), err != nil), // partly: refused after one of them only
		"refused after a transpose: %v; refused after a strided slice: %v", err != nil, !v.SharesStorage(x))
	fmt.Println("x.t().view(-1):", memlab.ErrorText(err))
	memlab.Check(tensor.ReleaseAll(t, v, half, x))
}

/*md
So the chapter's rule is too broad: the transpose is refused, the strided slice is not.
PyTorch's rule is finer: `view` succeeds whenever the new shape can be expressed with
strides over the old ones. A view fails only when one new dimension would have to span old dimensions whose strides do
not line up —
`x.t()`'s elements in row order are not at one stride.

**Try it:** replace `View(1024, 256, 2)` by `View(-1)`. Predict: refused or not? Then
take `half := memlab.Must(x.Narrow(1, 0, 512))` (`x[:, :512]`) instead and predict again.

<details><summary>Answer</summary>

`x[:, ::2].view(-1)` succeeds: the rows of `x[:, ::2]` lie exactly one row stride apart
(1024 = 512 × 2), so the whole slice is one run of stride 2. `x[:, :512].view(-1)` is
refused with the message above (the cell stops at `memlab.Check(err)`): its rows are not
one run.
</details>
*/

/*md:zh-CN
所以教材的说法太宽泛了：转置确实被拒绝，带步长的切片却没有。PyTorch 的规则更精细：只要新形状能用旧步长表示出来，`view` 就会成功。只有当一个新维度必须跨越若干个步长对不齐的旧维度时，view 才会失败——`x.t()` 的元素按行序排列时，并不落在同一个步长上。

**动手试试：** 把 `View(1024, 256, 2)` 换成 `View(-1)`。先预测：会被拒绝吗？再把 `half` 换成 `half := memlab.Must(x.Narrow(1, 0, 512))`（即 `x[:, :512]`），再预测一次。

<details><summary>答案</summary>

`x[:, ::2].view(-1)` 会成功：`x[:, ::2]` 的各行之间恰好相隔一个行步长（1024 = 512 × 2），整个切片是一段步长为 2 的连续序列。`x[:, :512].view(-1)` 会以上面那条消息被拒绝（单元格停在 `memlab.Check(err)`）：它的各行连不成一段。
</details>
*/

/*md
### `contiguous()` on a contiguous tensor

The chapter's advice on `contiguous()`:

> 教材原文：「但千万别频繁调用 contiguous()，那会触发隐式拷贝，反而增加显存压力。」
>
> *Chapter 4:* "But never call contiguous() often: it triggers an implicit copy and adds to
> the memory pressure instead."

Does every call copy? The same 4 MiB `x`, contiguous as made, then its transpose:

```python
x = torch.randn(1024, 1024, device="cuda")
before = torch.cuda.memory_allocated()
y = x.contiguous()                       # x is contiguous already
print(torch.cuda.memory_allocated() - before, y.data_ptr() == x.data_ptr(), y is x)
z = x.t().contiguous()                   # the transpose is not
print(torch.cuda.memory_allocated() - before)
```
*/

/*md:zh-CN
### 对连续张量调用 `contiguous()`

教材对 `contiguous()` 的建议是：

> 教材原文：「但千万别频繁调用 contiguous()，那会触发隐式拷贝，反而增加显存压力。」

是不是每次调用都会拷贝？还是那个 4 MiB 的 `x`，先对刚创建出来、本来就连续的它调用，再对它的转置调用：

```python
x = torch.randn(1024, 1024, device="cuda")
before = torch.cuda.memory_allocated()
y = x.contiguous()                       # x 本来就是连续的
print(torch.cuda.memory_allocated() - before, y.data_ptr() == x.data_ptr(), y is x)
z = x.t().contiguous()                   # 转置不是
print(torch.cuda.memory_allocated() - before)
```
*/

//nb:cell
func contiguousNoCopy() {
	l := memlab.MustOpen()
	defer l.Close()
	x := memlab.Must(tensor.Randn(l, 1, tensor.Float32, 1024, 1024))
	before := l.MemoryAllocated()
	y := memlab.Must(x.Contiguous()) // x is contiguous already
	copied := l.MemoryAllocated() - before
	t := memlab.Must(x.T())
	z := memlab.Must(t.Contiguous()) // the transpose is not
	tCopied := l.MemoryAllocated() - before - copied
	memlab.Judge("calling contiguous() triggers an implicit copy", ch4.Partly(copied > 0, tCopied > 0), // partly: only a non-contiguous tensor is copied
		"on a contiguous tensor %s (the same data pointer: %v), on its transpose %s", memlab.FormatBytes(copied), y.DataPtr() == x.DataPtr(), memlab.FormatBytes(tCopied))
	memlab.Check(tensor.ReleaseAll(z, t, y, x))
}

/*md
So the verdict is narrower than the chapter's warning: `contiguous()` copies only a
tensor that is not contiguous already (PyTorch returns `self`, `y is x`); on a contiguous
one it is free, however often it is called. The copies to avoid are those on transposes,
strided slices and expands — the table above — and the naive head split of 4.4, which
calls it on a transpose.

**Try it:** call it on `x[:256]` (`x.Narrow(0, 0, 256)`), then on `x[:, :512]`
(`x.Narrow(1, 0, 512)`). Predict for each: a copy or not?

<details><summary>Answer</summary>

`x[:256]` — whole rows — is contiguous: no copy, the same data pointer. `x[:, :512]` —
half of every row — is not: a copy of its size.
</details>
*/

/*md:zh-CN
所以结论比教材的警告窄：`contiguous()` 只拷贝本来就不连续的张量（PyTorch 直接返回 `self`，`y is x`）；对连续的张量，调用多少次都不花一分显存。真正要避免的拷贝发生在转置、带步长的切片和 `expand` 上——见上面的表格——以及 4.4 节里朴素地拆开注意力头的做法，它正是对一个转置调用 `contiguous()`。

**动手试试：** 对 `x[:256]`（`x.Narrow(0, 0, 256)`）调用一次，再对 `x[:, :512]`（`x.Narrow(1, 0, 512)`）调用一次。先分别预测：拷不拷贝？

<details><summary>答案</summary>

`x[:256]`——完整的若干行——是连续的：不拷贝，数据指针相同。`x[:, :512]`——每一行的一半——不连续：拷贝一份同样大小的数据。
</details>
*/

/*md
#### Summary

- A view is new metadata (shape, strides, offset) over the same storage: no allocation,
  and writes go through to the base.
- `view()` refuses a layout it cannot express with strides (`x.t().view(-1)`), though not
  every non-contiguous tensor; `reshape()` then copies, silently.
- `contiguous()` copies only a non-contiguous tensor; the cost is in calling it where the
  layout is already fine for the next operation, or in a loop.

#### Questions for discussion

1. How would you find, in a real model, the `reshape` calls that copy?
2. A view keeps its base's whole storage alive (exercise 11). When is that worse than a
   copy?
3. Why can `x[:, ::2].view(1024, 256, 2)` succeed although `x[:, ::2]` is not contiguous?
*/

/*md:zh-CN
#### 小结

- 视图是同一块存储上的一组新元数据（形状、步长、偏移）：不分配显存，写入会直达基张量。
- `view()` 拒绝它无法用步长表达的布局（`x.t().view(-1)`），但并非所有不连续的张量都会被拒绝；这时 `reshape()` 会悄悄拷贝。
- `contiguous()` 只拷贝不连续的张量；代价在于对本来已经适合下一个操作的布局调用它，或者在循环里反复调用。

#### 讨论题

1. 在一个真实的模型里，你会怎样找出那些会拷贝的 `reshape` 调用？
2. 视图会保住基张量的整块存储（练习 11）。什么时候这比拷贝更糟？
3. `x[:, ::2]` 不连续，为什么 `x[:, ::2].view(1024, 256, 2)` 却能成功？
*/
