package tensor

import "fmt"

// Copies: between layouts (Contiguous, Clone, Reshape), dtypes (To), into an
// existing tensor (CopyFrom), and gathers of several tensors or rows (Cat,
// Embedding).

// copyInto runs the Copy kernel from src (any layout) into dst.
func copyInto(op string, dst *Tensor, dl Layout, src *Tensor, sl Layout) error {
	if dl.Numel() == 0 {
		return nil
	}
	if err := dst.storage.dev.Copy(stridedOf(dst.storage.ptr, dst.dtype, dl), stridedOf(src.storage.ptr, src.dtype, sl)); err != nil {
		return fmt.Errorf("tensor: %s on %v: %w", op, dst.storage.dev, err)
	}
	return nil
}

// copyAs returns a new tensor of layout l and dtype holding t's values.
func (t *Tensor) copyAs(op, gradFn string, dtype DType, l Layout) (*Tensor, error) {
	dev, err := inputs(op, t)
	if err != nil {
		return nil, err
	}
	out, err := alloc(op, dev, dtype, l)
	if err != nil {
		return nil, err
	}
	if err := copyInto(op, out, l, t, t.layout); err != nil {
		return nil, out.releaseAfter(err)
	}
	return finish(out, gradFn, []*Tensor{t})
}

// sameHandle returns a new handle to t itself (same layout and autograd
// identity): what PyTorch returns when an operation has nothing to do.
func (t *Tensor) sameHandle(op string) (*Tensor, error) {
	v, err := t.alias(op, t.layout.clone(), "")
	if err != nil {
		return nil, err
	}
	v.grad = t.grad // the same tensor to autograd
	return v, nil
}

// Contiguous returns t's values in row-major layout. When t is already
// contiguous it returns a new handle to the same storage and allocates nothing;
// otherwise it copies into a new allocation (what makes x.t().contiguous()
// cost memory).
func (t *Tensor) Contiguous() (*Tensor, error) {
	if err := t.live("contiguous"); err != nil {
		return nil, err
	}
	if t.IsContiguous() {
		return t.sameHandle("contiguous")
	}
	return t.copyAs("contiguous", "CloneBackward0", t.dtype, ContiguousLayout(t.layout.Shape...))
}

// Clone returns a copy of t in new memory, laid out as PyTorch's clone() does
// (see CloneLayout): a transposed tensor's clone is transposed too, and a
// strided slice's clone is dense with its dimensions in the same order.
func (t *Tensor) Clone() (*Tensor, error) {
	if err := t.live("clone"); err != nil {
		return nil, err
	}
	return t.copyAs("clone", "CloneBackward0", t.dtype, CloneLayout(t.layout))
}

// To returns t converted to dtype in new memory (rounding to nearest for
// float16 and bfloat16, truncating toward zero for integers), or a new handle
// to t itself when it already has that dtype.
func (t *Tensor) To(dtype DType) (*Tensor, error) {
	if err := t.live("to"); err != nil {
		return nil, err
	}
	if !dtype.Valid() {
		return nil, fmt.Errorf("tensor: to: invalid dtype %v", dtype)
	}
	if dtype == t.dtype {
		return t.sameHandle("to")
	}
	return t.copyAs("to", "ToCopyBackward0", dtype, CloneLayout(t.layout))
}

// Reshape returns t with a new shape (one size may be -1): a view when View
// would succeed, otherwise a contiguous copy in a new allocation.
func (t *Tensor) Reshape(shape ...int) (*Tensor, error) {
	if err := t.live("reshape"); err != nil {
		return nil, err
	}
	l, cp, err := t.layout.Reshape(shape...)
	if err != nil {
		return nil, err
	}
	if !cp {
		return t.alias("reshape", l, "ViewBackward0")
	}
	out, err := alloc("reshape", t.storage.dev, t.dtype, l)
	if err != nil {
		return nil, err
	}
	// The new tensor's memory, read row-major in t's shape, is t's values.
	if err := copyInto("reshape", out, ContiguousLayout(t.layout.Shape...), t, t.layout); err != nil {
		return nil, out.releaseAfter(err)
	}
	return finish(out, "UnsafeViewBackward0", []*Tensor{t})
}

