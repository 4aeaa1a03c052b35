package nb02

import (
	"fmt"

	"memlab.dev/memlab/experiments/ch2"
	"memlab.dev/memlab/experiments/ch2/ch2plot"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/tensor"
)

/*md
## 2.1 Tensor storage and views (张量存储)

A tensor is a **storage** — one block of device memory — plus a **view** of it: shape,
strides (in elements) and an offset. `View`, `T`, slicing, `Select` and `Narrow` make new
views of the same storage; `Contiguous` on a non-contiguous view copies. Below, a
1024×1024 float32 tensor `x`, six views of it — the chapter's `x[::2]` first — and one copy.

> 教材原文：「比如你用tensor[::2]切片，它不复制数据，只是改了stride和offset。」
>
> In translation: "Slice it with tensor[::2], say: no data is copied, only the stride and
> the offset change."

How much does `memory_allocated()` move for the six views, and how much for
`x.t().contiguous()`? Predict, then run the cell: its last line gives the verdict.

```python
x = torch.zeros(1024, 1024, device="cuda")          # float32, 4 MiB
views = [x[::2], x.view(256, 4096), x.t(), x[0:1], x[512], x[:, 100:110]]
print(torch.cuda.memory_allocated())                # after the views
for v in views:
    print(v.shape, v.stride(), v.storage_offset(), v.nbytes,
          v.untyped_storage().nbytes(), v.is_contiguous(),
          v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr())
c = x.t().contiguous()                              # the one copy
print(torch.cuda.memory_allocated())
```
*/

/*md:zh-CN
## 2.1 张量存储与视图 (tensor storage and views)

一个张量由两部分组成：一块**张量存储** (storage)，也就是一整块显存；以及这块存储上的一个**视图** (view)：形状 (shape)、以元素为单位的步长 (stride) 和偏移量 (offset)。`View`、`T`、切片、`Select` 和 `Narrow` 都在同一块存储上生成新视图；对非连续 (non-contiguous) 的视图调用 `Contiguous` 会拷贝。下面是一个 1024×1024 的 float32 张量 `x`、它的六个视图（第一个就是教材说的 `x[::2]`）和一次拷贝。

> 教材原文：「比如你用tensor[::2]切片，它不复制数据，只是改了stride和offset。」

六个视图让 `memory_allocated()` 变化多少？`x.t().contiguous()` 呢？先预测，再运行单元格：最后一行给出结论。

```python
x = torch.zeros(1024, 1024, device="cuda")          # float32，4 MiB
views = [x[::2], x.view(256, 4096), x.t(), x[0:1], x[512], x[:, 100:110]]
print(torch.cuda.memory_allocated())                # 建好视图之后
for v in views:
    print(v.shape, v.stride(), v.storage_offset(), v.nbytes,
          v.untyped_storage().nbytes(), v.is_contiguous(),
          v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr())
c = x.t().contiguous()                              # 唯一的一次拷贝
print(torch.cuda.memory_allocated())
```
*/

//nb:cell plot
func storageVsViews() {
	l := memlab.MustOpen()
	defer l.Close()
	x := memlab.Must(tensor.Zeros(l, tensor.Float32, 1024, 1024)) // 4 MiB
	vs := memlab.NewViews(x)                                      // a table of views of x
	vs.Add("x[::2]", memlab.Must(x.Slice(0, 0, 1024, 2)))
	vs.Add("x.view(256, 4096)", memlab.Must(x.View(256, 4096)))
	xt := vs.Add("x.t()", memlab.Must(x.T()))
	vs.Add("x[0:1]", memlab.Must(x.Slice(0, 0, 1, 1)))
	vs.Add("x[512]", memlab.Must(x.Select(0, 512)))
	vs.Add("x[:, 100:110]", memlab.Must(x.Narrow(1, 100, 10)))
	views := l.MemoryAllocated() - x.Nbytes() // what the six views added
	vs.Add("x.t().contiguous()", memlab.Must(xt.Contiguous()))
	vs.Table().Show()
	memlab.Judge("slicing with tensor[::2] copies no data: only the stride and offset change", memlab.HoldsIf(views == 0),
		"the six views added %s to memory_allocated, x.t().contiguous() %s", memlab.FormatBytes(views), memlab.FormatBytes(l.MemoryAllocated()-x.Nbytes()-views))
	memlab.Show(memplot.Bars("2.1 a view's size vs the storage it keeps", "KiB", vs.Exprs, vs.Bars()...))
	memlab.Check(vs.Release())
}

