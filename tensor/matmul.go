package tensor

import (
	"errors"
	"fmt"
)

// cppTypeName is the C++ scalar type PyTorch's matmul messages print.
func cppTypeName(d DType) string {
	return map[DType]string{Float32: "float", Float16: "c10::Half", BFloat16: "c10::BFloat16", Int32: "int", Int64: "long int", Uint8: "unsigned char", Bool: "bool"}[d]
}

// Matmul returns the matrix product t @ o with torch.matmul's rules: 1-D
// operands are vectors (a dot product, a matrix-vector product), 2-D operands
// matrices, and operands of more dimensions stacks of matrices whose leading
// (batch) dimensions broadcast. Float16 and BFloat16 inputs accumulate in
// float32. Stacks whose batch dimensions cannot be flattened without copying
// are copied first, into temporary allocations, as PyTorch's reshape would.
// On a tape it saves both inputs.
func (t *Tensor) Matmul(o *Tensor) (*Tensor, error) {
	return t.matmul(o, nil)
}

// MatmulInto writes a @ b into out, as torch.matmul(a, b, out=out) does: the
// product follows Matmul's rules and allocates no result (only the temporary
// copies Matmul makes of batches it cannot flatten, and one when out itself
// cannot be viewed as a flat batch of matrices). out must have the result's
// shape and dtype (PyTorch would resize an out of another shape, with a
// warning; memlab reports it instead, since an out= buffer exists so as not
// to allocate), must not share memory with a or b, and must not have two
// elements at one address. As in PyTorch, an out= form records no gradient:
// inputs watched by a Tape are refused. Every mistake is an error naming it;
// out is then unchanged.
func MatmulInto(out, a, b *Tensor) error {
	if out == nil || a == nil || b == nil {
		return errors.New("tensor: matmul: MatmulInto of a nil tensor")
	}
	_, err := a.matmul(b, out)
	return err
}

// matmul is Matmul (into a new tensor) when out is nil, MatmulInto otherwise.
func (t *Tensor) matmul(o, into *Tensor) (*Tensor, error) {
	const op = "matmul"
	ins := []*Tensor{t, o}
	if into != nil {
		ins = append(ins, into)
	}
	dev, err := inputs(op, ins...)
	if err != nil {
		return nil, err
	}
	if t.dtype != o.dtype {
		return nil, torchErr(op, "expected mat1 and mat2 to have the same dtype, but got: %s != %s", cppTypeName(t.dtype), cppTypeName(o.dtype))
	}
	da, db := t.Dim(), o.Dim()
	if da == 0 || db == 0 {
		return nil, torchErr(op, "both arguments to matmul need to be at least 1D, but they are %dD and %dD", da, db)
	}
	// Matrices a [.., m, k] and b [.., k, n], vectors made matrices.
	a, b := t.layout, o.layout
	if da == 1 {
		a, _ = a.Unsqueeze(0)
	}
	if db == 1 {
		b, _ = b.Unsqueeze(1)
	}
	m, k := a.Shape[a.Dim()-2], a.Shape[a.Dim()-1]
	k2, n := b.Shape[b.Dim()-2], b.Shape[b.Dim()-1]
	batch, err := broadcastShapes(op, a.Shape[:a.Dim()-2], b.Shape[:b.Dim()-2])
	if err != nil {
		return nil, err
	}
	nb := batch.Numel()
	if k != k2 {
		switch {
		case da == 1 && db == 1:
			return nil, torchErr(op, "inconsistent tensor size, expected tensor [%d] and src [%d] to have the same number of elements, but got %d and %d elements respectively", k, k2, k, k2)
		case da == 2 && db == 1:
			return nil, torchErr(op, "size mismatch, got input (%d), mat (%dx%d), vec (%d)", m, m, k, k2)
		case db <= 2 && (da == 2 || foldsIntoRows(t.layout)):
			// PyTorch folds the batch of t into its rows and calls mm.
			return nil, torchErr(op, "mat1 and mat2 shapes cannot be multiplied (%dx%d and %dx%d)", nb*m, k, k2, n)
		default:
			return nil, torchErr(op, "Expected size for first two dimensions of batch2 tensor to be: [%d, %d] but got: [%d, %d].", nb, k, nb, k2)
		}
	}
	// The result's shape: batch, then m unless t is a vector, then n unless
	// o is one.
	shape := batch.Clone()
	if da > 1 {
		shape = append(shape, m)
	}
	if db > 1 {
		shape = append(shape, n)
	}
	if len(shape) > MaxRank {
		return nil, fmt.Errorf("tensor: %s: result would have %d dimensions, more than %d", op, len(shape), MaxRank)
	}
	if into != nil {
		if err := checkOut(op, into, shape, t, o); err != nil {
			return nil, err
		}
	}
	// Flatten the batch into one dimension for the kernel, copying an operand
	// whose expanded batch cannot be viewed that way.
	fa, tmpA, err := t.batched(op, a, batch, nb)
	if err != nil {
		return nil, err
	}
	defer tmpA()
	fb, tmpB, err := o.batched(op, b, batch, nb)
	if err != nil {
		return nil, err
	}
	defer tmpB()
	if into != nil {
		return into, matmulInto(op, into, shape, fa, fb, nb, m, n)
	}
	out, err := alloc(op, dev, t.dtype, ContiguousLayout(shape...))
	if err != nil {
		return nil, err
	}
	dst := ContiguousLayout(nb, m, n)
	if err := out.run(op, func() error {
		return dev.Matmul(stridedOf(out.storage.ptr, out.dtype, dst), fa, fb)
	}); err != nil {
		return nil, out.releaseAfter(err)
	}
	gradFn := "MmBackward0"
	switch {
	case da == 1 && db == 1:
		gradFn = "DotBackward0"
	case da == 2 && db == 1:
		gradFn = "MvBackward0"
	case da > 2 || db > 2:
		gradFn = "BmmBackward0"
	}
	return finish(out, gradFn, []*Tensor{t, o}, t, o)
}

