package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Host-side encoding and decoding of elements, little-endian as on every
// device memlab runs on.

// putElem stores v, converted to d, at b (len ≥ d.Size()). Integer types
// truncate toward zero, as a C cast does; Bool stores v != 0.
func putElem(d DType, b []byte, v float64) {
	switch d {
	case Float32:
		binary.LittleEndian.PutUint32(b, math.Float32bits(float32(v)))
	case Float16:
		binary.LittleEndian.PutUint16(b, Float16Bits(float32(v)))
	case BFloat16:
		binary.LittleEndian.PutUint16(b, BFloat16Bits(float32(v)))
	case Int32:
		binary.LittleEndian.PutUint32(b, uint32(int32(v)))
	case Int64:
		binary.LittleEndian.PutUint64(b, uint64(int64(v)))
	case Uint8:
		b[0] = uint8(int64(v))
	case Bool:
		b[0] = 0
		if v != 0 {
			b[0] = 1
		}
	}
}

// getElem reads one element of type d at b as a float64.
func getElem(d DType, b []byte) float64 {
	switch d {
	case Float32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
	case Float16:
		return float64(Float16From(binary.LittleEndian.Uint16(b)))
	case BFloat16:
		return float64(BFloat16From(binary.LittleEndian.Uint16(b)))
	case Int32:
		return float64(int32(binary.LittleEndian.Uint32(b)))
	case Int64:
		return float64(int64(binary.LittleEndian.Uint64(b)))
	case Uint8:
		return float64(b[0])
	case Bool:
		if b[0] != 0 {
			return 1
		}
	}
	return 0
}

// forEachOffset calls f with the storage offset of every element of l, in
// row-major order of its indices.
func forEachOffset(l Layout, f func(off int)) {
	n := l.Numel()
	if n == 0 {
		return
	}
	idx := make([]int, l.Dim())
	off := l.Offset
	for range n {
		f(off)
		for d := l.Dim() - 1; d >= 0; d-- {
			idx[d]++
			off += l.Strides[d]
			if idx[d] < l.Shape[d] {
				break
			}
			off -= idx[d] * l.Strides[d]
			idx[d] = 0
		}
	}
}

// readSpan copies to the host the part of t's storage its elements reach and
// returns it with the storage element index of its first byte.
func (t *Tensor) readSpan(op string) ([]byte, int, error) {
	if err := t.live(op); err != nil {
		return nil, 0, err
	}
	lo, hi := t.layout.Span()
	if lo == hi {
		return nil, lo, nil
	}
	es := t.ElementSize()
	if int64(hi*es) > t.storage.nbytes {
		return nil, 0, fmt.Errorf("tensor: %s: layout %v reaches past its storage of %d bytes", op, t.layout, t.storage.nbytes)
	}
	buf := make([]byte, (hi-lo)*es)
	if err := t.storage.dev.CopyToHost(buf, t.storage.ptr+Ptr(lo*es)); err != nil {
		return nil, 0, fmt.Errorf("tensor: %s: reading %v: %w", op, t.storage.dev, err)
	}
	return buf, lo, nil
}

// Float64s returns the elements in row-major order of their indices, whatever
// the layout, converted to float64. It reads device memory without allocating
// any.
func (t *Tensor) Float64s() ([]float64, error) {
	buf, lo, err := t.readSpan("Float64s")
	if err != nil {
		return nil, err
	}
	out := make([]float64, 0, t.Numel())
	es := t.ElementSize()
	forEachOffset(t.layout, func(off int) {
		out = append(out, getElem(t.dtype, buf[(off-lo)*es:]))
	})
	return out, nil
}

// Float32s returns the elements in row-major order, converted to float32.
func (t *Tensor) Float32s() ([]float32, error) {
	v, err := t.Float64s()
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out, nil
}

// Int64s returns the elements in row-major order, converted to int64 (exactly
// for Int64 tensors; floating-point values truncate toward zero).
func (t *Tensor) Int64s() ([]int64, error) {
	buf, lo, err := t.readSpan("Int64s")
	if err != nil {
		return nil, err
	}
	out := make([]int64, 0, t.Numel())
	es := t.ElementSize()
	forEachOffset(t.layout, func(off int) {
		b := buf[(off-lo)*es:]
		if t.dtype == Int64 {
			out = append(out, int64(binary.LittleEndian.Uint64(b)))
		} else {
			out = append(out, int64(getElem(t.dtype, b)))
		}
	})
	return out, nil
}

// Item returns the value of a one-element tensor (PyTorch's item()).
func (t *Tensor) Item() (float64, error) {
	if err := t.live("item"); err != nil {
		return 0, err
	}
	if n := t.Numel(); n != 1 {
		return 0, torchErr("item", "a Tensor with %d elements cannot be converted to Scalar", n)
	}
	v, err := t.Float64s()
	if err != nil {
		return 0, err
	}
	return v[0], nil
}
