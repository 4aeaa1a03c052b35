package tensor_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/tensor"
)

func mapf(v []float64, f func(float64) float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(float32(f(x)))
	}
	return out
}

func geluTanh(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
}

func TestUnaryOps(t *testing.T) {
	dev := newTestDevice()
	in := []float32{-2, -0.5, 0, 0.5, 1, 3}
	x := keep(t)(tensor.FromFloat32(dev, in, 2, 3))
	xv := values(t, x)
	cases := []struct {
		name    string
		out     func(*tensor.Tensor) (*tensor.Tensor, error)
		inPlace func(*tensor.Tensor) error
		f       func(float64) float64
	}{
		{"relu", (*tensor.Tensor).Relu, (*tensor.Tensor).Relu_, func(v float64) float64 { return math.Max(v, 0) }},
		{"gelu", (*tensor.Tensor).Gelu, (*tensor.Tensor).Gelu_, geluTanh},
		{"exp", (*tensor.Tensor).Exp, (*tensor.Tensor).Exp_, math.Exp},
		{"neg", (*tensor.Tensor).Neg, (*tensor.Tensor).Neg_, func(v float64) float64 { return -v }},
		{"scale", func(x *tensor.Tensor) (*tensor.Tensor, error) { return x.Scale(2.5) }, func(x *tensor.Tensor) error { return x.Scale_(2.5) }, func(v float64) float64 { return 2.5 * v }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := mapf(xv, c.f)
			allocs := dev.allocs()
			y := keep(t)(c.out(x))
			if dev.allocs() != allocs+1 || y.SharesStorage(x) || x.Version() != 0 {
				t.Fatalf("out of place: %d allocations, shares %v, input version %d", dev.allocs()-allocs, y.SharesStorage(x), x.Version())
			}
			checkValues(t, y, want, 1e-6)
			checkValues(t, x, xv, 0)

			z := keep(t)(x.Clone())
			allocs = dev.allocs()
			if err := c.inPlace(z); err != nil {
				t.Fatal(err)
			}
			if dev.allocs() != allocs || z.Version() != 1 {
				t.Fatalf("in place: %d allocations, version %d", dev.allocs()-allocs, z.Version())
			}
			checkValues(t, z, want, 1e-6)
		})
	}
}

func TestUnaryOutputKeepsADenseLayout(t *testing.T) {
	dev := newTestDevice()
	x := keep(t)(tensor.FromFloat32(dev, seq(6), 2, 3))
	xt := keep(t)(x.T())
	y := keep(t)(xt.Neg())
	if !slices.Equal(y.Strides(), []int{1, 3}) {
		t.Fatalf("neg of a transpose has strides %v; PyTorch keeps (1, 3)", y.Strides())
	}
	checkValues(t, y, []float64{0, -3, -1, -4, -2, -5}, 0)
	s := keep(t)(x.Slice(1, 0, 3, 2))
	z := keep(t)(s.Relu())
	if !z.IsContiguous() {
		t.Fatalf("relu of a strided slice: strides %v, want contiguous", z.Strides())
	}
	if _, err := keep(t)(tensor.FromInt64(dev, []int64{1})).Exp(); err == nil || !strings.Contains(err.Error(), "floating-point") {
		t.Fatalf("exp of int64: %v", err)
	}
}