// foldsIntoRows reports whether PyTorch's matmul folds the batch dimensions
// of l (3-D or more, times a matrix or vector) into the rows of one matrix
// for mm (its should_fold): when l has no elements, or when l.view(-1,
// l.size(-1)) needs no copy (each leading stride is the next one times the
// next size). Otherwise it calls bmm, whose messages differ.
func foldsIntoRows(l Layout) bool {
	if l.Numel() == 0 {
		return true
	}
	for i := 0; i < l.Dim()-2; i++ {
		if l.Strides[i] != l.Strides[i+1]*l.Shape[i+1] {
			return false
		}
	}
	return true
}

// batched returns matrix layout l of t (batch dims then two) broadcast to batch
// and flattened to [nb, rows, cols] for the kernel, with a function that frees
// the temporary copy made when the flattening needs one.
func (t *Tensor) batched(op string, l Layout, batch Shape, nb int) (Strided, func(), error) {
	rows, cols := l.Shape[l.Dim()-2], l.Shape[l.Dim()-1]
	full := append(batch.Clone(), rows, cols)
	e, err := l.Expand(full...)
	if err != nil {
		return Strided{}, nil, err
	}
	if f, err := e.View(nb, rows, cols); err == nil {
		return stridedOf(t.storage.ptr, t.dtype, f), func() {}, nil
	}
	tmp, err := alloc(op, t.storage.dev, t.dtype, ContiguousLayout(nb, rows, cols))
	if err != nil {
		return Strided{}, nil, err
	}
	if err := copyInto(op, tmp, ContiguousLayout(full...), t, e); err != nil {
		return Strided{}, nil, tmp.releaseAfter(err)
	}
	return tmp.strided(), func() { _ = tmp.Release() }, nil
}

// checkOut checks an out= tensor of op against the result's shape and
// dtype (that of the inputs), the inputs' memory and any tape, with PyTorch's
// messages where PyTorch has one.
func checkOut(op string, out *Tensor, shape Shape, ins ...*Tensor) error {
	if tp := tapeOf(append([]*Tensor{out}, ins...)...); tp != nil && !tp.isReleased() {
		return torchErr(op, "%s(): functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad.", op)
	}
	if out.dtype != ins[0].dtype {
		return torchErr(op, "Expected out tensor to have dtype %s, but got %s instead", cppTypeName(ins[0].dtype), cppTypeName(out.dtype))
	}
	if !out.layout.Shape.Equal(shape) {
		return fmt.Errorf("tensor: %s: out has shape %v, the result has shape %v (PyTorch would resize out with a warning; memlab does not reallocate an out= tensor)", op, out.layout.Shape, shape)
	}
	if err := out.writable(op); err != nil {
		return err
	}
	for _, in := range ins {
		if overlapOf(out, in) != noOverlap {
			return torchErr(op, "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation.")
		}
	}
	return nil
}

// matmulInto runs the product of the flattened operands fa [nb, m, k] and fb
// into out, whose shape checkOut has checked. Where out's layout cannot be
// viewed as [nb, m, n] the product goes to a temporary copy first, as
// PyTorch computes into a contiguous result and copies it to a strided out.
func matmulInto(op string, out *Tensor, shape Shape, fa, fb Strided, nb, m, n int) error {
	if out.Numel() == 0 {
		return nil
	}
	dev := out.storage.dev
	if dst, err := out.layout.View(nb, m, n); err == nil {
		if err := out.run(op, func() error { return dev.Matmul(stridedOf(out.storage.ptr, out.dtype, dst), fa, fb) }); err != nil {
			return err
		}
	} else {
		tmp, err := alloc(op, dev, out.dtype, ContiguousLayout(nb, m, n))
		if err != nil {
			return err
		}
		defer func() { _ = tmp.Release() }()
		if err := tmp.run(op, func() error { return dev.Matmul(tmp.strided(), fa, fb) }); err != nil {
			return err
		}
		if err := copyInto(op, out, out.layout, tmp, ContiguousLayout(shape...)); err != nil {
			return err
		}
	}
	out.storage.bump()
	return nil
}
