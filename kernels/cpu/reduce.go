package cpu

import (
	"math"
	"slices"

	"memlab.dev/memlab/tensor"
)

// Reduce reduces src along dim into dst, whose shape is src's with Shape[dim]
// = 1, and whose dtype is src's. Sum accumulates floats in float64 and
// integers in int64 (wrapping to the dtype), and is 0 over an empty dimension;
// Max propagates NaN, fails over an empty dimension, and on Bool is "any".
// Sum of Bool is not supported.
func (k *Kernels) Reduce(op tensor.ReduceOp, dst, src tensor.Strided, dim int) error {
	var name string
	switch op {
	case tensor.Sum:
		name = "Reduce(sum)"
	case tensor.Max:
		name = "Reduce(max)"
	default:
		return opError("Reduce", "unknown operation %d", op)
	}
	s, err := k.resolve(name, "src", src)
	if err != nil {
		return err
	}
	d, err := k.output(name, dst)
	if err != nil {
		return err
	}
	if dim < 0 || dim >= len(s.shape) {
		return opError(name, "dim %d out of range for a %d-dimensional src", dim, len(s.shape))
	}
	want := slices.Clone(s.shape)
	want[dim] = 1
	if !sameShape(d.shape, want) {
		return opError(name, "dst shape %v, want %v (src %v reduced along dim %d)", d.shape, want, s.shape, dim)
	}
	if d.dt != s.dt {
		return opError(name, "dtype mismatch: dst is %v, src is %v", d.dt, s.dt)
	}
	if op == tensor.Sum && s.dt == tensor.Bool {
		return opError(name, "sum of bool is not supported (copy to an integer dtype first)")
	}
	if err := checkOverlap(name, d, s, true); err != nil {
		return err
	}
	length, step := s.shape[dim], s.strides[dim]
	if op == tensor.Max && length == 0 && d.n > 0 {
		return opError(name, "max over dim %d of size 0 has no identity", dim)
	}
	if d.n == 0 {
		return nil
	}
	outStrides := slices.Clone(s.strides)
	outStrides[dim] = 0
	float := s.dt.IsFloat()
	shape, strides := collapse(d.shape, d.strides, outStrides)
	parallel(d.n, d.n*max(length, 1), func(lo, hi int) {
		runs(shape, strides, []int{d.off, s.off}, lo, hi, func(_, n int, o, st []int) {
			for j := range n {
				pd, ps := o[0]+j*st[0], o[1]+j*st[1]
				if float {
					storeF(d.dt, d.b, pd, reduceFloat(op, s, ps, length, step))
				} else {
					storeI(d.dt, d.b, pd, reduceInt(op, s, ps, length, step))
				}
			}
		})
	})
	return nil
}

func reduceFloat(op tensor.ReduceOp, s view, p, length, step int) float64 {
	if op == tensor.Sum {
		acc := 0.0
		for i := range length {
			acc += loadF(s.dt, s.b, p+i*step)
		}
		return acc
	}
	acc := math.Inf(-1)
	for i := range length {
		x := loadF(s.dt, s.b, p+i*step)
		if x != x {
			return x
		}
		acc = max(acc, x)
	}
	return acc
}

func reduceInt(op tensor.ReduceOp, s view, p, length, step int) int64 {
	if op == tensor.Sum {
		var acc int64
		for i := range length {
			acc += loadI(s.dt, s.b, p+i*step)
		}
		return acc
	}
	acc := int64(math.MinInt64)
	for i := range length {
		acc = max(acc, loadI(s.dt, s.b, p+i*step))
	}
	return acc
}

// rows resolves dst and src of a row-wise operation over the last dimension
// (Softmax, LayerNorm): equal shapes, rank ≥ 1, one float dtype, dst distinct
// from src or an exact alias of it.
func (k *Kernels) rows(op string, dst, src tensor.Strided) (d, s view, err error) {
	d, in, err := k.elementwise(op, dst, src)
	if err != nil {
		return d, s, err
	}
	s = in[0]
	if len(d.shape) == 0 {
		return d, s, opError(op, "needs at least one dimension")
	}
	if !d.dt.IsFloat() {
		return d, s, opError(op, "needs a floating-point dtype, got %v", d.dt)
	}
	return d, s, nil
}