func TestBinaryOpsBroadcast(t *testing.T) {
	dev := newTestDevice()
	a := keep(t)(tensor.FromFloat32(dev, []float32{1, 2, 3, 4, 5, 6}, 2, 3))
	row := keep(t)(tensor.FromFloat32(dev, []float32{10, 20, 30}))
	col := keep(t)(tensor.FromFloat32(dev, []float32{2, 4}, 2, 1))
	cases := []struct {
		name string
		op   func(x, y *tensor.Tensor) (*tensor.Tensor, error)
		x, y *tensor.Tensor
		want []float64
		sh   []int
	}{
		{"a + row", (*tensor.Tensor).Add, a, row, []float64{11, 22, 33, 14, 25, 36}, []int{2, 3}},
		{"row - a", (*tensor.Tensor).Sub, row, a, []float64{9, 18, 27, 6, 15, 24}, []int{2, 3}},
		{"a * col", (*tensor.Tensor).Mul, a, col, []float64{2, 4, 6, 16, 20, 24}, []int{2, 3}},
		{"a / col", (*tensor.Tensor).Div, a, col, []float64{0.5, 1, 1.5, 1, 1.25, 1.5}, []int{2, 3}},
		{"col + row", (*tensor.Tensor).Add, col, row, []float64{12, 22, 32, 14, 24, 34}, []int{2, 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			y := keep(t)(c.op(c.x, c.y))
			if !y.Shape().Equal(c.sh) {
				t.Fatalf("shape %v, want %v", y.Shape(), c.sh)
			}
			checkValues(t, y, c.want, 0)
		})
	}
	bad := keep(t)(tensor.FromFloat32(dev, []float32{1, 2, 3, 4}))
	if _, err := a.Add(bad); err == nil || err.Error() != "tensor: add: The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1" {
		t.Fatalf("mismatched shapes: %v", err)
	}
	h := keep(t)(tensor.Ones(dev, tensor.Float16, 3))
	if _, err := a.Mul(h); err == nil || !strings.Contains(err.Error(), "float32 and float16") {
		t.Fatalf("dtype mismatch: %v", err)
	}
}

func TestBinaryInPlace(t *testing.T) {
	dev := newTestDevice()
	a := keep(t)(tensor.FromFloat32(dev, []float32{1, 2, 3, 4, 5, 6}, 2, 3))
	row := keep(t)(tensor.FromFloat32(dev, []float32{10, 20, 30}))
	ops := []struct {
		name string
		op   func(x, y *tensor.Tensor) error
		want []float64
	}{
		{"add_", (*tensor.Tensor).Add_, []float64{11, 22, 33, 14, 25, 36}},
		{"sub_", (*tensor.Tensor).Sub_, []float64{1, 2, 3, 4, 5, 6}},
		{"mul_", (*tensor.Tensor).Mul_, []float64{10, 40, 90, 40, 100, 180}},
		{"div_", (*tensor.Tensor).Div_, []float64{1, 2, 3, 4, 5, 6}},
	}
	allocs := dev.allocs()
	for i, o := range ops {
		if err := o.op(a, row); err != nil {
			t.Fatalf("%s: %v", o.name, err)
		}
		checkValues(t, a, o.want, 1e-7)
		if a.Version() != int64(i+1) {
			t.Fatalf("%s: version %d", o.name, a.Version())
		}
	}
	if dev.allocs() != allocs {
		t.Fatal("in-place ops allocated")
	}
	if err := row.Add_(a); torchMsg(err) != "output with shape [3] doesn't match the broadcast shape [2, 3]" {
		t.Fatalf("row.add_(a): %v", err)
	}
}

