package tensor_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"memlab.dev/memlab/tensor"
)

func TestCreationAndReadback(t *testing.T) {
	dev := newTestDevice()
	cases := []struct {
		name  string
		make  func() (*tensor.Tensor, error)
		dtype tensor.DType
		shape []int
		want  []float64
	}{
		{"zeros", func() (*tensor.Tensor, error) { return tensor.Zeros(dev, tensor.Float32, 2, 2) }, tensor.Float32, []int{2, 2}, []float64{0, 0, 0, 0}},
		{"ones int32", func() (*tensor.Tensor, error) { return tensor.Ones(dev, tensor.Int32, 3) }, tensor.Int32, []int{3}, []float64{1, 1, 1}},
		{"full bfloat16", func() (*tensor.Tensor, error) { return tensor.Full(dev, tensor.BFloat16, 1.5, 2) }, tensor.BFloat16, []int{2}, []float64{1.5, 1.5}},
		{"full scalar", func() (*tensor.Tensor, error) { return tensor.Full(dev, tensor.Float32, 7) }, tensor.Float32, []int{}, []float64{7}},
		{"from float32 with shape", func() (*tensor.Tensor, error) { return tensor.FromFloat32(dev, []float32{1, 2, 3, 4, 5, 6}, 2, 3) }, tensor.Float32, []int{2, 3}, []float64{1, 2, 3, 4, 5, 6}},
		{"from float32 1-D", func() (*tensor.Tensor, error) { return tensor.FromFloat32(dev, []float32{1, 2}) }, tensor.Float32, []int{2}, []float64{1, 2}},
		{"from float64 to float16 rounds", func() (*tensor.Tensor, error) {
			return tensor.FromFloat64(dev, tensor.Float16, []float64{0.1, 65519, 1e6})
		}, tensor.Float16, []int{3}, []float64{0.0999755859375, 65504, posInf}},
		{"from int64", func() (*tensor.Tensor, error) { return tensor.FromInt64(dev, []int64{-3, 0, 9}, 3, 1) }, tensor.Int64, []int{3, 1}, []float64{-3, 0, 9}},
		{"bool", func() (*tensor.Tensor, error) { return tensor.FromFloat64(dev, tensor.Bool, []float64{0, 2, 1}) }, tensor.Bool, []int{3}, []float64{0, 1, 1}},
		{"arange", func() (*tensor.Tensor, error) { return tensor.Arange(dev, tensor.Int64, 0, 5, 2) }, tensor.Int64, []int{3}, []float64{0, 2, 4}},
		{"arange descending", func() (*tensor.Tensor, error) { return tensor.Arange(dev, tensor.Float32, 1, 0, -0.25) }, tensor.Float32, []int{4}, []float64{1, 0.75, 0.5, 0.25}},
		{"empty size 0", func() (*tensor.Tensor, error) { return tensor.Empty(dev, tensor.Float32, 0, 3) }, tensor.Float32, []int{0, 3}, []float64{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := keep(t)(c.make())
			if x.DType() != c.dtype || !x.Shape().Equal(c.shape) {
				t.Fatalf("got %v %v, want %v %v", x.DType(), x.Shape(), c.dtype, c.shape)
			}
			if x.Nbytes() != int64(len(c.want)*c.dtype.Size()) || x.StorageNbytes() != x.Nbytes() {
				t.Fatalf("Nbytes %d, StorageNbytes %d for %d elements of %v", x.Nbytes(), x.StorageNbytes(), len(c.want), c.dtype)
			}
			checkValues(t, x, c.want, 0)
		})
	}
}

