package ch2

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/tensor"

	"gonum.org/v1/plot/vg"
)

// TensorInfo is what PyTorch's tensor attributes say about one tensor.
type TensorInfo struct {
	Name          string
	Shape         []int
	Strides       []int
	Offset        int   // storage_offset(), in elements
	Nbytes        int64 // numel × element size: what the view covers
	StorageNbytes int64 // untyped_storage().nbytes(): what is allocated
	DataPtr       tensor.Ptr
	// PtrDelta is DataPtr minus the base tensor's data pointer.
	PtrDelta   int64
	Contiguous bool
	SharesBase bool // shares the base tensor's storage
}

func infoOf(name string, t, base *tensor.Tensor) TensorInfo {
	return TensorInfo{
		Name: name, Shape: t.Shape(), Strides: t.Strides(), Offset: t.StorageOffset(),
		Nbytes: t.Nbytes(), StorageNbytes: t.StorageNbytes(), DataPtr: t.DataPtr(),
		PtrDelta: int64(t.DataPtr()) - int64(base.DataPtr()), Contiguous: t.IsContiguous(),
		SharesBase: t.SharesStorage(base),
	}
}

// StorageResult is the outcome of [StorageVsViews].
type StorageResult struct {
	Tensors []TensorInfo
	// AllocatedBase is MemoryAllocated after creating the base tensor,
	// AllocatedViews after creating every view: views allocate nothing.
	AllocatedBase, AllocatedViews int64
	// AllocatedCopy is MemoryAllocated after one contiguous copy of the
	// transposed view: a copy allocates a storage of its own.
	AllocatedCopy int64
}

// StorageVsViews creates a 1024×1024 float32 tensor (4 MiB) and views of it —
// View, T, a row slice, Select, Narrow — then one contiguous copy, and records
// each one's sizes, strides and data pointer. Every view reports the storage's
// 4 MiB, whatever its own size; only the copy allocates.
func StorageVsViews(l *memlab.Lab) (res StorageResult, err error) {
	start := l.MemoryAllocated()
	x, err := tensor.Zeros(l, tensor.Float32, 1024, 1024)
	if err != nil {
		return res, err
	}
	var keep []*tensor.Tensor
	defer func() { err = errors.Join(err, tensor.ReleaseAll(append(keep, x)...)) }()
	res.AllocatedBase = l.MemoryAllocated() - start
	res.Tensors = append(res.Tensors, infoOf("x", x, x))
	views := []struct {
		name string
		mk   func() (*tensor.Tensor, error)
	}{
		{"x.view(256, 4096)", func() (*tensor.Tensor, error) { return x.View(256, 4096) }},
		{"x.t()", x.T},
		{"x[0:1]", func() (*tensor.Tensor, error) { return x.Slice(0, 0, 1, 1) }},
		{"x[512]", func() (*tensor.Tensor, error) { return x.Select(0, 512) }},
		{"x[:, 100:110]", func() (*tensor.Tensor, error) { return x.Narrow(1, 100, 10) }},
	}
	for _, v := range views {
		t, err := v.mk()
		if err != nil {
			return res, fmt.Errorf("ch2: %s: %w", v.name, err)
		}
		keep = append(keep, t)
		res.Tensors = append(res.Tensors, infoOf(v.name, t, x))
	}
	res.AllocatedViews = l.MemoryAllocated() - start
	c, err := keep[1].Contiguous()
	if err != nil {
		return res, err
	}
	keep = append(keep, c)
	res.Tensors = append(res.Tensors, infoOf("x.t().contiguous()", c, x))
	res.AllocatedCopy = l.MemoryAllocated() - start
	return res, nil
}

// String prints one row per tensor.
func (r StorageResult) String() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "tensor\tshape\tstride\toffset\tnbytes\tstorage nbytes\tdata_ptr − x.data_ptr\tcontiguous\tshares x's storage\t")
	for _, t := range r.Tensors {
		fmt.Fprintf(w, "%s\t%v\t%v\t%d\t%s\t%s\t%d\t%v\t%v\t\n", t.Name, t.Shape, t.Strides, t.Offset,
			allocator.FormatSize(t.Nbytes), allocator.FormatSize(t.StorageNbytes), t.PtrDelta, t.Contiguous, t.SharesBase)
	}
	w.Flush()
	fmt.Fprintf(&b, "memory_allocated: %s after x, %s after the views, %s after the copy\n",
		allocator.FormatSize(r.AllocatedBase), allocator.FormatSize(r.AllocatedViews), allocator.FormatSize(r.AllocatedCopy))
	return b.String()
}