func TestInPlaceHazards(t *testing.T) {
	dev := newTestDevice()
	t.Run("write to an expanded tensor", func(t *testing.T) {
		x := keep(t)(tensor.FromFloat32(dev, []float32{1, 2, 3}, 3, 1))
		e := keep(t)(x.Expand(3, 4))
		want := "unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation."
		if err := e.Relu_(); torchMsg(err) != want {
			t.Fatalf("relu_ on expand: %v", err)
		}
		one := keep(t)(tensor.Ones(dev, tensor.Float32, 4))
		if err := e.Add_(one); torchMsg(err) != want {
			t.Fatalf("add_ on expand: %v", err)
		}
		if x.Version() != 0 {
			t.Fatal("a refused in-place op bumped the version")
		}
		c := keep(t)(e.Clone())
		if err := c.Add_(one); err != nil {
			t.Fatalf("after clone(): %v", err)
		}
		checkValues(t, c, []float64{2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4}, 0)
	})
	t.Run("input partly overlaps the output", func(t *testing.T) {
		x := keep(t)(tensor.FromFloat32(dev, seq(4), 4))
		hi := keep(t)(x.Slice(0, 1, 4, 1))
		lo := keep(t)(x.Slice(0, 0, 3, 1))
		if err := hi.Add_(lo); torchMsg(err) != "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation." {
			t.Fatalf("x[1:].add_(x[:-1]): %v", err)
		}
	})
	t.Run("input overlaps a strided output", func(t *testing.T) {
		// Neither is dense: memlab copies the input first, so the result is
		// what the values were before the write.
		x := keep(t)(tensor.FromFloat32(dev, seq(8), 8))
		even := keep(t)(x.Slice(0, 0, 8, 2))
		odd := keep(t)(x.Slice(0, 1, 8, 2))
		allocs := dev.allocs()
		if err := even.Add_(odd); err != nil {
			t.Fatal(err)
		}
		if dev.allocs() != allocs+1 {
			t.Fatalf("%d allocations, want one temporary copy", dev.allocs()-allocs)
		}
		checkValues(t, x, []float64{1, 1, 5, 3, 9, 5, 13, 7}, 0)
	})
	t.Run("a tensor shared by two branches", func(t *testing.T) {
		// h feeds two branches; branch a modifies it in place, and branch b,
		// computed afterwards, sees the modified values.
		h := keep(t)(tensor.FromFloat32(dev, []float32{-1, 2}))
		a := h
		if err := a.Relu_(); err != nil {
			t.Fatal(err)
		}
		b := keep(t)(h.Scale(10))
		checkValues(t, b, []float64{0, 20}, 0) // not -10, 20
	})
	t.Run("a leaf that requires grad", func(t *testing.T) {
		tape := tensor.NewTape()
		defer tape.Release()
		w := keep(t)(tensor.Ones(dev, tensor.Float32, 2))
		if err := tape.Watch(w); err != nil {
			t.Fatal(err)
		}
		if err := w.Relu_(); torchMsg(err) != "a leaf Variable that requires grad is being used in an in-place operation." {
			t.Fatalf("relu_ on a watched leaf: %v", err)
		}
	})
}

func TestCopyFromAndTo(t *testing.T) {
	dev := newTestDevice()
	dst := keep(t)(tensor.Zeros(dev, tensor.Float32, 2, 3))
	src := keep(t)(tensor.FromFloat32(dev, []float32{1, 2, 3}))
	if err := dst.CopyFrom(src); err != nil {
		t.Fatal(err)
	}
	checkValues(t, dst, []float64{1, 2, 3, 1, 2, 3}, 0)
	if dst.Version() != 1 {
		t.Fatalf("version %d", dst.Version())
	}
	big := keep(t)(tensor.Zeros(dev, tensor.Float32, 4))
	if err := dst.CopyFrom(big); torchMsg(err) != "The expanded size of the tensor (3) must match the existing size (4) at non-singleton dimension 1.  Target sizes: [2, 3].  Tensor sizes: [4]" {
		t.Fatalf("copy_ of a wrong shape: %v", err)
	}
	h := keep(t)(dst.To(tensor.Float16))
	if h.DType() != tensor.Float16 || h.SharesStorage(dst) {
		t.Fatalf("To(float16): %v shares %v", h.DType(), h.SharesStorage(dst))
	}
	checkValues(t, h, []float64{1, 2, 3, 1, 2, 3}, 0)
	same := keep(t)(dst.To(tensor.Float32))
	if !same.SharesStorage(dst) {
		t.Fatal("To of the same dtype copied")
	}
	// Copy between views of one storage: t[0] = t[1].
	r0 := keep(t)(dst.Select(0, 0))
	r1 := keep(t)(dst.Select(0, 1))
	if err := r1.CopyFrom(keep(t)(tensor.FromFloat32(dev, []float32{7, 8, 9}))); err != nil {
		t.Fatal(err)
	}
	if err := r0.CopyFrom(r1); err != nil {
		t.Fatal(err)
	}
	checkValues(t, dst, []float64{7, 8, 9, 7, 8, 9}, 0)
}

