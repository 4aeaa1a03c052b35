package cpu

import (
	"encoding/binary"
	"math"

	"memlab.dev/memlab/tensor"
)

// le is the byte order of device memory (every CUDA device and the simulator).
var le = binary.LittleEndian

// loadF reads element i (in elements) of b as a float64. Integer and bool values
// convert exactly up to 2^53.
func loadF(dt tensor.DType, b []byte, i int) float64 {
	switch dt {
	case tensor.Float32:
		return float64(math.Float32frombits(le.Uint32(b[i*4:])))
	case tensor.Float16:
		return float64(tensor.Float16From(le.Uint16(b[i*2:])))
	case tensor.BFloat16:
		return float64(tensor.BFloat16From(le.Uint16(b[i*2:])))
	}
	return float64(loadI(dt, b, i))
}

// loadI reads element i of b as an int64; float values truncate toward zero.
func loadI(dt tensor.DType, b []byte, i int) int64 {
	switch dt {
	case tensor.Int32:
		return int64(int32(le.Uint32(b[i*4:])))
	case tensor.Int64:
		return int64(le.Uint64(b[i*8:]))
	case tensor.Uint8:
		return int64(b[i])
	case tensor.Bool:
		if b[i] != 0 {
			return 1
		}
		return 0
	}
	return floatToInt(loadF(dt, b, i))
}

// floatToInt converts v to int64 the way Copy does: truncation toward zero,
// saturation at the int64 range, NaN to 0.
func floatToInt(v float64) int64 {
	switch {
	case v != v:
		return 0
	case v >= math.MaxInt64:
		return math.MaxInt64
	case v <= math.MinInt64:
		return math.MinInt64
	}
	return int64(v)
}

// storeF writes v to element i of b, rounding to dt: floats through float32
// (so half types round as PyTorch's float32 opmath does), integers by
// truncation and wrapping, bool as v != 0.
func storeF(dt tensor.DType, b []byte, i int, v float64) {
	switch dt {
	case tensor.Float32:
		le.PutUint32(b[i*4:], math.Float32bits(float32(v)))
	case tensor.Float16:
		le.PutUint16(b[i*2:], tensor.Float16Bits(float32(v)))
	case tensor.BFloat16:
		le.PutUint16(b[i*2:], tensor.BFloat16Bits(float32(v)))
	case tensor.Bool:
		if v != 0 {
			b[i] = 1
		} else {
			b[i] = 0
		}
	default:
		storeI(dt, b, i, floatToInt(v))
	}
}

// storeI writes v to element i of b: wrapped to the width of an integer dt,
// rounded to nearest for a float dt, v != 0 for bool.
func storeI(dt tensor.DType, b []byte, i int, v int64) {
	switch dt {
	case tensor.Int32:
		le.PutUint32(b[i*4:], uint32(v))
	case tensor.Int64:
		le.PutUint64(b[i*8:], uint64(v))
	case tensor.Uint8:
		b[i] = uint8(v)
	case tensor.Bool:
		if v != 0 {
			b[i] = 1
		} else {
			b[i] = 0
		}
	case tensor.Float32:
		le.PutUint32(b[i*4:], math.Float32bits(float32(v)))
	case tensor.Float16:
		le.PutUint16(b[i*2:], tensor.Float16Bits(float32(v)))
	case tensor.BFloat16:
		le.PutUint16(b[i*2:], tensor.BFloat16Bits(float32(v)))
	}
}

// intRange is the range of values an integer or bool dtype holds.
func intRange(dt tensor.DType) (lo, hi float64) {
	switch dt {
	case tensor.Int32:
		return math.MinInt32, math.MaxInt32
	case tensor.Int64:
		return math.MinInt64, math.MaxInt64
	case tensor.Uint8:
		return 0, math.MaxUint8
	}
	return 0, 1
}