/*md
None of the six views allocates: `x[::2]` has stride 2048 where `x` has 1024, and that is
all that changed. Every view reports the storage's size, whatever its own: `x[0:1]` covers
one row but keeps all of `x`. `x[512]` starts 512 rows × 4 KiB past `x`'s data pointer.
Only the copy allocates.

**Try it — predict first:** make `x` `tensor.Float16`. What happens to the storage sizes, and to the strides?

<details><summary>Answer</summary>

Every storage size halves (`x` is 2 MiB) and the strides stay the same: strides count elements, not bytes. The verdict does not change: the views still add 0 bytes.
</details>
*/

/*md:zh-CN
六个视图都没有分配显存：`x[::2]` 的步长是 2048，而 `x` 的是 1024，变的只有这一点。不管视图本身多大，它报告的存储大小都是整块存储的大小：`x[0:1]` 只覆盖一行，却让整个 `x` 都留在显存里。`x[512]` 的起点比 `x` 的数据指针靠后 512 行 × 4 KiB。只有拷贝才会分配显存。

**动手试试——先预测：** 把 `x` 改成 `tensor.Float16`。存储的大小和步长会怎样变化？

<details><summary>答案</summary>

每个存储的大小都减半（`x` 变成 2 MiB），步长不变：步长按元素计，而不是按字节。结论不变：视图仍然只增加 0 字节。
</details>
*/

/*md
### Where does a tensor's metadata live?

> 教材原文：「Tensor在显存里其实分两块：数据区和元信息区。」
>
> In translation: "In GPU memory a tensor actually has two parts: a data area and a
> metadata area."

> 教材原文：「元信息区：存shape、dtype、stride、device等，很小，几十字节。」
>
> In translation: "The metadata area holds shape, dtype, stride, device and so on: it is
> tiny, tens of bytes."

If the metadata sat in GPU memory beside the data, every view would move a device
counter. Below, ten thousand views of `x`: how far do `memory_allocated()`,
`memory_reserved()` and the driver's count move? And how many bytes does one view take,
and where?

```python
x = torch.empty(1024, 1024, device="cuda")
alloc, res = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
free, total = torch.cuda.mem_get_info()             # the driver's count is total - free
views = [x[i % 1024 : i % 1024 + 1] for i in range(10000)]
print(torch.cuda.memory_allocated() - alloc, torch.cuda.memory_reserved() - res,
      free - torch.cuda.mem_get_info()[0])
```
*/

/*md:zh-CN
### 张量的元信息放在哪里？

> 教材原文：「Tensor在显存里其实分两块：数据区和元信息区。」

> 教材原文：「元信息区：存shape、dtype、stride、device等，很小，几十字节。」

如果元信息和数据一起放在显存里，每个视图都会让某个显存计数动一下。下面给 `x` 建一万个视图：`memory_allocated()`、`memory_reserved()` 和驱动占用各变化多少？一个视图占多少字节，占在哪里？

```python
x = torch.empty(1024, 1024, device="cuda")
alloc, res = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
free, total = torch.cuda.mem_get_info()             # 驱动占用 = total - free
views = [x[i % 1024 : i % 1024 + 1] for i in range(10000)]
print(torch.cuda.memory_allocated() - alloc, torch.cuda.memory_reserved() - res,
      free - torch.cuda.mem_get_info()[0])
```
*/

