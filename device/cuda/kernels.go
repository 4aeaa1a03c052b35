package cuda

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"memlab.dev/memlab/tensor"
)

var _ tensor.Kernels = (*Device)(nil)

// Kernel arguments: each is a pointer to a value of the kernel parameter's type.
func i32(v int) karg             { x := int32(v); return karg{unsafe.Pointer(&x), 4} }
func i64(v int) karg             { x := int64(v); return karg{unsafe.Pointer(&x), 8} }
func u64(v uint64) karg          { x := v; return karg{unsafe.Pointer(&x), 8} }
func f32(v float64) karg         { x := float32(v); return karg{unsafe.Pointer(&x), 4} }
func f64(v float64) karg         { x := v; return karg{unsafe.Pointer(&x), 8} }
func dsc(b *[descSize]byte) karg { return karg{unsafe.Pointer(b), descSize} }

// launch runs kernel name on the default stream (asynchronously).
func (d *Device) launch(name string, grid, block [3]uint32, args ...karg) error {
	fn, ok := d.fns[name]
	if !ok {
		return fmt.Errorf("device/cuda: kernel %s is not loaded", name)
	}
	err := d.do(func() error { return d.drv.launch(fn, grid, block, 0, args) })
	if err != nil {
		return fmt.Errorf("device/cuda: launching %s: %w", name, err)
	}
	return nil
}

// grid1 returns a 1-D grid for n work items of `threads` threads per block,
// capped so that grid-stride loops keep every multiprocessor busy.
func (d *Device) grid1(n, threads int) [3]uint32 {
	b := (n + threads - 1) / threads
	if max := d.sms * 32; b > max {
		b = max
	}
	if b < 1 {
		b = 1
	}
	return [3]uint32{uint32(b), 1, 1}
}

var block256 = [3]uint32{256, 1, 1}

// gridContig sizes the grid of the contiguous fast paths (copy_contig_vec16,
// unary_contig_*, binary_contig_*) for nv 16-byte vectors: one vector per
// thread, blocks of 256 threads, as many blocks as that takes (up to the
// driver's 2^31-1; the kernels' grid-stride loops cover anything beyond).
// A grid that covers the data once beats a persistent one on the H200: see
// kernels/tuning/NOTES.md for the measurements. The blocks are block256, which
// must stay equal to CONTIG_THREADS in kernels/elementwise.cu: the kernels'
// __launch_bounds__ refuse larger blocks.
func gridContig(nv int) [3]uint32 {
	const maxGrid = 1<<31 - 1
	b := (nv + 255) / 256
	if b > maxGrid {
		b = maxGrid
	}
	if b < 1 {
		b = 1
	}
	return [3]uint32{uint32(b), 1, 1}
}

// CopyFromHost writes src to device memory at dst (synchronously).
func (d *Device) CopyFromHost(dst tensor.Ptr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	if dst == 0 || !d.live(uint64(dst), uint64(dst)+uint64(len(src))) {
		return fmt.Errorf("device/cuda: CopyFromHost: %d bytes at %#x are not in live memory of %s", len(src), uint64(dst), d)
	}
	return d.do(func() error { return d.drv.memcpyHtoD(uint64(dst), unsafe.Pointer(&src[0]), uint64(len(src))) })
}

// CopyToHost reads len(dst) bytes of device memory at src (synchronously).
func (d *Device) CopyToHost(dst []byte, src tensor.Ptr) error {
	if len(dst) == 0 {
		return nil
	}
	if src == 0 || !d.live(uint64(src), uint64(src)+uint64(len(dst))) {
		return fmt.Errorf("device/cuda: CopyToHost: %d bytes at %#x are not in live memory of %s", len(dst), uint64(src), d)
	}
	return d.do(func() error { return d.drv.memcpyDtoH(unsafe.Pointer(&dst[0]), uint64(src), uint64(len(dst))) })
}

