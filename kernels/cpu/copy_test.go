package cpu_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"memlab.dev/memlab/kernels/cpu"
	"memlab.dev/memlab/tensor"
)

func TestCopyConverts(t *testing.T) {
	tests := []struct {
		name    string
		from    tensor.DType
		to      tensor.DType
		in      []float64
		want    []float64
		rawWant func([]byte) bool // checks dst's bytes instead of want when set
	}{
		{"float32 to float16 rounds to nearest even", tensor.Float32, tensor.Float16, []float64{2049, 2051, 0.1, 1e6}, []float64{2048, 2052, 0.0999755859375, math.Inf(1)}, nil},
		{"float32 to bfloat16", tensor.Float32, tensor.BFloat16, []float64{1.00390625, 3}, []float64{1, 3}, nil},
		{"float16 to float32 is exact", tensor.Float16, tensor.Float32, []float64{0.0999755859375, 65504}, []float64{0.0999755859375, 65504}, nil},
		{"float to int truncates toward zero", tensor.Float32, tensor.Int32, []float64{-2.7, 2.7, nan}, []float64{-2, 2, 0}, nil},
		{"float to uint8 wraps", tensor.Float32, tensor.Uint8, []float64{300, -1}, []float64{44, 255}, nil},
		{"int64 to float32 rounds once", tensor.Int64, tensor.Float32, []float64{1<<24 + 1, 1<<24 + 3}, []float64{1 << 24, 1<<24 + 4}, nil},
		{"int64 to int32 wraps", tensor.Int64, tensor.Int32, []float64{1 << 32, 1<<31 + 5}, []float64{0, math.MinInt32 + 5}, nil},
		{"to bool is nonzero", tensor.Float32, tensor.Bool, []float64{0, -0.5, nan}, []float64{0, 1, 1}, nil},
		{"bool to float", tensor.Bool, tensor.Float16, []float64{1, 0}, []float64{1, 0}, nil},
		{"uint8 to int64", tensor.Uint8, tensor.Int64, []float64{255}, []float64{255}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			shape := []int{len(tc.in)}
			src := e.tensorOf(tc.from, shape, tc.in...)
			dst := e.alloc(tc.to, shape, nil, 0)
			if err := e.k.Copy(dst, src); err != nil {
				t.Fatal(err)
			}
			if got := e.get(dst); !same(got, tc.want, 0) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCopyErrors(t *testing.T) {
	e := newEnv(t)
	x := e.alloc(tensor.Float32, []int{2, 3}, nil, 0)
	xt := x
	xt.Shape, xt.Strides = []int{2, 3}, []int{1, 2}
	if err := e.k.Copy(e.alloc(tensor.Float32, []int{3, 2}, nil, 0), x); err == nil || !strings.Contains(err.Error(), "shape mismatch") {
		t.Errorf("shape mismatch: got %v", err)
	}
	if err := e.k.Copy(xt, x); err == nil || !strings.Contains(err.Error(), "partially overlaps") {
		t.Errorf("in-place transpose: got %v", err)
	}
	if err := e.k.Copy(x, x); err != nil {
		t.Errorf("exact alias: %v", err)
	}
}

// copyCase derives a random layout (shape, permuted strides with gaps,
// offset) for both sides of a copy from a seed.
func randomLayout(r *rand.Rand, shape []int) (strides []int, offset int) {
	perm := r.Perm(len(shape))
	strides = make([]int, len(shape))
	acc := 1
	for _, d := range perm {
		if r.IntN(6) == 0 && shape[d] == 1 {
			strides[d] = r.IntN(5) // any stride is fine for a size-1 dim
			continue
		}
		strides[d] = acc * (1 + r.IntN(2)) // sometimes leave gaps
		acc = strides[d] * shape[d]
	}
	return strides, r.IntN(7)
}

// checkCopy copies a random tensor between two random layouts and compares
// every element with the naive indexer.
func checkCopy(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 7))
	rank := r.IntN(tensor.MaxRank + 1)
	shape := make([]int, rank)
	total := 1
	for d := range shape {
		shape[d] = 1 + r.IntN(4)
		if total*shape[d] > 4096 {
			shape[d] = 1
		}
		total *= shape[d]
	}
	dtypes := []tensor.DType{tensor.Float32, tensor.Float16, tensor.BFloat16, tensor.Int32, tensor.Int64, tensor.Uint8, tensor.Bool}
	from, to := dtypes[r.IntN(len(dtypes))], dtypes[r.IntN(len(dtypes))]
	if r.IntN(2) == 0 {
		to = from
	}
	e := newEnv(t)
	ss, so := randomLayout(r, shape)
	ds, do := randomLayout(r, shape)
	src := e.alloc(from, shape, ss, so)
	dst := e.alloc(to, shape, ds, do)
	vals := make([]float64, total)
	for i := range vals {
		vals[i] = float64(r.IntN(200)) - 50
	}
	e.put(src, vals...)
	if err := e.k.Copy(dst, src); err != nil {
		t.Fatalf("seed %d: shape %v src %v/%d dst %v/%d: %v", seed, shape, ss, so, ds, do, err)
	}
	got := e.get(dst)
	stored := e.get(src)
	for i := range got {
		want := decodeRounded(to, stored[i])
		if to == tensor.Uint8 {
			want = float64(uint8(int64(stored[i])))
		}
		if got[i] != want {
			t.Fatalf("seed %d: %v→%v shape %v src strides %v+%d dst strides %v+%d: element %d = %v, want %v",
				seed, from, to, shape, ss, so, ds, do, i, got[i], want)
		}
	}
}

func TestCopyRandomLayouts(t *testing.T) {
	for seed := range uint64(300) {
		checkCopy(t, seed)
	}
}

func FuzzCopy(f *testing.F) {
	for seed := range uint64(8) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) { checkCopy(t, seed) })
}

