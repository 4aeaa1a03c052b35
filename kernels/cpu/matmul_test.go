package cpu_test

import (
	"math"
	"strings"
	"testing"

	"memlab.dev/memlab/tensor"
)

// naiveMatmul multiplies row-major float32 matrices with float32 accumulation
// in increasing k, the order Matmul promises.
func naiveMatmul(a, b []float64, batch, m, k, n int, bBatched bool) []float64 {
	out := make([]float64, batch*m*n)
	for p := range batch {
		bo := 0
		if bBatched {
			bo = p * k * n
		}
		for i := range m {
			for j := range n {
				var acc float32
				for q := range k {
					acc += float32(a[p*m*k+i*k+q]) * float32(b[bo+q*n+j])
				}
				out[p*m*n+i*n+j] = float64(acc)
			}
		}
	}
	return out
}

func TestMatmul(t *testing.T) {
	tests := []struct {
		name       string
		dt         tensor.DType
		batch      int // 0: 2-D
		m, k, n    int
		aT, bT     bool // store the operand transposed
		bShared    bool // 2-D b shared by every batch
		tol        float64
		exactOrder bool
	}{
		{"small float32", tensor.Float32, 0, 3, 4, 5, false, false, false, 0, true},
		{"transposed operands", tensor.Float32, 0, 7, 9, 6, true, true, false, 0, true},
		{"blocked and parallel", tensor.Float32, 0, 67, 300, 530, false, true, false, 0, true},
		{"batched", tensor.Float32, 3, 5, 6, 7, true, false, false, 0, true},
		{"batched with a shared b", tensor.Float32, 4, 9, 8, 3, false, false, true, 0, true},
		{"float16 accumulates in float32", tensor.Float16, 0, 8, 64, 8, false, false, false, 1e-3, false},
		{"bfloat16", tensor.BFloat16, 2, 4, 32, 4, false, true, false, 1e-2, false},
		{"int32", tensor.Int32, 0, 5, 7, 3, true, false, false, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			batch := max(tc.batch, 1)
			av, bv := make([]float64, batch*tc.m*tc.k), make([]float64, batch*tc.k*tc.n)
			if tc.bShared {
				bv = bv[:tc.k*tc.n]
			}
			for i := range av {
				av[i] = float64((i*37)%11 - 5)
				if tc.dt.IsFloat() {
					av[i] /= 4
				}
			}
			for i := range bv {
				bv[i] = float64((i*13)%7 - 3)
			}
			layout := func(rows, cols int, transposed, batched bool) ([]int, []int) {
				shape, strides := []int{rows, cols}, []int{cols, 1}
				if transposed {
					strides = []int{1, rows}
				}
				if tc.batch > 0 && batched {
					shape = append([]int{tc.batch}, shape...)
					strides = append([]int{rows * cols}, strides...)
				}
				return shape, strides
			}
			as, ast := layout(tc.m, tc.k, tc.aT, true)
			bs, bst := layout(tc.k, tc.n, tc.bT, !tc.bShared)
			a := e.put(e.alloc(tc.dt, as, ast, 0), av...)
			b := e.put(e.alloc(tc.dt, bs, bst, 0), bv...)
			ds, _ := layout(tc.m, tc.n, false, true)
			dst := e.alloc(tc.dt, ds, nil, 0)
			if err := e.k.Matmul(dst, a, b); err != nil {
				t.Fatal(err)
			}
			// Values as stored (rounded to the dtype) are the inputs of the naive product.
			want := naiveMatmul(e.get(a), e.get(b), batch, tc.m, tc.k, tc.n, !tc.bShared)
			got := e.get(dst)
			for i := range want {
				w := want[i]
				if !tc.exactOrder {
					w = decodeRounded(tc.dt, w)
				}
				if d := math.Abs(got[i] - w); d > tc.tol*math.Max(math.Abs(w), 1) {
					t.Fatalf("element %d = %v, want %v", i, got[i], w)
				}
			}
		})
	}
}

// decodeRounded rounds v to dt as a store would.
func decodeRounded(dt tensor.DType, v float64) float64 {
	b := make([]byte, 8)
	encodeElem(dt, b, v)
	return decodeElem(dt, b)
}