// Fill sets every element of dst to v. Contiguous 1-, 2- and 4-byte fills
// are cuMemsetD8/D16/D32 calls.
func (d *Device) Fill(dst tensor.Strided, v float64) error {
	const op = "Fill"
	o, err := d.output(op, dst)
	if err != nil || o.n == 0 {
		return err
	}
	pat, err := encodeScalar(op, dst.DType, v)
	if err != nil {
		return err
	}
	shape, st := coalesce(dst.Shape, dst.Strides)
	if contiguous(shape, st[0]) {
		n := uint64(o.n)
		switch dst.DType.Size() {
		case 1:
			return d.do(func() error { return d.drv.memsetD8(o.start, uint8(pat), n) })
		case 2:
			return d.do(func() error { return d.drv.memsetD16(o.start, uint16(pat), n) })
		case 4:
			return d.do(func() error { return d.drv.memsetD32(o.start, uint32(pat), n) })
		default:
			return d.launch("fill_contig8", d.grid1(o.n, 256), block256, u64(o.start), u64(pat), i64(o.n))
		}
	}
	return d.launch("fill_strided", d.grid1(o.n, 256), block256, dsc(desc(dst, shape, st[0])), f64(v), i64(o.n))
}

// Random fills dst from memlab's counter-based generator (see kernels/cpu).
func (d *Device) Random(dst tensor.Strided, seed uint64, normal bool, lo, hi float64) error {
	const op = "Random"
	o, err := d.output(op, dst)
	if err != nil || o.n == 0 {
		return err
	}
	nm := 0
	if normal {
		nm = 1
	}
	// The generator numbers elements in dst's logical row-major order, so the
	// layout is not coalesced across reordered dimensions; merging contiguous
	// runs keeps that order.
	shape, st := coalesce(dst.Shape, dst.Strides)
	return d.launch("random_strided", d.grid1(o.n, 256), block256, dsc(desc(dst, shape, st[0])), u64(seed), i32(nm), f64(lo), f64(hi), i64(o.n))
}

// Copy copies src into dst: cuMemcpy-speed for contiguous same-dtype copies,
// a tiled transpose for 2-D (optionally batched) permutations, and a strided
// kernel with dtype conversion otherwise.
func (d *Device) Copy(dst, src tensor.Strided) error {
	const op = "Copy"
	od, err := d.output(op, dst)
	if err != nil {
		return err
	}
	os, err := d.check(op, "src", src)
	if err != nil {
		return err
	}
	if !sameShape(dst.Shape, src.Shape) {
		return fmt.Errorf("device/cuda: Copy: shape mismatch: dst %v, src %v", dst.Shape, src.Shape)
	}
	if od.n == 0 {
		return nil
	}
	if err := checkOverlap(op, "src", od, os, true); err != nil {
		return err
	}
	shape, st := coalesce(dst.Shape, dst.Strides, src.Strides)
	ds, ss := st[0], st[1]
	if dst.DType == src.DType {
		es := dst.DType.Size()
		if contiguous(shape, ds) && contiguous(shape, ss) {
			if od.start == os.start {
				return nil
			}
			nb := uint64(od.n * es)
			if od.start%16 == 0 && os.start%16 == 0 && nb%16 == 0 {
				return d.launch("copy_contig_vec16", gridContig(int(nb/16)), block256, u64(od.start), u64(os.start), i64(int(nb/16)))
			}
			return d.do(func() error { return d.drv.memcpyDtoD(od.start, os.start, nb) })
		}
		if r := len(shape); (r == 2 || r == 3) && ds[r-1] == 1 && ss[r-2] == 1 && ss[r-1] != 1 {
			R, C := shape[r-2], shape[r-1]
			B, dsb, ssb := 1, 0, 0
			if r == 3 {
				B, dsb, ssb = shape[0], ds[0], ss[0]
			}
			gy := (R + 31) / 32
			if gy <= 65535 && B <= 65535 {
				grid := [3]uint32{uint32((C + 31) / 32), uint32(gy), uint32(B)}
				return d.launch(fmt.Sprintf("transpose_%d", es), grid, [3]uint32{32, 8, 1},
					u64(od.start), u64(os.start), i64(R), i64(C), i64(dsb), i64(ds[r-2]), i64(ssb), i64(ss[r-1]))
			}
		}
		return d.launch("copy_strided_same", d.grid1(od.n, 256), block256, dsc(desc(dst, shape, ds)), dsc(desc(src, shape, ss)), i64(od.n))
	}
	return d.launch("copy_strided_convert", d.grid1(od.n, 256), block256, dsc(desc(dst, shape, ds)), dsc(desc(src, shape, ss)), i64(od.n))
}

