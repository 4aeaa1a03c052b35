package tensor_test

import (
	"fmt"

	"memlab.dev/memlab/device/sim"
	"memlab.dev/memlab/tensor"
)

// simDevice gives tensors the simulated device's raw allocations (cuMemAlloc
// and cuMemFree). memlab's lab API gives them the caching allocator instead.
type simDevice struct{ *sim.Device }

func (d simDevice) Allocate(n int64) (tensor.Ptr, error) {
	p, err := d.Malloc(uint64(n))
	return tensor.Ptr(p), err
}

func (d simDevice) Deallocate(p tensor.Ptr) error { return d.Free(uint64(p)) }

func newSim() simDevice {
	d, err := sim.New(sim.Config{NoContext: true})
	if err != nil {
		panic(err)
	}
	return simDevice{d}
}

func Example() {
	dev := newSim()
	x, _ := tensor.FromFloat32(dev, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	defer x.Release()
	y, _ := x.Relu()
	defer y.Release()
	fmt.Println(y)
	// Output:
	// tensor([[1., 2., 3.],
	//         [4., 5., 6.]], device='sim:0')
}

// Views share their base's storage: writing through one changes the other.
func ExampleTensor_View() {
	dev := newSim()
	x, _ := tensor.Arange(dev, tensor.Float32, 0, 6, 1)
	defer x.Release()
	v, _ := x.View(2, 3)
	defer v.Release()
	row, _ := v.Select(0, 1)
	defer row.Release()
	_ = row.Neg_()
	fmt.Println(v.SharesStorage(x), v.Strides(), x.Version())
	fmt.Println(x)
	// Output:
	// true [3 1] 1
	// tensor([ 0.,  1.,  2., -3., -4., -5.], device='sim:0')
}

// A small slice keeps its whole base allocated until the slice is released too.
func ExampleTensor_Slice() {
	dev := newSim()
	used := func() int64 {
		free, total, _ := dev.MemGetInfo()
		return int64(total - free)
	}
	base, _ := tensor.Zeros(dev, tensor.Float32, 1024, 1024) // 4 MiB
	head, _ := base.Slice(0, 0, 2, 1)                        // the first two rows
	_ = base.Release()
	fmt.Printf("slice: %d bytes of %d in storage; device memory in use: %d\n", head.Nbytes(), head.StorageNbytes(), used())
	_ = head.Release()
	fmt.Println("after the slice's release:", used())
	// Output:
	// slice: 8192 bytes of 4194304 in storage; device memory in use: 4194304
	// after the slice's release: 0
}

// Transposing swaps strides; no data moves.
func ExampleTensor_Transpose() {
	dev := newSim()
	x, _ := tensor.Zeros(dev, tensor.Float32, 2, 3, 4)
	defer x.Release()
	y, _ := x.Transpose(0, 2)
	defer y.Release()
	fmt.Println(x.Shape(), x.Strides(), x.IsContiguous())
	fmt.Println(y.Shape(), y.Strides(), y.IsContiguous(), y.DataPtr() == x.DataPtr())
	// Output:
	// [2, 3, 4] [12 4 1] true
	// [4, 3, 2] [1 4 12] false true
}

// Contiguous copies only a tensor that is not contiguous already.
func ExampleTensor_Contiguous() {
	dev := newSim()
	x, _ := tensor.Zeros(dev, tensor.Float32, 512, 1024)
	defer x.Release()
	a, _ := x.Contiguous()
	defer a.Release()
	t, _ := x.T()
	defer t.Release()
	b, _ := t.Contiguous()
	defer b.Release()
	fmt.Println("x.contiguous() shares x:", a.SharesStorage(x))
	fmt.Println("x.t().contiguous() shares x:", b.SharesStorage(x), "strides", b.Strides())
	fmt.Println("device allocations:", dev.Stats().Mallocs)
	// Output:
	// x.contiguous() shares x: true
	// x.t().contiguous() shares x: false strides [512 1]
	// device allocations: 2
}

// A tensor saved for backward and then changed in place is caught when the
// backward pass uses it.
func ExampleTape() {
	dev := newSim()
	tape := tensor.NewTape()
	defer tape.Release()
	x, _ := tensor.Randn(dev, 0, tensor.Float32, 2, 3)
	defer x.Release()
	_ = tape.Watch(x)
	y, _ := x.Relu() // relu saves its output for backward
	defer y.Release()
	_ = y.Scale_(2) // ... which this changes
	fmt.Println(tape.Backward())
	// Output:
	// tensor: backward: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.cuda.FloatTensor [2, 3]], which is output 0 of ReluBackward0, is at version 1; expected version 0 instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True).
}

// Every tensor made from tracked tensors is released with the scope.
func ExampleWithScope() {
	dev := newSim()
	_ = tensor.WithScope(func(s *tensor.Scope) error {
		x, err := s.Track(tensor.Ones(dev, tensor.Float32, 1024))
		if err != nil {
			return err
		}
		y, _ := x.Exp()
		z, _ := y.Add(x)
		fmt.Println("tracked:", s.Len(), "allocations:", dev.Stats().Mallocs-dev.Stats().Frees)
		_ = z
		return nil
	})
	fmt.Println("after the scope:", dev.Stats().Mallocs-dev.Stats().Frees)
	// Output:
	// tracked: 3 allocations: 3
	// after the scope: 0
}

// Layout computes views without any device, with PyTorch's errors.
func ExampleLayout_View() {
	l := tensor.ContiguousLayout(4, 6)
	cols, _ := l.Slice(1, 0, 4, 1) // t[:, :4]
	v, err := cols.View(4, 2, 2)
	fmt.Println(v, err)
	_, err = cols.View(16)
	fmt.Println(err)
	// Output:
	// shape [4, 2, 2] strides [6, 2, 1] offset 0 <nil>
	// tensor: view: view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.
}

// MatmulInto writes a product into a tensor that already exists, such as a
// view of a pooled buffer: torch.matmul(a, b, out=buf[:, :2]).
func ExampleMatmulInto() {
	dev := newSim()
	a, _ := tensor.FromFloat32(dev, []float32{1, 2, 3, 4}, 2, 2)
	b, _ := tensor.FromFloat32(dev, []float32{1, 0, 0, 1}, 2, 2)
	buf, _ := tensor.Zeros(dev, tensor.Float32, 2, 3)
	out, _ := buf.Narrow(1, 0, 2) // the first two columns of the buffer
	defer tensor.ReleaseAll(out, buf, b, a)
	if err := tensor.MatmulInto(out, a, b); err != nil {
		fmt.Println(err)
	}
	fmt.Println(buf)
	wrong, _ := tensor.Zeros(dev, tensor.Float32, 3, 2)
	defer wrong.Release()
	fmt.Println(tensor.MatmulInto(wrong, a, b))
	// Output:
	// tensor([[1., 2., 0.],
	//         [3., 4., 0.]], device='sim:0')
	// tensor: matmul: out has shape [3, 2], the result has shape [2, 2] (PyTorch would resize out with a warning; memlab does not reallocate an out= tensor)
}