//nb:cell
func metadataOnHost() {
	l := memlab.MustOpen()
	defer l.Close()
	x := memlab.Must(tensor.Empty(l, tensor.Float32, 1024, 1024)) // 4 MiB
	// on the device: memory_allocated + memory_reserved + the driver's count
	before, views := memlab.Must(ch2.DeviceBytes(l)), make([]*tensor.Tensor, 10000)
	// views[i] = x[i:i+1] for every i, weighing the host memory the loop takes
	host := ch2.HostBytesEach(len(views), func(i int) { views[i] = memlab.Must(x.Narrow(0, i%1024, 1)) })
	memlab.Judge("a tensor has two parts in GPU memory: a data area and a metadata area", memlab.HoldsIf(memlab.Must(ch2.DeviceBytes(l)) != before),
		"10000 views moved memory_allocated, memory_reserved and the driver's count by %s in all", memlab.FormatBytes(memlab.Must(ch2.DeviceBytes(l))-before))
	info, perView := 8*(2*x.Dim()+1), host/int64(len(views)) // shape, strides and offset as int64s
	memlab.Judge("the metadata is tiny: tens of bytes", memlab.HoldsPartly(info < 100, perView < 100),
		"a view's shape, strides and offset are %d bytes; each view took %d bytes of host memory", info, perView)
	memlab.Check(tensor.ReleaseAll(append(views, x)...))
}

/*md
Not one byte of device memory: in PyTorch the `TensorImpl` that holds shape, strides and
offset is a host (CPU) object, and only the storage's bytes are device memory. memlab is
built the same way — a view is a Go value. The information itself is tens of bytes, as
the chapter says; the object that carries it is larger (in PyTorch too), and it sits in
host memory. The data area is what costs device memory.

**Try it — predict first:** make it 100000 views (`make([]*tensor.Tensor, 100000)`). How much do the three counters move now?

<details><summary>Answer</summary>

Not at all: 0 bytes each. A view is a host object; however many there are, the device sees only `x`'s storage.
</details>

### A slice keeps its base alive

> 教材原文：「视图不占新数据区，但可能阻止原始数据释放。」
>
> In translation: "A view takes no new data area, but it can keep the original data from
> being freed."

Below, a 64 MiB tensor `big`, a one-row slice of it, and `del big`. How much is still
allocated after `del big`, while the row lives? And after copying the row (`clone()`) and
dropping the view?

```python
big = torch.empty(4096, 4096, device="cuda")        # 64 MiB
row = big[0:1]                                      # one 16 KiB row
del big
print(torch.cuda.memory_allocated())                # while row lives
row2 = row.clone()
del row
print(torch.cuda.memory_allocated(), torch.cuda.memory_reserved())
```
*/

/*md:zh-CN
显存一个字节也没动：在 PyTorch 中，保存形状、步长和偏移量的 `TensorImpl` 是主机 (CPU) 端的对象，只有存储里的字节才占显存。memlab 也是这样实现的——视图只是一个 Go 值。元信息本身确实只有几十字节，和教材说的一样；承载它的对象要大一些（PyTorch 里也是如此），而且放在主机内存里。真正吃显存的是数据区。

**动手试试——先预测：** 改成十万个视图（`make([]*tensor.Tensor, 100000)`）。三个计数现在变化多少？

<details><summary>答案</summary>

一点也不变：都是 0 字节。视图是主机上的对象；不管有多少个，设备上只有 `x` 的那块存储。
</details>

### 切片会让原张量一直活着

> 教材原文：「视图不占新数据区，但可能阻止原始数据释放。」

下面是一个 64 MiB 的张量 `big`、它的一行切片，然后 `del big`。只要这一行还在，`del big` 之后还有多少显存处于已分配状态？把这一行拷贝出来（`clone()`）、再丢掉视图之后呢？

```python
big = torch.empty(4096, 4096, device="cuda")        # 64 MiB
row = big[0:1]                                      # 一行，16 KiB
del big
print(torch.cuda.memory_allocated())                # row 还活着时
row2 = row.clone()
del row
print(torch.cuda.memory_allocated(), torch.cuda.memory_reserved())
```
*/