// floatSuffix names the kernel variant of a float dtype.
func floatSuffix(dt tensor.DType) string {
	switch dt {
	case tensor.Float32:
		return "f32"
	case tensor.Float16:
		return "f16"
	case tensor.BFloat16:
		return "bf16"
	}
	return ""
}

// Unary computes dst = op(src), in place when dst is src.
func (d *Device) Unary(uop tensor.UnaryOp, dst, src tensor.Strided, alpha float64) error {
	const op = "Unary"
	if uop > tensor.Scale {
		return fmt.Errorf("device/cuda: Unary: unknown operation %d", uop)
	}
	od, err := d.output(op, dst)
	if err != nil {
		return err
	}
	os, err := d.check(op, "src", src)
	if err != nil {
		return err
	}
	if !sameShape(dst.Shape, src.Shape) {
		return fmt.Errorf("device/cuda: Unary: shape mismatch: dst %v, src %v", dst.Shape, src.Shape)
	}
	if od.n == 0 {
		return nil
	}
	if err := checkOverlap(op, "src", od, os, true); err != nil {
		return err
	}
	if !dst.DType.IsFloat() || !src.DType.IsFloat() {
		return d.onHost([]operand{od}, []operand{os}, func(k tensor.Kernels, t []tensor.Strided) error {
			return k.Unary(uop, t[0], t[1], alpha)
		})
	}
	shape, st := coalesce(dst.Shape, dst.Strides, src.Strides)
	if sfx := floatSuffix(dst.DType); sfx != "" && dst.DType == src.DType &&
		contiguous(shape, st[0]) && contiguous(shape, st[1]) && od.start%16 == 0 && os.start%16 == 0 {
		v := 16 / dst.DType.Size()
		return d.launch("unary_contig_"+sfx, gridContig((od.n+v-1)/v), block256,
			i32(int(uop)), u64(od.start), u64(os.start), f32(alpha), i64(od.n))
	}
	return d.launch("unary_strided", d.grid1(od.n, 256), block256, i32(int(uop)),
		dsc(desc(dst, shape, st[0])), dsc(desc(src, shape, st[1])), f64(alpha), i64(od.n))
}

// Binary computes dst = a op b; broadcast inputs have stride 0.
func (d *Device) Binary(bop tensor.BinaryOp, dst, a, b tensor.Strided) error {
	const op = "Binary"
	if bop > tensor.Div {
		return fmt.Errorf("device/cuda: Binary: unknown operation %d", bop)
	}
	od, err := d.output(op, dst)
	if err != nil {
		return err
	}
	oa, err := d.check(op, "a", a)
	if err != nil {
		return err
	}
	ob, err := d.check(op, "b", b)
	if err != nil {
		return err
	}
	if !sameShape(dst.Shape, a.Shape) || !sameShape(dst.Shape, b.Shape) {
		return fmt.Errorf("device/cuda: Binary: shape mismatch: dst %v, a %v, b %v (broadcast inputs first)", dst.Shape, a.Shape, b.Shape)
	}
	if od.n == 0 {
		return nil
	}
	if err := checkOverlap(op, "a", od, oa, true); err != nil {
		return err
	}
	if err := checkOverlap(op, "b", od, ob, true); err != nil {
		return err
	}
	if !dst.DType.IsFloat() || !a.DType.IsFloat() || !b.DType.IsFloat() {
		return d.onHost([]operand{od}, []operand{oa, ob}, func(k tensor.Kernels, t []tensor.Strided) error {
			return k.Binary(bop, t[0], t[1], t[2])
		})
	}
	shape, st := coalesce(dst.Shape, dst.Strides, a.Strides, b.Strides)
	if sfx := floatSuffix(dst.DType); sfx != "" && dst.DType == a.DType && dst.DType == b.DType &&
		contiguous(shape, st[0]) && contiguous(shape, st[1]) && contiguous(shape, st[2]) &&
		od.start%16 == 0 && oa.start%16 == 0 && ob.start%16 == 0 {
		v := 16 / dst.DType.Size()
		return d.launch("binary_contig_"+sfx, gridContig((od.n+v-1)/v), block256,
			i32(int(bop)), u64(od.start), u64(oa.start), u64(ob.start), i64(od.n))
	}
	return d.launch("binary_strided", d.grid1(od.n, 256), block256, i32(int(bop)),
		dsc(desc(dst, shape, st[0])), dsc(desc(a, shape, st[1])), dsc(desc(b, shape, st[2])), i64(od.n))
}