// Plot compares each tensor's own size with the storage it keeps alive.
func (r StorageResult) Plot() (*memplot.Figure, error) {
	var names []string
	own := memplot.BarSeries{Name: "nbytes (the view)"}
	st := memplot.BarSeries{Name: "storage nbytes (allocated)"}
	for _, t := range r.Tensors {
		names = append(names, t.Name)
		own.Values = append(own.Values, float64(t.Nbytes)/1024)
		st.Values = append(st.Values, float64(t.StorageNbytes)/1024)
	}
	f, err := memplot.Bars("2.1 a view's size vs the storage it keeps", "KiB", names, own, st)
	if err != nil {
		return nil, err
	}
	f.Width = 10 * vg.Inch // room for seven labels
	f.X.Tick.Label.Font.Size = 8
	return f, nil
}

// SliceKeepsBase shows a small view keeping its large base alive: a 64 MiB
// tensor, a one-row view of it, the base released (memory stays: the view
// still holds the storage), a clone of the row, the view released (now the
// 64 MiB go back to the cache).
func SliceKeepsBase(l *memlab.Lab) (steps Steps, err error) {
	steps.observe(l, "start", nil)
	big, err := tensor.Empty(l, tensor.Float32, 4096, 4096)
	if err != nil {
		return steps, err
	}
	steps.observe(l, "big = empty(4096, 4096)", nil)
	row, err := big.Narrow(0, 0, 1)
	if err != nil {
		return steps, errors.Join(err, big.Release())
	}
	steps.observe(l, "row = big[0:1]", nil)
	if err := big.Release(); err != nil {
		return steps, errors.Join(err, row.Release())
	}
	steps.observe(l, "del big", nil)
	c, err := row.Clone()
	if err != nil {
		return steps, errors.Join(err, row.Release())
	}
	steps.observe(l, "row2 = row.clone()", nil)
	if err := row.Release(); err != nil {
		return steps, errors.Join(err, c.Release())
	}
	steps.observe(l, "del row", nil)
	if err := c.Release(); err != nil {
		return steps, err
	}
	steps.observe(l, "del row2", nil)
	return steps, nil
}

// StridesResult is the outcome of [TransposeStrides].
type StridesResult struct {
	X, XT TensorInfo
	// Memory is x's storage in memory order; Logical is x.t() read in its
	// logical (row-major) order; CopyMemory is x.t().contiguous()'s storage.
	Memory, Logical, CopyMemory []float32
	// CopyAllocated is the bytes the contiguous copy allocated.
	CopyAllocated int64
}

// TransposeStrides shows row-major layout and what transposing does: x =
// arange(6).view(2, 3) has strides (3, 1) — element (i, j) at offset 3i + j;
// x.t() has strides (1, 3) over the same storage and is not contiguous;
// x.t().contiguous() copies into a new storage in the transposed order.
func TransposeStrides(l *memlab.Lab) (res StridesResult, err error) {
	a, err := tensor.Arange(l, tensor.Float32, 0, 6, 1)
	if err != nil {
		return res, err
	}
	x, err := a.View(2, 3)
	if err != nil {
		return res, errors.Join(err, a.Release())
	}
	var toRelease = []*tensor.Tensor{a, x}
	defer func() { err = errors.Join(err, tensor.ReleaseAll(toRelease...)) }()
	xt, err := x.T()
	if err != nil {
		return res, err
	}
	toRelease = append(toRelease, xt)
	res.X, res.XT = infoOf("x", x, x), infoOf("x.t()", xt, x)
	if res.Memory, err = a.Float32s(); err != nil {
		return res, err
	}
	if res.Logical, err = xt.Float32s(); err != nil {
		return res, err
	}
	before := l.MemoryAllocated()
	c, err := xt.Contiguous()
	if err != nil {
		return res, err
	}
	toRelease = append(toRelease, c)
	res.CopyAllocated = l.MemoryAllocated() - before
	flat, err := c.View(6)
	if err != nil {
		return res, err
	}
	toRelease = append(toRelease, flat)
	res.CopyMemory, err = flat.Float32s()
	return res, err
}

