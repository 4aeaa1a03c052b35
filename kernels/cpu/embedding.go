package cpu

import (
	"memlab.dev/memlab/tensor"
)

// Embedding gathers rows of weight (V, D) selected by idx (Int32 or Int64, any
// shape of rank < MaxRank) into dst of shape idx.shape + [D] and weight's
// dtype. An index outside [0, V) is an error (PyTorch's "index out of range in
// self"), reported before anything is written. dst must not overlap weight or
// idx.
func (k *Kernels) Embedding(dst, weight, idx tensor.Strided) error {
	const op = "Embedding"
	d, err := k.output(op, dst)
	if err != nil {
		return err
	}
	w, err := k.resolve(op, "weight", weight)
	if err != nil {
		return err
	}
	ix, err := k.resolve(op, "idx", idx)
	if err != nil {
		return err
	}
	if len(w.shape) != 2 {
		return opError(op, "weight must be 2-D, got shape %v", w.shape)
	}
	if ix.dt != tensor.Int32 && ix.dt != tensor.Int64 {
		return opError(op, "idx must be int32 or int64, got %v", ix.dt)
	}
	if d.dt != w.dt {
		return opError(op, "dtype mismatch: dst is %v, weight is %v", d.dt, w.dt)
	}
	rows, dim := w.shape[0], w.shape[1]
	if len(d.shape) != len(ix.shape)+1 || !sameShape(d.shape[:len(ix.shape)], ix.shape) || d.shape[len(ix.shape)] != dim {
		return opError(op, "dst shape %v, want idx shape %v plus [%d]", d.shape, ix.shape, dim)
	}
	for _, v := range []view{w, ix} {
		if err := checkOverlap(op, d, v, false); err != nil {
			return err
		}
	}
	if ix.n == 0 {
		return nil
	}
	// Read and check every index first, so that a bad one writes nothing.
	sel := make([]int, 0, ix.n)
	shape, strides := collapse(ix.shape, ix.strides)
	runs(shape, strides, []int{ix.off}, 0, ix.n, func(_, n int, o, st []int) {
		for j := range n {
			sel = append(sel, int(loadI(ix.dt, ix.b, o[0]+j*st[0])))
		}
	})
	for p, r := range sel {
		if r < 0 || r >= rows {
			return opError(op, "index out of range in self: idx element %d is %d, weight has %d rows", p, r, rows)
		}
	}
	if d.n == 0 {
		return nil
	}
	// dst viewed as (positions, D): positions in idx's logical order.
	r := len(ix.shape)
	rowShape, rowStrides := collapse(d.shape[:r], d.strides[:r])
	size, ws, ds := w.dt.Size(), w.strides[1], d.strides[r]
	parallel(len(sel), d.n, func(lo, hi int) {
		runs(rowShape, rowStrides, []int{d.off}, lo, hi, func(pos, n int, o, st []int) {
			for j := range n {
				copySame(d.b, w.b, size, dim, o[0]+j*st[0], w.off+sel[pos+j]*w.strides[0], ds, ws)
			}
		})
	})
	return nil
}
