// Package oracle is what comparing a device's kernels with the CPU reference
// kernels (kernels/cpu) needs: host memory at made-up device addresses for the
// reference to run on, decoding of result buffers, the relative error that
// measures a difference, and the tolerances it must stay within. The
// conformance suite (device/devicetest) and the benchmark (bench) share it;
// it does not import package testing, so binaries that use it do not link it.
package oracle

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
// device. It implements the kernels' cpu.Memory and is safe for concurrent use.
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
		return nil, fmt.Errorf("oracle: %#x is not host oracle memory", a)
	}
	b := h.blocks[i]
	off := a - b.addr
	if off+uint64(n) > uint64(len(b.b)) {
		return nil, fmt.Errorf("oracle: [%#x, +%d) runs past its oracle block", a, n)
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
			out[i] = float64(tensor.Float16From(le.Uint16(b[2*i:])))
		case tensor.BFloat16:
			out[i] = float64(tensor.BFloat16From(le.Uint16(b[2*i:])))
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

// Tolerances of comparisons with the reference, as relative errors (RelErr)
// over whole buffers, so that a write outside a kernel's output counts too.
const (
	// TolFloat32 is for float32 elementwise work, reductions, softmax and
	// layer norm.
	TolFloat32 = 1e-5
	// TolMatmul32 is for float32 matrix products.
	TolMatmul32 = 1e-4
	// TolHalf is for any work that involves float16 or bfloat16.
	TolHalf = 1e-2
)

// RelErr returns ‖got − want‖ / ‖want‖, the error measure (0 when
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