//nb:cell plot
func sliceKeepsBase() {
	l := memlab.MustOpen()
	defer l.Close()
	steps := l.Steps()
	steps.Add("start")
	big := memlab.Must(tensor.Empty(l, tensor.Float32, 4096, 4096)) // 64 MiB
	before := steps.Add("big = empty(4096, 4096)").Allocated
	row := memlab.Must(big.Narrow(0, 0, 1)) // big[0:1], one 16 KiB row
	added := steps.Add("row = big[0:1]").Allocated - before
	memlab.Check(big.Release())
	held := steps.Add("del big").Allocated
	row2 := memlab.Must(row.Clone())
	steps.Add("row2 = row.clone()")
	memlab.Check(row.Release())
	steps.Add("del row")
	steps.Table().Show()
	memlab.Judge("a view takes no new data area, but it can keep the original data from being freed", memlab.HoldsPartly(added == 0, held >= big.Nbytes()),
		"the row view added %s; after del big it still holds %s; after the clone and del row, %s remain allocated",
		memlab.FormatBytes(added), memlab.FormatBytes(held), memlab.FormatBytes(steps.Last().Allocated))
	memlab.Show(memplot.AllocatorCurve("2.1 a slice keeps its base alive", steps))
	memlab.Check(row2.Release())
}

/*md
The view keeps the whole storage, so a small slice of a large tensor keeps the large
tensor's memory; the fix is to copy what you keep (`clone()`) and drop the view. Reserved
memory stays up after `del row`: the 64 MiB went back to the allocator's cache, not to
the device (see 2.2).

**Try it — predict first:** keep `big[0:1024]` (a quarter of `big`) instead of one row. What does the clone allocate, and what is left after `del row`?

<details><summary>Answer</summary>

The clone allocates 16 MiB, and dropping the view still frees the whole 64 MiB storage: 16 MiB remain allocated.
</details>

### Row-major layout, transpose strides, and `view` on a non-contiguous tensor

`x = arange(6).view(2, 3)` is row-major: element (i, j) lives at offset 3·i + j, strides
(3, 1). `x.t()` swaps the strides to (1, 3) over the same storage, so walking it row by
row jumps around memory; it is not contiguous. `contiguous()` copies it into a new
storage in the new order.

> 教材原文：「但如果你转置一下，stride变了，数据还是那12个数，只是访问顺序变了。」
>
> In translation: "Transpose it, though, and the stride changes: the data are still the
> same 12 numbers, only the order they are read in changes."

Does `x.t()` allocate? And what does `contiguous()` on it cost?

```python
x = torch.arange(6., device="cuda").view(2, 3)
xt = x.t()
print(x.stride(), xt.stride(), xt.is_contiguous(), xt.data_ptr() == x.data_ptr())
before = torch.cuda.memory_allocated()
c = xt.contiguous()                                 # a copy, in the new order
print(c.view(6), torch.cuda.memory_allocated() - before)
```
*/

