package cpu

import (
	"fmt"
	"slices"

	"memlab.dev/memlab/tensor"
)

// view is one validated kernel argument whose memory has been resolved to host
// bytes: element at logical index (i0, i1, …) is element off + Σ ik·strides[k]
// of b (in elements of dt).
type view struct {
	name    string
	dt      tensor.DType
	shape   []int
	strides []int
	n       int    // number of elements
	b       []byte // nil when n == 0
	off     int
	lo, hi  uint64 // device byte range [lo, hi) spanned by the elements
	start   uint64 // device address of logical element 0
}

// opError formats an error of operation op with the package prefix.
func opError(op, format string, args ...any) error {
	return fmt.Errorf("kernels/cpu: "+op+": "+format, args...)
}

// resolve validates s and resolves the bytes its elements occupy.
func (k *Kernels) resolve(op, name string, s tensor.Strided) (view, error) {
	v := view{name: name, dt: s.DType, shape: s.Shape, strides: s.Strides}
	e, err := s.Extent()
	v.n, v.lo, v.hi, v.start = e.N, e.Lo, e.Hi, e.Start
	if err != nil {
		return v, opError(op, "%s: %w", name, err)
	}
	if v.n == 0 {
		return v, nil
	}
	b, err := k.mem.Bytes(tensor.Ptr(v.lo), int(v.hi-v.lo))
	if err != nil {
		return v, fmt.Errorf("kernels/cpu: %s: %s: %d bytes at %#x: %w", op, name, v.hi-v.lo, v.lo, err)
	}
	if uint64(len(b)) < v.hi-v.lo {
		return v, opError(op, "%s: memory returned %d bytes for %d at %#x", name, len(b), v.hi-v.lo, v.lo)
	}
	v.b = b
	v.off = s.Offset - e.MinOff
	return v, nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// sameShape reports whether two shapes are equal.
func sameShape(a, b []int) bool { return slices.Equal(a, b) }

// sameElements reports whether a and b address the same elements in the same
// logical order (an exact alias: an in-place operation).
func sameElements(a, b view) bool {
	if a.dt.Size() != b.dt.Size() || a.start != b.start || !sameShape(a.shape, b.shape) {
		return false
	}
	for d, n := range a.shape {
		if n > 1 && a.strides[d] != b.strides[d] {
			return false
		}
	}
	return true
}

// offsets returns the sorted element offsets (relative to logical element 0's
// position in b) of every element of v.
func (v view) offsets() []int {
	out := make([]int, 0, v.n)
	shape, strides := collapse(v.shape, v.strides)
	runs(shape, strides, []int{0}, 0, v.n, func(_, n int, o, st []int) {
		for j := range n {
			out = append(out, o[0]+j*st[0])
		}
	})
	slices.Sort(out)
	return out
}

// checkDistinct returns an error if two elements of the output v share memory
// (a stride of 0 or overlapping strides), which would make the result depend on
// the order of writes.
func checkDistinct(op string, v view) error {
	if v.n <= 1 {
		return nil
	}
	// Sufficient condition: sorted by stride, each stride clears the extent of
	// the smaller dimensions.
	type dim struct{ n, st int }
	dims := make([]dim, 0, len(v.shape))
	for d, n := range v.shape {
		if n > 1 {
			dims = append(dims, dim{n, abs(v.strides[d])})
		}
	}
	slices.SortFunc(dims, func(a, b dim) int { return a.st - b.st })
	extent, ok := 0, true
	for _, d := range dims {
		if d.st <= extent {
			ok = false
			break
		}
		extent += (d.n - 1) * d.st
	}
	if ok {
		return nil
	}
	offs := v.offsets()
	for i := 1; i < len(offs); i++ {
		if offs[i] == offs[i-1] {
			return opError(op, "%s: several elements share one memory location (shape %v, strides %v); write to a contiguous tensor instead", v.name, v.shape, v.strides)
		}
	}
	return nil
}

// checkOverlap returns an error if the output dst shares memory with the input
// in, unless allowAlias is set and the two are exact aliases.
func checkOverlap(op string, dst, in view, allowAlias bool) error {
	if dst.n == 0 || in.n == 0 || dst.hi <= in.lo || in.hi <= dst.lo {
		return nil
	}
	if allowAlias && sameElements(dst, in) {
		return nil
	}
	// The byte ranges intersect: look for a byte both views really touch.
	a, b := dst.offsets(), in.offsets()
	as, bs := uint64(dst.dt.Size()), uint64(in.dt.Size())
	a0, b0 := dst.start, in.start
	for i, j := 0, 0; i < len(a) && j < len(b); {
		alo := a0 + uint64(int64(a[i])*int64(as))
		blo := b0 + uint64(int64(b[j])*int64(bs))
		switch {
		case alo+as <= blo:
			i++
		case blo+bs <= alo:
			j++
		default:
			if allowAlias {
				return opError(op, "%s partially overlaps %s (only an exact alias, an in-place operation, is allowed)", dst.name, in.name)
			}
			return opError(op, "%s overlaps %s", dst.name, in.name)
		}
	}
	return nil
}