func TestFill(t *testing.T) {
	tests := []struct {
		name string
		dt   tensor.DType
		v    float64
		want float64
		err  string
	}{
		{"float32", tensor.Float32, 0.1, float64(float32(0.1)), ""},
		{"float16", tensor.Float16, 1.0 / 3, 0.333251953125, ""},
		{"int32 truncates", tensor.Int32, -2.9, -2, ""},
		{"bool", tensor.Bool, 2, 1, ""},
		{"uint8 overflow", tensor.Uint8, 256, 0, "cannot be converted to uint8"},
		{"int NaN", tensor.Int64, nan, 0, "cannot be converted to int64"},
		{"int64 just past its range", tensor.Int64, 1 << 63, 0, "cannot be converted to int64"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			// Every other element of a 3x5 buffer, so the gaps must stay untouched.
			dst := e.alloc(tc.dt, []int{3, 3}, []int{5, 2}, 0)
			whole := tensor.Strided{Base: dst.Base, DType: tc.dt, Shape: []int{13}, Strides: []int{1}}
			err := e.k.Fill(dst, tc.v)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("got error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := e.get(whole)
			for i, g := range got {
				want := 0.0
				if i%5%2 == 0 && i%5 < 5 {
					want = tc.want
				}
				if g != want {
					t.Fatalf("element %d of the buffer = %v, want %v (buffer %v)", i, g, want, got)
				}
			}
		})
	}
}

func TestRandomIsTheDocumentedGenerator(t *testing.T) {
	// Values computed independently (Python) from the formula in Uniform01's doc.
	for i, want := range []float64{0.7415648787718233, 0.1599103928769201, 0.27860113025513866} {
		if got := cpu.Uniform01(42, uint64(i)); got != want {
			t.Errorf("Uniform01(42, %d) = %v, want %v", i, got, want)
		}
	}
	for i, want := range []float64{2.9769486646374705, -2.7285116134624547, 1.0078404144303788} {
		if got := cpu.RandomValue(7, uint64(i), true, 1, 2); math.Abs(got-want) > 1e-14 {
			t.Errorf("RandomValue(7, %d, normal, 1, 2) = %v, want %v", i, got, want)
		}
	}
}

func TestRandomDependsOnlyOnLogicalIndex(t *testing.T) {
	e := newEnv(t)
	shape := []int{17, 19}
	for _, normal := range []bool{false, true} {
		a := e.alloc(tensor.Float32, shape, nil, 0)
		b := e.alloc(tensor.Float32, shape, []int{1, 17}, 3)
		if err := e.k.Random(a, 99, normal, -2, 3); err != nil {
			t.Fatal(err)
		}
		if err := e.k.Random(b, 99, normal, -2, 3); err != nil {
			t.Fatal(err)
		}
		ga, gb := e.get(a), e.get(b)
		for i := range ga {
			want := float64(float32(cpu.RandomValue(99, uint64(i), normal, -2, 3)))
			if ga[i] != want || gb[i] != want {
				t.Fatalf("normal=%v element %d: contiguous %v, transposed %v, want %v", normal, i, ga[i], gb[i], want)
			}
		}
	}
}

func TestRandomMoments(t *testing.T) {
	e := newEnv(t)
	const n = 1 << 17
	for _, tc := range []struct {
		normal         bool
		lo, hi         float64
		mean, variance float64
	}{
		{false, -1, 3, 1, 16.0 / 12},
		{true, 0.5, 2, 0.5, 4},
	} {
		dst := e.alloc(tensor.Float32, []int{n}, nil, 0)
		if err := e.k.Random(dst, 1, tc.normal, tc.lo, tc.hi); err != nil {
			t.Fatal(err)
		}
		vals := e.get(dst)
		var s, s2 float64
		for _, v := range vals {
			if !tc.normal && (v < tc.lo || v >= tc.hi) {
				t.Fatalf("uniform value %v outside [%v, %v)", v, tc.lo, tc.hi)
			}
			s += v
			s2 += v * v
		}
		mean := s / n
		variance := s2/n - mean*mean
		if math.Abs(mean-tc.mean) > 0.02 || math.Abs(variance-tc.variance)/tc.variance > 0.02 {
			t.Errorf("normal=%v: mean %v variance %v, want %v and %v", tc.normal, mean, variance, tc.mean, tc.variance)
		}
	}
	bad := e.alloc(tensor.Float32, []int{2}, nil, 0)
	for _, tc := range []struct {
		normal bool
		lo, hi float64
		want   string
	}{
		{false, 2, 1, "lo <= hi"},
		{true, 0, -1, "standard deviation"},
		{false, math.Inf(-1), 0, "finite"},
	} {
		if err := e.k.Random(bad, 1, tc.normal, tc.lo, tc.hi); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Random(%v, %v, %v): got %v, want error containing %q", tc.normal, tc.lo, tc.hi, err, tc.want)
		}
	}
}

func TestHostCopies(t *testing.T) {
	e := newEnv(t)
	p := e.mem.alloc(8)
	if err := e.k.CopyFromHost(p+2, []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 8)
	if err := e.k.CopyToHost(got, p); err != nil {
		t.Fatal(err)
	}
	if string(got) != "\x00\x00\x01\x02\x03\x00\x00\x00" {
		t.Errorf("got %v", got)
	}
	if err := e.k.CopyToHost(make([]byte, 9), p); err == nil || !strings.Contains(err.Error(), "kernels/cpu: CopyToHost") {
		t.Errorf("reading past the allocation: got %v", err)
	}
	if err := e.k.CopyFromHost(0, []byte{1}); err == nil {
		t.Error("writing to address 0 succeeded")
	}
}