// Reduce reduces src along dim into dst (src's shape with Shape[dim] = 1).
func (d *Device) Reduce(rop tensor.ReduceOp, dst, src tensor.Strided, dim int) error {
	const op = "Reduce"
	if rop > tensor.Max {
		return fmt.Errorf("device/cuda: Reduce: unknown operation %d", rop)
	}
	od, err := d.output(op, dst)
	if err != nil {
		return err
	}
	os, err := d.check(op, "src", src)
	if err != nil {
		return err
	}
	if dim < 0 || dim >= len(src.Shape) {
		return fmt.Errorf("device/cuda: Reduce: dim %d out of range for rank %d", dim, len(src.Shape))
	}
	want := append([]int(nil), src.Shape...)
	want[dim] = 1
	if !sameShape(dst.Shape, want) {
		return fmt.Errorf("device/cuda: Reduce: dst shape %v, want %v (src %v reduced along dim %d)", dst.Shape, want, src.Shape, dim)
	}
	L := src.Shape[dim]
	if od.n == 0 {
		return nil
	}
	if err := checkOverlap(op, "src", od, os, true); err != nil {
		return err
	}
	if !dst.DType.IsFloat() || !src.DType.IsFloat() || L == 0 {
		// Integer and bool reductions, and empty ones, as the CPU reference does them.
		return d.onHost([]operand{od}, []operand{os}, func(k tensor.Kernels, t []tensor.Strided) error {
			return k.Reduce(rop, t[0], t[1], dim)
		})
	}
	sd := src.Strides[dim]
	dd := desc(dst, dst.Shape, dst.Strides)
	sdsc := desc(src, src.Shape, src.Strides)
	// A warp per output when the reduced elements are adjacent, or when the
	// outputs are too few for a thread each to keep the GPU busy.
	if absInt(sd) == 1 || L >= 1024 && od.n < d.sms*256 {
		return d.launch("reduce_inner", d.grid1(od.n*32, 256), block256, i32(int(rop)), dsc(dd), dsc(sdsc), i64(L), i64(sd), i64(od.n))
	}
	return d.launch("reduce_dim", d.grid1(od.n, 256), block256, i32(int(rop)), dsc(dd), dsc(sdsc), i64(L), i64(sd), i64(od.n))
}

// rows checks the arguments of a row kernel (softmax, layer norm).
func rowCheck(op string, dst, src tensor.Strided) error {
	if !sameShape(dst.Shape, src.Shape) {
		return fmt.Errorf("device/cuda: %s: shape mismatch: dst %v, src %v", op, dst.Shape, src.Shape)
	}
	if len(src.Shape) == 0 {
		return fmt.Errorf("device/cuda: %s: src is a scalar; it needs a last dimension", op)
	}
	if floatSuffix(src.DType) == "" || dst.DType != src.DType {
		return fmt.Errorf("device/cuda: %s: dtypes dst %v, src %v; want one float dtype", op, dst.DType, src.DType)
	}
	return nil
}

// rowBlock is the block size of a row kernel for rows of L elements: enough
// threads that each keeps at most 16 elements in registers, at most 1024.
func rowBlock(L int) [3]uint32 {
	t := (L + 15) / 16
	t = (t + 31) / 32 * 32
	if t < 32 {
		t = 32
	}
	if t > 1024 {
		t = 1024
	}
	return [3]uint32{uint32(t), 1, 1}
}

// vecRows reports whether float32 rows of dst and src suit the vectorised row
// kernels: unit stride along rows of a multiple of 4 elements (at most
// 16 per thread of a 1024-thread block), rows evenly spaced, 16-byte aligned.
// It returns the row strides of dst and src in elements.
func vecRows(dst, src tensor.Strided, od, os operand) (rsd, rss int, ok bool) {
	r := len(src.Shape) - 1
	L := src.Shape[r]
	if src.DType != tensor.Float32 || L%4 != 0 || L > 16*1024 || dst.Strides[r] != 1 || src.Strides[r] != 1 ||
		od.start%16 != 0 || os.start%16 != 0 {
		return 0, 0, false
	}
	shape, st := coalesce(src.Shape[:r], dst.Strides[:r], src.Strides[:r])
	switch len(shape) {
	case 0:
		return L, L, true
	case 1:
		if st[0][0]%4 == 0 && st[1][0]%4 == 0 {
			return st[0][0], st[1][0], true
		}
	}
	return 0, 0, false
}

