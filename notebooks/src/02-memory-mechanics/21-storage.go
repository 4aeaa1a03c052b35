package nb02

import (
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
func viewTable(base *tensor.Tensor, ts []named) {
	tab := memlab.NewTable("tensor", "shape", "stride", "offset", "nbytes", "storage nbytes", "data_ptr − x.data_ptr", "contiguous", "shares x's storage")
	for _, n := range ts {
		v := n.t
		tab.Row(n.expr, v.Shape(), v.Strides(), v.StorageOffset(), memlab.FormatBytes(v.Nbytes()), memlab.FormatBytes(v.StorageNbytes()),
			int64(v.DataPtr())-int64(base.DataPtr()), v.IsContiguous(), v.SharesStorage(base))
	}
	tab.Show()
}

// viewBars plots each tensor's own size beside the storage it keeps alive.
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