func TestReductions(t *testing.T) {
	dev := newTestDevice()
	x := keep(t)(tensor.FromFloat32(dev, []float32{1, 5, 3, 4, 2, 6}, 2, 3))
	cases := []struct {
		name    string
		op      func() (*tensor.Tensor, error)
		shape   []int
		want    []float64
		wantErr string
	}{
		{"sum(0)", func() (*tensor.Tensor, error) { return x.Sum(0, false) }, []int{3}, []float64{5, 7, 9}, ""},
		{"sum(-1, keepdim)", func() (*tensor.Tensor, error) { return x.Sum(-1, true) }, []int{2, 1}, []float64{9, 12}, ""},
		{"max(1)", func() (*tensor.Tensor, error) { return x.Max(1, false) }, []int{2}, []float64{5, 6}, ""},
		{"max(0, keepdim)", func() (*tensor.Tensor, error) { return x.Max(0, true) }, []int{1, 3}, []float64{4, 5, 6}, ""},
		{"t().sum(1)", func() (*tensor.Tensor, error) { return keep(t)(x.T()).Sum(1, false) }, []int{3}, []float64{5, 7, 9}, ""},
		{"sum(2)", func() (*tensor.Tensor, error) { return x.Sum(2, false) }, nil, nil, "Dimension out of range (expected to be in range of [-2, 1], but got 2)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			y, err := c.op()
			if c.wantErr != "" {
				if torchMsg(err) != c.wantErr {
					t.Fatalf("got %v, want %q", err, c.wantErr)
				}
				return
			}
			y = keep(t)(y, err)
			if !y.Shape().Equal(c.shape) {
				t.Fatalf("shape %v, want %v", y.Shape(), c.shape)
			}
			checkValues(t, y, c.want, 0)
		})
	}
}

func softmaxRows(v []float64, n int) []float64 {
	out := make([]float64, len(v))
	for r := 0; r < len(v); r += n {
		m := math.Inf(-1)
		for _, x := range v[r : r+n] {
			m = math.Max(m, x)
		}
		s := 0.0
		for _, x := range v[r : r+n] {
			s += math.Exp(x - m)
		}
		for i, x := range v[r : r+n] {
			out[r+i] = math.Exp(x-m) / s
		}
	}
	return out
}

func TestSoftmax(t *testing.T) {
	dev := newTestDevice()
	x := keep(t)(tensor.FromFloat32(dev, []float32{1, 2, 3, -1, 0, 4}, 2, 3))
	y := keep(t)(x.Softmax(-1))
	checkValues(t, y, softmaxRows([]float64{1, 2, 3, -1, 0, 4}, 3), 1e-6)
	// Along dim 0: the softmax of each column.
	z := keep(t)(x.Softmax(0))
	if !z.IsContiguous() || !z.Shape().Equal([]int{2, 3}) {
		t.Fatalf("softmax(0): shape %v strides %v", z.Shape(), z.Strides())
	}
	cols := softmaxRows([]float64{1, -1, 2, 0, 3, 4}, 2) // columns as rows
	checkValues(t, z, []float64{cols[0], cols[2], cols[4], cols[1], cols[3], cols[5]}, 1e-6)
}