// forRows calls fn for every row (every index of all dimensions but the last)
// with the element offsets of the row's first element in dst and src, and a
// scratch buffer of the row's length owned by the calling goroutine.
func forRows(d, s view, fn func(pd, ps int, buf []float64)) {
	r := len(d.shape)
	length := d.shape[r-1]
	if d.n == 0 {
		return
	}
	nrows := d.n / length
	shape, strides := collapse(d.shape[:r-1], d.strides[:r-1], s.strides[:r-1])
	parallel(nrows, d.n, func(lo, hi int) {
		buf := make([]float64, length)
		runs(shape, strides, []int{d.off, s.off}, lo, hi, func(_, n int, o, st []int) {
			for j := range n {
				fn(o[0]+j*st[0], o[1]+j*st[1], buf)
			}
		})
	})
}

// Softmax computes softmax along the last dimension of src into dst (same
// shape and float dtype; dst may alias src exactly). Each row is shifted by its
// maximum before exponentiation, and the sum is accumulated in float64.
func (k *Kernels) Softmax(dst, src tensor.Strided) error {
	const op = "Softmax"
	d, s, err := k.rows(op, dst, src)
	if err != nil {
		return err
	}
	r := len(d.shape)
	sd, ss := d.strides[r-1], s.strides[r-1]
	forRows(d, s, func(pd, ps int, x []float64) {
		m := math.Inf(-1)
		for i := range x {
			x[i] = loadF(s.dt, s.b, ps+i*ss)
			m = max(m, x[i])
		}
		sum := 0.0
		for i, v := range x {
			x[i] = math.Exp(v - m)
			sum += x[i]
		}
		for i, v := range x {
			storeF(d.dt, d.b, pd+i*sd, v/sum)
		}
	})
	return nil
}

// LayerNorm normalises each row (last dimension) of src to zero mean and unit
// biased variance, then scales by gamma and shifts by beta:
// dst = (x - mean) / sqrt(var + eps) * gamma + beta, computed in float64. gamma
// and beta are 1-D of the row length and src's dtype; either may be the zero
// Strided (no Base, no Shape), meaning ones and zeros (elementwise_affine=False).
func (k *Kernels) LayerNorm(dst, src, gamma, beta tensor.Strided, eps float64) error {
	const op = "LayerNorm"
	if math.IsNaN(eps) || eps < 0 {
		return opError(op, "eps must be >= 0, got %v", eps)
	}
	d, s, err := k.rows(op, dst, src)
	if err != nil {
		return err
	}
	r := len(d.shape)
	length := d.shape[r-1]
	g, err := k.affine(op, "gamma", gamma, d, length, 1)
	if err != nil {
		return err
	}
	b, err := k.affine(op, "beta", beta, d, length, 0)
	if err != nil {
		return err
	}
	sd, ss := d.strides[r-1], s.strides[r-1]
	forRows(d, s, func(pd, ps int, x []float64) {
		mean := 0.0
		for i := range x {
			x[i] = loadF(s.dt, s.b, ps+i*ss)
			mean += x[i]
		}
		mean /= float64(length)
		variance := 0.0
		for _, v := range x {
			variance += (v - mean) * (v - mean)
		}
		variance /= float64(length)
		inv := 1 / math.Sqrt(variance+eps)
		for i, v := range x {
			storeF(d.dt, d.b, pd+i*sd, (v-mean)*inv*g[i]+b[i])
		}
	})
	return nil
}

// affine reads LayerNorm's gamma or beta into float64s; the zero Strided gives
// length copies of def.
func (k *Kernels) affine(op, name string, p tensor.Strided, d view, length int, def float64) ([]float64, error) {
	out := make([]float64, length)
	if p.Base == 0 && len(p.Shape) == 0 {
		for i := range out {
			out[i] = def
		}
		return out, nil
	}
	v, err := k.resolve(op, name, p)
	if err != nil {
		return nil, err
	}
	if len(v.shape) != 1 || v.shape[0] != length {
		return nil, opError(op, "%s shape %v, want [%d] (the last dimension of src)", name, v.shape, length)
	}
	if v.dt != d.dt {
		return nil, opError(op, "dtype mismatch: dst is %v, %s is %v", d.dt, name, v.dt)
	}
	if err := checkOverlap(op, d, v, false); err != nil {
		return nil, err
	}
	for i := range out {
		out[i] = loadF(v.dt, v.b, v.off+i*v.strides[0])
	}
	return out, nil
}
