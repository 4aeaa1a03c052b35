package cpu

import (
	"math"

	"memlab.dev/memlab/tensor"
)

// Uniform01 is the counter-based generator every memlab backend shares: the
// uniform number in [0, 1) for counter i under seed. With golden = 0x9E3779B97F4A7C15
// and all arithmetic on uint64 (wrapping):
//
//	k = seed + (i+1)*golden
//	z = k; z ^= z>>30; z *= 0xBF58476D1CE4E5B9; z ^= z>>27; z *= 0x94D049BB133111EB; z ^= z>>31
//	u = float64(z>>11) * 2^-53
//
// (z is the splitmix64 finaliser of k.)
func Uniform01(seed, i uint64) float64 {
	z := seed + (i+1)*0x9E3779B97F4A7C15
	z ^= z >> 30
	z *= 0xBF58476D1CE4E5B9
	z ^= z >> 27
	z *= 0x94D049BB133111EB
	z ^= z >> 31
	return float64(z>>11) * 0x1p-53
}

// RandomValue is the value Random writes, before conversion to the destination
// dtype, for the element of logical row-major index i (counted over the
// destination's shape, whatever its strides):
//
//	uniform: lo + (hi-lo)*Uniform01(seed, i)
//	normal:  lo + hi*sqrt(-2*ln(1-u1))*cos(2π*u2), u1 = Uniform01(seed, 2i), u2 = Uniform01(seed, 2i+1)
//
// where for normal lo is the mean and hi the standard deviation. The value is
// computed in float64 and stored as Fill stores a value (floats round through
// float32 to nearest even; integers truncate toward zero).
func RandomValue(seed, i uint64, normal bool, lo, hi float64) float64 {
	if !normal {
		return lo + (hi-lo)*Uniform01(seed, i)
	}
	u1, u2 := Uniform01(seed, 2*i), Uniform01(seed, 2*i+1)
	return lo + hi*math.Sqrt(-2*math.Log(1-u1))*math.Cos(2*math.Pi*u2)
}

// Random fills dst with [RandomValue] for each element: uniform in [lo, hi)
// when normal is false, normal with mean lo and standard deviation hi when it
// is true. The numbers depend only on seed and each element's logical index,
// so every backend and every layout of dst gives the same tensor.
func (k *Kernels) Random(dst tensor.Strided, seed uint64, normal bool, lo, hi float64) error {
	const op = "Random"
	if math.IsNaN(lo) || math.IsInf(lo, 0) || math.IsNaN(hi) || math.IsInf(hi, 0) {
		return opError(op, "bounds must be finite, got %v and %v", lo, hi)
	}
	if normal && hi < 0 {
		return opError(op, "normal expects a standard deviation >= 0, got %v", hi)
	}
	if !normal && hi < lo {
		return opError(op, "uniform expects lo <= hi, got [%v, %v)", lo, hi)
	}
	d, err := k.output(op, dst)
	if err != nil || d.n == 0 {
		return err
	}
	forEach(d.shape, [][]int{d.strides}, []int{d.off}, func(pos, n int, o, st []int) {
		for j := range n {
			storeF(d.dt, d.b, o[0]+j*st[0], RandomValue(seed, uint64(pos+j), normal, lo, hi))
		}
	})
	return nil
}
