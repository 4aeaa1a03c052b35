package cpu_test

import (
	"math"
	"strings"
	"testing"

	"memlab.dev/memlab/tensor"
)

var nan = math.NaN()

func TestUnary(t *testing.T) {
	tests := []struct {
		name  string
		op    tensor.UnaryOp
		dt    tensor.DType
		alpha float64
		in    []float64
		want  []float64
	}{
		{"relu clamps negatives and keeps NaN", tensor.Relu, tensor.Float32, 0, []float64{-1, 0, 2.5, nan}, []float64{0, 0, 2.5, nan}},
		{"gelu uses the tanh approximation", tensor.Gelu, tensor.Float32, 0, []float64{-1, 0.5, 1, 3}, []float64{-0.15880800783634186, 0.3457140028476715, 0.8411920070648193, 2.9963626861572266}},
		{"exp rounds once to float32", tensor.Exp, tensor.Float32, 0, []float64{1, -1, 0}, []float64{2.7182817459106445, 0.3678794503211975, 1}},
		{"neg", tensor.Neg, tensor.Float32, 0, []float64{1.5, -2, 0}, []float64{-1.5, 2, 0}},
		{"scale rounds alpha to float32 first", tensor.Scale, tensor.Float32, 0.1, []float64{3}, []float64{0.30000001192092896}},
		{"exp of float16 rounds to half", tensor.Exp, tensor.Float16, 0, []float64{1}, []float64{2.71875}},
		{"relu of bfloat16", tensor.Relu, tensor.BFloat16, 0, []float64{-3, 3}, []float64{0, 3}},
		{"relu of int32", tensor.Relu, tensor.Int32, 0, []float64{-3, 3}, []float64{0, 3}},
		{"neg of uint8 wraps", tensor.Neg, tensor.Uint8, 0, []float64{1, 0}, []float64{255, 0}},
		{"integral scale of int64", tensor.Scale, tensor.Int64, -3, []float64{7}, []float64{-21}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			shape := []int{len(tc.in)}
			src := e.tensorOf(tc.dt, shape, tc.in...)
			dst := e.alloc(tc.dt, shape, nil, 0)
			if err := e.k.Unary(tc.op, dst, src, tc.alpha); err != nil {
				t.Fatal(err)
			}
			if got := e.get(dst); !same(got, tc.want, 0) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			// In place (dst an exact alias of src) gives the same result.
			if err := e.k.Unary(tc.op, src, src, tc.alpha); err != nil {
				t.Fatal(err)
			}
			if got := e.get(src); !same(got, tc.want, 0) {
				t.Errorf("in place: got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBinary(t *testing.T) {
	tests := []struct {
		name    string
		op      tensor.BinaryOp
		dt      tensor.DType
		a, b    []float64
		bStride int // 0 broadcasts b's first element
		want    []float64
	}{
		{"add", tensor.Add, tensor.Float32, []float64{1, 2, 3}, []float64{10, 20, 30}, 1, []float64{11, 22, 33}},
		{"sub rounds like float32", tensor.Sub, tensor.Float32, []float64{1, 0.1}, []float64{1e-8, 0.2}, 1, []float64{1, float64(float32(0.1) - float32(0.2))}},
		{"mul broadcasts a stride-0 input", tensor.Mul, tensor.Float32, []float64{1, 2, 3}, []float64{-2}, 0, []float64{-2, -4, -6}},
		{"div by zero gives inf and NaN", tensor.Div, tensor.Float32, []float64{1, -1, 0}, []float64{0, 0, 0}, 1, []float64{math.Inf(1), math.Inf(-1), nan}},
		{"float16 add rounds to nearest even", tensor.Add, tensor.Float16, []float64{2048}, []float64{1}, 1, []float64{2048}},
		{"int32 division truncates toward zero", tensor.Div, tensor.Int32, []float64{-7, 7}, []float64{2, 2}, 1, []float64{-3, 3}},
		{"int32 add wraps", tensor.Add, tensor.Int32, []float64{math.MaxInt32}, []float64{1}, 1, []float64{math.MinInt32}},
		{"uint8 sub wraps", tensor.Sub, tensor.Uint8, []float64{1}, []float64{2}, 1, []float64{255}},
		{"bool add is or", tensor.Add, tensor.Bool, []float64{0, 0, 1, 1}, []float64{0, 1, 0, 1}, 1, []float64{0, 1, 1, 1}},
		{"bool mul is and", tensor.Mul, tensor.Bool, []float64{0, 0, 1, 1}, []float64{0, 1, 0, 1}, 1, []float64{0, 0, 0, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			shape := []int{len(tc.a)}
			a := e.tensorOf(tc.dt, shape, tc.a...)
			b := e.tensorOf(tc.dt, []int{len(tc.b)}, tc.b...)
			b.Shape, b.Strides = shape, []int{tc.bStride}
			dst := e.alloc(tc.dt, shape, nil, 0)
			if err := e.k.Binary(tc.op, dst, a, b); err != nil {
				t.Fatal(err)
			}
			if got := e.get(dst); !same(got, tc.want, 0) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			if err := e.k.Binary(tc.op, a, a, b); err != nil {
				t.Fatalf("in place: %v", err)
			}
			if got := e.get(a); !same(got, tc.want, 0) {
				t.Errorf("in place: got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestBinaryStridedMatchesNaive adds a transposed matrix and a broadcast row
// to a matrix and compares with a naive loop.
func TestBinaryStridedMatchesNaive(t *testing.T) {
	e := newEnv(t)
	const m, n = 37, 53
	av, bv := make([]float64, m*n), make([]float64, n)
	for i := range av {
		av[i] = float64(i%17) - 8.25
	}
	for j := range bv {
		bv[j] = float64(j) * 0.5
	}
	// a is stored transposed: a[i][j] lives at j*m + i.
	a := e.alloc(tensor.Float32, []int{m, n}, []int{1, m}, 0)
	e.put(a, av...)
	b := e.tensorOf(tensor.Float32, []int{n}, bv...)
	b.Shape, b.Strides = []int{m, n}, []int{0, 1}
	dst := e.alloc(tensor.Float32, []int{m, n}, nil, 0)
	if err := e.k.Binary(tensor.Mul, dst, a, b); err != nil {
		t.Fatal(err)
	}
	got := e.get(dst)
	for i := range m {
		for j := range n {
			if want := float64(float32(av[i*n+j] * bv[j])); got[i*n+j] != want {
				t.Fatalf("dst[%d][%d] = %v, want %v", i, j, got[i*n+j], want)
			}
		}
	}
}

func TestElementwiseErrors(t *testing.T) {
	e := newEnv(t)
	f32 := e.alloc(tensor.Float32, []int{4}, nil, 0)
	f32b := e.alloc(tensor.Float32, []int{4}, nil, 0)
	f16 := e.alloc(tensor.Float16, []int{4}, nil, 0)
	i32 := e.alloc(tensor.Int32, []int{4}, nil, 0)
	zeros := e.tensorOf(tensor.Int32, []int{4}, 1, 2, 0, 4)
	bools := e.alloc(tensor.Bool, []int{4}, nil, 0)
	big := e.alloc(tensor.Float32, []int{8}, nil, 0)
	shifted := big
	shifted.Shape, shifted.Strides, shifted.Offset = []int{4}, []int{1}, 1
	head := big
	head.Shape, head.Strides = []int{4}, []int{1}
	bcast := f32
	bcast.Strides = []int{0}
	tooDeep := tensor.Strided{Base: f32.Base, DType: tensor.Float32, Shape: make([]int, 9), Strides: make([]int, 9)}
	outside := f32
	outside.Offset = 1
	unknownDType := f32
	unknownDType.DType = 99

	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"gelu on integers", func() error { return e.k.Unary(tensor.Gelu, i32, i32, 0) }, "needs a floating-point dtype"},
		{"fractional scale of integers", func() error { return e.k.Unary(tensor.Scale, i32, i32, 0.5) }, "integral alpha"},
		{"unary on bool", func() error { return e.k.Unary(tensor.Relu, bools, bools, 0) }, "not supported for bool"},
		{"unknown unary op", func() error { return e.k.Unary(99, f32, f32, 0) }, "unknown operation"},
		{"dtype mismatch", func() error { return e.k.Binary(tensor.Add, f32, f32b, f16) }, "dtype mismatch: dst is float32, b is float16"},
		{"shape mismatch", func() error { return e.k.Binary(tensor.Add, f32, big, f32b) }, "shape mismatch"},
		{"rank above MaxRank", func() error { return e.k.Unary(tensor.Neg, tooDeep, tooDeep, 0) }, "exceeds the maximum rank 8"},
		{"address out of range", func() error { return e.k.Unary(tensor.Neg, f32b, outside, 0) }, "no allocation holds"},
		{"null base", func() error {
			return e.k.Unary(tensor.Neg, tensor.Strided{DType: tensor.Float32, Shape: []int{1}, Strides: []int{1}}, f32, 0)
		}, "null base address"},
		{"invalid dtype", func() error { return e.k.Unary(tensor.Neg, unknownDType, unknownDType, 0) }, "invalid dtype"},
		{"partial overlap", func() error { return e.k.Unary(tensor.Neg, shifted, head, 0) }, "partially overlaps"},
		{"broadcast output", func() error { return e.k.Unary(tensor.Neg, bcast, f32b, 0) }, "share one memory location"},
		{"integer division by zero", func() error { return e.k.Binary(tensor.Div, i32, i32, zeros) }, "integer division by zero"},
		{"bool sub", func() error { return e.k.Binary(tensor.Sub, bools, bools, bools) }, "not supported for bool"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "kernels/cpu: ") {
				t.Errorf("got error %v, want one starting kernels/cpu: and containing %q", err, tc.want)
			}
		})
	}
}

// TestInterleavedViewsDoNotOverlap writes the odd columns of a matrix from its
// even columns: the byte ranges intersect but no element is shared.
func TestInterleavedViewsDoNotOverlap(t *testing.T) {
	e := newEnv(t)
	x := e.tensorOf(tensor.Float32, []int{2, 4}, 1, 2, 3, 4, 5, 6, 7, 8)
	even, odd := x, x
	even.Shape, even.Strides = []int{2, 2}, []int{4, 2}
	odd.Shape, odd.Strides, odd.Offset = []int{2, 2}, []int{4, 2}, 1
	if err := e.k.Unary(tensor.Neg, odd, even, 0); err != nil {
		t.Fatal(err)
	}
	if got, want := e.get(x), []float64{1, -1, 3, -3, 5, -5, 7, -7}; !same(got, want, 0) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestEmptyTensorsAreValidated checks that an empty tensor still gets its
// arguments checked, and that valid empty operations do nothing.
func TestEmptyTensorsAreValidated(t *testing.T) {
	e := newEnv(t)
	emptyF := e.alloc(tensor.Float32, []int{0, 3}, nil, 0)
	emptyI := e.alloc(tensor.Int32, []int{0, 3}, nil, 0)
	emptyB := e.alloc(tensor.Bool, []int{0}, nil, 0)
	tests := []struct {
		name string
		run  func() error
		want string // "" for success
	}{
		{"neg", func() error { return e.k.Unary(tensor.Neg, emptyF, emptyF, 0) }, ""},
		{"add", func() error { return e.k.Binary(tensor.Add, emptyI, emptyI, emptyI) }, ""},
		{"fill", func() error { return e.k.Fill(emptyF, 1) }, ""},
		{"copy", func() error { return e.k.Copy(emptyI, emptyF) }, ""},
		{"random", func() error { return e.k.Random(emptyF, 1, true, 0, 1) }, ""},
		{"softmax", func() error { return e.k.Softmax(emptyF, emptyF) }, ""},
		{"gelu of int32", func() error { return e.k.Unary(tensor.Gelu, emptyI, emptyI, 0) }, "floating-point"},
		{"relu of bool", func() error { return e.k.Unary(tensor.Relu, emptyB, emptyB, 0) }, "bool"},
		{"bool div", func() error { return e.k.Binary(tensor.Div, emptyB, emptyB, emptyB) }, "bool"},
		{"fill with an overflow", func() error { return e.k.Fill(emptyI, 1e10) }, "overflow"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if tc.want == "" && err != nil {
				t.Errorf("got %v", err)
			}
			if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