// String prints the layouts and the three orders.
func (r StridesResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "x      shape %v stride %v contiguous %v\n", r.X.Shape, r.X.Strides, r.X.Contiguous)
	fmt.Fprintf(&b, "x.t()  shape %v stride %v contiguous %v (same storage: %v)\n", r.XT.Shape, r.XT.Strides, r.XT.Contiguous, r.XT.SharesBase)
	fmt.Fprintf(&b, "x's storage in memory order:          %v\n", r.Memory)
	fmt.Fprintf(&b, "x.t() read row by row:                %v\n", r.Logical)
	fmt.Fprintf(&b, "x.t().contiguous() storage in memory: %v (a new %s block)\n", r.CopyMemory, allocator.FormatSize(r.CopyAllocated))
	return b.String()
}

// SavedResult is the outcome of [SavedTensors]: the same forward pass without
// and with a tape (autograd) recording it.
type SavedResult struct {
	Layers int
	// NoGrad and Grad hold MemoryAllocated after each step of the two runs.
	NoGrad, Grad Steps
	// SavedBytes is what the tape held before Backward.
	SavedBytes int64
}

// SavedTensors runs layers of h = relu(h @ W) on a 512×512 float32 batch
// (1 MiB per activation, W as large), releasing each intermediate as soon as the program
// no longer needs it. Without a tape memory stays flat; with one (W watched,
// as requires_grad) every relu output is saved for backward and memory grows
// by one activation per layer until Backward frees them.
func SavedTensors(l *memlab.Lab, layers int) (res SavedResult, err error) {
	if layers < 1 {
		return res, fmt.Errorf("ch2: SavedTensors: layers = %d, need at least 1", layers)
	}
	res.Layers = layers
	for _, grad := range []bool{false, true} {
		steps, saved, err := forward(l, layers, grad)
		if err != nil {
			return res, err
		}
		if grad {
			res.Grad, res.SavedBytes = steps, saved
		} else {
			res.NoGrad = steps
		}
	}
	return res, nil
}

func forward(l *memlab.Lab, layers int, grad bool) (steps Steps, saved int64, err error) {
	const n = 512
	w, err := tensor.Randn(l, 1, tensor.Float32, n, n)
	if err != nil {
		return nil, 0, err
	}
	h, err := tensor.Randn(l, 2, tensor.Float32, n, n)
	if err != nil {
		return nil, 0, errors.Join(err, w.Release())
	}
	tape := tensor.NewTape()
	defer func() { err = errors.Join(err, tape.Release(), tensor.ReleaseAll(w, h)) }()
	if grad {
		if err := tape.Watch(w); err != nil {
			return nil, 0, err
		}
	}
	steps.observe(l, "x, W", nil)
	for i := 1; i <= layers; i++ {
		z, err := h.Matmul(w)
		if err != nil {
			return steps, 0, err
		}
		r, err := z.Relu()
		if err := errors.Join(err, z.Release()); err != nil {
			return steps, 0, errors.Join(err, tensor.ReleaseAll(r))
		}
		if err := h.Release(); err != nil {
			return steps, 0, errors.Join(err, r.Release())
		}
		h = r
		steps.observe(l, fmt.Sprintf("layer %d", i), nil)
	}
	saved = tape.SavedBytes()
	if grad {
		if err := tape.Backward(); err != nil {
			return steps, saved, err
		}
		steps.observe(l, "backward", nil)
	}
	return steps, saved, nil
}

// String prints allocated memory per layer for both runs.
func (r SavedResult) String() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "step\tallocated, no tape\tallocated, tape\t")
	for i, st := range r.Grad {
		no := ""
		if i < len(r.NoGrad) {
			no = allocator.FormatSize(r.NoGrad[i].Allocated)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t\n", st.Label, no, allocator.FormatSize(st.Allocated))
	}
	w.Flush()
	fmt.Fprintf(&b, "the tape held %s of saved tensors before backward\n", allocator.FormatSize(r.SavedBytes))
	return b.String()
}

// Plot draws allocated memory per step of both runs.
func (r SavedResult) Plot() (*memplot.Figure, error) {
	allocated := func(st Step) int64 { return st.Allocated }
	f, err := memplot.Lines("2.1 saved tensors hold memory until backward", "",
		r.NoGrad.series("no tape (inference)", allocated), r.Grad.series("tape (training)", allocated))
	if err != nil {
		return nil, err
	}
	f.LabelX(r.Grad.Labels()...)
	return f, nil
}
