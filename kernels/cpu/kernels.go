package cpu

import (
	"fmt"
	"math"

	"memlab.dev/memlab/tensor"
)

// Memory resolves device addresses to the host bytes that hold them.
type Memory interface {
	// Bytes returns the n bytes at device address addr. It fails if the range is
	// not inside one live allocation (or mapped range). Writes to the returned
	// slice are writes to device memory.
	Bytes(addr tensor.Ptr, n int) ([]byte, error)
}

// Kernels implements [tensor.Kernels] with plain Go loops over a [Memory]. It
// keeps no state of its own: it is safe for concurrent use when its Memory is,
// and kernels run synchronously, so Synchronize has nothing to wait for.
type Kernels struct {
	mem Memory
}

var _ tensor.Kernels = (*Kernels)(nil)

// New returns kernels that run on the memory mem.
func New(mem Memory) *Kernels { return &Kernels{mem: mem} }

// CopyFromHost writes src to device memory at dst.
func (k *Kernels) CopyFromHost(dst tensor.Ptr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	b, err := k.hostRange("CopyFromHost", dst, len(src))
	if err != nil {
		return err
	}
	copy(b, src)
	return nil
}

// CopyToHost reads len(dst) bytes of device memory at src into dst.
func (k *Kernels) CopyToHost(dst []byte, src tensor.Ptr) error {
	if len(dst) == 0 {
		return nil
	}
	b, err := k.hostRange("CopyToHost", src, len(dst))
	if err != nil {
		return err
	}
	copy(dst, b)
	return nil
}

func (k *Kernels) hostRange(op string, addr tensor.Ptr, n int) ([]byte, error) {
	if addr == 0 {
		return nil, opError(op, "null device address")
	}
	b, err := k.mem.Bytes(addr, n)
	if err != nil {
		return nil, fmt.Errorf("kernels/cpu: %s: %d bytes at %#x: %w", op, n, uint64(addr), err)
	}
	if len(b) < n {
		return nil, opError(op, "memory returned %d bytes for %d at %#x", len(b), n, uint64(addr))
	}
	return b, nil
}

// Synchronize returns nil: every kernel has finished when its method returns.
func (k *Kernels) Synchronize() error { return nil }

// output resolves an argument that is written, checking that its elements are
// distinct.
func (k *Kernels) output(op string, s tensor.Strided) (view, error) {
	v, err := k.resolve(op, "dst", s)
	if err != nil {
		return v, err
	}
	return v, checkDistinct(op, v)
}

// encode returns the bytes of value v stored as dt, rejecting values an
// integer or bool dtype cannot hold (as torch.Tensor.fill_ does).
func encode(op string, dt tensor.DType, v float64) ([]byte, error) {
	b := make([]byte, dt.Size())
	if !dt.IsFloat() && dt != tensor.Bool {
		lo, hi := intRange(dt)
		if math.IsNaN(v) || v < lo || v > hi || (dt == tensor.Int64 && v >= 1<<63) {
			return nil, opError(op, "value %v cannot be converted to %v without overflow", v, dt)
		}
	}
	storeF(dt, b, 0, v)
	return b, nil
}

// Fill sets every element of dst to v converted to dst's dtype. Integer dtypes
// truncate toward zero and reject NaN and values outside their range.
func (k *Kernels) Fill(dst tensor.Strided, v float64) error {
	const op = "Fill"
	d, err := k.output(op, dst)
	if err != nil {
		return err
	}
	pat, err := encode(op, d.dt, v)
	if err != nil || d.n == 0 {
		return err
	}
	size := len(pat)
	forEach(d.shape, [][]int{d.strides}, []int{d.off}, func(_, n int, o, st []int) {
		if st[0] == 1 {
			run := d.b[o[0]*size : (o[0]+n)*size]
			copy(run, pat)
			for f := size; f < len(run); f *= 2 {
				copy(run[f:], run[:f])
			}
			return
		}
		for j := range n {
			copy(d.b[(o[0]+j*st[0])*size:], pat)
		}
	})
	return nil
}