// rowVecBlock is the block of the vectorised row kernels: one thread per 16
// elements (4 float4s), a whole number of warps.
func rowVecBlock(L int) [3]uint32 {
	t := (L/4 + 3) / 4
	t = (t + 31) / 32 * 32
	if t < 32 {
		t = 32
	}
	return [3]uint32{uint32(t), 1, 1}
}

// Softmax computes softmax along the last dimension, one block per row.
func (d *Device) Softmax(dst, src tensor.Strided) error {
	const op = "Softmax"
	od, err := d.output(op, dst)
	if err != nil {
		return err
	}
	os, err := d.check(op, "src", src)
	if err != nil {
		return err
	}
	if err := rowCheck(op, dst, src); err != nil {
		return err
	}
	if od.n == 0 {
		return nil
	}
	r := len(src.Shape) - 1
	L := src.Shape[r]
	rows := od.n / L
	if rows > 1<<31-1 {
		return fmt.Errorf("device/cuda: Softmax: %d rows exceed the grid", rows)
	}
	if err := checkOverlap(op, "src", od, os, true); err != nil {
		return err
	}
	if rsd, rss, ok := vecRows(dst, src, od, os); ok {
		return d.launch("softmax_f32_vec", [3]uint32{uint32(rows), 1, 1}, rowVecBlock(L),
			u64(od.start), u64(os.start), i64(L), i64(rsd), i64(rss))
	}
	rs := withLast(dst.Shape)
	return d.launch("softmax_"+floatSuffix(src.DType), [3]uint32{uint32(rows), 1, 1}, rowBlock(L),
		dsc(desc(dst, rs, dst.Strides)), dsc(desc(src, rs, src.Strides)), i64(L), i64(dst.Strides[r]), i64(src.Strides[r]))
}

// LayerNorm normalises src over its last dimension, then scales by gamma and
// shifts by beta (1-D, of src's dtype), one block per row.
func (d *Device) LayerNorm(dst, src, gamma, beta tensor.Strided, eps float64) error {
	const op = "LayerNorm"
	od, err := d.output(op, dst)
	if err != nil {
		return err
	}
	os, err := d.check(op, "src", src)
	if err != nil {
		return err
	}
	og, err := d.check(op, "gamma", gamma)
	if err != nil {
		return err
	}
	ob, err := d.check(op, "beta", beta)
	if err != nil {
		return err
	}
	if err := rowCheck(op, dst, src); err != nil {
		return err
	}
	r := len(src.Shape) - 1
	L := src.Shape[r]
	if len(gamma.Shape) != 1 || gamma.Shape[0] != L || len(beta.Shape) != 1 || beta.Shape[0] != L {
		return fmt.Errorf("device/cuda: LayerNorm: gamma %v and beta %v must be 1-D of size %d (src %v)", gamma.Shape, beta.Shape, L, src.Shape)
	}
	if gamma.DType != src.DType || beta.DType != src.DType {
		return fmt.Errorf("device/cuda: LayerNorm: gamma (%v) and beta (%v) must have src's dtype %v", gamma.DType, beta.DType, src.DType)
	}
	if od.n == 0 {
		return nil
	}
	rows := od.n / L
	if rows > 1<<31-1 {
		return fmt.Errorf("device/cuda: LayerNorm: %d rows exceed the grid", rows)
	}
	for _, in := range []struct {
		name  string
		o     operand
		alias bool
	}{{"src", os, true}, {"gamma", og, false}, {"beta", ob, false}} {
		if err := checkOverlap(op, in.name, od, in.o, in.alias); err != nil {
			return err
		}
	}
	if rsd, rss, ok := vecRows(dst, src, od, os); ok && gamma.Strides[0] == 1 && beta.Strides[0] == 1 &&
		og.start%16 == 0 && ob.start%16 == 0 {
		return d.launch("layernorm_f32_vec", [3]uint32{uint32(rows), 1, 1}, rowVecBlock(L),
			u64(od.start), u64(os.start), u64(og.start), u64(ob.start), f32(eps), i64(L), i64(rsd), i64(rss))
	}
	rs := withLast(dst.Shape)
	return d.launch("layernorm_"+floatSuffix(src.DType), [3]uint32{uint32(rows), 1, 1}, rowBlock(L),
		dsc(desc(dst, rs, dst.Strides)), dsc(desc(src, rs, src.Strides)),
		u64(og.start), i64(gamma.Strides[0]), u64(ob.start), i64(beta.Strides[0]), f32(eps),
		i64(L), i64(dst.Strides[r]), i64(src.Strides[r]))
}

