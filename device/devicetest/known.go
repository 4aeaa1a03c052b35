package devicetest

import (
	"encoding/binary"
	"math"
	"testing"

	"memlab.dev/memlab/device"
	"memlab.dev/memlab/device/oracle"
	"memlab.dev/memlab/tensor"
)

// knownCase is a kernel call on literal inputs whose result was worked out by
// hand (or by the formula, independently of any kernel): the check that does
// not trust the CPU reference, which the simulated device would otherwise only
// be compared with itself.
type knownCase struct {
	name string
	run  func(k *knownEnv) (out tensor.Strided, want []float64)
}

// knownEnv uploads literal tensors to a device.
type knownEnv struct {
	t   *testing.T
	dev device.Device
}

// put uploads vals as a dt tensor of the given shape (and strides: nil means
// contiguous; the storage is as long as vals).
func (k *knownEnv) put(dt tensor.DType, vals []float64, shape []int, strides []int) tensor.Strided {
	k.t.Helper()
	if strides == nil {
		strides = contig(shape)
	}
	es := dt.Size()
	b := make([]byte, max(len(vals)*es, 16))
	le := binary.LittleEndian
	for i, v := range vals {
		switch dt {
		case tensor.Float32:
			le.PutUint32(b[4*i:], math.Float32bits(float32(v)))
		case tensor.Float16:
			le.PutUint16(b[2*i:], tensor.Float16Bits(float32(v)))
		case tensor.BFloat16:
			le.PutUint16(b[2*i:], tensor.BFloat16Bits(float32(v)))
		case tensor.Int32:
			le.PutUint32(b[4*i:], uint32(int32(v)))
		case tensor.Int64:
			le.PutUint64(b[8*i:], uint64(int64(v)))
		default:
			b[i] = byte(v)
		}
	}
	addr, err := k.dev.Malloc(uint64(len(b)))
	if err != nil {
		k.t.Fatalf("Malloc(%d): %v", len(b), err)
	}
	k.t.Cleanup(func() {
		if err := k.dev.Free(addr); err != nil {
			k.t.Errorf("Free: %v", err)
		}
	})
	if err := k.dev.CopyFromHost(tensor.Ptr(addr), b); err != nil {
		k.t.Fatalf("CopyFromHost: %v", err)
	}
	return tensor.Strided{Base: tensor.Ptr(addr), DType: dt, Shape: shape, Strides: strides}
}

// zeros is put of n zeros.
func (k *knownEnv) zeros(dt tensor.DType, shape ...int) tensor.Strided {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return k.put(dt, make([]float64, n), shape, nil)
}

func (k *knownEnv) ok(err error) {
	k.t.Helper()
	if err != nil {
		k.t.Fatal(err)
	}
}

func f32(vals ...float64) []float64 { return vals }

