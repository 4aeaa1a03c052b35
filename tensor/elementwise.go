package tensor

// Elementwise operations: unary ones, and binary ones that broadcast.

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
	layout := ElementwiseLayout(t.layout.Shape, t.layout)
	if op == Scale { // x * alpha: alpha is a second operand, a wrapped number
		layout = ElementwiseLayout(t.layout.Shape, t.layout, ScalarLayout())
	}
	out, err := alloc(info.name, dev, t.dtype, layout)
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
	var saved []*Tensor
	if info.savesInput {
		orig, err := t.originalSelf(name, t)
		if err != nil {
			return err
		}
		defer orig.releaseIfNotNil()
		saved = append(saved, orig)
	}
	if err := t.run(name, func() error { return dev.Unary(op, t.strided(), t.strided(), alpha) }); err != nil {
		return err
	}
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
	shape, err := broadcastShapes(info.name, t.layout.Shape, o.layout.Shape)
	if err != nil {
		return nil, err
	}
	la, _ := t.layout.Expand(shape...)
	lb, _ := o.layout.Expand(shape...)
	out, err := alloc(info.name, dev, t.dtype, ElementwiseLayout(shape, t.layout, o.layout))
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
	shape, err := broadcastShapes(name, t.layout.Shape, o.layout.Shape)
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
		orig, err := t.originalSelf(name, t, o)
		if err != nil {
			return err
		}
		defer orig.releaseIfNotNil()
		saved = []*Tensor{orig, o}
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

// Mul_ multiplies t by o in place. When a tape records it, t's old value is
// copied first for backward (an allocation), as PyTorch does.
func (t *Tensor) Mul_(o *Tensor) error { return t.binary_(Mul, o) }

// Div_ divides t by o in place.
func (t *Tensor) Div_(o *Tensor) error { return t.binary_(Div, o) }
