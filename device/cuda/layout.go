package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"memlab.dev/memlab/tensor"
)

// operand is one validated kernel argument.
type operand struct {
	s      tensor.Strided
	n      int    // number of elements
	lo, hi uint64 // device byte range spanned by the elements
	start  uint64 // byte address of logical element 0
}

// check validates s as argument name of kernel op and that its elements lie
// in live device memory.
func (d *Device) check(op, name string, s tensor.Strided) (operand, error) {
	e, err := s.Extent()
	o := operand{s: s, n: e.N, lo: e.Lo, hi: e.Hi, start: e.Start}
	if err != nil {
		return o, fmt.Errorf("device/cuda: %s: %s: %w", op, name, err)
	}
	if o.n == 0 {
		return o, nil
	}
	if !d.live(o.lo, o.hi) {
		return o, fmt.Errorf("device/cuda: %s: %s: bytes [%#x, %#x) are not in live memory of %s (freed, or outside its allocation)", op, name, o.lo, o.hi, d)
	}
	return o, nil
}

// output validates a written argument: its elements must be distinct.
func (d *Device) output(op string, s tensor.Strided) (operand, error) {
	o, err := d.check(op, "dst", s)
	if err != nil {
		return o, err
	}
	for k, n := range s.Shape {
		if n > 1 && s.Strides[k] == 0 {
			return o, fmt.Errorf("device/cuda: %s: dst: several elements share one memory location (shape %v, strides %v); write to a contiguous tensor instead", op, s.Shape, s.Strides)
		}
	}
	return o, nil
}

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// sameShape reports whether two shapes are equal.
func sameShape(a, b []int) bool { return slices.Equal(a, b) }

// coalesce merges dimensions that every operand walks contiguously and drops
// dimensions of size 1. It returns the new shape and, for each operand, its
// new strides. An empty shape means a single element.
func coalesce(shape []int, strides ...[]int) ([]int, [][]int) {
	var sh []int
	st := make([][]int, len(strides))
	for k, n := range shape {
		if n == 1 {
			continue
		}
		if len(sh) > 0 {
			last := len(sh) - 1
			merge := true
			for j := range strides {
				if st[j][last] != strides[j][k]*n {
					merge = false
					break
				}
			}
			if merge {
				sh[last] *= n
				for j := range strides {
					st[j][last] = strides[j][k]
				}
				continue
			}
		}
		sh = append(sh, n)
		for j := range strides {
			st[j] = append(st[j], strides[j][k])
		}
	}
	return sh, st
}

// contiguous reports whether a coalesced layout is one run of stride 1.
func contiguous(shape []int, strides []int) bool {
	return len(shape) == 0 || (len(shape) == 1 && strides[0] == 1)
}

// descSize is sizeof(struct Desc) in common.cuh.
const descSize = 152

// desc packs s (with the given shape and strides) as struct Desc.
func desc(s tensor.Strided, shape, strides []int) *[descSize]byte {
	var b [descSize]byte
	le := binary.LittleEndian
	le.PutUint64(b[0:], uint64(s.Base))
	le.PutUint64(b[8:], uint64(int64(s.Offset)))
	for k := range shape {
		le.PutUint64(b[16+8*k:], uint64(int64(shape[k])))
		le.PutUint64(b[80+8*k:], uint64(int64(strides[k])))
	}
	le.PutUint32(b[144:], uint32(len(shape)))
	le.PutUint32(b[148:], uint32(s.DType))
	return &b
}

// withLast returns a copy of shape with its last dimension set to 1.
func withLast(shape []int) []int {
	c := append([]int(nil), shape...)
	if len(c) > 0 {
		c[len(c)-1] = 1
	}
	return c
}

