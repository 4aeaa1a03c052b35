package tensor

import (
	"fmt"
	"slices"
)

// Every operation that produces a new tensor allocates its output through
// Device.Allocate, so the memory cost of each step shows in the allocator.
// In-place operations (the methods ending in _) write into their receiver, bump
// its storage's version counter and allocate nothing, except a temporary copy
// of an input that might overlap the output in a way memlab cannot rule out,
// and the copy of the overwritten value a Tape may need (originalSelf).

// sameDevice reports whether a and b are the same device, without panicking on
// a Device implementation that is not comparable.
func sameDevice(a, b Device) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

// inputs checks that every tensor is live and all are on one device.
func inputs(op string, ts ...*Tensor) (Device, error) {
	for _, t := range ts {
		if err := t.live(op); err != nil {
			return nil, err
		}
	}
	dev := ts[0].storage.dev
	for _, t := range ts[1:] {
		if !sameDevice(dev, t.storage.dev) {
			a, b := dev.String(), t.storage.dev.String()
			if a == b { // two devices of one name, such as the devices of two labs
				b = "another " + b + " (a different device of the same name, such as another lab's)"
			}
			return nil, torchErr(op, "Expected all tensors to be on the same device, but found at least two devices, %s and %s!", a, b)
		}
	}
	return dev, nil
}

func sameDType(op string, a, b *Tensor) error {
	if a.dtype != b.dtype {
		return fmt.Errorf("tensor: %s: expected tensors of one dtype, got %v and %v (memlab does not promote types: convert one with To)", op, a.dtype, b.dtype)
	}
	return nil
}

func needFloat(op string, t *Tensor) error {
	if !t.dtype.IsFloat() {
		return fmt.Errorf("tensor: %s: expected a floating-point tensor, got %v", op, t.dtype)
	}
	return nil
}

// alloc allocates a new tensor of layout l (which must be dense from offset 0).
func alloc(op string, dev Device, dtype DType, l Layout) (*Tensor, error) {
	s, err := newStorage(dev, int64(l.Numel())*int64(dtype.Size()))
	if err != nil {
		return nil, fmt.Errorf("tensor: %s: %w", op, err)
	}
	return newTensor(s, l, dtype), nil
}

// finish makes out a result of the operation: it joins the scope of its
// inputs, and, when one of them is watched, is recorded on the tape as the
// output of gradFn, which saves the tensors listed.
func finish(out *Tensor, gradFn string, ins []*Tensor, saved ...*Tensor) (*Tensor, error) {
	out.inherit(gradFn, ins...)
	if err := record(gradFn, ins, saved...); err != nil {
		return nil, out.releaseAfter(err)
	}
	return out, nil
}

// --- in-place safety --------------------------------------------------------

// writable checks that t may be written in place by op.
func (t *Tensor) writable(op string) error {
	if t.grad.tape != nil && t.grad.fn == "" {
		return torchErr(op, "a leaf Variable that requires grad is being used in an in-place operation.")
	}
	if t.grad.viewOfLeaf {
		return torchErr(op, "a view of a leaf Variable that requires grad is being used in an in-place operation.")
	}
	if t.layout.HasInternalOverlap() {
		return torchErr(op, "unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.")
	}
	return nil
}

type overlap uint8

const (
	noOverlap overlap = iota
	fullOverlap
	partialOverlap
	unknownOverlap
)

// overlapOf is PyTorch's get_overlap_status for an output a and an input b.
func overlapOf(a, b *Tensor) overlap {
	if a.storage != b.storage || a.Numel() == 0 || b.Numel() == 0 {
		return noOverlap
	}
	aes, bes := a.ElementSize(), b.ElementSize()
	if !a.layout.IsNonOverlappingAndDense() || !b.layout.IsNonOverlappingAndDense() {
		alo, ahi := a.layout.Span()
		blo, bhi := b.layout.Span()
		if alo*aes >= bhi*bes || blo*bes >= ahi*aes {
			return noOverlap
		}
		if aes == bes && a.layout.Offset == b.layout.Offset && a.layout.Shape.Equal(b.layout.Shape) && slices.Equal(a.layout.Strides, b.layout.Strides) {
			return fullOverlap
		}
		return unknownOverlap
	}
	ab, bb := a.layout.Offset*aes, b.layout.Offset*bes
	ae, be := ab+a.Numel()*aes, bb+b.Numel()*bes
	if ab == bb && ae == be {
		if slices.Equal(a.layout.Strides, b.layout.Strides) {
			return fullOverlap
		}
		return partialOverlap
	}
	if ab < be && bb < ae {
		return partialOverlap
	}
	return noOverlap
}

// safeInput returns in, or a temporary copy of it when it shares memory with
// the output out in a way a kernel cannot handle; release frees the copy.
func safeInput(op string, out, in *Tensor) (use *Tensor, release func(), err error) {
	switch overlapOf(out, in) {
	case partialOverlap:
		return nil, nil, torchErr(op, "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation.")
	case unknownOverlap:
		tmp, err := alloc(op, in.storage.dev, in.dtype, ContiguousLayout(in.layout.Shape...))
		if err != nil {
			return nil, nil, err
		}
		if err := tmp.run(op, func() error { return in.storage.dev.Copy(tmp.strided(), in.strided()) }); err != nil {
			return nil, nil, tmp.releaseAfter(err)
		}
		return tmp, func() { _ = tmp.Release() }, nil
	}
	return in, func() {}, nil
}

// originalSelf returns a copy of t made before an in-place write, for a tape
// whose backward formula needs t's old value (PyTorch's original_self: mul_
// on a tensor that requires grad costs a full copy), or nil when no live tape
// records the operation. The copy is the tape's to keep: the caller releases
// its own handle after recording.
func (t *Tensor) originalSelf(op string, ins ...*Tensor) (*Tensor, error) {
	tp := tapeOf(ins...)
	if tp == nil || tp.isReleased() {
		return nil, nil
	}
	c, err := alloc(op, t.storage.dev, t.dtype, CloneLayout(t.layout))
	if err != nil {
		return nil, err
	}
	if err := copyInto(op, c, c.layout, t, t.layout); err != nil {
		return nil, c.releaseAfter(err)
	}
	return c, nil
}

// releaseIfNotNil releases t unless it is nil (a deferred cleanup).
func (t *Tensor) releaseIfNotNil() {
	if t != nil {
		_ = t.Release()
	}
}

// inPlaceDone bumps t's version after an in-place write and records it.
func (t *Tensor) inPlaceDone(gradFn string, ins []*Tensor, saved ...*Tensor) error {
	t.storage.bump()
	if tp := tapeOf(ins...); tp != nil && gradFn != "" {
		t.grad = gradInfo{tape: tp, fn: gradFn}
		return record(gradFn, ins, saved...)
	}
	return nil
}