// Matmul computes dst = a @ b for 2-D operands, or batched over the leading
// dimension of 3-D ones (a 2-D b is shared by every batch).
func (d *Device) Matmul(dst, a, b tensor.Strided) error {
	const op = "Matmul"
	od, err := d.output(op, dst)
	if err != nil {
		return err
	}
	oa, err := d.check(op, "a", a)
	if err != nil {
		return err
	}
	ob, err := d.check(op, "b", b)
	if err != nil {
		return err
	}
	ra, rb, rd := len(a.Shape), len(b.Shape), len(dst.Shape)
	if !(ra == 2 && rb == 2 && rd == 2) && !(ra == 3 && (rb == 3 || rb == 2) && rd == 3) {
		return fmt.Errorf("device/cuda: Matmul: ranks a %d, b %d, dst %d; want 2-D operands or a batch of them (3-D)", ra, rb, rd)
	}
	B, M, K := 1, a.Shape[ra-2], a.Shape[ra-1]
	K2, N := b.Shape[rb-2], b.Shape[rb-1]
	asb, bsb, csb := 0, 0, 0
	if ra == 3 {
		B, asb, csb = a.Shape[0], a.Strides[0], dst.Strides[0]
		if rb == 3 {
			if b.Shape[0] != B {
				return fmt.Errorf("device/cuda: Matmul: batch sizes differ: a %v, b %v", a.Shape, b.Shape)
			}
			bsb = b.Strides[0]
		}
	}
	if K != K2 {
		return fmt.Errorf("device/cuda: Matmul: mat1 and mat2 shapes cannot be multiplied (%dx%d and %dx%d)", M, K, K2, N)
	}
	want := []int{M, N}
	if rd == 3 {
		want = []int{B, M, N}
	}
	if !sameShape(dst.Shape, want) {
		return fmt.Errorf("device/cuda: Matmul: dst shape %v, want %v", dst.Shape, want)
	}
	sfx := floatSuffix(a.DType)
	if sfx == "" || floatSuffix(b.DType) == "" || !dst.DType.IsFloat() {
		// Integer matmul (int64 accumulation) as the CPU reference does it.
		if err := checkOverlap(op, "a", od, oa, false); err != nil {
			return err
		}
		if err := checkOverlap(op, "b", od, ob, false); err != nil {
			return err
		}
		return d.onHost([]operand{od}, []operand{oa, ob}, func(k tensor.Kernels, t []tensor.Strided) error {
			return k.Matmul(t[0], t[1], t[2])
		})
	}
	if b.DType != a.DType {
		return fmt.Errorf("device/cuda: Matmul: dtypes a %v, b %v differ", a.DType, b.DType)
	}
	if dst.DType != a.DType && dst.DType != tensor.Float32 {
		return fmt.Errorf("device/cuda: Matmul: dst dtype %v; want %v or float32", dst.DType, a.DType)
	}
	if B > 65535 {
		return fmt.Errorf("device/cuda: Matmul: batch %d exceeds 65535", B)
	}
	if od.n == 0 {
		return nil
	}
	if err := checkOverlap(op, "a", od, oa, false); err != nil {
		return err
	}
	if err := checkOverlap(op, "b", od, ob, false); err != nil {
		return err
	}
	if K == 0 {
		return d.Fill(dst, 0)
	}
	if done, err := d.matmulCUBLAS(dst, a, b, od, oa, ob, B, M, N, K, asb, bsb, csb); done || err != nil {
		return err
	}
	grid := [3]uint32{uint32((N + 127) / 128), uint32((M + 127) / 128), uint32(B)}
	if a.DType != tensor.Float32 {
		// Tensor cores; 16-byte vector loads where the layout allows.
		avec := a.Strides[ra-1] == 1 && a.Strides[ra-2]%8 == 0 && oa.start%16 == 0 && K%8 == 0 && (B == 1 || asb%8 == 0)
		bvec := b.Strides[rb-1] == 1 && b.Strides[rb-2]%8 == 0 && ob.start%16 == 0 && N%8 == 0 && (B == 1 || bsb%8 == 0)
		return d.launch("matmul_tc_"+sfx, grid, block256,
			u64(oa.start), u64(ob.start), u64(od.start), i32(int(dst.DType)), i64(M), i64(N), i64(K),
			i64(asb), i64(a.Strides[ra-2]), i64(a.Strides[ra-1]),
			i64(bsb), i64(b.Strides[rb-2]), i64(b.Strides[rb-1]),
			i64(csb), i64(dst.Strides[rd-2]), i64(dst.Strides[rd-1]), i32(b2i(avec)), i32(b2i(bvec)))
	}
	return d.launch("matmul_"+sfx, grid, block256,
		u64(oa.start), u64(ob.start), u64(od.start), i32(int(dst.DType)), i64(M), i64(N), i64(K),
		i64(asb), i64(a.Strides[ra-2]), i64(a.Strides[ra-1]),
		i64(bsb), i64(b.Strides[rb-2]), i64(b.Strides[rb-1]),
		i64(csb), i64(dst.Strides[rd-2]), i64(dst.Strides[rd-1]))
}

