package cpu

import (
	"fmt"
	"math"

	"memlab.dev/memlab/tensor"
)

var unaryNames = [...]string{tensor.Relu: "relu", tensor.Gelu: "gelu", tensor.Exp: "exp", tensor.Neg: "neg", tensor.Scale: "scale"}

var binaryNames = [...]string{tensor.Add: "add", tensor.Sub: "sub", tensor.Mul: "mul", tensor.Div: "div"}

// geluC is √(2/π), the constant of gelu's tanh approximation.
var geluC = math.Sqrt(2 / math.Pi)

// floatUnary returns op on float values; alpha is Scale's factor.
func floatUnary(op tensor.UnaryOp, alpha float64) func(float64) float64 {
	switch op {
	case tensor.Relu:
		return func(x float64) float64 {
			if x <= 0 {
				return 0
			}
			return x // NaN stays NaN, as in PyTorch
		}
	case tensor.Gelu:
		return func(x float64) float64 {
			return 0.5 * x * (1 + math.Tanh(geluC*(x+0.044715*x*x*x)))
		}
	case tensor.Exp:
		return math.Exp
	case tensor.Neg:
		return func(x float64) float64 { return -x }
	}
	a := float64(float32(alpha))
	return func(x float64) float64 { return x * a }
}

// intUnary returns op on integer values, or an error if op needs floats.
func intUnary(name string, op tensor.UnaryOp, dt tensor.DType, alpha float64) (func(int64) int64, error) {
	switch op {
	case tensor.Relu:
		return func(x int64) int64 { return max(x, 0) }, nil
	case tensor.Neg:
		return func(x int64) int64 { return -x }, nil
	case tensor.Scale:
		if alpha != math.Trunc(alpha) || math.Abs(alpha) > 1<<62 {
			return nil, opError(name, "scaling %v needs an integral alpha, got %v", dt, alpha)
		}
		a := int64(alpha)
		return func(x int64) int64 { return x * a }, nil
	}
	return nil, opError(name, "needs a floating-point dtype, got %v", dt)
}

// Unary computes dst = op(src) elementwise; alpha is Scale's factor. dst and
// src have the same shape and dtype; dst may be an exact alias of src. Gelu and
// Exp need a float dtype; integer Scale needs an integral alpha; Bool has no
// unary operation.
func (k *Kernels) Unary(op tensor.UnaryOp, dst, src tensor.Strided, alpha float64) error {
	if int(op) >= len(unaryNames) {
		return opError("Unary", "unknown operation %d", op)
	}
	name := fmt.Sprintf("Unary(%s)", unaryNames[op])
	d, in, err := k.elementwise(name, dst, src)
	if err != nil {
		return err
	}
	s := in[0]
	strides, base := [][]int{d.strides, s.strides}, []int{d.off, s.off}
	switch {
	case d.dt.IsFloat():
		f := floatUnary(op, alpha)
		if d.n > 0 {
			forEach(d.shape, strides, base, func(_, n int, o, st []int) {
				for j := range n {
					storeF(d.dt, d.b, o[0]+j*st[0], f(loadF(s.dt, s.b, o[1]+j*st[1])))
				}
			})
		}
	case d.dt == tensor.Bool:
		return opError(name, "not supported for bool")
	default:
		f, err := intUnary(name, op, d.dt, alpha)
		if err != nil {
			return err
		}
		if d.n > 0 {
			forEach(d.shape, strides, base, func(_, n int, o, st []int) {
				for j := range n {
					storeI(d.dt, d.b, o[0]+j*st[0], f(loadI(s.dt, s.b, o[1]+j*st[1])))
				}
			})
		}
	}
	return nil
}

// elementwise resolves dst and the inputs of an elementwise operation, named
// src (one input) or a, b (two), and checks that they share one shape and dtype
// and that dst is distinct from each input or an exact alias of it.
func (k *Kernels) elementwise(op string, dst tensor.Strided, in ...tensor.Strided) (view, []view, error) {
	d, err := k.output(op, dst)
	if err != nil {
		return d, nil, err
	}
	views := make([]view, len(in))
	for i, s := range in {
		name := "src"
		if len(in) > 1 {
			name = string(rune('a' + i))
		}
		v, err := k.resolve(op, name, s)
		if err != nil {
			return d, nil, err
		}
		if v.dt != d.dt {
			return d, nil, opError(op, "dtype mismatch: dst is %v, %s is %v", d.dt, name, v.dt)
		}
		if !sameShape(v.shape, d.shape) {
			return d, nil, opError(op, "shape mismatch: dst %v, %s %v (broadcast inputs with stride 0 first)", d.shape, name, v.shape)
		}
		if err := checkOverlap(op, d, v, true); err != nil {
			return d, nil, err
		}
		views[i] = v
	}
	return d, views, nil
}

