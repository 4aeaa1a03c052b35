package cpu_test

import (
	"math"
	"strings"
	"testing"

	"memlab.dev/memlab/tensor"
)

func TestReduce(t *testing.T) {
	tests := []struct {
		name  string
		op    tensor.ReduceOp
		dt    tensor.DType
		shape []int
		in    []float64
		dim   int
		want  []float64
	}{
		{"sum over rows", tensor.Sum, tensor.Float32, []int{2, 3}, []float64{1, 2, 3, 4, 5, 6}, 0, []float64{5, 7, 9}},
		{"sum over columns", tensor.Sum, tensor.Float32, []int{2, 3}, []float64{1, 2, 3, 4, 5, 6}, 1, []float64{6, 15}},
		{"max over the middle dim", tensor.Max, tensor.Float32, []int{2, 2, 2}, []float64{1, 8, 3, 4, 5, 6, 7, 2}, 1, []float64{3, 8, 7, 6}},
		{"max propagates NaN", tensor.Max, tensor.Float32, []int{3}, []float64{1, nan, 3}, 0, []float64{nan}},
		{"max of -inf", tensor.Max, tensor.Float32, []int{2}, []float64{math.Inf(-1), math.Inf(-1)}, 0, []float64{math.Inf(-1)}},
		{"sum accumulates in float64", tensor.Sum, tensor.Float32, []int{3}, []float64{1e8, 1, -1e8}, 0, []float64{1}},
		{"float16 sum rounds once", tensor.Sum, tensor.Float16, []int{3}, []float64{2048, 1, 1}, 0, []float64{2050}},
		{"int32 sum wraps", tensor.Sum, tensor.Int32, []int{2}, []float64{math.MaxInt32, 1}, 0, []float64{math.MinInt32}},
		{"int64 max", tensor.Max, tensor.Int64, []int{3}, []float64{-5, -2, -9}, 0, []float64{-2}},
		{"bool max is any", tensor.Max, tensor.Bool, []int{2, 2}, []float64{0, 0, 0, 1}, 1, []float64{0, 1}},
		{"sum over an empty dim is zero", tensor.Sum, tensor.Float32, []int{2, 0}, nil, 1, []float64{0, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			src := e.tensorOf(tc.dt, tc.shape, tc.in...)
			out := append([]int(nil), tc.shape...)
			out[tc.dim] = 1
			dst := e.alloc(tc.dt, out, nil, 0)
			if err := e.k.Reduce(tc.op, dst, src, tc.dim); err != nil {
				t.Fatal(err)
			}
			if got := e.get(dst); !same(got, tc.want, 0) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestReduceLargeMatchesNaive sums and maxes a big strided tensor (enough work
// to run on several goroutines) along each dimension.
func TestReduceLargeMatchesNaive(t *testing.T) {
	e := newEnv(t)
	shape := []int{64, 33, 40}
	vals := make([]float64, numel(shape))
	for i := range vals {
		vals[i] = float64((i*7919)%1000) / 8
	}
	// Stored as a permuted layout: strides of a (40, 64, 33) tensor.
	src := e.alloc(tensor.Float32, shape, []int{33, 1, 64 * 33}, 0)
	e.put(src, vals...)
	for dim := range shape {
		for _, op := range []tensor.ReduceOp{tensor.Sum, tensor.Max} {
			out := append([]int(nil), shape...)
			out[dim] = 1
			dst := e.alloc(tensor.Float32, out, nil, 0)
			if err := e.k.Reduce(op, dst, src, dim); err != nil {
				t.Fatal(err)
			}
			got := e.get(dst)
			st := []int{shape[1] * shape[2], shape[2], 1}
			for o := range got {
				i, j, k := o/(out[1]*out[2]), o/out[2]%out[1], o%out[2]
				base := i*st[0] + j*st[1] + k*st[2]
				acc := 0.0
				if op == tensor.Max {
					acc = math.Inf(-1)
				}
				for r := range shape[dim] {
					v := vals[base+r*st[dim]]
					if op == tensor.Sum {
						acc += v
					} else {
						acc = math.Max(acc, v)
					}
				}
				if want := float64(float32(acc)); got[o] != want {
					t.Fatalf("op %d dim %d: element %d = %v, want %v", op, dim, o, got[o], want)
				}
			}
		}
	}
}

func TestReduceErrors(t *testing.T) {
	e := newEnv(t)
	src := e.alloc(tensor.Float32, []int{2, 3}, nil, 0)
	empty := e.alloc(tensor.Float32, []int{2, 0}, nil, 0)
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"dim out of range", func() error { return e.k.Reduce(tensor.Sum, e.alloc(tensor.Float32, []int{2, 1}, nil, 0), src, 2) }, "dim 2 out of range"},
		{"dst keeps the dim", func() error { return e.k.Reduce(tensor.Sum, e.alloc(tensor.Float32, []int{2}, nil, 0), src, 1) }, "want [2 1]"},
		{"dtype mismatch", func() error { return e.k.Reduce(tensor.Sum, e.alloc(tensor.Int32, []int{2, 1}, nil, 0), src, 1) }, "dtype mismatch"},
		{"max of nothing", func() error { return e.k.Reduce(tensor.Max, e.alloc(tensor.Float32, []int{2, 1}, nil, 0), empty, 1) }, "size 0"},
		{"sum of bool", func() error {
			b := e.alloc(tensor.Bool, []int{2}, nil, 0)
			return e.k.Reduce(tensor.Sum, e.alloc(tensor.Bool, []int{1}, nil, 0), b, 0)
		}, "sum of bool"},
		{"unknown op", func() error { return e.k.Reduce(7, src, src, 0) }, "unknown operation"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.run(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestSoftmax(t *testing.T) {
	tests := []struct {
		name  string
		dt    tensor.DType
		shape []int
		in    []float64
		want  []float64
		rel   float64
	}{
		{"large logits are shifted by the max", tensor.Float32, []int{3}, []float64{1000, 1001, 1002},
			[]float64{0.09003057330846786, 0.2447284758090973, 0.6652409434318542}, 0},
		{"rows are independent", tensor.Float32, []int{2, 2}, []float64{0, 0, 1, 1}, []float64{0.5, 0.5, 0.5, 0.5}, 0},
		{"-inf gets zero", tensor.Float32, []int{2}, []float64{math.Inf(-1), 3}, []float64{0, 1}, 0},
		{"bfloat16", tensor.BFloat16, []int{2}, []float64{0, 0}, []float64{0.5, 0.5}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			src := e.tensorOf(tc.dt, tc.shape, tc.in...)
			dst := e.alloc(tc.dt, tc.shape, nil, 0)
			if err := e.k.Softmax(dst, src); err != nil {
				t.Fatal(err)
			}
			if got := e.get(dst); !same(got, tc.want, tc.rel) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			if err := e.k.Softmax(src, src); err != nil {
				t.Fatal(err)
			}
			if got := e.get(src); !same(got, tc.want, tc.rel) {
				t.Errorf("in place: got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSoftmaxTransposedMatchesNaive runs softmax over a non-contiguous last
// dimension of a tensor big enough to be split over goroutines.
func TestSoftmaxTransposedMatchesNaive(t *testing.T) {
	e := newEnv(t)
	const rows, cols = 300, 257
	vals := make([]float64, rows*cols)
	for i := range vals {
		vals[i] = math.Sin(float64(i)) * 10
	}
	src := e.alloc(tensor.Float32, []int{rows, cols}, []int{1, rows}, 0)
	e.put(src, vals...)
	dst := e.alloc(tensor.Float32, []int{rows, cols}, nil, 0)
	if err := e.k.Softmax(dst, src); err != nil {
		t.Fatal(err)
	}
	got := e.get(dst)
	for r := range rows {
		row := make([]float64, cols)
		m := math.Inf(-1)
		for c := range cols {
			row[c] = float64(float32(vals[r*cols+c]))
			m = math.Max(m, row[c])
		}
		s := 0.0
		for c := range row {
			s += math.Exp(row[c] - m)
		}
		for c := range row {
			if want := math.Exp(row[c]-m) / s; math.Abs(got[r*cols+c]-want) > 1e-7*want+1e-30 {
				t.Fatalf("[%d][%d] = %v, want %v", r, c, got[r*cols+c], want)
			}
		}
	}
}

func TestLayerNorm(t *testing.T) {
	e := newEnv(t)
	src := e.tensorOf(tensor.Float32, []int{2, 4}, 1, 2, 3, 4, 4, 3, 2, 1)
	gamma := e.tensorOf(tensor.Float32, []int{4}, 2, 2, 2, 2)
	beta := e.tensorOf(tensor.Float32, []int{4}, 1, 1, 1, 1)
	norm := []float64{-1.3416354656219482, -0.4472118020057678, 0.4472118020057678, 1.3416354656219482}
	affine := []float64{-1.683270812034607, 0.10557638853788376, 1.8944236040115356, 3.6832709312438965}
	reverse := func(v []float64) []float64 { return []float64{v[3], v[2], v[1], v[0]} }

	dst := e.alloc(tensor.Float32, []int{2, 4}, nil, 0)
	if err := e.k.LayerNorm(dst, src, gamma, beta, 1e-5); err != nil {
		t.Fatal(err)
	}
	if got, want := e.get(dst), append(affine, reverse(affine)...); !same(got, want, 0) {
		t.Errorf("with gamma and beta: got %v, want %v", got, want)
	}
	if err := e.k.LayerNorm(dst, src, tensor.Strided{}, tensor.Strided{}, 1e-5); err != nil {
		t.Fatal(err)
	}
	if got, want := e.get(dst), append(norm, reverse(norm)...); !same(got, want, 0) {
		t.Errorf("without affine: got %v, want %v", got, want)
	}

	for _, tc := range []struct {
		name        string
		gamma, beta tensor.Strided
		eps         float64
		want        string
	}{
		{"gamma of the wrong length", e.alloc(tensor.Float32, []int{3}, nil, 0), beta, 1e-5, "gamma shape [3], want [4]"},
		{"beta of another dtype", gamma, e.alloc(tensor.Float16, []int{4}, nil, 0), 1e-5, "dtype mismatch"},
		{"negative eps", gamma, beta, -1, "eps must be >= 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := e.k.LayerNorm(dst, src, tc.gamma, tc.beta, tc.eps); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
	ints := e.alloc(tensor.Int32, []int{2, 4}, nil, 0)
	if err := e.k.Softmax(ints, ints); err == nil || !strings.Contains(err.Error(), "floating-point") {
		t.Errorf("softmax of int32: got %v", err)
	}
}
