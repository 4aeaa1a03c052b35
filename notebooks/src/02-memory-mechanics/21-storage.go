package nb02

import (
	"fmt"

	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/tensor"
)

/*md
## 2.1 Tensor storage and views (张量存储)

A tensor is a **storage** — one block of device memory — plus a **view** of it: shape,
strides (in elements) and an offset. `View`, `T`, slicing, `Select` and `Narrow` make new
views of the same storage and allocate nothing; `Contiguous` on a non-contiguous view
copies. Below, a 1024×1024 float32 tensor `x` and five views of it.
*/

// named is a tensor with the Python expression that made it.
//
//nb:decl
type named struct {
	expr string
	t    *tensor.Tensor
}

// viewTable shows each tensor's layout and the storage behind it, measured
// from base's data pointer.
//
//nb:decl
func viewTable(base *tensor.Tensor, ts []named) {
	tab := memlab.NewTable("tensor", "shape", "stride", "offset", "nbytes", "storage nbytes",
		"data_ptr − x.data_ptr", "contiguous", "shares x's storage")
	for _, n := range ts {
		v := n.t
		tab.Row(n.expr, v.Shape(), v.Strides(), v.StorageOffset(), memlab.FormatBytes(v.Nbytes()), memlab.FormatBytes(v.StorageNbytes()),
			int64(v.DataPtr())-int64(base.DataPtr()), v.IsContiguous(), v.SharesStorage(base))
	}
	tab.Show()
}

// viewBars plots each tensor's own size beside the storage it keeps alive.
//
//nb:decl
func viewBars(title string, ts []named) (*memplot.Figure, error) {
	var names []string
	own := memplot.BarSeries{Name: "nbytes (the view)"}
	storage := memplot.BarSeries{Name: "storage nbytes (allocated)"}
	for _, n := range ts {
		names = append(names, n.expr)
		own.Values = append(own.Values, float64(n.t.Nbytes())/1024)
		storage.Values = append(storage.Values, float64(n.t.StorageNbytes())/1024)
	}
	return memplot.Bars(title, "KiB", names, own, storage)
}

// release releases every tensor (Python's del).
//
//nb:decl
func release(ts []named) {
	for _, n := range ts {
		memlab.Check(n.t.Release())
	}
}

//nb:cell plot
func storageVsViews() {
	l := memlab.MustOpen()
	defer l.Close()
	x := memlab.Must(tensor.Zeros(l, tensor.Float32, 1024, 1024)) // 4 MiB
	afterX := l.MemoryAllocated()
	ts := []named{
		{"x", x},
		{"x.view(256, 4096)", memlab.Must(x.View(256, 4096))},
		{"x.t()", memlab.Must(x.T())},
		{"x[0:1]", memlab.Must(x.Slice(0, 0, 1, 1))},
		{"x[512]", memlab.Must(x.Select(0, 512))},
		{"x[:, 100:110]", memlab.Must(x.Narrow(1, 100, 10))},
	}
	afterViews := l.MemoryAllocated()
	ts = append(ts, named{"x.t().contiguous()", memlab.Must(ts[2].t.Contiguous())})
	afterCopy := l.MemoryAllocated()
	viewTable(x, ts)
	memlab.Measured("memory_allocated is %s after x, %s after the five views, %s after x.t().contiguous()",
		memlab.FormatBytes(afterX), memlab.FormatBytes(afterViews), memlab.FormatBytes(afterCopy))
	memlab.Show(viewBars("2.1 a view's size vs the storage it keeps", ts))
	release(ts)
}

/*md
Every view reports the storage's size, whatever its own: `x[0:1]` covers one row but
keeps all of `x`. `x[512]` starts 512 rows × 4 KiB past `x`'s data pointer. Only the
copy allocates.

**Try it:** make `x` `tensor.Float16` (half the bytes: every storage size halves, the
strides stay the same), or add `{"x[::2]", memlab.Must(x.Slice(0, 0, 1024, 2))}` — a
view with stride 2048 that is not contiguous and still allocates nothing.
*/

