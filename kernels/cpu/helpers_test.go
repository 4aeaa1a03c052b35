package cpu_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"testing"

	"memlab.dev/memlab/kernels/cpu"
	"memlab.dev/memlab/tensor"
)

// testMem is a Memory of separately allocated host buffers at addresses
// 0x10000, 0x20000, …, each followed by a gap, so that a range crossing the end
// of a buffer is an error.
type testMem struct {
	mu     sync.Mutex
	allocs map[uint64][]byte
	next   uint64
}

func newTestMem() *testMem { return &testMem{allocs: map[uint64][]byte{}, next: 0x10000} }

func (m *testMem) alloc(n int) tensor.Ptr {
	m.mu.Lock()
	defer m.mu.Unlock()
	base := m.next
	m.allocs[base] = make([]byte, n)
	m.next += (uint64(n)/0x10000 + 2) * 0x10000
	return tensor.Ptr(base)
}

func (m *testMem) Bytes(addr tensor.Ptr, n int) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for base, b := range m.allocs {
		if uint64(addr) >= base && uint64(addr)+uint64(n) <= base+uint64(len(b)) {
			off := uint64(addr) - base
			return b[off : off+uint64(n)], nil
		}
	}
	return nil, fmt.Errorf("no allocation holds %d bytes at %#x", n, uint64(addr))
}

// env bundles the memory and kernels of one test.
type env struct {
	t   testing.TB
	mem *testMem
	k   *cpu.Kernels
}

func newEnv(t testing.TB) *env {
	m := newTestMem()
	return &env{t: t, mem: m, k: cpu.New(m)}
}

func numel(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

func contiguousStrides(shape []int) []int {
	st := make([]int, len(shape))
	acc := 1
	for d := len(shape) - 1; d >= 0; d-- {
		st[d] = acc
		acc *= shape[d]
	}
	return st
}

// span is the number of elements from element 0 to the farthest element of
// a layout with non-negative strides.
func span(shape, strides []int, offset int) int {
	hi := offset
	for d, n := range shape {
		if n == 0 {
			return 0
		}
		hi += (n - 1) * strides[d]
	}
	return hi + 1
}

// alloc allocates memory for a layout and returns its descriptor.
func (e *env) alloc(dt tensor.DType, shape, strides []int, offset int) tensor.Strided {
	if strides == nil {
		strides = contiguousStrides(shape)
	}
	n := max(span(shape, strides, offset), 1)
	return tensor.Strided{Base: e.mem.alloc(n * dt.Size()), DType: dt, Shape: shape, Strides: strides, Offset: offset}
}

// addrs lists the byte address of every element of s in logical row-major
// order: the naive indexer the kernels are checked against.
func addrs(s tensor.Strided) []uint64 {
	var out []uint64
	idx := make([]int, len(s.Shape))
	for range numel(s.Shape) {
		off := s.Offset
		for d, i := range idx {
			off += i * s.Strides[d]
		}
		out = append(out, uint64(s.Base)+uint64(off*s.DType.Size()))
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < s.Shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return out
}

// encodeElem and decodeElem convert one value, independently of the package.
func encodeElem(dt tensor.DType, b []byte, v float64) {
	switch dt {
	case tensor.Float32:
		binary.LittleEndian.PutUint32(b, math.Float32bits(float32(v)))
	case tensor.Float16:
		binary.LittleEndian.PutUint16(b, tensor.Float16Bits(float32(v)))
	case tensor.BFloat16:
		binary.LittleEndian.PutUint16(b, tensor.BFloat16Bits(float32(v)))
	case tensor.Int32:
		binary.LittleEndian.PutUint32(b, uint32(int32(v)))
	case tensor.Int64:
		binary.LittleEndian.PutUint64(b, uint64(int64(v)))
	case tensor.Uint8:
		b[0] = uint8(int(v))
	case tensor.Bool:
		b[0] = 0
		if v != 0 {
			b[0] = 1
		}
	}
}

func decodeElem(dt tensor.DType, b []byte) float64 {
	switch dt {
	case tensor.Float32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
	case tensor.Float16:
		return float64(tensor.Float16From(binary.LittleEndian.Uint16(b)))
	case tensor.BFloat16:
		return float64(tensor.BFloat16From(binary.LittleEndian.Uint16(b)))
	case tensor.Int32:
		return float64(int32(binary.LittleEndian.Uint32(b)))
	case tensor.Int64:
		return float64(int64(binary.LittleEndian.Uint64(b)))
	}
	return float64(b[0])
}

// put writes vals (logical row-major order) into s.
func (e *env) put(s tensor.Strided, vals ...float64) tensor.Strided {
	e.t.Helper()
	as := addrs(s)
	if len(as) != len(vals) {
		e.t.Fatalf("put: %d values for shape %v", len(vals), s.Shape)
	}
	size := s.DType.Size()
	for i, a := range as {
		b, err := e.mem.Bytes(tensor.Ptr(a), size)
		if err != nil {
			e.t.Fatal(err)
		}
		encodeElem(s.DType, b, vals[i])
	}
	return s
}

// get reads s in logical row-major order.
func (e *env) get(s tensor.Strided) []float64 {
	e.t.Helper()
	var out []float64
	for _, a := range addrs(s) {
		b, err := e.mem.Bytes(tensor.Ptr(a), s.DType.Size())
		if err != nil {
			e.t.Fatal(err)
		}
		out = append(out, decodeElem(s.DType, b))
	}
	return out
}

// tensorOf allocates a contiguous tensor holding vals.
func (e *env) tensorOf(dt tensor.DType, shape []int, vals ...float64) tensor.Strided {
	return e.put(e.alloc(dt, shape, nil, 0), vals...)
}

// same reports whether got equals want, treating NaNs as equal and allowing a
// relative error rel.
func same(got, want []float64, rel float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		g, w := got[i], want[i]
		if math.IsNaN(w) {
			if !math.IsNaN(g) {
				return false
			}
			continue
		}
		if g == w {
			continue
		}
		if math.Abs(g-w) > rel*math.Max(math.Abs(w), 1e-30) {
			return false
		}
	}
	return true
}