/*md:zh-CN
视图持有的是整块存储，所以留着大张量的一小片切片，就等于留着整个大张量的显存；解决办法是把要留的部分拷贝出来（`clone()`），再丢掉视图。`del row` 之后已预留显存 (reserved) 并没有下降：那 64 MiB 回到了分配器的缓存里，而不是还给设备（见 2.2）。

**动手试试——先预测：** 不留一行，改留 `big[0:1024]`（`big` 的四分之一）。clone 会分配多少？`del row` 之后还剩多少？

<details><summary>答案</summary>

clone 分配 16 MiB，丢掉视图之后整块 64 MiB 的存储照样被释放：已分配显存剩下 16 MiB。
</details>

### 行优先布局、转置后的步长，以及对非连续张量调用 `view`

`x = arange(6).view(2, 3)` 按行优先 (row-major) 存放：元素 (i, j) 位于偏移 3·i + j，步长为 (3, 1)。`x.t()` 在同一块存储上把步长换成 (1, 3)，于是按行遍历它时会在内存里来回跳，它不再是连续 (contiguous) 的。`contiguous()` 会按新的顺序把它拷贝到一块新的存储里。

> 教材原文：「但如果你转置一下，stride变了，数据还是那12个数，只是访问顺序变了。」

`x.t()` 会分配显存吗？对它调用 `contiguous()` 又要付出什么？

```python
x = torch.arange(6., device="cuda").view(2, 3)
xt = x.t()
print(x.stride(), xt.stride(), xt.is_contiguous(), xt.data_ptr() == x.data_ptr())
before = torch.cuda.memory_allocated()
c = xt.contiguous()                                 # 按新顺序拷贝一份
print(c.view(6), torch.cuda.memory_allocated() - before)
```
*/

//nb:cell
func transposeStrides() {
	l := memlab.MustOpen()
	defer l.Close()
	a := memlab.Must(tensor.Arange(l, tensor.Float32, 0, 6, 1))
	x := memlab.Must(a.View(2, 3))
	before, vs := l.MemoryAllocated(), memlab.NewViews(x)
	// x.t(), then what memory_allocated grew by (Go evaluates the calls left to right)
	xt, transposed := vs.Add("x.t()", memlab.Must(x.T())), l.MemoryAllocated()-before
	c := vs.Add("x.t().contiguous()", memlab.Must(xt.Contiguous()))
	vs.Table().Show()
	memlab.Measured("in memory order, x's storage holds %v and the copy %v; x.t() read row by row gives %v", memlab.Must(a.Float32s()), memlab.Must(c.Float32s()), memlab.Must(xt.Float32s()))
	memlab.Judge("a transpose changes the strides, not the data, and takes no new memory", memlab.HoldsIf(transposed == 0 && xt.SharesStorage(x)),
		"x.t() allocated %s and shares x's storage: %v; the contiguous copy allocated a new %s block", memlab.FormatBytes(transposed), xt.SharesStorage(x), memlab.FormatBytes(l.MemoryAllocated()-before-transposed))
	memlab.Check(tensor.ReleaseAll(append(vs.List, a)...)) // x, its views, then a
}

/*md
The transpose allocates nothing. Its cost comes later, when something needs the elements
in the new order in memory (`contiguous()`, or `view` below) and copies them.

**Try it — predict first:** make `x` `a.View(3, 2)` (three rows of two). What are `x.t()`'s strides, and in what order does it read the storage?

<details><summary>Answer</summary>

Strides (1, 2), and it reads 0 2 4 1 3 5: the transpose swaps the strides of whatever shape it is given, over the same storage.
</details>

Chapter 4 says `view()` needs a contiguous tensor:

> 教材原文：「这里有个关键点：view() 要求张量在内存中是『连续』的。」（第 4 章）
>
> In translation (Chapter 4): "Here is a key point: view() requires the tensor to be
> 'contiguous' in memory."

`x[:, ::2]` is not contiguous. Does `x[:, ::2].view(1024, 256, 2)` fail, then? And
`x.t().view(-1)`?

```python
x = torch.empty(1024, 1024, device="cuda")
half = x[:, ::2]                                    # not contiguous
v = half.view(1024, 256, 2)                         # it only splits a dimension: does it work?
try:
    x.t().view(-1)
except RuntimeError as e:
    print(e)                                        # "view size is not compatible with input tensor's size and stride … Use .reshape(...) instead."
before = torch.cuda.memory_allocated()
r = x.t().reshape(-1)                               # copies
print(torch.cuda.memory_allocated() - before)
```
*/

