package cpu

import (
	"memlab.dev/memlab/tensor"
)

// Block sizes of the matmul loops: a panel of kBlock rows of b and nBlock
// columns stays in cache while groups of four rows of a stream past it.
const (
	kBlock = 256
	nBlock = 512
)

// Matmul computes dst = a @ b: (M,K) @ (K,N) → (M,N), or batched (B,M,K) @
// (B,K,N) → (B,M,N), where either input of a batched product may also be 2-D
// and is then shared by every batch. All three share one dtype; float dtypes
// accumulate in float32 (products summed in increasing k), integers in int64;
// Bool is not supported. dst must not overlap a or b.
func (k *Kernels) Matmul(dst, a, b tensor.Strided) error {
	const op = "Matmul"
	d, err := k.output(op, dst)
	if err != nil {
		return err
	}
	x, err := k.resolve(op, "a", a)
	if err != nil {
		return err
	}
	y, err := k.resolve(op, "b", b)
	if err != nil {
		return err
	}
	r := len(d.shape)
	if r != 2 && r != 3 {
		return opError(op, "dst must be 2-D or 3-D, got shape %v", d.shape)
	}
	for _, v := range []view{x, y} {
		if len(v.shape) != 2 && len(v.shape) != r {
			return opError(op, "%s must be 2-D or %d-D like dst, got shape %v", v.name, r, v.shape)
		}
		if v.dt != d.dt {
			return opError(op, "dtype mismatch: dst is %v, %s is %v", d.dt, v.name, v.dt)
		}
	}
	if d.dt == tensor.Bool {
		return opError(op, "not supported for bool")
	}
	batch, m, n := 1, d.shape[r-2], d.shape[r-1]
	if r == 3 {
		batch = d.shape[0]
	}
	kk := x.shape[len(x.shape)-1]
	if x.shape[len(x.shape)-2] != m || y.shape[len(y.shape)-2] != kk || y.shape[len(y.shape)-1] != n ||
		(len(x.shape) == 3 && x.shape[0] != batch) || (len(y.shape) == 3 && y.shape[0] != batch) {
		return opError(op, "shapes do not fit: dst %v = a %v @ b %v", d.shape, x.shape, y.shape)
	}
	for _, v := range []view{x, y} {
		if err := checkOverlap(op, d, v, false); err != nil {
			return err
		}
	}
	if d.n == 0 {
		return nil
	}
	if d.dt.IsFloat() {
		matmul(d, x, y, batch, m, kk, n, func(v view, p int) float32 { return float32(loadF(v.dt, v.b, p)) },
			func(p int, c float32) { storeF(d.dt, d.b, p, float64(c)) })
	} else {
		matmul(d, x, y, batch, m, kk, n, func(v view, p int) int64 { return loadI(v.dt, v.b, p) },
			func(p int, c int64) { storeI(d.dt, d.b, p, c) })
	}
	return nil
}

// matrix returns the offset of batch i's matrix in v and v's row and column
// strides (the batch stride of a 2-D operand is 0).
func matrix(v view, i int) (off, rs, cs int) {
	r := len(v.shape)
	off = v.off
	if r == 3 {
		off += i * v.strides[0]
	}
	return off, v.strides[r-2], v.strides[r-1]
}

// matmul packs each batch's operands into contiguous row-major T matrices,
// multiplies them on up to GOMAXPROCS goroutines (split by rows of dst) and
// stores the result.
func matmul[T float32 | int64](d, x, y view, batch, m, kk, n int, load func(view, int) T, store func(int, T)) {
	pa, pb := make([]T, m*kk), make([]T, kk*n)
	pack := func(dst []T, v view, i, rows, cols int) {
		off, rs, cs := matrix(v, i)
		for r := range rows {
			for c := range cols {
				dst[r*cols+c] = load(v, off+r*rs+c*cs)
			}
		}
	}
	for i := range batch {
		pack(pa, x, i, m, kk)
		if i == 0 || len(y.shape) == 3 {
			pack(pb, y, i, kk, n)
		}
		off, rs, cs := matrix(d, i)
		parallel(m, m*n*max(kk, 1), func(lo, hi int) {
			c := make([]T, (hi-lo)*n)
			gemmRows(c, pa[lo*kk:hi*kk], pb, hi-lo, kk, n)
			for r := lo; r < hi; r++ {
				row := c[(r-lo)*n : (r-lo+1)*n]
				for j, v := range row {
					store(off+r*rs+j*cs, v)
				}
			}
		})
	}
}

// gemmRows adds a (rows×kk) @ b (kk×n) to c (rows×n), all row-major. Each
// c[i][j] receives its products in increasing k, so the result does not depend
// on the blocking.
func gemmRows[T float32 | int64](c, a, b []T, rows, kk, n int) {
	for jb := 0; jb < n; jb += nBlock {
		je := min(jb+nBlock, n)
		w := je - jb
		for kb := 0; kb < kk; kb += kBlock {
			ke := min(kb+kBlock, kk)
			i := 0
			for ; i+4 <= rows; i += 4 {
				c0 := c[i*n+jb : i*n+je]
				c1 := c[(i+1)*n+jb : (i+1)*n+je]
				c2 := c[(i+2)*n+jb : (i+2)*n+je]
				c3 := c[(i+3)*n+jb : (i+3)*n+je]
				for p := kb; p < ke; p++ {
					br := b[p*n+jb : p*n+je]
					a0, a1, a2, a3 := a[i*kk+p], a[(i+1)*kk+p], a[(i+2)*kk+p], a[(i+3)*kk+p]
					br, c0, c1, c2, c3 := br[:w], c0[:w], c1[:w], c2[:w], c3[:w]
					for j, bv := range br {
						c0[j] += a0 * bv
						c1[j] += a1 * bv
						c2[j] += a2 * bv
						c3[j] += a3 * bv
					}
				}
			}
			for ; i < rows; i++ {
				ci := c[i*n+jb : i*n+je]
				for p := kb; p < ke; p++ {
					br := b[p*n+jb : p*n+je]
					ap := a[i*kk+p]
					ci := ci[:len(br)]
					for j, bv := range br {
						ci[j] += ap * bv
					}
				}
			}
		}
	}
}