// Binary computes dst = a op b elementwise. All three share one shape (inputs
// broadcast with stride 0) and one dtype; dst may be an exact alias of a or b.
// Integer Div truncates toward zero and fails on a zero divisor before writing
// anything; Bool supports Add (or) and Mul (and).
func (k *Kernels) Binary(op tensor.BinaryOp, dst, a, b tensor.Strided) error {
	if int(op) >= len(binaryNames) {
		return opError("Binary", "unknown operation %d", op)
	}
	name := fmt.Sprintf("Binary(%s)", binaryNames[op])
	d, in, err := k.elementwise(name, dst, a, b)
	if err != nil {
		return err
	}
	if d.dt == tensor.Bool && (op == tensor.Sub || op == tensor.Div) {
		return opError(name, "not supported for bool (use add for or, mul for and)")
	}
	if d.n == 0 {
		return nil
	}
	x, y := in[0], in[1]
	strides, base := [][]int{d.strides, x.strides, y.strides}, []int{d.off, x.off, y.off}
	if d.dt == tensor.Float32 {
		forEach(d.shape, strides, base, func(_, n int, o, st []int) { binaryF32(op, d.b, x.b, y.b, n, o, st) })
		return nil
	}
	if d.dt.IsFloat() {
		var f func(x, y float64) float64
		switch op {
		case tensor.Add:
			f = func(x, y float64) float64 { return x + y }
		case tensor.Sub:
			f = func(x, y float64) float64 { return x - y }
		case tensor.Mul:
			f = func(x, y float64) float64 { return x * y }
		default:
			f = func(x, y float64) float64 { return x / y }
		}
		forEach(d.shape, strides, base, func(_, n int, o, st []int) {
			for j := range n {
				storeF(d.dt, d.b, o[0]+j*st[0], f(loadF(x.dt, x.b, o[1]+j*st[1]), loadF(y.dt, y.b, o[2]+j*st[2])))
			}
		})
		return nil
	}
	var f func(x, y int64) int64
	switch {
	case op == tensor.Add && d.dt == tensor.Bool:
		f = func(x, y int64) int64 { return x | y }
	case op == tensor.Mul && d.dt == tensor.Bool:
		f = func(x, y int64) int64 { return x & y }
	case op == tensor.Add:
		f = func(x, y int64) int64 { return x + y }
	case op == tensor.Sub:
		f = func(x, y int64) int64 { return x - y }
	case op == tensor.Mul:
		f = func(x, y int64) int64 { return x * y }
	default:
		if err := checkNoZero(name, y); err != nil {
			return err
		}
		f = func(x, y int64) int64 { return x / y }
	}
	forEach(d.shape, strides, base, func(_, n int, o, st []int) {
		for j := range n {
			storeI(d.dt, d.b, o[0]+j*st[0], f(loadI(x.dt, x.b, o[1]+j*st[1]), loadI(y.dt, y.b, o[2]+j*st[2])))
		}
	})
	return nil
}

// checkNoZero returns an error if an element of the integer view v is zero.
func checkNoZero(op string, v view) error {
	found := false
	shape, strides := collapse(v.shape, v.strides)
	runs(shape, strides, []int{v.off}, 0, v.n, func(_, n int, o, st []int) {
		for j := 0; j < n && !found; j++ {
			found = loadI(v.dt, v.b, o[0]+j*st[0]) == 0
		}
	})
	if found {
		return opError(op, "integer division by zero")
	}
	return nil
}

// binaryF32 is Binary's loop for float32 data. Single float32 operations give
// exactly the float64-then-round results of the generic path.
func binaryF32(op tensor.BinaryOp, d, a, b []byte, n int, o, st []int) {
	pd, pa, pb, sd, sa, sb := o[0], o[1], o[2], st[0], st[1], st[2]
	for range n {
		x := math.Float32frombits(le.Uint32(a[pa*4:]))
		y := math.Float32frombits(le.Uint32(b[pb*4:]))
		var r float32
		switch op {
		case tensor.Add:
			r = x + y
		case tensor.Sub:
			r = x - y
		case tensor.Mul:
			r = x * y
		default:
			r = x / y
		}
		le.PutUint32(d[pd*4:], math.Float32bits(r))
		pd, pa, pb = pd+sd, pa+sa, pb+sb
	}
}