func TestCreationErrors(t *testing.T) {
	dev := newTestDevice()
	cases := []struct {
		name string
		err  error
		want string // substring of the error
	}{
		{"nil device", second(tensor.Empty(nil, tensor.Float32, 2)), "nil device"},
		{"negative size", second(tensor.Zeros(dev, tensor.Float32, 2, -1)), "Trying to create tensor with negative dimension -1: [2, -1]"},
		{"bad dtype", second(tensor.Zeros(dev, tensor.DType(99), 2)), "invalid dtype"},
		{"too many dims", second(tensor.Zeros(dev, tensor.Float32, 1, 1, 1, 1, 1, 1, 1, 1, 1)), "9 dimensions"},
		{"data does not fill shape", second(tensor.FromFloat32(dev, []float32{1, 2, 3}, 2, 2)), "3 values cannot fill shape [2, 2] of 4 elements"},
		{"rand of ints", second(tensor.Rand(dev, 1, tensor.Int64, 2)), "not a floating-point dtype"},
		{"arange step 0", second(tensor.Arange(dev, tensor.Float32, 0, 1, 0)), "step must be nonzero"},
		{"arange wrong sign", second(tensor.Arange(dev, tensor.Float32, 0, 1, -1)), "upper bound and larger bound inconsistent with step sign"},
		{"fill overflow", second(tensor.Full(dev, tensor.Uint8, 300, 2)), "300"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
				t.Fatalf("got error %v, want one containing %q", c.err, c.want)
			}
		})
	}
	if n := dev.live(); n != 0 {
		t.Fatalf("%d allocations left after failed creations", n)
	}
}

func TestRandIsDeterministic(t *testing.T) {
	dev := newTestDevice()
	a := keep(t)(tensor.Rand(dev, 42, tensor.Float32, 100))
	b := keep(t)(tensor.Rand(dev, 42, tensor.Float32, 100))
	c := keep(t)(tensor.Rand(dev, 43, tensor.Float32, 100))
	va, vb, vc := values(t, a), values(t, b), values(t, c)
	same := 0
	for i := range va {
		if va[i] != vb[i] {
			t.Fatalf("same seed, different value %d: %v vs %v", i, va[i], vb[i])
		}
		if va[i] < 0 || va[i] >= 1 {
			t.Fatalf("uniform value %v outside [0, 1)", va[i])
		}
		if va[i] == vc[i] {
			same++
		}
	}
	if same > 5 {
		t.Fatalf("seeds 42 and 43 agree on %d of 100 values", same)
	}
	n := keep(t)(tensor.Randn(dev, 1, tensor.Float32, 10000))
	var mean, sq float64
	for _, v := range values(t, n) {
		mean += v
		sq += v * v
	}
	mean /= 10000
	if sd := sq/10000 - mean*mean; mean < -0.05 || mean > 0.05 || sd < 0.9 || sd > 1.1 {
		t.Fatalf("randn mean %v variance %v, want about 0 and 1", mean, sd)
	}
}

