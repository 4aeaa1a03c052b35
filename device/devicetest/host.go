package devicetest

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"

	"memlab.dev/memlab/tensor"
)

// HostMemory is plain host memory at made-up device addresses: the memory of
// the CPU reference kernels (kernels/cpu) when they serve as the oracle of a
// device. It implements cpu.Memory and is safe for concurrent use.
type HostMemory struct {
	mu     sync.Mutex
	next   uint64
	blocks []hostBlock // sorted by addr
}

type hostBlock struct {
	addr uint64
	b    []byte
}

// NewHostMemory returns an empty HostMemory.
func NewHostMemory() *HostMemory { return &HostMemory{next: 1 << 20} }

// Alloc returns the address of n new zeroed bytes, aligned to 256 bytes.
func (h *HostMemory) Alloc(n int) tensor.Ptr {
	h.mu.Lock()
	defer h.mu.Unlock()
	a := h.next
	h.next += (uint64(n) + 511) &^ 255
	h.blocks = append(h.blocks, hostBlock{a, make([]byte, n)})
	return tensor.Ptr(a)
}

// Bytes returns the n bytes at addr (cpu.Memory); writes to them are writes
// to the memory.
func (h *HostMemory) Bytes(addr tensor.Ptr, n int) ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	a := uint64(addr)
	i, found := slices.BinarySearchFunc(h.blocks, a, func(b hostBlock, a uint64) int { return cmp.Compare(b.addr, a) })
	if !found {
		i--
	}
	if i < 0 || i >= len(h.blocks) {
		return nil, fmt.Errorf("devicetest: %#x is not host oracle memory", a)
	}
	b := h.blocks[i]
	off := a - b.addr
	if off+uint64(n) > uint64(len(b.b)) {
		return nil, fmt.Errorf("devicetest: [%#x, +%d) runs past its oracle block", a, n)
	}
	return b.b[off : off+uint64(n)], nil
}

// Decode returns the elements of b, of dtype dt, as float64.
func Decode(dt tensor.DType, b []byte) []float64 {
	n := len(b) / dt.Size()
	out := make([]float64, n)
	le := binary.LittleEndian
	for i := range out {
		switch dt {
		case tensor.Float32:
			out[i] = float64(math.Float32frombits(le.Uint32(b[4*i:])))
		case tensor.Float16:
			out[i] = float64(half(le.Uint16(b[2*i:])))
		case tensor.BFloat16:
			out[i] = float64(math.Float32frombits(uint32(le.Uint16(b[2*i:])) << 16))
		case tensor.Int32:
			out[i] = float64(int32(le.Uint32(b[4*i:])))
		case tensor.Int64:
			out[i] = float64(int64(le.Uint64(b[8*i:])))
		default:
			out[i] = float64(b[i])
		}
	}
	return out
}

// half decodes an IEEE binary16 value.
func half(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := int(h >> 10 & 0x1f)
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp == 0:
		v := float32(man) / (1 << 24)
		if sign != 0 {
			return -v
		}
		return v
	}
	return math.Float32frombits(sign | uint32(exp-15+127)<<23 | man<<13)
}

// RelErr returns ‖got − want‖ / ‖want‖, the suite's error measure (0 when
// both are zero; NaNs in the same places count as equal).
func RelErr(got, want []float64) float64 {
	var num, den float64
	for i := range want {
		g, w := got[i], want[i]
		if math.IsNaN(w) && math.IsNaN(g) || math.IsInf(w, 0) && g == w {
			continue
		}
		d := g - w
		num += d * d
		den += w * w
	}
	if den == 0 {
		if num == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return math.Sqrt(num / den)
}