func TestMatmulErrors(t *testing.T) {
	e := newEnv(t)
	a := e.alloc(tensor.Float32, []int{2, 3}, nil, 0)
	b := e.alloc(tensor.Float32, []int{3, 4}, nil, 0)
	dst := e.alloc(tensor.Float32, []int{2, 4}, nil, 0)
	sq := e.alloc(tensor.Float32, []int{3, 3}, nil, 0)
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"inner dims differ", func() error { return e.k.Matmul(dst, a, a) }, "shapes do not fit"},
		{"1-D dst", func() error { return e.k.Matmul(e.alloc(tensor.Float32, []int{8}, nil, 0), a, b) }, "2-D or 3-D"},
		{"dtype mismatch", func() error { return e.k.Matmul(dst, a, e.alloc(tensor.Float16, []int{3, 4}, nil, 0)) }, "dtype mismatch"},
		{"dst aliases an input", func() error { return e.k.Matmul(sq, sq, sq) }, "overlaps a"},
		{"batch sizes differ", func() error {
			return e.k.Matmul(e.alloc(tensor.Float32, []int{2, 2, 4}, nil, 0), e.alloc(tensor.Float32, []int{3, 2, 3}, nil, 0), b)
		}, "shapes do not fit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.run(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestMatmulEmptyInnerDimIsZero(t *testing.T) {
	e := newEnv(t)
	dst := e.tensorOf(tensor.Float32, []int{2, 2}, 9, 9, 9, 9)
	if err := e.k.Matmul(dst, e.alloc(tensor.Float32, []int{2, 0}, nil, 0), e.alloc(tensor.Float32, []int{0, 2}, nil, 0)); err != nil {
		t.Fatal(err)
	}
	if got := e.get(dst); !same(got, []float64{0, 0, 0, 0}, 0) {
		t.Errorf("got %v, want zeros", got)
	}
}

func TestEmbedding(t *testing.T) {
	for _, idt := range []tensor.DType{tensor.Int32, tensor.Int64} {
		t.Run(idt.String(), func(t *testing.T) {
			e := newEnv(t)
			w := e.tensorOf(tensor.Float32, []int{4, 3}, 0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32)
			idx := e.tensorOf(idt, []int{2, 2}, 3, 0, 1, 3)
			dst := e.alloc(tensor.Float32, []int{2, 2, 3}, nil, 0)
			if err := e.k.Embedding(dst, w, idx); err != nil {
				t.Fatal(err)
			}
			want := []float64{30, 31, 32, 0, 1, 2, 10, 11, 12, 30, 31, 32}
			if got := e.get(dst); !same(got, want, 0) {
				t.Errorf("got %v, want %v", got, want)
			}
			// A transposed weight and a strided dst give the same rows.
			wt := e.alloc(tensor.Float32, []int{4, 3}, []int{1, 4}, 0)
			e.put(wt, e.get(w)...)
			dt := e.alloc(tensor.Float32, []int{2, 2, 3}, []int{1, 2, 4}, 0)
			if err := e.k.Embedding(dt, wt, idx); err != nil {
				t.Fatal(err)
			}
			if got := e.get(dt); !same(got, want, 0) {
				t.Errorf("strided: got %v, want %v", got, want)
			}
		})
	}
}

func TestEmbeddingOutOfRangeWritesNothing(t *testing.T) {
	for _, bad := range []float64{4, -1} {
		e := newEnv(t)
		w := e.tensorOf(tensor.Float32, []int{4, 2}, 1, 2, 3, 4, 5, 6, 7, 8)
		idx := e.tensorOf(tensor.Int64, []int{3}, 0, bad, 1)
		dst := e.tensorOf(tensor.Float32, []int{3, 2}, -1, -1, -1, -1, -1, -1)
		err := e.k.Embedding(dst, w, idx)
		if err == nil || !strings.Contains(err.Error(), "index out of range in self") {
			t.Errorf("index %v: got error %v, want index out of range in self", bad, err)
		}
		if got := e.get(dst); !same(got, []float64{-1, -1, -1, -1, -1, -1}, 0) {
			t.Errorf("index %v: dst changed to %v", bad, got)
		}
	}
	e := newEnv(t)
	w := e.alloc(tensor.Float32, []int{4, 2}, nil, 0)
	if err := e.k.Embedding(e.alloc(tensor.Float32, []int{1, 2}, nil, 0), w, e.alloc(tensor.Float32, []int{1}, nil, 0)); err == nil || !strings.Contains(err.Error(), "idx must be int32 or int64") {
		t.Errorf("float idx: got %v", err)
	}
}
