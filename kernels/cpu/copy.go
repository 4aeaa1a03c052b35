package cpu

import "memlab.dev/memlab/tensor"

// Copy copies src into dst element by element: same shape, any layouts, any
// dtypes. Floats convert through float32 with round-to-nearest-even; floats to
// integers truncate toward zero and wrap modulo 2^bits (NaN becomes 0); any
// nonzero value (NaN included) becomes true. dst may be an exact alias of src.
func (k *Kernels) Copy(dst, src tensor.Strided) error {
	const op = "Copy"
	d, err := k.output(op, dst)
	if err != nil {
		return err
	}
	s, err := k.resolve(op, "src", src)
	if err != nil {
		return err
	}
	if !sameShape(d.shape, s.shape) {
		return opError(op, "shape mismatch: dst %v, src %v", d.shape, s.shape)
	}
	if err := checkOverlap(op, d, s, true); err != nil {
		return err
	}
	if d.n == 0 || (d.dt == s.dt && sameElements(d, s)) {
		return nil
	}
	strides, base := [][]int{d.strides, s.strides}, []int{d.off, s.off}
	switch {
	case d.dt == s.dt:
		size := d.dt.Size()
		forEach(d.shape, strides, base, func(_, n int, o, st []int) {
			copySame(d.b, s.b, size, n, o[0], o[1], st[0], st[1])
		})
	case s.dt.IsFloat():
		forEach(d.shape, strides, base, func(_, n int, o, st []int) {
			for j := range n {
				storeF(d.dt, d.b, o[0]+j*st[0], loadF(s.dt, s.b, o[1]+j*st[1]))
			}
		})
	default:
		forEach(d.shape, strides, base, func(_, n int, o, st []int) {
			for j := range n {
				storeI(d.dt, d.b, o[0]+j*st[0], loadI(s.dt, s.b, o[1]+j*st[1]))
			}
		})
	}
	return nil
}

// copySame copies n elements of size bytes from element ps of src (stride ss)
// to element pd of dst (stride sd).
func copySame(dst, src []byte, size, n, pd, ps, sd, ss int) {
	if sd == 1 && ss == 1 {
		copy(dst[pd*size:(pd+n)*size], src[ps*size:(ps+n)*size])
		return
	}
	switch size {
	case 1:
		for j := range n {
			dst[pd+j*sd] = src[ps+j*ss]
		}
	case 2:
		for j := range n {
			le.PutUint16(dst[(pd+j*sd)*2:], le.Uint16(src[(ps+j*ss)*2:]))
		}
	case 4:
		for j := range n {
			le.PutUint32(dst[(pd+j*sd)*4:], le.Uint32(src[(ps+j*ss)*4:]))
		}
	default:
		for j := range n {
			le.PutUint64(dst[(pd+j*sd)*8:], le.Uint64(src[(ps+j*ss)*8:]))
		}
	}
}