func TestViewsShareStorageAndSliceKeepsBaseAlive(t *testing.T) {
	dev := newTestDevice()
	base, err := tensor.Zeros(dev, tensor.Float32, 1024, 1024)
	if err != nil {
		t.Fatal(err)
	}
	row, err := base.Select(0, 3)
	if err != nil {
		t.Fatal(err)
	}
	piece, err := row.Slice(0, 0, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	_ = row.Release()
	if !piece.SharesStorage(base) || piece.StorageNbytes() != 4<<20 || piece.Nbytes() != 8 {
		t.Fatalf("slice: shares=%v storage=%d nbytes=%d", piece.SharesStorage(base), piece.StorageNbytes(), piece.Nbytes())
	}
	if got, want := piece.DataPtr(), base.DataPtr()+tensor.Ptr(3*1024*4); got != want {
		t.Fatalf("DataPtr %#x, want base + 3 rows = %#x", got, want)
	}
	if err := base.Release(); err != nil {
		t.Fatal(err)
	}
	if got := dev.allocated(); got != 4<<20 {
		t.Fatalf("after releasing the base, %d bytes allocated; the 8-byte slice must keep all 4 MiB alive", got)
	}
	if piece.Storage().Refs() != 1 {
		t.Fatalf("storage refs = %d, want 1", piece.Storage().Refs())
	}
	if err := piece.Release(); err != nil {
		t.Fatal(err)
	}
	if got := dev.allocated(); got != 0 {
		t.Fatalf("after the last release, %d bytes allocated", got)
	}
}

func TestWritesThroughAViewAreSeenByTheBase(t *testing.T) {
	dev := newTestDevice()
	x := keep(t)(tensor.FromFloat32(dev, seq(6), 2, 3))
	xt := keep(t)(x.T())
	col := keep(t)(xt.Select(1, 1)) // x[1, :]
	if err := col.Neg_(); err != nil {
		t.Fatal(err)
	}
	checkValues(t, x, []float64{0, 1, 2, -3, -4, -5}, 0)
	if x.Version() != 1 || xt.Version() != 1 {
		t.Fatalf("versions %d, %d; an in-place op on a view bumps the shared counter", x.Version(), xt.Version())
	}
}

func TestTransposeChangesStridesOnly(t *testing.T) {
	dev := newTestDevice()
	x := keep(t)(tensor.FromFloat32(dev, seq(6), 2, 3))
	before := dev.allocs()
	xt := keep(t)(x.T())
	if dev.allocs() != before {
		t.Fatal("transpose allocated")
	}
	if !slices.Equal(xt.Strides(), []int{1, 3}) || xt.IsContiguous() || xt.DataPtr() != x.DataPtr() {
		t.Fatalf("x.T(): strides %v contiguous %v", xt.Strides(), xt.IsContiguous())
	}
	checkValues(t, xt, []float64{0, 3, 1, 4, 2, 5}, 0)
}

func TestContiguousCopiesOnlyWhenNeeded(t *testing.T) {
	dev := newTestDevice()
	x := keep(t)(tensor.FromFloat32(dev, seq(6), 2, 3))
	allocs := dev.allocs()
	same := keep(t)(x.Contiguous())
	if dev.allocs() != allocs || !same.SharesStorage(x) || same == x {
		t.Fatalf("Contiguous of a contiguous tensor: allocated %d, shares %v, same handle %v", dev.allocs()-allocs, same.SharesStorage(x), same == x)
	}
	xt := keep(t)(x.T())
	c := keep(t)(xt.Contiguous())
	if dev.allocs() != allocs+1 || c.SharesStorage(x) || !c.IsContiguous() {
		t.Fatalf("Contiguous of a transpose: %d allocations, shares %v, contiguous %v", dev.allocs()-allocs, c.SharesStorage(x), c.IsContiguous())
	}
	if !slices.Equal(c.Strides(), []int{2, 1}) {
		t.Fatalf("strides %v", c.Strides())
	}
	checkValues(t, c, []float64{0, 3, 1, 4, 2, 5}, 0)
}

func TestReshapeIsAViewWhenPossibleElseACopy(t *testing.T) {
	dev := newTestDevice()
	x := keep(t)(tensor.FromFloat32(dev, seq(12), 3, 4))
	cases := []struct {
		name   string
		src    func() *tensor.Tensor
		shape  []int
		copies bool
		want   []float64
	}{
		{"contiguous", func() *tensor.Tensor { return x }, []int{2, -1}, false, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
		{"transposed to 1-D", func() *tensor.Tensor { return keep(t)(x.T()) }, []int{12}, true, []float64{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}},
		{"transposed, split last dim", func() *tensor.Tensor { return keep(t)(x.T()) }, []int{2, 2, 3}, false, []float64{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}},
		{"flatten of a column slice", func() *tensor.Tensor { return keep(t)(x.Slice(1, 0, 2, 1)) }, []int{6}, true, []float64{0, 1, 4, 5, 8, 9}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := c.src()
			allocs := dev.allocs()
			y := keep(t)(src.Reshape(c.shape...))
			if copied := dev.allocs() > allocs; copied != c.copies || y.SharesStorage(src) == c.copies {
				t.Fatalf("copied=%v shares=%v, want copy=%v", copied, y.SharesStorage(src), c.copies)
			}
			checkValues(t, y, c.want, 0)
		})
	}
	_, err := x.View(12, 1, 2)
	if torchMsg(err) != "shape '[12, 1, 2]' is invalid for input of size 12" {
		t.Fatalf("View error: %v", err)
	}
	xt := keep(t)(x.T())
	if _, err := xt.View(-1); torchMsg(err) != "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead." {
		t.Fatalf("View of a transpose: %v", err)
	}
}

func TestViewMethods(t *testing.T) {
	dev := newTestDevice()
	x := keep(t)(tensor.FromFloat32(dev, seq(24), 2, 3, 4))
	cases := []struct {
		name    string
		op      func() (*tensor.Tensor, error)
		shape   []int
		strides []int
		offset  int
		want    []float64
	}{
		{"permute(2,0,1)[1]", func() (*tensor.Tensor, error) {
			p := keep(t)(x.Permute(2, 0, 1))
			return p.Select(0, 1)
		}, []int{2, 3}, []int{12, 4}, 1, []float64{1, 5, 9, 13, 17, 21}},
		{"transpose(0,2)", func() (*tensor.Tensor, error) { return x.Transpose(0, 2) }, []int{4, 3, 2}, []int{1, 4, 12}, 0, nil},
		{"narrow(2,1,2)", func() (*tensor.Tensor, error) { return x.Narrow(2, 1, 2) }, []int{2, 3, 2}, []int{12, 4, 1}, 1, []float64{1, 2, 5, 6, 9, 10, 13, 14, 17, 18, 21, 22}},
		{"slice(1,0,3,2)", func() (*tensor.Tensor, error) { return x.Slice(1, 0, 3, 2) }, []int{2, 2, 4}, []int{12, 8, 1}, 0, []float64{0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 20, 21, 22, 23}},
		{"unsqueeze(1)", func() (*tensor.Tensor, error) { return x.Unsqueeze(1) }, []int{2, 1, 3, 4}, []int{12, 12, 4, 1}, 0, nil},
		{"squeeze of unsqueeze", func() (*tensor.Tensor, error) {
			u := keep(t)(x.Unsqueeze(0))
			return u.Squeeze()
		}, []int{2, 3, 4}, []int{12, 4, 1}, 0, nil},
		{"flatten(0,1)", func() (*tensor.Tensor, error) { return x.Flatten(0, 1) }, []int{6, 4}, []int{4, 1}, 0, nil},
		{"select(2,3).expand(2,2,3)", func() (*tensor.Tensor, error) {
			s := keep(t)(x.Select(2, 3))
			return s.Expand(2, 2, 3)
		}, nil, nil, 3, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			allocs := dev.allocs()
			v := keep(t)(c.op())
			if dev.allocs() != allocs {
				t.Fatal("a view allocated")
			}
			if !v.SharesStorage(x) || v.StorageOffset() != c.offset {
				t.Fatalf("shares %v offset %d, want offset %d", v.SharesStorage(x), v.StorageOffset(), c.offset)
			}
			if c.shape != nil && (!v.Shape().Equal(c.shape) || !slices.Equal(v.Strides(), c.strides)) {
				t.Fatalf("shape %v strides %v, want %v %v", v.Shape(), v.Strides(), c.shape, c.strides)
			}
			if c.want != nil {
				checkValues(t, v, c.want, 0)
			}
		})
	}
	_, err := x.Expand(3)
	if want := "expand(torch.cuda.FloatTensor{[2, 3, 4]}, size=[3]): the number of sizes provided (1) must be greater or equal to the number of dimensions in the tensor (3)"; torchMsg(err) != want {
		t.Fatalf("Expand error %v, want %q", err, want)
	}
}