func TestLayerNorm(t *testing.T) {
	dev := newTestDevice()
	in := []float64{1, 2, 3, 4, 10, 20, 30, 40}
	x := keep(t)(tensor.FromFloat64(dev, tensor.Float32, in, 2, 4))
	g := keep(t)(tensor.FromFloat32(dev, []float32{1, 2, 1, 1}))
	b := keep(t)(tensor.FromFloat32(dev, []float32{0, 0, 0.5, 0}))
	y := keep(t)(x.LayerNorm(g, b, 1e-5))
	want := make([]float64, 8)
	for r := range 2 {
		row := in[4*r : 4*r+4]
		mean := (row[0] + row[1] + row[2] + row[3]) / 4
		v := 0.0
		for _, e := range row {
			v += (e - mean) * (e - mean)
		}
		v /= 4
		for i, e := range row {
			gb := []float64{1, 2, 1, 1}[i]
			bb := []float64{0, 0, 0.5, 0}[i]
			want[4*r+i] = (e-mean)/math.Sqrt(v+1e-5)*gb + bb
		}
	}
	checkValues(t, y, want, 1e-5)
	g3 := keep(t)(tensor.Ones(dev, tensor.Float32, 3))
	if _, err := x.LayerNorm(g3, g3, 1e-5); torchMsg(err) != "Given normalized_shape=[3], expected input with shape [*, 3], but got input of size[2, 4]" {
		t.Fatalf("wrong gamma: %v", err)
	}
	if _, err := x.LayerNorm(g, g3, 1e-5); torchMsg(err) != "Expected bias to be of same shape as normalized_shape, but got bias of shape [3] and normalized_shape = [4]" {
		t.Fatalf("wrong beta: %v", err)
	}
}

func matmulRef(a, b []float64, m, k, n int) []float64 {
	out := make([]float64, m*n)
	for i := range m {
		for j := range n {
			s := 0.0
			for p := range k {
				s += a[i*k+p] * b[p*n+j]
			}
			out[i*n+j] = s
		}
	}
	return out
}