// encodeScalar returns the bit pattern of v in dtype dt, rejecting values an
// integer or bool dtype cannot hold, as torch.Tensor.fill_ does.
func encodeScalar(op string, dt tensor.DType, v float64) (uint64, error) {
	switch dt {
	case tensor.Float32:
		return uint64(math.Float32bits(float32(v))), nil
	case tensor.Float16:
		return uint64(float16Bits(float32(v))), nil
	case tensor.BFloat16:
		return uint64(bfloat16Bits(float32(v))), nil
	case tensor.Bool:
		if v != 0 {
			return 1, nil
		}
		return 0, nil
	}
	r := map[tensor.DType][2]float64{
		tensor.Int32: {math.MinInt32, math.MaxInt32},
		tensor.Int64: {math.MinInt64, math.MaxInt64},
		tensor.Uint8: {0, math.MaxUint8},
	}[dt]
	lo, hi := r[0], r[1]
	if math.IsNaN(v) || v < lo || v > hi {
		return 0, fmt.Errorf("device/cuda: %s: value %v cannot be converted to %v without overflow", op, v, dt)
	}
	i := int64(v)
	switch dt {
	case tensor.Int32:
		return uint64(uint32(int32(i))), nil
	case tensor.Uint8:
		return uint64(uint8(i)), nil
	}
	return uint64(i), nil
}

// float16Bits rounds f to IEEE binary16, to nearest even (as __float2half_rn).
func float16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	abs := b & 0x7fffffff
	switch {
	case abs > 0x7f800000: // NaN
		return sign | 0x7e00
	case abs >= 0x477ff000: // rounds to >= 65520: Inf
		return sign | 0x7c00
	case abs < 0x38800000: // below the smallest normal half: subnormal or zero
		// value = abs as float; half subnormal unit is 2^-24.
		v := float64(math.Float32frombits(abs)) * (1 << 24)
		return sign | uint16(math.RoundToEven(v))
	}
	exp := abs>>23 - 127 + 15
	man := abs & 0x7fffff
	h := exp<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++
	}
	return sign | uint16(h)
}

// bfloat16Bits rounds f to bfloat16, to nearest even (as __float2bfloat16_rn).
func bfloat16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// overlapExactLimit bounds the exact overlap check: when two arguments'
// byte ranges intersect and either has more elements than this, the call is
// refused rather than enumerating every address on the host.
const overlapExactLimit = 1 << 22

// checkOverlap returns an error when the output dst shares memory with the
// input in, unless allowAlias is set and the two are exact aliases (an
// in-place operation). Interleaved views that touch disjoint elements pass.
func checkOverlap(op, inName string, dst, in operand, allowAlias bool) error {
	if dst.n == 0 || in.n == 0 || dst.hi <= in.lo || in.hi <= dst.lo {
		return nil
	}
	if allowAlias && sameElements(dst, in) {
		return nil
	}
	how := "overlaps"
	if allowAlias {
		how = "partially overlaps"
	}
	refuse := fmt.Errorf("device/cuda: %s: dst %s %s (only an exact alias, an in-place operation, may share memory)", op, how, inName)
	if !allowAlias {
		refuse = fmt.Errorf("device/cuda: %s: dst overlaps %s", op, inName)
	}
	if dst.n > overlapExactLimit || in.n > overlapExactLimit {
		return refuse
	}
	a, b := byteOffsets(dst), byteOffsets(in)
	as, bs := uint64(dst.s.DType.Size()), uint64(in.s.DType.Size())
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i]+as <= b[j]:
			i++
		case b[j]+bs <= a[i]:
			j++
		default:
			return refuse
		}
	}
	return nil
}

// sameElements reports whether a and b address the same elements in the
// same logical order.
func sameElements(a, b operand) bool {
	if a.s.DType.Size() != b.s.DType.Size() || a.start != b.start || !sameShape(a.s.Shape, b.s.Shape) {
		return false
	}
	for k, n := range a.s.Shape {
		if n > 1 && a.s.Strides[k] != b.s.Strides[k] {
			return false
		}
	}
	return true
}

// byteOffsets returns the sorted byte addresses of every element of o.
func byteOffsets(o operand) []uint64 {
	out := make([]uint64, 0, o.n)
	es := int64(o.s.DType.Size())
	var walk func(k int, off int64)
	walk = func(k int, off int64) {
		if k == len(o.s.Shape) {
			out = append(out, uint64(int64(o.s.Base)+off*es))
			return
		}
		for i := 0; i < o.s.Shape[k]; i++ {
			walk(k+1, off+int64(i)*int64(o.s.Strides[k]))
		}
	}
	walk(0, int64(o.s.Offset))
	slices.Sort(out)
	return out
}