// Embedding gathers rows of weight selected by idx into dst. An index out of
// range is an error (found by the kernel; the call then synchronises).
func (d *Device) Embedding(dst, weight, idx tensor.Strided) error {
	const op = "Embedding"
	od, err := d.output(op, dst)
	if err != nil {
		return err
	}
	ow, err := d.check(op, "weight", weight)
	if err != nil {
		return err
	}
	oi, err := d.check(op, "idx", idx)
	if err != nil {
		return err
	}
	if len(weight.Shape) != 2 {
		return fmt.Errorf("device/cuda: Embedding: weight must be 2-D, got shape %v", weight.Shape)
	}
	if idx.DType != tensor.Int32 && idx.DType != tensor.Int64 {
		return fmt.Errorf("device/cuda: Embedding: idx must be int32 or int64, got %v", idx.DType)
	}
	want := append(append([]int(nil), idx.Shape...), weight.Shape[1])
	if !sameShape(dst.Shape, want) {
		return fmt.Errorf("device/cuda: Embedding: dst shape %v, want %v (idx %v, weight %v)", dst.Shape, want, idx.Shape, weight.Shape)
	}
	if dst.DType != weight.DType {
		return fmt.Errorf("device/cuda: Embedding: dst dtype %v differs from weight's %v", dst.DType, weight.DType)
	}
	if od.n == 0 || oi.n == 0 {
		return nil
	}
	if err := checkOverlap(op, "weight", od, ow, false); err != nil {
		return err
	}
	if err := checkOverlap(op, "idx", od, oi, false); err != nil {
		return err
	}
	V, D := weight.Shape[0], weight.Shape[1]
	if V == 0 {
		return fmt.Errorf("device/cuda: Embedding: index out of range in self (weight has 0 rows)")
	}
	r := len(dst.Shape) - 1
	threads := (D + 31) / 32 * 32
	if threads > 256 {
		threads = 256
	}
	g := oi.n
	if g > 1<<20 {
		g = 1 << 20
	}
	err = d.launch("embedding_rows", [3]uint32{uint32(g), 1, 1}, [3]uint32{uint32(threads), 1, 1},
		dsc(desc(dst, withLast(dst.Shape), dst.Strides)), i64(dst.Strides[r]), dsc(desc(idx, idx.Shape, idx.Strides)),
		u64(ow.start), i64(V), i64(D), i64(weight.Strides[0]), i64(weight.Strides[1]), i64(oi.n))
	if err != nil {
		return err
	}
	var flag [4]byte
	err = d.do(func() error {
		if err := d.drv.memcpyDtoH(unsafe.Pointer(&flag[0]), d.errWord, 4); err != nil {
			return err
		}
		if binary.LittleEndian.Uint32(flag[:]) == 0 {
			return nil
		}
		var zero [4]byte
		return d.drv.memcpyHtoD(d.errWord, unsafe.Pointer(&zero[0]), 4)
	})
	if err != nil {
		return err
	}
	if binary.LittleEndian.Uint32(flag[:]) != 0 {
		return fmt.Errorf("device/cuda: Embedding: index out of range in self (weight has %d rows)", V)
	}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