// knownCases are the hand-computed cases.
func knownCases() []knownCase {
	F := tensor.Float32
	return []knownCase{
		{"Fill", func(k *knownEnv) (tensor.Strided, []float64) {
			d := k.zeros(F, 3)
			k.ok(k.dev.Fill(d, 2.5))
			return d, f32(2.5, 2.5, 2.5)
		}},
		{"Copy/transpose", func(k *knownEnv) (tensor.Strided, []float64) {
			src := k.put(F, f32(1, 2, 3, 4, 5, 6), []int{3, 2}, []int{1, 3}) // [[1,2,3],[4,5,6]].T
			d := k.zeros(F, 3, 2)
			k.ok(k.dev.Copy(d, src))
			return d, f32(1, 4, 2, 5, 3, 6)
		}},
		{"Copy/to-float16", func(k *knownEnv) (tensor.Strided, []float64) {
			src := k.put(F, f32(1.5, -2, 65504, 0.1), []int{4}, nil)
			d := k.zeros(tensor.Float16, 4)
			k.ok(k.dev.Copy(d, src))
			return d, f32(1.5, -2, 65504, 0.0999755859375) // 0.1 rounds to 0x2e66
		}},
		{"Unary/relu", func(k *knownEnv) (tensor.Strided, []float64) {
			src := k.put(F, f32(-1, 0, 2), []int{3}, nil)
			d := k.zeros(F, 3)
			k.ok(k.dev.Unary(tensor.Relu, d, src, 0))
			return d, f32(0, 0, 2)
		}},
		{"Unary/gelu", func(k *knownEnv) (tensor.Strided, []float64) {
			src := k.put(F, f32(-1, 0, 1, 2), []int{4}, nil)
			d := k.zeros(F, 4)
			k.ok(k.dev.Unary(tensor.Gelu, d, src, 0))
			// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
			return d, f32(-0.15880800939172324, 0, 0.8411919906082768, 1.954597694087775)
		}},
		{"Unary/exp", func(k *knownEnv) (tensor.Strided, []float64) {
			src := k.put(F, f32(0, 1, -2), []int{3}, nil)
			d := k.zeros(F, 3)
			k.ok(k.dev.Unary(tensor.Exp, d, src, 0))
			return d, f32(1, math.E, 0.1353352832366127)
		}},
		{"Unary/neg-and-scale", func(k *knownEnv) (tensor.Strided, []float64) {
			src := k.put(F, f32(2, -4), []int{2}, nil)
			d := k.zeros(F, 2)
			k.ok(k.dev.Unary(tensor.Neg, d, src, 0))
			k.ok(k.dev.Unary(tensor.Scale, d, d, 0.5))
			return d, f32(-1, 2)
		}},
		{"Binary/add-broadcast", func(k *knownEnv) (tensor.Strided, []float64) {
			a := k.put(F, f32(1, 2, 3, 4, 5, 6), []int{2, 3}, nil)
			b := k.put(F, f32(10, 20, 30), []int{2, 3}, []int{0, 1}) // a row, broadcast
			d := k.zeros(F, 2, 3)
			k.ok(k.dev.Binary(tensor.Add, d, a, b))
			return d, f32(11, 22, 33, 14, 25, 36)
		}},
		{"Binary/sub-mul-div", func(k *knownEnv) (tensor.Strided, []float64) {
			a := k.put(F, f32(1, 2), []int{2}, nil)
			b := k.put(F, f32(4, 8), []int{2}, nil)
			d := k.zeros(F, 2)
			k.ok(k.dev.Binary(tensor.Sub, d, a, b)) // -3, -6
			k.ok(k.dev.Binary(tensor.Mul, d, d, b)) // -12, -48
			k.ok(k.dev.Binary(tensor.Div, d, d, a)) // -12, -24
			return d, f32(-12, -24)
		}},
		{"Reduce/sum-rows", func(k *knownEnv) (tensor.Strided, []float64) {
			src := k.put(F, f32(1, 2, 3, 4, 5, 6), []int{2, 3}, nil)
			d := k.zeros(F, 2, 1)
			k.ok(k.dev.Reduce(tensor.Sum, d, src, 1))
			return d, f32(6, 15)
		}},
		{"Reduce/sum-columns", func(k *knownEnv) (tensor.Strided, []float64) {
			src := k.put(F, f32(1, 2, 3, 4, 5, 6), []int{2, 3}, nil)
			d := k.zeros(F, 1, 3)
			k.ok(k.dev.Reduce(tensor.Sum, d, src, 0))
			return d, f32(5, 7, 9)
		}},
		{"Reduce/max", func(k *knownEnv) (tensor.Strided, []float64) {
			src := k.put(F, f32(1, 5, 2, -1, -3, -2), []int{2, 3}, nil)
			d := k.zeros(F, 2, 1)
			k.ok(k.dev.Reduce(tensor.Max, d, src, 1))
			return d, f32(5, -1)
		}},
		{"Softmax", func(k *knownEnv) (tensor.Strided, []float64) {
			src := k.put(F, f32(0, math.Log(3), 1, 2), []int{2, 2}, nil)
			d := k.zeros(F, 2, 2)
			k.ok(k.dev.Softmax(d, src))
			return d, f32(0.25, 0.75, 1/(1+math.E), math.E/(1+math.E))
		}},
		{"LayerNorm", func(k *knownEnv) (tensor.Strided, []float64) {
			src := k.put(F, f32(1, 2, 3, 4), []int{1, 4}, nil)
			g := k.put(F, f32(1, 1, 2, 2), []int{4}, nil)
			b := k.put(F, f32(0, 0, 0, 1), []int{4}, nil)
			d := k.zeros(F, 1, 4)
			k.ok(k.dev.LayerNorm(d, src, g, b, 1e-5))
			// mean 2.5, variance 1.25: (x − 2.5)/√(1.25 + 1e-5)·γ + β
			return d, f32(-1.3416354199689269, -0.447211806656309, 0.894423613312618, 3.6832708399378538)
		}},
		{"Matmul", func(k *knownEnv) (tensor.Strided, []float64) {
			a := k.put(F, f32(1, 2, 3, 4), []int{2, 2}, nil)
			b := k.put(F, f32(5, 6, 7, 8), []int{2, 2}, nil)
			d := k.zeros(F, 2, 2)
			k.ok(k.dev.Matmul(d, a, b))
			return d, f32(19, 22, 43, 50)
		}},
		{"Matmul/batched-transposed", func(k *knownEnv) (tensor.Strided, []float64) {
			a := k.put(F, f32(1, 2, 3, 4), []int{2, 1, 2}, nil)              // [[1,2]], [[3,4]]
			b := k.put(F, f32(1, 10, 2, 20), []int{2, 2, 1}, []int{1, 2, 2}) // [[1],[2]], [[10],[20]]
			d := k.zeros(F, 2, 1, 1)
			k.ok(k.dev.Matmul(d, a, b))
			return d, f32(5, 110)
		}},
		{"Embedding", func(k *knownEnv) (tensor.Strided, []float64) {
			w := k.put(F, f32(0, 1, 10, 11, 20, 21), []int{3, 2}, nil)
			idx := k.put(tensor.Int64, f32(2, 0, 2), []int{3}, nil)
			d := k.zeros(F, 3, 2)
			k.ok(k.dev.Embedding(d, w, idx))
			return d, f32(20, 21, 0, 1, 20, 21)
		}},
	}
}

// Known runs the hand-computed cases on dev: each result must match its
// literal expectation to 1e-6 relative (float32) or 1e-3 (float16).
func Known(t *testing.T, dev device.Device) { known(t, dev, func(string) bool { return false }) }

func known(t *testing.T, dev device.Device, skip func(string) bool) {
	for _, c := range knownCases() {
		if skip("Known/" + c.name) {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			k := &knownEnv{t: t, dev: dev}
			out, want := c.run(k)
			k.ok(dev.Synchronize())
			b := make([]byte, len(want)*out.DType.Size())
			k.ok(dev.CopyToHost(b, out.Base))
			got := oracle.Decode(out.DType, b)
			tol := 1e-6
			if out.DType != tensor.Float32 {
				tol = 1e-3
			}
			for i := range want {
				if d := math.Abs(got[i] - want[i]); d > tol*max(1, math.Abs(want[i])) {
					t.Fatalf("got %v, want %v (element %d off by %g)", got, want, i, d)
				}
			}
		})
	}
}