/*md:zh-CN
转置本身不分配显存。代价在后面：一旦某个操作需要元素在内存里按新顺序排列（`contiguous()`，或下面的 `view`），就要拷贝。

**动手试试——先预测：** 把 `x` 改成 `a.View(3, 2)`（三行两列）。`x.t()` 的步长是多少？它按什么顺序读存储？

<details><summary>答案</summary>

步长为 (1, 2)，读出的顺序是 0 2 4 1 3 5：无论形状如何，转置都只是在同一块存储上交换步长。
</details>

第 4 章说 `view()` 要求张量连续：

> 教材原文：「这里有个关键点：view() 要求张量在内存中是『连续』的。」（第 4 章）

`x[:, ::2]` 不连续。那么 `x[:, ::2].view(1024, 256, 2)` 会失败吗？`x.t().view(-1)` 呢？

```python
x = torch.empty(1024, 1024, device="cuda")
half = x[:, ::2]                                    # 不连续
v = half.view(1024, 256, 2)                         # 只拆开了一个维度：能成功吗？
try:
    x.t().view(-1)
except RuntimeError as e:
    print(e)                                        # "view size is not compatible with input tensor's size and stride … Use .reshape(...) instead."
before = torch.cuda.memory_allocated()
r = x.t().reshape(-1)                               # 拷贝
print(torch.cuda.memory_allocated() - before)
```
*/

//nb:cell
func viewNonContiguous() {
	l := memlab.MustOpen()
	defer l.Close()
	x := memlab.Must(tensor.Empty(l, tensor.Float32, 1024, 1024))
	vs := memlab.NewViews(x)
	half := vs.Add("x[:, ::2]", memlab.Must(x.Slice(1, 0, 1024, 2))) // half
	v, errHalf := half.View(1024, 256, 2)
	if errHalf == nil {
		vs.Add("v", v) // v = half.view(1024, 256, 2)
	}
	vs.Table().Show()
	xt := memlab.Must(x.T())
	_, errT := xt.View(-1)
	fmt.Println("x.t().view(-1):", memlab.ErrorText(errT))
	before := l.MemoryAllocated()
	r := memlab.Must(xt.Reshape(-1))
	memlab.Judge("view() requires the tensor to be contiguous in memory", memlab.HoldsIf(errHalf != nil && errT != nil),
		"x[:, ::2].view(1024, 256, 2) on a non-contiguous tensor failed: %v; x.t().view(-1) failed: %v; x.t().reshape(-1) copied %s",
		errHalf != nil, errT != nil, memlab.FormatBytes(l.MemoryAllocated()-before))
	memlab.Check(vs.Release())
	memlab.Check(tensor.ReleaseAll(xt, r))
}

/*md
PyTorch's rule is weaker than the chapter's: `view` works whenever the new shape can be
expressed with strides over the same storage — each merged run of dimensions must be
contiguous *within itself*. So `x[:, ::2].view(1024, 256, 2)` succeeds in PyTorch 2.11 (it
only splits a dimension), while `x.t().view(-1)` fails and asks for `reshape`, which copies.

**Try it — predict first:** ask for `half.View(512, 1024)`, which merges pairs of rows of `x[:, ::2]`. Does it succeed? And `memlab.Must(x.Narrow(1, 0, 512)).View(-1)` (`x[:, :512].view(-1)`)?

<details><summary>Answer</summary>

The first succeeds, with strides (2048, 2): each row's next element would sit exactly where the following row starts. The second fails with the same message as `x.t().view(-1)`: rows of 512 with gaps of 512 between them cannot be walked with one stride.
</details>

### Saved tensors hold memory

Autograd saves the tensors a backward pass needs. Here `h = relu(h @ W)` for 4 layers
on a 512×512 float32 batch (1 MiB per activation). The loop releases every intermediate
it no longer needs; without a tape memory stays flat, with one (W watched, as
`requires_grad=True`) each relu output stays saved until `Backward`.

> 教材原文：「因为autograd会保留中间结果的引用，视图引用的原始数据区一直活着。」
>
> In translation: "Because autograd keeps references to intermediate results, the
> original data area that a view refers to stays alive."

After four layers, how much more is allocated with the tape than without it — and what
is left after `Backward`?

```python
W = torch.randn(512, 512, device="cuda", requires_grad=True)   # autograd records (the tape)
h = torch.randn(512, 512, device="cuda")
for _ in range(4):
    h = torch.relu(h @ W)                           # relu's output, needed by backward
print(torch.cuda.memory_allocated())
h.sum().backward()                                  # backward runs
print(torch.cuda.memory_allocated())
# inference: the same loop under `with torch.no_grad():` saves nothing
```
*/

