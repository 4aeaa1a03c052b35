package tensor

import "fmt"

// --- copies --------------------------------------------------------------------

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

// Clone returns a copy of t in new memory. Like PyTorch's clone() it keeps the
// strides of a dense tensor (a transposed tensor's clone is transposed too) and
// makes other layouts contiguous.
func (t *Tensor) Clone() (*Tensor, error) {
	if err := t.live("clone"); err != nil {
		return nil, err
	}
	return t.copyAs("clone", "CloneBackward0", t.dtype, preserveLayout(t.layout))
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
	return t.copyAs("to", "ToCopyBackward0", dtype, preserveLayout(t.layout))
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

// --- reductions and normalisations --------------------------------------------

func (t *Tensor) reduce(op ReduceOp, name, gradFn string, dim int, keepdim bool) (*Tensor, error) {
	dev, err := inputs(name, t)
	if err != nil {
		return nil, err
	}
	d, err := WrapDim(dim, t.Dim())
	if err != nil {
		return nil, err
	}
	if t.Dim() == 0 {
		return t.copyAs(name, gradFn, t.dtype, ContiguousLayout())
	}
	if op == Max && t.layout.Shape[d] == 0 {
		return nil, indexErr(name, "max(): Expected reduction dim %d to have non-zero size.", d)
	}
	kshape := t.layout.Shape.Clone()
	kshape[d] = 1
	kl := ContiguousLayout(kshape...) // the kernel's output keeps dim, with size 1
	l := kl
	if !keepdim {
		l, _ = kl.Squeeze(d)
	}
	out, err := alloc(name, dev, t.dtype, l)
	if err != nil {
		return nil, err
	}
	if err := out.run(name, func() error { return dev.Reduce(op, stridedOf(out.storage.ptr, out.dtype, kl), t.strided(), d) }); err != nil {
		return nil, out.releaseAfter(err)
	}
	return finish(out, gradFn, []*Tensor{t})
}

// Sum returns the sums along dim, which is removed unless keepdim. Unlike
// PyTorch, integer tensors sum in their own dtype rather than int64.
func (t *Tensor) Sum(dim int, keepdim bool) (*Tensor, error) {
	return t.reduce(Sum, "sum", "SumBackward1", dim, keepdim)
}

// Max returns the largest values along dim, which is removed unless keepdim
// (the values of PyTorch's max(dim); memlab returns no indices).
func (t *Tensor) Max(dim int, keepdim bool) (*Tensor, error) {
	return t.reduce(Max, "max", "MaxBackward0", dim, keepdim)
}

// Softmax returns the softmax of t along dim in a new contiguous tensor. On a
// tape it saves its output.
func (t *Tensor) Softmax(dim int) (*Tensor, error) {
	const op = "softmax"
	dev, err := inputs(op, t)
	if err != nil {
		return nil, err
	}
	if err := needFloat(op, t); err != nil {
		return nil, err
	}
	d, err := WrapDim(dim, t.Dim())
	if err != nil {
		return nil, err
	}
	out, err := alloc(op, dev, t.dtype, ContiguousLayout(t.layout.Shape...))
	if err != nil {
		return nil, err
	}
	src, dst := t.layout, out.layout
	if t.Dim() == 0 {
		src, _ = src.Unsqueeze(0)
		dst, _ = dst.Unsqueeze(0)
	} else if last := t.Dim() - 1; d != last {
		// The kernel works along the last dimension: hand it views with dim
		// moved there.
		src, _ = src.Transpose(d, last)
		dst, _ = dst.Transpose(d, last)
	}
	if err := out.run(op, func() error {
		return dev.Softmax(stridedOf(out.storage.ptr, out.dtype, dst), stridedOf(t.storage.ptr, t.dtype, src))
	}); err != nil {
		return nil, out.releaseAfter(err)
	}
	return finish(out, "SoftmaxBackward0", []*Tensor{t}, out)
}

// LayerNorm normalises t over its last dimension and applies the 1-D gamma and
// beta, whose size is that dimension (F.layer_norm(t, gamma.shape, gamma, beta,
// eps)). On a tape it saves t, gamma and beta.
func (t *Tensor) LayerNorm(gamma, beta *Tensor, eps float64) (*Tensor, error) {
	const op = "layer_norm"
	dev, err := inputs(op, t, gamma, beta)
	if err != nil {
		return nil, err
	}
	if err := needFloat(op, t); err != nil {
		return nil, err
	}
	if gamma.Dim() != 1 {
		return nil, fmt.Errorf("tensor: %s: gamma must be 1-D, got shape %v", op, gamma.layout.Shape)
	}
	ns := gamma.layout.Shape
	if t.Dim() < 1 || t.layout.Shape[t.Dim()-1] != ns[0] {
		return nil, torchErr(op, "Given normalized_shape=%v, expected input with shape [*, %d], but got input of size%v", ns, ns[0], t.layout.Shape)
	}
	if !beta.layout.Shape.Equal(ns) {
		return nil, torchErr(op, "Expected bias to be of same shape as normalized_shape, but got bias of shape %v and normalized_shape = %v", beta.layout.Shape, ns)
	}
	if err := sameDType(op, t, gamma); err != nil {
		return nil, err
	}
	if err := sameDType(op, t, beta); err != nil {
		return nil, err
	}
	out, err := alloc(op, dev, t.dtype, ContiguousLayout(t.layout.Shape...))
	if err != nil {
		return nil, err
	}
	if err := out.run(op, func() error {
		return dev.LayerNorm(out.strided(), t.strided(), gamma.strided(), beta.strided(), eps)
	}); err != nil {
		return nil, out.releaseAfter(err)
	}
	return finish(out, "NativeLayerNormBackward0", []*Tensor{t, gamma, beta}, t, gamma, beta)
}

// --- matmul, embedding, cat -----------------------------------------------------

// cppTypeName is the C++ scalar type PyTorch's matmul messages print.
func cppTypeName(d DType) string {
	return map[DType]string{Float32: "float", Float16: "c10::Half", BFloat16: "c10::BFloat16", Int32: "int", Int64: "long int", Uint8: "unsigned char", Bool: "bool"}[d]
}

// Matmul returns the matrix product t @ o for 2-D operands, batched for 3-D
// ones (a 2-D operand is broadcast over the batch; batch sizes of 1
// broadcast). Float16 and BFloat16 inputs accumulate in float32. On a tape it
// saves both inputs.
func (t *Tensor) Matmul(o *Tensor) (*Tensor, error) {
	const op = "matmul"
	dev, err := inputs(op, t, o)
	if err != nil {
		return nil, err
	}
	if t.dtype != o.dtype {
		return nil, torchErr(op, "expected mat1 and mat2 to have the same dtype, but got: %s != %s", cppTypeName(t.dtype), cppTypeName(o.dtype))
	}
	if t.Dim() < 2 || t.Dim() > 3 || o.Dim() < 2 || o.Dim() > 3 {
		return nil, fmt.Errorf("tensor: %s: memlab multiplies 2-D and 3-D tensors, got %d-D and %d-D", op, t.Dim(), o.Dim())
	}
	a, b := t.layout, o.layout
	if a.Dim() == 2 && b.Dim() == 2 {
		m, k, k2, n := a.Shape[0], a.Shape[1], b.Shape[0], b.Shape[1]
		if k != k2 {
			return nil, torchErr(op, "mat1 and mat2 shapes cannot be multiplied (%dx%d and %dx%d)", m, k, k2, n)
		}
		return t.matmul(dev, o, a, b, Shape{m, n}, "MmBackward0")
	}
	if a.Dim() == 3 && b.Dim() == 2 {
		bt, m, k := a.Shape[0], a.Shape[1], a.Shape[2]
		if k != b.Shape[0] {
			return nil, torchErr(op, "mat1 and mat2 shapes cannot be multiplied (%dx%d and %dx%d)", bt*m, k, b.Shape[0], b.Shape[1])
		}
		b, _ = b.Expand(bt, b.Shape[0], b.Shape[1])
		return t.matmul(dev, o, a, b, Shape{bt, m, b.Shape[2]}, "UnsafeViewBackward0")
	}
	if a.Dim() == 2 {
		a, _ = a.Unsqueeze(0)
	}
	batch, err := BroadcastShapes(a.Shape[:1], b.Shape[:1])
	if err != nil {
		return nil, err
	}
	if a.Shape[2] != b.Shape[1] {
		return nil, torchErr(op, "Expected size for first two dimensions of batch2 tensor to be: [%d, %d] but got: [%d, %d].", batch[0], a.Shape[2], batch[0], b.Shape[1])
	}
	a, _ = a.Expand(batch[0], a.Shape[1], a.Shape[2])
	b, _ = b.Expand(batch[0], b.Shape[1], b.Shape[2])
	return t.matmul(dev, o, a, b, Shape{batch[0], a.Shape[1], b.Shape[2]}, "BmmBackward0")
}

func (t *Tensor) matmul(dev Device, o *Tensor, a, b Layout, shape Shape, gradFn string) (*Tensor, error) {
	const op = "matmul"
	out, err := alloc(op, dev, t.dtype, ContiguousLayout(shape...))
	if err != nil {
		return nil, err
	}
	if err := out.run(op, func() error {
		return dev.Matmul(out.strided(), stridedOf(t.storage.ptr, t.dtype, a), stridedOf(o.storage.ptr, o.dtype, b))
	}); err != nil {
		return nil, out.releaseAfter(err)
	}
	return finish(out, gradFn, []*Tensor{t, o}, t, o)
}

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
	d, err := WrapDim(dim, first.Dim())
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