/*md
### Tensor metadata lives in host memory

The chapter says a tensor's metadata (shape, strides, offset) is stored on the GPU
beside its data. It is not: in PyTorch the `TensorImpl` that holds it is a host (CPU)
object, and only the storage's bytes are device memory. memlab is built the same way —
a view is a Go value — so making ten thousand views moves no device counter at all.
*/

//nb:cell
func metadataOnHost() {
	l := memlab.MustOpen()
	defer l.Close()
	x := memlab.Must(tensor.Empty(l, tensor.Float32, 1024, 1024)) // 4 MiB
	allocated, reserved := l.MemoryAllocated(), l.MemoryReserved()
	used := memlab.Must(l.DriverUsed())
	var views []*tensor.Tensor
	for i := range 10000 {
		views = append(views, memlab.Must(x.Narrow(0, i%1024, 1))) // x[i:i+1]
	}
	memlab.Measured("10000 views of x changed memory_allocated by %s, memory_reserved by %s and the driver's count by %s",
		memlab.FormatBytes(l.MemoryAllocated()-allocated), memlab.FormatBytes(l.MemoryReserved()-reserved),
		memlab.FormatBytes(memlab.Must(l.DriverUsed())-used))
	memlab.Check(tensor.ReleaseAll(append(views, x)...))
}

/*md
### A slice keeps its base alive

Because a view holds the whole storage, keeping a small slice of a large tensor keeps
the large tensor's memory. The fix is to copy what you keep (`clone()`), then drop the view.
*/

//nb:cell plot
func sliceKeepsBase() {
	l := memlab.MustOpen()
	defer l.Close()
	steps := l.Steps()
	steps.Add("start")
	big := memlab.Must(tensor.Empty(l, tensor.Float32, 4096, 4096)) // 64 MiB
	steps.Add("big = empty(4096, 4096)")
	row := memlab.Must(big.Narrow(0, 0, 1)) // big[0:1], one 16 KiB row
	steps.Add("row = big[0:1]")
	memlab.Check(big.Release())
	held := steps.Add("del big").Allocated
	row2 := memlab.Must(row.Clone())
	steps.Add("row2 = row.clone()")
	memlab.Check(row.Release())
	steps.Add("del row")
	steps.Table().Show()
	memlab.Measured("after del big the %s row still holds %s; after the clone and del row, %s remain allocated",
		memlab.FormatBytes(row2.Nbytes()), memlab.FormatBytes(held), memlab.FormatBytes(steps.Last().Allocated))
	memlab.Show(steps.PlotAllocator("2.1 a slice keeps its base alive"))
	memlab.Check(row2.Release())
}

/*md
Reserved memory stays up after `del row`: the 64 MiB went back to the allocator's
cache, not to the device (see 2.2).

**Try it:** keep `big[0:1024]` instead of one row (a quarter of `big`): the clone then
allocates 16 MiB, and dropping the view still frees the whole 64 MiB storage.

### Row-major layout, transpose strides, and `view` on a non-contiguous tensor

`x = arange(6).view(2, 3)` is row-major: element (i, j) lives at offset 3·i + j, strides
(3, 1). `x.t()` swaps the strides to (1, 3) over the same storage, so walking it row by
row jumps around memory; it is not contiguous. `contiguous()` copies it into a new
storage in the new order.
*/

//nb:cell
func transposeStrides() {
	l := memlab.MustOpen()
	defer l.Close()
	a := memlab.Must(tensor.Arange(l, tensor.Float32, 0, 6, 1))
	x := memlab.Must(a.View(2, 3))
	xt := memlab.Must(x.T())
	fmt.Println("x     shape", x.Shape(), "strides", x.Strides(), "contiguous", x.IsContiguous())
	fmt.Println("x.t() shape", xt.Shape(), "strides", xt.Strides(), "contiguous", xt.IsContiguous(), "same storage", xt.SharesStorage(x))
	fmt.Println("x's storage in memory order:  ", memlab.Must(a.Float32s()))
	fmt.Println("x.t() read row by row:        ", memlab.Must(xt.Float32s()))
	before := l.MemoryAllocated()
	c := memlab.Must(xt.Contiguous())
	flat := memlab.Must(c.View(6))
	fmt.Println("x.t().contiguous() in memory: ", memlab.Must(flat.Float32s()))
	memlab.Measured("the contiguous copy allocated a new %s block", memlab.FormatBytes(l.MemoryAllocated()-before))
	memlab.Check(tensor.ReleaseAll(a, x, xt, c, flat))
}