/*md:zh-CN
中文版把 PyTorch 的报错打印成译文，前面标着「PyTorch 报错（译文）」；PyTorch 打印的英文原文就是上面代码注释里那句，搜索时用它。

PyTorch 的实际规则比教材说的宽松：只要新形状能在同一块存储上用步长表示出来，`view` 就能成功——被合并的每一段维度只需*自身内部*连续。所以在 PyTorch 2.11 中 `x[:, ::2].view(1024, 256, 2)` 能成功（它只是拆开了一个维度），而 `x.t().view(-1)` 会报错，并提示改用会拷贝数据的 `reshape`。

**动手试试——先预测：** 试试 `half.View(512, 1024)`，它把 `x[:, ::2]` 的每两行合并成一行。能成功吗？`memlab.Must(x.Narrow(1, 0, 512)).View(-1)`（即 `x[:, :512].view(-1)`）呢？

<details><summary>答案</summary>

前者成功，步长为 (2048, 2)：每行的下一个元素恰好落在下一行的起点。后者失败，报错信息和 `x.t().view(-1)` 一样：每行 512 个元素、行与行之间隔着 512 个元素，无法用一个步长走完。
</details>

### 保存的张量会占着显存

自动求导 (autograd) 会保存反向传播要用到的张量。这里在一个 512×512 的 float32 批次上做 4 层 `h = relu(h @ W)`（每个激活值 1 MiB）。循环会释放所有不再需要的中间结果：不记录计算过程 (tape) 时显存保持平稳；记录时（监视 W，相当于 `requires_grad=True`），每个 relu 的输出都会一直被保存，直到 `Backward`。

> 教材原文：「因为autograd会保留中间结果的引用，视图引用的原始数据区一直活着。」

四层之后，记录计算过程时比不记录时多分配了多少显存？`Backward` 之后还剩多少？

```python
W = torch.randn(512, 512, device="cuda", requires_grad=True)   # 自动求导开始记录
h = torch.randn(512, 512, device="cuda")
for _ in range(4):
    h = torch.relu(h @ W)                           # relu 的输出，反向传播要用
print(torch.cuda.memory_allocated())
h.sum().backward()                                  # 运行反向传播
print(torch.cuda.memory_allocated())
# 推理：同样的循环放在 `with torch.no_grad():` 里，什么也不保存
```
*/

// forward runs layers of h = relu(h @ W) from a random batch and returns
// memory_allocated after each layer (and after Backward, with a tape).
//
//nb:decl
func forward(l *memlab.Lab, layers int, tape *tensor.Tape) *memlab.Steps {
	steps := l.Steps()
	w := memlab.Must(tensor.Randn(l, 1, tensor.Float32, 512, 512))
	h := memlab.Must(tensor.Randn(l, 2, tensor.Float32, 512, 512))
	if tape != nil {
		memlab.Check(tape.Watch(w))
	}
	steps.Add("x, W")
	for i := 1; i <= layers; i++ {
		z := memlab.Must(h.Matmul(w))
		r := memlab.Must(z.Relu())
		memlab.Check(tensor.ReleaseAll(z, h)) // del z, h: the tape keeps what it saved
		h = r
		steps.Add(fmt.Sprintf("h%d", i)) // h after layer i
	}
	if tape != nil {
		memlab.Measured("the tape holds %s of saved tensors", memlab.FormatBytes(tape.SavedBytes()))
		memlab.Check(tape.Backward())
		steps.Add("backward")
	}
	memlab.Check(tensor.ReleaseAll(w, h))
	return steps
}

