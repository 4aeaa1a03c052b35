package tensor

import (
	"errors"
	"fmt"
)

// Reductions along one dimension, softmax and layer norm.

func (t *Tensor) reduce(op ReduceOp, name, gradFn string, dim int, keepdim bool) (*Tensor, error) {
	dev, err := inputs(name, t)
	if err != nil {
		return nil, err
	}
	d, err := wrapDim(name, dim, t.Dim())
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
	return t.softmax(dim, nil)
}

// SoftmaxInto writes the softmax of t along dim into out, as
// torch.softmax(t, dim, out=out) does, allocating nothing. out must have t's
// shape and dtype, no element at another's address, and no memory shared
// with t (memlab has no in-place softmax: use a second buffer).
// As in PyTorch, an out= form records no gradient: tensors watched by a Tape
// are refused. Every mistake is an error naming it; out is then unchanged.
func SoftmaxInto(out, t *Tensor, dim int) error {
	if out == nil || t == nil {
		return errors.New("tensor: softmax: SoftmaxInto of a nil tensor")
	}
	_, err := t.softmax(dim, out)
	return err
}

// softmax is Softmax (into a new tensor) when into is nil, SoftmaxInto
// otherwise.
func (t *Tensor) softmax(dim int, into *Tensor) (*Tensor, error) {
	const op = "softmax"
	ins := []*Tensor{t}
	if into != nil {
		ins = append(ins, into)
	}
	dev, err := inputs(op, ins...)
	if err != nil {
		return nil, err
	}
	if err := needFloat(op, t); err != nil {
		return nil, err
	}
	d, err := wrapDim(op, dim, t.Dim())
	if err != nil {
		return nil, err
	}
	out := into
	if into != nil {
		if err := checkOut(op, into, t.layout.Shape, t); err != nil {
			return nil, err
		}
	} else if out, err = alloc(op, dev, t.dtype, ContiguousLayout(t.layout.Shape...)); err != nil {
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
		if into != nil {
			return nil, err
		}
		return nil, out.releaseAfter(err)
	}
	if into != nil {
		into.storage.bump()
		return into, nil
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
