package tensor

import (
	"fmt"
)

// Every operation that produces a new tensor allocates its output through
// Device.Allocate, so the memory cost of each step shows in the allocator. In
// -place operations (the methods ending in _) write into their receiver, bump
// its storage's version counter and allocate nothing (except a temporary copy
// of an input that might overlap the output in a way memlab cannot rule out).

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
			return nil, torchErr(op, "Expected all tensors to be on the same device, but found at least two devices, %v and %v!", dev, t.storage.dev)
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

// preserveLayout is the layout PyTorch's preserve_format gives a new tensor
// made from one of layout l: the same strides when l is dense and without
// overlap (a transposed tensor stays transposed), row-major otherwise.
func preserveLayout(l Layout) Layout {
	if l.IsNonOverlappingAndDense() {
		return Layout{Shape: l.Shape.Clone(), Strides: append([]int(nil), l.Strides...)}
	}
	return ContiguousLayout(l.Shape...)
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
		if aes == bes && a.layout.Offset == b.layout.Offset && a.layout.Shape.Equal(b.layout.Shape) && intsEqual(a.layout.Strides, b.layout.Strides) {
			return fullOverlap
		}
		return unknownOverlap
	}
	ab, bb := a.layout.Offset*aes, b.layout.Offset*bes
	ae, be := ab+a.Numel()*aes, bb+b.Numel()*bes
	if ab == bb && ae == be {
		if intsEqual(a.layout.Strides, b.layout.Strides) {
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

// inPlaceDone bumps t's version after an in-place write and records it.
func (t *Tensor) inPlaceDone(gradFn string, ins []*Tensor, saved ...*Tensor) error {
	t.storage.bump()
	if tp := tapeOf(ins...); tp != nil && gradFn != "" {
		t.grad = gradInfo{tape: tp, fn: gradFn}
		return record(gradFn, ins, saved...)
	}
	return nil
}

// --- unary -------------------------------------------------------------------

var unaryInfo = map[UnaryOp]struct {
	name, gradFn string
	float        bool // needs a floating-point input
	savesOutput  bool
	savesInput   bool
}{
	Relu:  {"relu", "ReluBackward0", false, true, false},
	Gelu:  {"gelu", "GeluBackward0", true, false, true},
	Exp:   {"exp", "ExpBackward0", true, true, false},
	Neg:   {"neg", "NegBackward0", false, false, false},
	Scale: {"mul", "MulBackward1", false, false, false},
}

func (t *Tensor) unary(op UnaryOp, alpha float64) (*Tensor, error) {
	info := unaryInfo[op]
	dev, err := inputs(info.name, t)
	if err != nil {
		return nil, err
	}
	if info.float {
		if err := needFloat(info.name, t); err != nil {
			return nil, err
		}
	}
	out, err := alloc(info.name, dev, t.dtype, preserveLayout(t.layout))
	if err != nil {
		return nil, err
	}
	if err := out.run(info.name, func() error { return dev.Unary(op, out.strided(), t.strided(), alpha) }); err != nil {
		return nil, out.releaseAfter(err)
	}
	var saved []*Tensor
	if info.savesInput {
		saved = append(saved, t)
	}
	if info.savesOutput {
		saved = append(saved, out)
	}
	return finish(out, info.gradFn, []*Tensor{t}, saved...)
}

func (t *Tensor) unary_(op UnaryOp, alpha float64) error {
	info := unaryInfo[op]
	name := info.name + "_"
	dev, err := inputs(name, t)
	if err != nil {
		return err
	}
	if info.float {
		if err := needFloat(name, t); err != nil {
			return err
		}
	}
	if err := t.writable(name); err != nil {
		return err
	}
	if err := t.run(name, func() error { return dev.Unary(op, t.strided(), t.strided(), alpha) }); err != nil {
		return err
	}
	// An in-place op's input is gone once written: a node that saves its input
	// (gelu_) is recorded without it.
	var saved []*Tensor
	if info.savesOutput {
		saved = append(saved, t)
	}
	return t.inPlaceDone(info.gradFn, []*Tensor{t}, saved...)
}

// Relu returns max(t, 0) in a new tensor. On a tape it saves its output.
func (t *Tensor) Relu() (*Tensor, error) { return t.unary(Relu, 0) }

// Relu_ replaces t by max(t, 0) in place.
func (t *Tensor) Relu_() error { return t.unary_(Relu, 0) }

// Gelu returns the GELU of t (tanh approximation) in a new tensor. On a tape it
// saves its input.
func (t *Tensor) Gelu() (*Tensor, error) { return t.unary(Gelu, 0) }

// Gelu_ replaces t by its GELU in place.
func (t *Tensor) Gelu_() error { return t.unary_(Gelu, 0) }

// Exp returns e^t in a new tensor. On a tape it saves its output.
func (t *Tensor) Exp() (*Tensor, error) { return t.unary(Exp, 0) }

// Exp_ replaces t by e^t in place.
func (t *Tensor) Exp_() error { return t.unary_(Exp, 0) }

// Neg returns -t in a new tensor.
func (t *Tensor) Neg() (*Tensor, error) { return t.unary(Neg, 0) }

// Neg_ replaces t by -t in place.
func (t *Tensor) Neg_() error { return t.unary_(Neg, 0) }

// Scale returns alpha·t in a new tensor (t * alpha with a Python scalar).
func (t *Tensor) Scale(alpha float64) (*Tensor, error) { return t.unary(Scale, alpha) }

// Scale_ multiplies t by alpha in place (t.mul_(alpha)).
func (t *Tensor) Scale_(alpha float64) error { return t.unary_(Scale, alpha) }

// --- binary ------------------------------------------------------------------

var binaryInfo = map[BinaryOp]struct {
	name, gradFn string
	savesInputs  bool
}{
	Add: {"add", "AddBackward0", false},
	Sub: {"sub", "SubBackward0", false},
	Mul: {"mul", "MulBackward0", true},
	Div: {"div", "DivBackward0", true},
}

func (t *Tensor) binary(op BinaryOp, o *Tensor) (*Tensor, error) {
	info := binaryInfo[op]
	dev, err := inputs(info.name, t, o)
	if err != nil {
		return nil, err
	}
	if err := sameDType(info.name, t, o); err != nil {
		return nil, err
	}
	shape, err := BroadcastShapes(t.layout.Shape, o.layout.Shape)
	if err != nil {
		return nil, err
	}
	la, _ := t.layout.Expand(shape...)
	lb, _ := o.layout.Expand(shape...)
	out, err := alloc(info.name, dev, t.dtype, ContiguousLayout(shape...))
	if err != nil {
		return nil, err
	}
	if err := out.run(info.name, func() error {
		return dev.Binary(op, out.strided(), stridedOf(t.storage.ptr, t.dtype, la), stridedOf(o.storage.ptr, o.dtype, lb))
	}); err != nil {
		return nil, out.releaseAfter(err)
	}
	var saved []*Tensor
	if info.savesInputs {
		saved = []*Tensor{t, o}
	}
	return finish(out, info.gradFn, []*Tensor{t, o}, saved...)
}

func (t *Tensor) binary_(op BinaryOp, o *Tensor) error {
	info := binaryInfo[op]
	name := info.name + "_"
	dev, err := inputs(name, t, o)
	if err != nil {
		return err
	}
	if err := sameDType(name, t, o); err != nil {
		return err
	}
	shape, err := BroadcastShapes(t.layout.Shape, o.layout.Shape)
	if err != nil {
		return err
	}
	if !shape.Equal(t.layout.Shape) {
		return torchErr(name, "output with shape %v doesn't match the broadcast shape %v", t.layout.Shape, shape)
	}
	if err := t.writable(name); err != nil {
		return err
	}
	src, done, err := safeInput(name, t, o)
	if err != nil {
		return err
	}
	defer done()
	lb, _ := src.layout.Expand(shape...)
	var saved []*Tensor
	if info.savesInputs {
		// t's old value is gone once written; PyTorch saves a clone of it for
		// mul_; memlab saves only the other operand.
		saved = []*Tensor{o}
	}
	if err := t.run(name, func() error {
		return dev.Binary(op, t.strided(), t.strided(), stridedOf(src.storage.ptr, src.dtype, lb))
	}); err != nil {
		return err
	}
	return t.inPlaceDone(info.gradFn, []*Tensor{t, o}, saved...)
}

// Add returns t + o, broadcasting the shapes. On a tape it saves nothing.
func (t *Tensor) Add(o *Tensor) (*Tensor, error) { return t.binary(Add, o) }

// Sub returns t - o, broadcasting the shapes.
func (t *Tensor) Sub(o *Tensor) (*Tensor, error) { return t.binary(Sub, o) }

// Mul returns t * o elementwise, broadcasting the shapes. On a tape it saves
// both inputs.
func (t *Tensor) Mul(o *Tensor) (*Tensor, error) { return t.binary(Mul, o) }

// Div returns t / o elementwise, broadcasting the shapes. On a tape it saves
// both inputs.
func (t *Tensor) Div(o *Tensor) (*Tensor, error) { return t.binary(Div, o) }

// Add_ adds o to t in place; o must broadcast to t's shape.
func (t *Tensor) Add_(o *Tensor) error { return t.binary_(Add, o) }

// Sub_ subtracts o from t in place.
func (t *Tensor) Sub_(o *Tensor) error { return t.binary_(Sub, o) }

// Mul_ multiplies t by o in place.
func (t *Tensor) Mul_(o *Tensor) error { return t.binary_(Mul, o) }

// Div_ divides t by o in place.
func (t *Tensor) Div_(o *Tensor) error { return t.binary_(Div, o) }