//nb:cell plot
func savedTensors() {
	l := memlab.MustOpen()
	defer l.Close()
	const layers = 4
	inference := forward(l, layers, nil)
	tape := tensor.NewTape()
	training := forward(l, layers, tape)
	memlab.Check(tape.Release())
	noTape, withTape, after := inference.List[layers].Allocated, training.List[layers].Allocated, training.Last().Allocated
	memlab.Judge("autograd keeps references to intermediate results, so the data they refer to stays alive", memlab.HoldsIf(withTape > noTape && after < withTape),
		"after %d layers memory_allocated is %s without a tape and %s with one; after Backward, %s", layers, memlab.FormatBytes(noTape), memlab.FormatBytes(withTape), memlab.FormatBytes(after))
	memlab.Show(ch2plot.Tape("2.1 saved tensors hold memory until backward", inference, training))
}

/*md
Every tensor autograd saves, view or not, stays allocated until the backward pass is done
with it: the chapter's sliced views stay alive for the same reason.

**Try it — predict first:** set `layers = 8`. What does memory_allocated reach with the tape, and without?

<details><summary>Answer</summary>

With the tape it grows by one activation per layer, to W, x and eight relu outputs; the inference line stays flat.
</details>
*/

/*md:zh-CN
自动求导保存的每个张量，不管是不是视图，都会一直处于已分配 (allocated) 状态，直到反向传播用完它：教材里那些切片视图一直活着，也是这个原因。

**动手试试——先预测：** 把 `layers` 设为 8。记录计算过程时 memory_allocated 会涨到多少？不记录时呢？

<details><summary>答案</summary>

记录时每层多一个激活值，最终是 W、x 和八个 relu 输出；推理那条线依然平稳。
</details>
*/

/*md
### Summary

- A tensor is a storage (device memory) plus a view: shape, strides and offset, which live
  in host memory. Views, slices and transposes allocate nothing; `contiguous()`,
  `reshape` of a non-viewable layout and `clone()` copy.
- A view keeps its whole storage alive, however small the view; so does every tensor that
  autograd saves, until the backward pass.
- `view` needs only that the new shape can be walked with strides over the same storage,
  not a contiguous tensor.

**For discussion**

1. A data loader returns `batch[:, :512]` of a padded batch and the training loop keeps it
   for logging. What does that keep alive, and how would you find out from
   `memory_allocated()` alone?
2. Why does PyTorch keep shape and strides on the host rather than on the device? What
   would a kernel launch cost if it had to read them from device memory?
3. When is `reshape` free and when does it copy? How could you tell without reading its
   source?
*/

/*md:zh-CN
### 小结

- 张量 = 一块存储（显存）+ 一个视图：形状、步长和偏移量，这些放在主机内存里。视图、切片和转置都不分配显存；`contiguous()`、对无法直接看成新形状的布局调用 `reshape`，以及 `clone()` 会拷贝。
- 视图无论多小，都让整块存储活着；自动求导保存的每个张量也是如此，直到反向传播结束。
- `view` 只要求新形状能在同一块存储上用步长走完，并不要求张量连续。

**讨论**

1. 数据加载器返回补齐后批次的 `batch[:, :512]`，训练循环把它留下来记日志。这会让什么一直活着？只凭 `memory_allocated()`，你怎样发现它？
2. PyTorch 为什么把形状和步长放在主机上，而不是设备上？如果启动内核时要从显存里读它们，会付出什么代价？
3. `reshape` 什么时候不花代价，什么时候会拷贝？不读它的源码，你怎样分辨？
*/