/*md
The chapter says `view()` needs a contiguous tensor. PyTorch's rule is weaker: `view`
works whenever the new shape can be expressed with strides over the same storage —
each merged run of dimensions must be contiguous *within itself*. So
`x[:, ::2].view(1024, 256, 2)` succeeds in PyTorch 2.11 (it only splits a dimension),
while `x.t().view(-1)` fails and asks for `reshape`, which copies.
*/

//nb:cell
func viewNonContiguous() {
	l := memlab.MustOpen()
	defer l.Close()
	x := memlab.Must(tensor.Empty(l, tensor.Float32, 1024, 1024))
	half := memlab.Must(x.Slice(1, 0, 1024, 2)) // x[:, ::2]
	fmt.Println("x[:, ::2]: shape", half.Shape(), "strides", half.Strides(), "contiguous", half.IsContiguous())
	v, err := half.View(1024, 256, 2)
	memlab.Check(err)
	fmt.Println("x[:, ::2].view(1024, 256, 2): shape", v.Shape(), "strides", v.Strides(), "shares x's storage", v.SharesStorage(x))
	xt := memlab.Must(x.T())
	_, err = xt.View(-1)
	fmt.Println("x.t().view(-1):", err)
	before := l.MemoryAllocated()
	r := memlab.Must(xt.Reshape(-1))
	memlab.Measured("x[:, ::2].view(1024, 256, 2) succeeded on a non-contiguous tensor; x.t().reshape(-1) copied %s",
		memlab.FormatBytes(l.MemoryAllocated()-before))
	memlab.Check(tensor.ReleaseAll(x, half, v, xt, r))
}

/*md
**Try it:** ask for `half.View(512, 1024)`, which merges pairs of rows of `x[:, ::2]`:
it succeeds too, with strides (2048, 2), because each row's next element would sit
exactly where the following row starts. Then try `memlab.Must(x.Narrow(1, 0, 512)).View(-1)`
(`x[:, :512].view(-1)`): rows of 512 with gaps of 512 between them cannot be walked with
one stride, so it fails with the same message as `x.t().view(-1)`.

### Saved tensors hold memory

Autograd saves the tensors a backward pass needs. Here `h = relu(h @ W)` for 4 layers
on a 512×512 float32 batch (1 MiB per activation). The loop releases every intermediate
it no longer needs; without a tape memory stays flat, with one (W watched, as
`requires_grad=True`) each relu output stays saved until `Backward`.
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
		steps.Add(fmt.Sprintf("layer %d", i))
	}
	if tape != nil {
		fmt.Printf("the tape holds %s of saved tensors\n", memlab.FormatBytes(tape.SavedBytes()))
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
	allocated := func(s memlab.Step) int64 { return s.Allocated }
	memlab.Measured("after %d layers memory_allocated is %s without a tape and %s with one; after Backward, %s",
		layers, memlab.FormatBytes(inference.List[layers].Allocated), memlab.FormatBytes(training.List[layers].Allocated),
		memlab.FormatBytes(training.Last().Allocated))
	fig, err := memplot.Lines("2.1 saved tensors hold memory until backward", "",
		inference.Series("no tape (inference)", allocated), training.Series("tape (training)", allocated))
	memlab.Check(err)
	fig.LabelX(training.Labels()...)
	memlab.Show(fig, nil)
}

/*md
**Try it:** set `layers = 8`: the tape's memory grows by one activation per layer, to
W, x and eight relu outputs, while the inference line stays flat.
*/