func TestMatmul(t *testing.T) {
	dev := newTestDevice()
	av := []float64{1, 2, 3, 4, 5, 6}        // 2x3
	bv := []float64{1, 0, 2, -1, 3, 1, 0, 2} // ... used as 3x2 below (first 6)
	a := keep(t)(tensor.FromFloat64(dev, tensor.Float32, av, 2, 3))
	b := keep(t)(tensor.FromFloat64(dev, tensor.Float32, bv[:6], 3, 2))
	t.Run("2-D", func(t *testing.T) {
		checkValues(t, keep(t)(a.Matmul(b)), matmulRef(av, bv[:6], 2, 3, 2), 0)
	})
	t.Run("transposed operand", func(t *testing.T) {
		bt := keep(t)(b.T()) // 2x3, strided
		at := keep(t)(a.T()) // 3x2
		c := keep(t)(bt.Matmul(at))
		ref := matmulRef(av, bv[:6], 2, 3, 2) // (a b)^T = b^T a^T
		checkValues(t, c, []float64{ref[0], ref[2], ref[1], ref[3]}, 0)
	})
	t.Run("batched 3-D @ 2-D", func(t *testing.T) {
		a3 := keep(t)(tensor.FromFloat64(dev, tensor.Float32, append(append([]float64{}, av...), av...), 2, 2, 3))
		c := keep(t)(a3.Matmul(b))
		ref := matmulRef(av, bv[:6], 2, 3, 2)
		if !c.Shape().Equal([]int{2, 2, 2}) {
			t.Fatalf("shape %v", c.Shape())
		}
		checkValues(t, c, append(append([]float64{}, ref...), ref...), 0)
	})
	t.Run("batched 3-D @ 3-D", func(t *testing.T) {
		a3 := keep(t)(tensor.FromFloat64(dev, tensor.Float32, append(append([]float64{}, av...), av...), 2, 2, 3))
		b3 := keep(t)(b.Unsqueeze(0))
		c := keep(t)(a3.Matmul(b3)) // batch 2 @ batch 1 broadcasts
		ref := matmulRef(av, bv[:6], 2, 3, 2)
		checkValues(t, c, append(append([]float64{}, ref...), ref...), 0)
	})
	t.Run("bfloat16 inputs", func(t *testing.T) {
		ab := keep(t)(a.To(tensor.BFloat16))
		bb := keep(t)(b.To(tensor.BFloat16))
		c := keep(t)(ab.Matmul(bb))
		if c.DType() != tensor.BFloat16 {
			t.Fatalf("dtype %v", c.DType())
		}
		checkValues(t, c, matmulRef(av, bv[:6], 2, 3, 2), 1e-2)
	})
	errs := []struct {
		name string
		x, y func() *tensor.Tensor
		want string
	}{
		{"2x3 @ 2x3", func() *tensor.Tensor { return a }, func() *tensor.Tensor { return a }, "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)"},
		{"(2,2,3) @ 2x3", func() *tensor.Tensor { return keep(t)(tensor.Zeros(dev, tensor.Float32, 2, 2, 3)) }, func() *tensor.Tensor { return a }, "mat1 and mat2 shapes cannot be multiplied (4x3 and 2x3)"},
		{"(2,2,3) @ (2,4,5)", func() *tensor.Tensor { return keep(t)(tensor.Zeros(dev, tensor.Float32, 2, 2, 3)) }, func() *tensor.Tensor { return keep(t)(tensor.Zeros(dev, tensor.Float32, 2, 4, 5)) }, "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4]."},
		{"(2,2,3) @ (3,3,5)", func() *tensor.Tensor { return keep(t)(tensor.Zeros(dev, tensor.Float32, 2, 2, 3)) }, func() *tensor.Tensor { return keep(t)(tensor.Zeros(dev, tensor.Float32, 3, 3, 5)) }, "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"},
		{"float @ half", func() *tensor.Tensor { return a }, func() *tensor.Tensor { return keep(t)(b.To(tensor.Float16)) }, "expected mat1 and mat2 to have the same dtype, but got: float != c10::Half"},
	}
	for _, c := range errs {
		t.Run(c.name, func(t *testing.T) {
			if _, err := c.x().Matmul(c.y()); torchMsg(err) != c.want {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

func TestMatmulVectorsAndStacks(t *testing.T) {
	dev := newTestDevice()
	av := []float64{1, 2, 3, 4, 5, 6}  // a: 2x3
	bv := []float64{1, 0, 2, -1, 3, 1} // b: 3x2
	a := keep(t)(tensor.FromFloat64(dev, tensor.Float32, av, 2, 3))
	b := keep(t)(tensor.FromFloat64(dev, tensor.Float32, bv, 3, 2))
	v3 := keep(t)(tensor.FromFloat32(dev, []float32{1, -1, 2}))
	v2 := keep(t)(tensor.FromFloat32(dev, []float32{2, 1}))
	ab := matmulRef(av, bv, 2, 3, 2)
	// stack: [2, 1, 2, 3], a twice; other: [3, 3, 2], b scaled by 1, 2, 3.
	stack := keep(t)(tensor.FromFloat64(dev, tensor.Float32, append(append([]float64{}, av...), av...), 2, 1, 2, 3))
	var ov []float64
	for s := 1; s <= 3; s++ {
		for _, x := range bv {
			ov = append(ov, float64(s)*x)
		}
	}
	other := keep(t)(tensor.FromFloat64(dev, tensor.Float32, ov, 3, 3, 2))
	var stackWant []float64
	for range 2 {
		for s := 1; s <= 3; s++ {
			for _, x := range ab {
				stackWant = append(stackWant, float64(s)*x)
			}
		}
	}
	cases := []struct {
		name   string
		x, y   *tensor.Tensor
		shape  []int
		want   []float64
		gradFn string
	}{
		{"dot", v3, v3, []int{}, []float64{6}, "DotBackward0"},
		{"matrix @ vector", a, v3, []int{2}, []float64{5, 11}, "MvBackward0"},
		{"vector @ matrix", v3, b, []int{2}, []float64{5, 3}, "MmBackward0"},
		{"matrix @ matrix", a, b, []int{2, 2}, ab, "MmBackward0"},
		{"4-D stack @ 3-D stack broadcasts batch dims", stack, other, []int{2, 3, 2, 2}, stackWant, "BmmBackward0"},
		{"stack @ vector", other, v2, []int{3, 3}, []float64{2, 3, 7, 4, 6, 14, 6, 9, 21}, "BmmBackward0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tape := tensor.NewTape()
			defer tape.Release()
			x := keep(t)(c.x.Clone()) // a tensor of its own to watch
			if err := tape.Watch(x); err != nil {
				t.Fatal(err)
			}
			live := dev.live()
			r := keep(t)(x.Matmul(c.y))
			if dev.live() != live+1 {
				t.Fatalf("%d allocations live after matmul, want only the result", dev.live()-live)
			}
			if !r.Shape().Equal(c.shape) || r.GradFn() != c.gradFn {
				t.Fatalf("shape %v grad_fn %s, want %v %s", r.Shape(), r.GradFn(), c.shape, c.gradFn)
			}
			checkValues(t, r, c.want, 0)
		})
	}
	errs := []struct {
		name string
		x, y *tensor.Tensor
		want string
	}{
		{"dot of different lengths", v3, v2, "inconsistent tensor size, expected tensor [3] and src [2] to have the same number of elements, but got 3 and 2 elements respectively"},
		{"matrix @ wrong vector", a, v2, "size mismatch, got input (2), mat (2x3), vec (2)"},
		{"scalar", keep(t)(tensor.Full(dev, tensor.Float32, 1)), a, "both arguments to matmul need to be at least 1D, but they are 0D and 2D"},
		{"stacks whose batches do not broadcast", keep(t)(tensor.Zeros(dev, tensor.Float32, 2, 2, 3)), other, "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"},
	}
	for _, c := range errs {
		t.Run(c.name, func(t *testing.T) {
			if _, err := c.x.Matmul(c.y); torchMsg(err) != c.want {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
	// Broadcast batch dimensions cannot be flattened into one without copying:
	// both operands are copied to temporary allocations, freed before Matmul
	// returns (PyTorch's matmul makes the same copies).
	allocs, live := dev.allocs(), dev.live()
	keep(t)(stack.Matmul(other))
	if dev.allocs() != allocs+3 || dev.live() != live+1 {
		t.Fatalf("%d allocations (%d live), want two temporaries and the result", dev.allocs()-allocs, dev.live()-live)
	}
	// A single batch dimension needs no copy, even transposed.
	ot := keep(t)(other.Transpose(1, 2)) // [3, 2, 3]
	allocs = dev.allocs()
	keep(t)(ot.Matmul(b))
	if dev.allocs() != allocs+1 {
		t.Fatalf("%d allocations, want only the result", dev.allocs()-allocs)
	}
}

func TestEmbedding(t *testing.T) {
	dev := newTestDevice()
	w := keep(t)(tensor.FromFloat32(dev, seq(8), 4, 2))
	idx := keep(t)(tensor.FromInt64(dev, []int64{3, 0, 3}, 3))
	e := keep(t)(tensor.Embedding(w, idx))
	if !e.Shape().Equal([]int{3, 2}) {
		t.Fatalf("shape %v", e.Shape())
	}
	checkValues(t, e, []float64{6, 7, 0, 1, 6, 7}, 0)
	idx2 := keep(t)(tensor.FromFloat64(dev, tensor.Int32, []float64{1, 2}, 1, 2))
	e2 := keep(t)(tensor.Embedding(w, idx2))
	if !e2.Shape().Equal([]int{1, 2, 2}) {
		t.Fatalf("shape %v", e2.Shape())
	}
	checkValues(t, e2, []float64{2, 3, 4, 5}, 0)
	fidx := keep(t)(tensor.FromFloat32(dev, []float32{1}))
	if _, err := tensor.Embedding(w, fidx); torchMsg(err) != "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got torch.cuda.FloatTensor instead (while checking arguments for embedding)" {
		t.Fatalf("float indices: %v", err)
	}
	bad := keep(t)(tensor.FromInt64(dev, []int64{4}))
	live := dev.live()
	if _, err := tensor.Embedding(w, bad); err == nil {
		t.Fatal("index out of range accepted")
	}
	if n := dev.live(); n != live {
		t.Fatalf("%d live allocations, %d before: a failed op must free its output", n, live)
	}
}

func TestCat(t *testing.T) {
	dev := newTestDevice()
	a := keep(t)(tensor.FromFloat32(dev, []float32{1, 2, 3, 4}, 2, 2))
	b := keep(t)(tensor.FromFloat32(dev, []float32{5, 6}, 1, 2))
	c := keep(t)(tensor.Cat([]*tensor.Tensor{a, b}, 0))
	if !c.Shape().Equal([]int{3, 2}) {
		t.Fatalf("shape %v", c.Shape())
	}
	checkValues(t, c, []float64{1, 2, 3, 4, 5, 6}, 0)
	at := keep(t)(a.T())
	d := keep(t)(tensor.Cat([]*tensor.Tensor{a, at}, 1))
	checkValues(t, d, []float64{1, 2, 1, 3, 3, 4, 2, 4}, 0)
	cases := []struct {
		name string
		ts   []*tensor.Tensor
		dim  int
		want string
	}{
		{"empty list", nil, 0, "torch.cat(): expected a non-empty list of Tensors"},
		{"sizes differ", []*tensor.Tensor{a, b}, 1, "Sizes of tensors must match except in dimension 1. Expected size 2 but got size 1 for tensor number 1 in the list."},
		{"ranks differ", []*tensor.Tensor{a, keep(t)(tensor.Zeros(dev, tensor.Float32, 2))}, 0, "Tensors must have same number of dimensions: got 2 and 1"},
		{"scalar", []*tensor.Tensor{keep(t)(tensor.Zeros(dev, tensor.Float32))}, 0, "zero-dimensional tensor (at position 0) cannot be concatenated"},
		{"bad dim", []*tensor.Tensor{a, b}, 2, "Dimension out of range (expected to be in range of [-2, 1], but got 2)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := tensor.Cat(c.ts, c.dim); torchMsg(err) != c.want {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

func TestCloneKeepsDenseStrides(t *testing.T) {
	dev := newTestDevice()
	x := keep(t)(tensor.FromFloat32(dev, seq(6), 2, 3))
	xt := keep(t)(x.T())
	c := keep(t)(xt.Clone())
	if !slices.Equal(c.Strides(), []int{1, 3}) || c.IsContiguous() || c.SharesStorage(x) {
		t.Fatalf("clone of a transpose: strides %v", c.Strides())
	}
	checkValues(t, c, values(t, xt), 0)
}

// The result of an elementwise op keeps its first input's memory order, as in
// PyTorch: (x.t() + y).view(-1) fails, (y + x.t()).view(-1) works.
func TestBinaryOutputFollowsTheFirstInputsLayout(t *testing.T) {
	dev := newTestDevice()
	x := keep(t)(tensor.FromFloat32(dev, seq(6), 3, 2))
	y := keep(t)(tensor.Ones(dev, tensor.Float32, 2, 3))
	xt := keep(t)(x.T())
	a := keep(t)(xt.Add(y))
	if !slices.Equal(a.Strides(), []int{1, 2}) {
		t.Fatalf("x.t() + y: strides %v, want [1 2]", a.Strides())
	}
	checkValues(t, a, []float64{1, 3, 5, 2, 4, 6}, 0)
	if _, err := a.View(-1); torchMsg(err) == "" {
		t.Fatalf("(x.t() + y).view(-1): %v, want the view error", err)
	}
	b := keep(t)(y.Add(xt))
	if !b.IsContiguous() {
		t.Fatalf("y + x.t(): strides %v, want contiguous", b.Strides())
	}
	keep(t)(b.View(-1))
}