// CopyFrom copies src's values into t in place (t.copy_(src)), broadcasting
// src to t's shape and converting its dtype.
func (t *Tensor) CopyFrom(src *Tensor) error {
	const op = "copy_"
	if _, err := inputs(op, t, src); err != nil {
		return err
	}
	desc := torchTypeName(src.dtype) + "{" + src.layout.Shape.String() + "}"
	if _, err := src.layout.expand(desc, t.layout.Shape); err != nil {
		return err
	}
	if err := t.writable(op); err != nil {
		return err
	}
	in, done, err := safeInput(op, t, src)
	if err != nil {
		return err
	}
	defer done()
	sl, err := in.layout.expand(desc, t.layout.Shape)
	if err != nil {
		return err
	}
	if err := copyInto(op, t, t.layout, in, sl); err != nil {
		return err
	}
	return t.inPlaceDone("CopyBackwards", []*Tensor{t, src})
}

// --- gathers ------------------------------------------------------------------

// Embedding gathers the rows of the 2-D weight selected by idx (Int32 or
// Int64), giving idx's shape plus weight's last dimension
// (F.embedding(idx, weight)). On a tape it saves idx.
func Embedding(weight, idx *Tensor) (*Tensor, error) {
	const op = "embedding"
	dev, err := inputs(op, weight, idx)
	if err != nil {
		return nil, err
	}
	if idx.dtype != Int64 && idx.dtype != Int32 {
		return nil, torchErr(op, "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got %s instead (while checking arguments for embedding)", torchTypeName(idx.dtype))
	}
	if weight.Dim() != 2 {
		return nil, torchErr(op, "'weight' must be 2-D")
	}
	shape := append(idx.layout.Shape.Clone(), weight.layout.Shape[1])
	if len(shape) > MaxRank {
		return nil, fmt.Errorf("tensor: %s: result would have %d dimensions, more than %d", op, len(shape), MaxRank)
	}
	out, err := alloc(op, dev, weight.dtype, ContiguousLayout(shape...))
	if err != nil {
		return nil, err
	}
	if err := out.run(op, func() error { return dev.Embedding(out.strided(), weight.strided(), idx.strided()) }); err != nil {
		return nil, out.releaseAfter(err)
	}
	return finish(out, "EmbeddingBackward0", []*Tensor{weight, idx}, idx)
}

// Cat concatenates tensors along dim into a new tensor, copying each into its
// slice of the result (torch.cat). All must have the same dtype and the same
// sizes except along dim.
func Cat(tensors []*Tensor, dim int) (*Tensor, error) {
	const op = "cat"
	if len(tensors) == 0 {
		return nil, torchErr(op, "torch.cat(): expected a non-empty list of Tensors")
	}
	dev, err := inputs(op, tensors...)
	if err != nil {
		return nil, err
	}
	first := tensors[0]
	for i, t := range tensors {
		if t.Dim() == 0 {
			return nil, torchErr(op, "zero-dimensional tensor (at position %d) cannot be concatenated", i)
		}
		if t.Dim() != first.Dim() {
			return nil, torchErr(op, "Tensors must have same number of dimensions: got %d and %d", first.Dim(), t.Dim())
		}
		if err := sameDType(op, first, t); err != nil {
			return nil, err
		}
	}
	d, err := wrapDim(op, dim, first.Dim())
	if err != nil {
		return nil, err
	}
	shape := first.layout.Shape.Clone()
	shape[d] = 0
	for i, t := range tensors {
		for k, s := range t.layout.Shape {
			if k != d && s != first.layout.Shape[k] {
				return nil, torchErr(op, "Sizes of tensors must match except in dimension %d. Expected size %d but got size %d for tensor number %d in the list.", d, first.layout.Shape[k], s, i)
			}
		}
		shape[d] += t.layout.Shape[d]
	}
	out, err := alloc(op, dev, first.dtype, ContiguousLayout(shape...))
	if err != nil {
		return nil, err
	}
	at := 0
	for _, t := range tensors {
		part, _ := out.layout.Narrow(d, at, t.layout.Shape[d])
		if err := copyInto(op, out, part, t, t.layout); err != nil {
			return nil, out.releaseAfter(err)
		}
		at += t.layout.Shape[d]
	}
	return finish(out, "CatBackward0", tensors)
}