func TestReleaseErrors(t *testing.T) {
	dev := newTestDevice()
	x, err := tensor.Ones(dev, tensor.Float32, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	y := keep(t)(tensor.Ones(dev, tensor.Float32, 2, 3))
	if err := x.Release(); err != nil {
		t.Fatal(err)
	}
	if err := x.Release(); !errors.Is(err, tensor.ErrDoubleRelease) {
		t.Fatalf("second Release: %v", err)
	}
	uses := map[string]error{
		"Relu":     second(x.Relu()),
		"Relu_":    x.Relu_(),
		"View":     second(x.View(6)),
		"Add":      second(y.Add(x)),
		"Float32s": second(x.Float32s()),
		"Item":     second(x.Item()),
		"CopyFrom": y.CopyFrom(x),
		"Cat":      second(tensor.Cat([]*tensor.Tensor{y, x}, 0)),
		"Matmul":   second(x.Matmul(y)),
	}
	for name, err := range uses {
		if !errors.Is(err, tensor.ErrReleased) {
			t.Errorf("%s after Release: %v, want ErrReleased", name, err)
		}
	}
	if dev.live() != 1 {
		t.Fatalf("%d live allocations, want 1 (y)", dev.live())
	}
	if s := x.String(); s != "tensor(<released>, size=(2, 3), dtype=torch.float32)" {
		t.Fatalf("String of a released tensor: %q", s)
	}
}

func TestReleaseAllAndReleaseLive(t *testing.T) {
	dev := newTestDevice()
	ones := func() *tensor.Tensor {
		x, err := tensor.Ones(dev, tensor.Float32, 2)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	if err := tensor.ReleaseAll(); err != nil {
		t.Fatalf("ReleaseAll of nothing: %v", err)
	}
	a, b := ones(), ones()
	if err := tensor.ReleaseAll(a, nil, b); err != nil {
		t.Fatalf("ReleaseAll skipping nil: %v", err)
	}
	if !a.Released() || !b.Released() || dev.live() != 0 {
		t.Fatalf("after ReleaseAll: released %v %v, %d live allocations", a.Released(), b.Released(), dev.live())
	}
	c := ones()
	if err := tensor.ReleaseAll(a, c); !errors.Is(err, tensor.ErrDoubleRelease) {
		t.Fatalf("ReleaseAll of a released tensor: %v, want ErrDoubleRelease", err)
	}
	if !c.Released() || dev.live() != 0 {
		t.Fatalf("ReleaseAll stopped at the first error: c released %v, %d live allocations", c.Released(), dev.live())
	}
	d := ones()
	if err := tensor.ReleaseLive(nil, a, d, d); err != nil {
		t.Fatalf("ReleaseLive skipping nil and released tensors: %v", err)
	}
	if !d.Released() || dev.live() != 0 {
		t.Fatalf("after ReleaseLive: d released %v, %d live allocations", d.Released(), dev.live())
	}
}

func TestFailedAllocationLeavesNothingBehind(t *testing.T) {
	dev := newTestDevice()
	x := keep(t)(tensor.Ones(dev, tensor.Float32, 4, 4))
	xt := keep(t)(x.T())
	dev.failAllocationsAfter(0)
	for name, err := range map[string]error{
		"Zeros":      second(tensor.Zeros(dev, tensor.Float32, 3)),
		"Contiguous": second(xt.Contiguous()),
		"Relu":       second(x.Relu()),
		"Matmul":     second(x.Matmul(x)),
	} {
		if !errors.Is(err, errTestOOM) {
			t.Errorf("%s: %v, want the device's out-of-memory error wrapped", name, err)
		}
	}
	dev.failAllocationsAfter(-1)
	if dev.live() != 1 || x.Storage().Refs() != 2 {
		t.Fatalf("live allocations %d, refs %d", dev.live(), x.Storage().Refs())
	}
}

func TestConcurrentViewsAndReleases(t *testing.T) {
	dev := newTestDevice()
	base, err := tensor.Zeros(dev, tensor.Float32, 64, 64)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				v, err := base.Select(0, (g+i)%64)
				if err != nil {
					errs <- err
					return
				}
				w, err := v.Unsqueeze(0)
				if err != nil {
					errs <- err
					return
				}
				_ = v.Version()
				if err := v.Release(); err != nil {
					errs <- err
				}
				if err := w.Release(); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if base.Storage().Refs() != 1 {
		t.Fatalf("refs %d after all views were released", base.Storage().Refs())
	}
	if err := base.Release(); err != nil {
		t.Fatal(err)
	}
	if dev.live() != 0 {
		t.Fatal("storage not freed")
	}
}

func TestDeviceMismatch(t *testing.T) {
	a := keep(t)(tensor.Ones(newTestDevice(), tensor.Float32, 2))
	b := keep(t)(tensor.Ones(newTestDevice(), tensor.Float32, 2))
	if _, err := a.Add(b); torchMsg(err) != "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and another cuda:0 (a different device of the same name, such as another lab's)!" {
		t.Fatalf("got %v", err)
	}
}

func TestItem(t *testing.T) {
	dev := newTestDevice()
	x := keep(t)(tensor.FromFloat32(dev, []float32{1.5, 2, 3}))
	if _, err := x.Item(); torchMsg(err) != "a Tensor with 3 elements cannot be converted to Scalar" {
		t.Fatalf("Item of 3 elements: %v", err)
	}
	s := keep(t)(x.Select(0, 0))
	if v, err := s.Item(); err != nil || v != 1.5 {
		t.Fatalf("Item = %v, %v", v, err)
	}
	i := keep(t)(tensor.FromInt64(dev, []int64{1 << 60, -7}))
	if v, err := i.Int64s(); err != nil || v[0] != 1<<60 || v[1] != -7 {
		t.Fatalf("Int64s = %v, %v", v, err)
	}
}

var posInf = math.Inf(1)

func second[T any](_ T, err error) error { return err }

func TestSize(t *testing.T) {
	dev := newTestDevice()
	x := keep(t)(tensor.Zeros(dev, tensor.Float32, 2, 5))
	s := keep(t)(tensor.Zeros(dev, tensor.Float32))
	cases := []struct {
		name string
		t    *tensor.Tensor
		dim  int
		want int
		err  string
	}{
		{"size(1)", x, 1, 5, ""},
		{"size(-2)", x, -2, 2, ""},
		{"size(2)", x, 2, 0, "Dimension out of range (expected to be in range of [-2, 1], but got 2)"},
		{"scalar size(0)", s, 0, 0, "Dimension specified as 0 but tensor has no dimensions"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.t.Size(c.dim)
			if c.err != "" {
				if torchMsg(err) != c.err {
					t.Fatalf("got %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %d, %v; want %d", got, err, c.want)
			}
		})
	}
}

func TestAccessors(t *testing.T) {
	dev := newTestDevice()
	x := keep(t)(tensor.FromFloat64(dev, tensor.Float16, []float64{1, 2, 3, 4, 5, 6}, 2, 3))
	v := keep(t)(x.Select(1, 2))
	f, err := v.Float32s()
	if err != nil || len(f) != 2 || f[0] != 3 || f[1] != 6 {
		t.Fatalf("Float32s = %v, %v", f, err)
	}
	s := v.Storage()
	if s.Device() != tensor.Device(dev) || v.Device() != tensor.Device(dev) || s.Nbytes() != 12 || s.Ptr() != x.DataPtr() || s.Refs() != 2 {
		t.Fatalf("storage: device %v, %d bytes, ptr %#x (x at %#x), refs %d", s.Device(), s.Nbytes(), s.Ptr(), x.DataPtr(), s.Refs())
	}
	if got, want := v.DataPtr(), s.Ptr()+2*2; got != want {
		t.Fatalf("DataPtr %#x, want %#x", got, want)
	}
	l := v.Layout()
	if !l.Shape.Equal([]int{2}) || !slices.Equal(l.Strides, []int{3}) || l.Offset != 2 || v.Dim() != 1 || v.Numel() != 2 || v.ElementSize() != 2 {
		t.Fatalf("layout %v", l)
	}
	l.Shape[0] = 99
	if v.Shape()[0] != 2 {
		t.Fatal("Layout() returned the tensor's own slices")
	}
	if sh, err := tensor.InferShape([]int{-1, 3}, 12); err != nil || !sh.Equal([]int{4, 3}) || sh.Dim() != 2 {
		t.Fatalf("InferShape = %v, %v", sh, err)
	}
	e := keep(t)(tensor.Empty(dev, tensor.Float32, 0))
	if e.DataPtr() != 0 || e.StorageNbytes() != 0 {
		t.Fatalf("empty tensor: ptr %#x, %d bytes", e.DataPtr(), e.StorageNbytes())
	}
}

// Many goroutines computing from one watched, scoped input: the storage's
// reference count, the scope and the tape are shared state.
func TestConcurrentOpsOnASharedInput(t *testing.T) {
	dev := newTestDevice()
	tape := tensor.NewTape()
	s := tensor.NewScope()
	x, err := s.Track(tensor.Randn(dev, 1, tensor.Float32, 32, 32))
	if err != nil {
		t.Fatal(err)
	}
	if err := tape.Watch(x); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				y, err := x.Relu() // saved by the tape, tracked by the scope
				if err != nil {
					errs <- err
					return
				}
				if _, err := y.Transpose(0, 1); err != nil {
					errs <- err
					return
				}
				if err := y.Release(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := len(tape.Nodes()); n != 160 {
		t.Fatalf("%d nodes recorded, want 160", n)
	}
	if err := s.Release(); err != nil { // x and the 160 transposes
		t.Fatal(err)
	}
	if got := dev.live(); got != 160 {
		t.Fatalf("%d live allocations, want the 160 relu outputs the tape holds", got)
	}
	if err := tape.Release(); err != nil {
		t.Fatal(err)
	}
	if got := dev.live(); got != 0 {
		t.Fatalf("%d live allocations after the tape's release", got)
	}
}
