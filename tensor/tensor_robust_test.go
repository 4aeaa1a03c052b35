package tensor_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/internal/robusttest"
	"memlab.dev/memlab/tensor"
)

var mustNotPanic = robusttest.NoPanic
var wantErr = robusttest.WantErr

func TestRobustCreationRejectsBadShapes(t *testing.T) {
	dev := newTestDevice()
	cases := []struct {
		name  string
		shape []int
		words []string
	}{
		{"negative", []int{2, -3}, []string{"-3"}},
		{"overflowing", []int{1 << 40, 1 << 40}, []string{"overflow"}},
		{"overflowing three", []int{1 << 30, 1 << 30, 1 << 30}, []string{"overflow"}},
		{"too many dims", []int{1, 1, 1, 1, 1, 1, 1, 1, 1}, []string{"dimensions"}},
		{"min int", []int{-1 << 63}, nil},
	}
	makers := map[string]func(shape []int) (*tensor.Tensor, error){
		"Empty": func(s []int) (*tensor.Tensor, error) { return tensor.Empty(dev, tensor.Float32, s...) },
		"Zeros": func(s []int) (*tensor.Tensor, error) { return tensor.Zeros(dev, tensor.Float16, s...) },
		"Ones":  func(s []int) (*tensor.Tensor, error) { return tensor.Ones(dev, tensor.Int64, s...) },
		"Full":  func(s []int) (*tensor.Tensor, error) { return tensor.Full(dev, tensor.Uint8, 3, s...) },
		"Rand":  func(s []int) (*tensor.Tensor, error) { return tensor.Rand(dev, 1, tensor.Float32, s...) },
		"Randn": func(s []int) (*tensor.Tensor, error) { return tensor.Randn(dev, 1, tensor.BFloat16, s...) },
		"FromFloat32": func(s []int) (*tensor.Tensor, error) {
			return tensor.FromFloat32(dev, []float32{1, 2, 3, 4, 5, 6}, s...)
		},
		"FromFloat64": func(s []int) (*tensor.Tensor, error) {
			return tensor.FromFloat64(dev, tensor.Float32, []float64{1, 2, 3, 4, 5, 6}, s...)
		},
		"FromInt64": func(s []int) (*tensor.Tensor, error) {
			return tensor.FromInt64(dev, []int64{1, 2, 3, 4, 5, 6}, s...)
		},
	}
	for _, c := range cases {
		for name, mk := range makers {
			what := fmt.Sprintf("%s(%v) [%s]", name, c.shape, c.name)
			before, live := dev.allocated(), dev.live()
			mustNotPanic(t, what, func() {
				x, err := mk(c.shape)
				if err == nil {
					x.Release()
				}
				wantErr(t, what, err, c.words...)
			})
			if dev.allocated() != before || dev.live() != live {
				t.Errorf("%s: leaked: %d bytes in %d allocations before, %d in %d after", what, before, live, dev.allocated(), dev.live())
			}
		}
	}
}

func TestRobustCreationRejectsNilDeviceAndBadDType(t *testing.T) {
	dev := newTestDevice()
	checks := []struct {
		what  string
		f     func() (*tensor.Tensor, error)
		words []string
	}{
		{"Empty(nil)", func() (*tensor.Tensor, error) { return tensor.Empty(nil, tensor.Float32, 2) }, []string{"nil device"}},
		{"Zeros(nil)", func() (*tensor.Tensor, error) { return tensor.Zeros(nil, tensor.Float32, 2) }, []string{"nil device"}},
		{"Rand(nil)", func() (*tensor.Tensor, error) { return tensor.Rand(nil, 0, tensor.Float32, 2) }, []string{"nil device"}},
		{"FromFloat32(nil)", func() (*tensor.Tensor, error) { return tensor.FromFloat32(nil, []float32{1}) }, []string{"nil device"}},
		{"FromInt64(nil)", func() (*tensor.Tensor, error) { return tensor.FromInt64(nil, []int64{1}) }, []string{"nil device"}},
		{"Arange(nil)", func() (*tensor.Tensor, error) { return tensor.Arange(nil, tensor.Float32, 0, 4, 1) }, []string{"nil device"}},
		{"Empty(bad dtype)", func() (*tensor.Tensor, error) { return tensor.Empty(dev, tensor.DType(200), 2) }, []string{"dtype"}},
		{"Full(bad dtype)", func() (*tensor.Tensor, error) { return tensor.Full(dev, tensor.DType(200), 1, 2) }, []string{"dtype"}},
		{"Rand(bad dtype)", func() (*tensor.Tensor, error) { return tensor.Rand(dev, 0, tensor.DType(200), 2) }, []string{"dtype"}},
		{"Rand(int)", func() (*tensor.Tensor, error) { return tensor.Rand(dev, 0, tensor.Int32, 2) }, []string{"int32"}},
		{"FromFloat64(bad dtype)", func() (*tensor.Tensor, error) {
			return tensor.FromFloat64(dev, tensor.DType(99), []float64{1, 2})
		}, []string{"dtype"}},
		{"FromFloat32(len mismatch)", func() (*tensor.Tensor, error) { return tensor.FromFloat32(dev, []float32{1, 2, 3}, 2, 2) }, []string{"3"}},
		{"Arange(step 0)", func() (*tensor.Tensor, error) { return tensor.Arange(dev, tensor.Float32, 0, 4, 0) }, []string{"step"}},
		{"Arange(wrong sign)", func() (*tensor.Tensor, error) { return tensor.Arange(dev, tensor.Float32, 0, 4, -1) }, nil},
		{"Arange(NaN)", func() (*tensor.Tensor, error) { return tensor.Arange(dev, tensor.Float32, 0, nan(), 1) }, nil},
		{"Arange(Inf)", func() (*tensor.Tensor, error) { return tensor.Arange(dev, tensor.Float32, 0, inf(), 1) }, nil},
		{"Arange(huge)", func() (*tensor.Tensor, error) { return tensor.Arange(dev, tensor.Float32, 0, 1e30, 1) }, nil},
		{"Arange(tiny step)", func() (*tensor.Tensor, error) { return tensor.Arange(dev, tensor.Float32, 0, 1, 1e-300) }, nil},
		{"Arange(bad dtype)", func() (*tensor.Tensor, error) { return tensor.Arange(dev, tensor.DType(77), 0, 4, 1) }, []string{"dtype"}},
	}
	for _, c := range checks {
		before := dev.allocated()
		mustNotPanic(t, c.what, func() {
			x, err := c.f()
			if err == nil {
				x.Release()
			}
			wantErr(t, c.what, err, c.words...)
		})
		if dev.allocated() != before {
			t.Errorf("%s leaked %d bytes", c.what, dev.allocated()-before)
		}
	}
}
func inf() float64 { var z float64; return 1 / z }

// tensorOps calls every operation of one or two tensors on x (and y where
// there are two), returning each call's error. Results that succeed are
// released.
func tensorOps(x, y *tensor.Tensor) map[string]func() error {
	ret := func(r *tensor.Tensor, err error) error {
		if err == nil && r != nil {
			r.Release()
		}
		return err
	}
	return map[string]func() error{
		"Add":         func() error { return ret(x.Add(y)) },
		"Sub":         func() error { return ret(x.Sub(y)) },
		"Mul":         func() error { return ret(x.Mul(y)) },
		"Div":         func() error { return ret(x.Div(y)) },
		"Add_":        func() error { return x.Add_(y) },
		"Sub_":        func() error { return x.Sub_(y) },
		"Mul_":        func() error { return x.Mul_(y) },
		"Div_":        func() error { return x.Div_(y) },
		"CopyFrom":    func() error { return x.CopyFrom(y) },
		"Matmul":      func() error { return ret(x.Matmul(y)) },
		"MatmulInto":  func() error { return tensor.MatmulInto(y, x, x) },
		"SoftmaxInto": func() error { return tensor.SoftmaxInto(y, x, -1) },
		"LayerNorm":   func() error { return ret(x.LayerNorm(y, y, 1e-5)) },
		"Embedding":   func() error { return ret(tensor.Embedding(x, y)) },
		"Cat":         func() error { return ret(tensor.Cat([]*tensor.Tensor{x, y}, 0)) },
		"Relu":        func() error { return ret(x.Relu()) },
		"Gelu":        func() error { return ret(x.Gelu()) },
		"Exp":         func() error { return ret(x.Exp()) },
		"Neg":         func() error { return ret(x.Neg()) },
		"Scale":       func() error { return ret(x.Scale(2)) },
		"Relu_":       func() error { return x.Relu_() },
		"Gelu_":       func() error { return x.Gelu_() },
		"Exp_":        func() error { return x.Exp_() },
		"Neg_":        func() error { return x.Neg_() },
		"Scale_":      func() error { return x.Scale_(2) },
		"Sum":         func() error { return ret(x.Sum(0, false)) },
		"Max":         func() error { return ret(x.Max(0, true)) },
		"Softmax":     func() error { return ret(x.Softmax(-1)) },
		"Clone":       func() error { return ret(x.Clone()) },
		"Contiguous":  func() error { return ret(x.Contiguous()) },
		"To":          func() error { return ret(x.To(tensor.Float16)) },
		"Reshape":     func() error { return ret(x.Reshape(-1)) },
		"View":        func() error { return ret(x.View(-1)) },
		"Transpose":   func() error { return ret(x.Transpose(0, 1)) },
		"T":           func() error { return ret(x.T()) },
		"Permute":     func() error { return ret(x.Permute(1, 0)) },
		"Slice":       func() error { return ret(x.Slice(0, 0, 1, 1)) },
		"Narrow":      func() error { return ret(x.Narrow(0, 0, 1)) },
		"Select":      func() error { return ret(x.Select(0, 0)) },
		"Expand":      func() error { return ret(x.Expand(2, 3)) },
		"Squeeze":     func() error { return ret(x.Squeeze()) },
		"Unsqueeze":   func() error { return ret(x.Unsqueeze(0)) },
		"Flatten":     func() error { return ret(x.Flatten(0, -1)) },
		"Size":        func() error { _, err := x.Size(0); return err },
		"Item":        func() error { _, err := x.Item(); return err },
		"Float64s":    func() error { _, err := x.Float64s(); return err },
		"Float32s":    func() error { _, err := x.Float32s(); return err },
		"Int64s":      func() error { _, err := x.Int64s(); return err },
		"Release":     func() error { return x.Release() },
		"Tape.Watch":  func() error { return tensor.NewTape().Watch(x) },
		"Scope.Track": func() error { return ret(tensor.NewScope().Track(x, nil)) },
	}
}

// Every operation on a released tensor, as either operand, is an error naming
// the release, and it allocates nothing.
func TestRobustReleasedTensorInEveryOp(t *testing.T) {
	dev := newTestDevice()
	for _, releasedFirst := range []bool{true, false} {
		live := keep(t)(tensor.Ones(dev, tensor.Float32, 2, 3))
		dead, err := tensor.Ones(dev, tensor.Float32, 2, 3)
		if err != nil {
			t.Fatal(err)
		}
		if err := dead.Release(); err != nil {
			t.Fatal(err)
		}
		x, y := dead, live
		if !releasedFirst {
			x, y = live, dead
		}
		before, allocs := dev.allocated(), dev.live()
		for name, op := range tensorOps(x, y) {
			what := fmt.Sprintf("%s (released operand first: %v)", name, releasedFirst)
			if !releasedFirst {
				switch name { // ops of x alone
				case "Relu", "Gelu", "Exp", "Neg", "Scale", "Relu_", "Gelu_", "Exp_", "Neg_", "Scale_",
					"Sum", "Max", "Softmax", "Clone", "Contiguous", "To", "Reshape", "View", "Transpose", "T",
					"Permute", "Slice", "Narrow", "Select", "Expand", "Squeeze", "Unsqueeze", "Flatten",
					"Size", "Item", "Float64s", "Float32s", "Int64s", "Release", "Tape.Watch", "Scope.Track":
					continue
				}
			}
			mustNotPanic(t, what, func() {
				err := op()
				switch name {
				case "Size", "Scope.Track": // metadata stays readable; a scope skips released tensors
					return
				case "Release":
					if !errors.Is(err, tensor.ErrDoubleRelease) {
						t.Errorf("%s: %v, want ErrDoubleRelease", what, err)
					}
					return
				}
				if !errors.Is(err, tensor.ErrReleased) {
					t.Errorf("%s: %v, want ErrReleased", what, err)
				}
			})
		}
		if dev.allocated() != before || dev.live() != allocs {
			t.Errorf("ops on a released tensor changed the device: %d bytes in %d allocations, then %d in %d",
				before, allocs, dev.allocated(), dev.live())
		}
		// Printing a released tensor says so.
		mustNotPanic(t, "String of a released tensor", func() {
			if s := dead.String(); !strings.Contains(s, "released") {
				t.Errorf("released tensor prints as %q", s)
			}
		})
	}
}

// Every operation on a nil tensor is an error, not a nil dereference.
func TestRobustNilTensorInEveryOp(t *testing.T) {
	dev := newTestDevice()
	live := keep(t)(tensor.Ones(dev, tensor.Float32, 2, 3))
	for _, pair := range [][2]*tensor.Tensor{{nil, live}, {live, nil}, {nil, nil}} {
		x, y := pair[0], pair[1]
		for name, op := range tensorOps(x, y) {
			if x != nil && y != nil {
				continue
			}
			if x == live {
				switch name {
				case "Relu", "Gelu", "Exp", "Neg", "Scale", "Relu_", "Gelu_", "Exp_", "Neg_", "Scale_",
					"Sum", "Max", "Softmax", "Clone", "Contiguous", "To", "Reshape", "View", "Transpose", "T",
					"Permute", "Slice", "Narrow", "Select", "Expand", "Squeeze", "Unsqueeze", "Flatten",
					"Size", "Item", "Float64s", "Float32s", "Int64s", "Release", "Tape.Watch", "Scope.Track":
					continue
				}
			}
			if name == "Scope.Track" { // Track returns its arguments: (nil, nil)
				continue
			}
			what := fmt.Sprintf("%s(x nil: %v, y nil: %v)", name, x == nil, y == nil)
			mustNotPanic(t, what, func() { wantErr(t, what, op(), "nil") })
		}
	}
	mustNotPanic(t, "String of nil", func() { _ = (*tensor.Tensor)(nil).String() })
}

// otherDevice is a second device, so that tensors on it are on a different
// device from newTestDevice's.
func TestRobustMismatchedDevicesAndDTypes(t *testing.T) {
	d1, d2 := newTestDevice(), newTestDevice()
	a := keep(t)(tensor.Ones(d1, tensor.Float32, 2, 3))
	b := keep(t)(tensor.Ones(d2, tensor.Float32, 2, 3))
	h := keep(t)(tensor.Ones(d1, tensor.Float16, 2, 3))
	before1, before2 := d1.allocated(), d2.allocated()
	for name, op := range tensorOps(a, b) {
		switch name {
		case "Add", "Sub", "Mul", "Div", "Add_", "Sub_", "Mul_", "Div_", "CopyFrom", "Matmul", "MatmulInto", "SoftmaxInto", "LayerNorm", "Embedding", "Cat":
		default:
			continue
		}
		what := name + " across devices"
		mustNotPanic(t, what, func() { wantErr(t, what, op(), "device") })
	}
	for name, op := range tensorOps(a, h) {
		switch name {
		case "Add", "Sub", "Mul", "Div", "Add_", "Sub_", "Mul_", "Div_", "Matmul", "Cat":
		default:
			continue
		}
		what := name + " float32 with float16"
		word := "float16"
		if name == "Matmul" {
			word = "Half" // PyTorch's message
		}
		mustNotPanic(t, what, func() { wantErr(t, what, op(), word) })
	}
	if d1.allocated() != before1 || d2.allocated() != before2 {
		t.Errorf("failed ops leaked: %d -> %d and %d -> %d bytes", before1, d1.allocated(), before2, d2.allocated())
	}
}

// Views, Cat and Embedding with bad arguments: an error that names the
// mistake, and the device unchanged.
func TestRobustBadArguments(t *testing.T) {
	dev := newTestDevice()
	x := keep(t)(tensor.Arange(dev, tensor.Float32, 0, 6, 1))
	m := keep(t)(x.View(2, 3))
	empty := keep(t)(tensor.Empty(dev, tensor.Float32, 0))
	one := keep(t)(tensor.Ones(dev, tensor.Float32, 1))
	h := keep(t)(tensor.Ones(dev, tensor.Float16, 2, 3))
	idx := keep(t)(tensor.FromInt64(dev, []int64{0, 5, -1}))
	fidx := keep(t)(tensor.Ones(dev, tensor.Float32, 2))
	scalar := keep(t)(x.Select(0, 0))
	ret := func(r *tensor.Tensor, err error) error {
		if err == nil {
			r.Release()
		}
		return err
	}
	cases := []struct {
		what  string
		f     func() error
		words []string
	}{
		{"View(2, 4)", func() error { return ret(m.View(2, 4)) }, []string{"[2, 4]", "6"}},
		{"View(-1, -1)", func() error { return ret(m.View(-1, -1)) }, []string{"only one dimension"}},
		{"View(-2, 3)", func() error { return ret(m.View(-2, 3)) }, []string{"-2"}},
		{"empty View(1<<62, 4)", func() error { return ret(empty.View(1<<62, 4)) }, []string{"overflow"}},
		{"empty View(-1, 0)", func() error { return ret(empty.View(-1, 0)) }, nil},
		{"Expand(1<<32, 1<<32)", func() error { return ret(one.Expand(1<<32, 1<<32)) }, []string{"overflow"}},
		{"Expand(-2)", func() error { return ret(one.Expand(-2)) }, []string{"-2"}},
		{"Expand(3) of [2, 3]", func() error { return ret(m.Expand(3)) }, nil},
		{"Transpose(0, 5)", func() error { return ret(m.Transpose(0, 5)) }, []string{"5"}},
		{"Transpose(-3, 0)", func() error { return ret(m.Transpose(-3, 0)) }, []string{"-3"}},
		{"Permute(0)", func() error { return ret(m.Permute(0)) }, nil},
		{"Permute(0, 0)", func() error { return ret(m.Permute(0, 0)) }, []string{"duplicate"}},
		{"Permute(0, 9)", func() error { return ret(m.Permute(0, 9)) }, []string{"9"}},
		{"Slice(step 0)", func() error { return ret(m.Slice(0, 0, 2, 0)) }, []string{"step"}},
		{"Slice(step -1)", func() error { return ret(m.Slice(0, 0, 2, -1)) }, []string{"step"}},
		{"Slice(dim 7)", func() error { return ret(m.Slice(7, 0, 2, 1)) }, []string{"7"}},
		{"Narrow(past end)", func() error { return ret(m.Narrow(1, 2, 5)) }, nil},
		{"Narrow(negative length)", func() error { return ret(m.Narrow(1, 0, -1)) }, nil},
		{"Select(index 2)", func() error { return ret(m.Select(0, 2)) }, []string{"2"}},
		{"Select(min int)", func() error { return ret(m.Select(0, -1<<63)) }, nil},
		{"Select of a scalar", func() error { return ret(scalar.Select(0, 0)) }, nil},
		{"Squeeze(dim 4)", func() error { return ret(m.Squeeze(4)) }, []string{"4"}},
		{"Unsqueeze(4)", func() error { return ret(m.Unsqueeze(4)) }, []string{"4"}},
		{"Flatten(1, 0)", func() error { return ret(m.Flatten(1, 0)) }, nil},
		{"Size(2)", func() error { _, err := m.Size(2); return err }, []string{"2"}},
		{"Size of a scalar", func() error { _, err := scalar.Size(0); return err }, nil},
		{"Sum(dim 3)", func() error { return ret(m.Sum(3, false)) }, []string{"3"}},
		{"Max(dim -3)", func() error { return ret(m.Max(-3, false)) }, []string{"-3"}},
		{"Softmax(dim 2)", func() error { return ret(m.Softmax(2)) }, []string{"2"}},
		{"Item of 6 elements", func() error { _, err := m.Item(); return err }, nil},
		{"Item of no elements", func() error { _, err := empty.Item(); return err }, nil},
		{"To(bad dtype)", func() error { return ret(m.To(tensor.DType(100))) }, []string{"dtype"}},
		{"Matmul [2,3]@[2,3]", func() error { return ret(m.Matmul(m)) }, []string{"2x3"}},
		{"Matmul with scalar", func() error { return ret(scalar.Matmul(m)) }, nil},
		{"Add [2,3]+[6]", func() error { return ret(m.Add(x)) }, nil},
		{"Add_ broadcasting the output", func() error { return one.Add_(m) }, nil},
		{"Relu_ of an expanded tensor", func() error {
			e, err := one.Expand(4)
			if err != nil {
				return nil
			}
			defer e.Release()
			return e.Relu_()
		}, nil},
		{"LayerNorm gamma of wrong size", func() error { return ret(m.LayerNorm(x, x, 1e-5)) }, nil},
		{"LayerNorm of a scalar", func() error { return ret(scalar.LayerNorm(one, one, 1e-5)) }, nil},
		{"Cat(nil)", func() error { return ret(tensor.Cat(nil, 0)) }, []string{"non-empty"}},
		{"Cat(empty list)", func() error { return ret(tensor.Cat([]*tensor.Tensor{}, 0)) }, []string{"non-empty"}},
		{"Cat(mixed dtypes)", func() error { return ret(tensor.Cat([]*tensor.Tensor{m, h}, 0)) }, []string{"float16"}},
		{"Cat(mixed ranks)", func() error { return ret(tensor.Cat([]*tensor.Tensor{m, x}, 0)) }, []string{"dimensions"}},
		{"Cat(scalar)", func() error { return ret(tensor.Cat([]*tensor.Tensor{scalar}, 0)) }, []string{"zero-dimensional"}},
		{"Cat(bad dim)", func() error { return ret(tensor.Cat([]*tensor.Tensor{m, m}, 2)) }, []string{"2"}},
		{"Cat(mismatched sizes)", func() error { return ret(tensor.Cat([]*tensor.Tensor{m, keep(t)(m.T())}, 0)) }, []string{"Sizes"}},
		{"Cat(nil element)", func() error { return ret(tensor.Cat([]*tensor.Tensor{m, nil}, 0)) }, []string{"nil"}},
		{"Embedding(index out of range)", func() error { return ret(tensor.Embedding(m, idx)) }, []string{"index out of range"}},
		{"Embedding(float indices)", func() error { return ret(tensor.Embedding(m, fidx)) }, []string{"indices"}},
		{"Embedding(1-D weight)", func() error { return ret(tensor.Embedding(x, idx)) }, []string{"2-D"}},
	}
	for _, c := range cases {
		before, live := dev.allocated(), dev.live()
		mustNotPanic(t, c.what, func() { err := c.f(); t.Logf("%s: %v", c.what, err); wantErr(t, c.what, err, c.words...) })
		if dev.allocated() != before || dev.live() != live {
			t.Errorf("%s: leaked: %d bytes in %d allocations, then %d in %d", c.what, before, live, dev.allocated(), dev.live())
		}
	}
}

// Scope and Tape misuse: releasing twice, tracking after release, watching on
// two tapes, Backward twice, nil tensors.
func TestRobustScopeAndTapeMisuse(t *testing.T) {
	dev := newTestDevice()
	s := tensor.NewScope()
	x, err := s.Track(tensor.Ones(dev, tensor.Float32, 4))
	if err != nil {
		t.Fatal(err)
	}
	mustNotPanic(t, "Scope misuse", func() {
		if err := x.Release(); err != nil { // by hand, before the scope
			t.Fatal(err)
		}
		if err := s.Release(); err != nil {
			t.Errorf("scope skipping a tensor released by hand: %v", err)
		}
		if err := s.Release(); err != nil {
			t.Errorf("second scope release: %v", err)
		}
		y, err := s.Track(tensor.Ones(dev, tensor.Float32, 4))
		if !errors.Is(err, tensor.ErrScopeReleased) {
			t.Errorf("Track after Release: %v", err)
		}
		if y != nil {
			y.Release()
		}
		if got := s.Keep(nil); got != nil {
			t.Errorf("Keep(nil) = %v", got)
		}
		var nilScope *tensor.Scope
		_ = nilScope // methods on a nil *Scope are a programming error like any nil receiver
		_, err = s.Track(nil, errors.New("creation failed"))
		wantErr(t, "Track of a failed creation", err, "creation failed")
		if n := s.Len(); n != 0 {
			t.Errorf("released scope has %d tensors", n)
		}
	})
	if dev.allocated() != 0 {
		t.Errorf("scope misuse leaked %d bytes", dev.allocated())
	}

	mustNotPanic(t, "Tape misuse", func() {
		tp, tp2 := tensor.NewTape(), tensor.NewTape()
		a := keep(t)(tensor.Ones(dev, tensor.Float32, 4))
		wantErr(t, "Watch(nil)", tp.Watch(nil), "nil")
		if err := tp.Watch(a); err != nil {
			t.Fatal(err)
		}
		wantErr(t, "Watch on a second tape", tp2.Watch(a))
		b := keep(t)(a.Relu())
		if err := b.Mul_(b); err != nil { // modifies a saved tensor
			t.Fatal(err)
		}
		wantErr(t, "Backward after an in-place change", tp.Backward(), "modified by an inplace operation")
		if err := tp.Release(); err != nil {
			t.Fatal(err)
		}
		if err := tp.Release(); err != nil {
			t.Errorf("second tape release: %v", err)
		}
		_ = tp.Backward() // after release: an error or nothing, never a panic
		if n := tp.SavedBytes(); n != 0 {
			t.Errorf("released tape keeps %d bytes", n)
		}
		tp3 := tensor.NewTape()
		c := keep(t)(tensor.Ones(dev, tensor.Float32, 4))
		if err := tp3.Watch(c); err != nil {
			t.Fatal(err)
		}
		keep(t)(c.Exp())
		if err := tp3.Backward(); err != nil {
			t.Fatal(err)
		}
		wantErr(t, "second Backward", tp3.Backward(), "backward through the graph a second time")
	})
}

// FuzzViewOps applies a sequence of view calls, chosen and parameterised by the
// fuzzer's bytes, to a tensor: no call panics; each either fails or gives a
// view whose elements all lie inside the storage and read back without error;
// and once every handle is released the device holds nothing.
func FuzzViewOps(f *testing.F) {
	f.Add([]byte{0, 2, 3, 1, 0, 1, 4, 1, 7, 9})
	f.Add([]byte{5, 0, 0, 2, 3, 3, 1, 0, 255, 128, 6, 1, 2})
	f.Add([]byte{9, 255, 255, 8, 1, 1, 1, 1, 2, 10, 0})
	// View(2, 12), then Slice(0, 0, 2, 1<<61): the stride times the step overflowed.
	f.Add([]byte{0, 2, 12, 0, 0, 4, 0, 0, 2, 128, 0, 0, 0, 0, 0, 0, 0, 32})
	// Slice(0, 0, 24, MaxInt): the length overflowed to 0 elements.
	f.Add([]byte{4, 0, 0, 24, 128, 255, 255, 255, 255, 255, 255, 255, 127})
	// Slice(0, MinInt, MaxInt, 1), Narrow(0, MaxInt, 2), Select(0, MinInt).
	f.Add([]byte{4, 0, 128, 0, 0, 0, 0, 0, 0, 0, 128, 128, 255, 255, 255, 255, 255, 255, 255, 127, 1, 5, 0, 128, 255, 255, 255, 255, 255, 255, 255, 127, 2, 0, 6, 0, 128, 0, 0, 0, 0, 0, 0, 0, 128, 0, 0})
	// Expand(MaxInt, 24) and View(MaxInt, MaxInt).
	f.Add([]byte{7, 128, 255, 255, 255, 255, 255, 255, 255, 127, 24, 0, 0, 0, 128, 255, 255, 255, 255, 255, 255, 255, 127, 128, 255, 255, 255, 255, 255, 255, 255, 127, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		dev := newTestDevice()
		next := func() int {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			if b == 0x80 && len(data) >= 8 { // 0x80 then 8 bytes: any int64
				v := int64(binary.LittleEndian.Uint64(data))
				data = data[8:]
				return int(v)
			}
			return int(int8(b)) // small values of either sign
		}
		base, err := tensor.Arange(dev, tensor.Float32, 0, 24, 1)
		if err != nil {
			t.Fatal(err)
		}
		handles := []*tensor.Tensor{base}
		cur := base
		for step := 0; len(data) > 0 && step < 16; step++ {
			op := next()
			a, b, c, d := next(), next(), next(), next()
			var out *tensor.Tensor
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("op %d(%d, %d, %d, %d) on %v panicked: %v", op, a, b, c, d, cur.Layout(), r)
					}
				}()
				switch (op%12 + 12) % 12 {
				case 0:
					out, err = cur.View(a, b)
				case 1:
					out, err = cur.Reshape(a, -1)
				case 2:
					out, err = cur.Transpose(a, b)
				case 3:
					out, err = cur.Permute(a, b, c)
				case 4:
					out, err = cur.Slice(a, b, c, d)
				case 5:
					out, err = cur.Narrow(a, b, c)
				case 6:
					out, err = cur.Select(a, b)
				case 7:
					out, err = cur.Expand(a, b, c)
				case 8:
					out, err = cur.Squeeze(a)
				case 9:
					out, err = cur.Unsqueeze(a)
				case 10:
					out, err = cur.Flatten(a, b)
				case 11:
					out, err = cur.T()
				}
			}()
			if err != nil {
				if out != nil {
					t.Fatalf("op %d returned a tensor and an error %v", op, err)
				}
				continue
			}
			handles = append(handles, out)
			l := out.Layout()
			if err := l.Validate(); err != nil {
				t.Fatalf("op %d gave %v: %v", op, l, err)
			}
			if l.Shape.Numel() < 0 {
				t.Fatalf("op %d gave %v with negative numel", op, l)
			}
			if lo, hi := l.Span(); l.Numel() > 0 && (lo < 0 || int64(hi)*4 > out.StorageNbytes()) {
				t.Fatalf("op %d gave %v reaching [%d, %d), outside a storage of %d bytes", op, l, lo, hi, out.StorageNbytes())
			}
			if out.Numel() <= 1<<16 {
				if _, err := out.Float64s(); err != nil {
					t.Fatalf("reading %v: %v", l, err)
				}
			}
			cur = out
		}
		for _, h := range handles {
			if err := h.Release(); err != nil {
				t.Fatal(err)
			}
		}
		if dev.allocated() != 0 || dev.live() != 0 {
			t.Fatalf("after releasing every handle the device holds %d bytes in %d allocations", dev.allocated(), dev.live())
		}
	})
}

// Every operation that allocates, made to fail at each of its allocations in
// turn (an out-of-memory error from the device): the error comes back, and
// the device holds exactly what it held before, so a failed op leaks nothing
// and leaves its inputs usable.
func TestRobustFailedAllocationLeaksNothing(t *testing.T) {
	dev := newTestDevice()
	a := keep(t)(tensor.Rand(dev, 1, tensor.Float32, 3, 4))
	b := keep(t)(tensor.Rand(dev, 2, tensor.Float32, 4, 5))
	at := keep(t)(a.T())
	batch := keep(t)(tensor.Rand(dev, 3, tensor.Float32, 2, 3, 4))
	bt := keep(t)(keep(t)(tensor.Rand(dev, 4, tensor.Float32, 3, 2, 4, 5)).Transpose(0, 1)) // [2, 3, 4, 5], batch dims not flattenable
	g := keep(t)(tensor.Ones(dev, tensor.Float32, 4))
	idx := keep(t)(tensor.FromInt64(dev, []int64{0, 2, 1}))
	w46 := keep(t)(tensor.Rand(dev, 5, tensor.Float32, 4, 6))
	w243 := keep(t)(tensor.Rand(dev, 6, tensor.Float32, 5, 3))
	ret := func(r *tensor.Tensor, err error) error {
		if err == nil {
			return r.Release()
		}
		return err
	}
	ops := map[string]func() error{
		"Add":         func() error { return ret(a.Add(a)) },
		"Matmul":      func() error { return ret(a.Matmul(b)) },
		"Matmul T":    func() error { return ret(at.Matmul(a)) },
		"Matmul bat":  func() error { return ret(batch.Matmul(w46)) },
		"Matmul perm": func() error { return ret(bt.Matmul(w243)) },
		"Contiguous":  func() error { return ret(at.Contiguous()) },
		"Clone":       func() error { return ret(at.Clone()) },
		"Reshape":     func() error { return ret(at.Reshape(-1)) },
		"To":          func() error { return ret(a.To(tensor.Float16)) },
		"Sum":         func() error { return ret(a.Sum(1, false)) },
		"Softmax":     func() error { return ret(at.Softmax(0)) },
		"LayerNorm":   func() error { return ret(a.LayerNorm(g, g, 1e-5)) },
		"Cat":         func() error { return ret(tensor.Cat([]*tensor.Tensor{a, a, a}, 1)) },
		"Embedding":   func() error { return ret(tensor.Embedding(b, idx)) },
		"Arange":      func() error { return ret(tensor.Arange(dev, tensor.Float32, 0, 10, 1)) },
		"FromFloat32": func() error { return ret(tensor.FromFloat32(dev, []float32{1, 2})) },
		"Mul_ on a tape": func() error {
			tp := tensor.NewTape()
			defer tp.Release()
			x, err := a.Clone()
			if err != nil {
				return err
			}
			defer x.Release()
			if err := tp.Watch(x); err != nil {
				return err
			}
			y, err := x.Neg() // not a leaf: in-place on it is allowed, and saves its old value
			if err != nil {
				return err
			}
			defer y.Release()
			return y.Mul_(a)
		},
	}
	for name, op := range ops {
		for n := 0; ; n++ {
			before, live := dev.allocated(), dev.live()
			dev.failAllocationsAfter(n)
			var err error
			mustNotPanic(t, name, func() { err = op() })
			dev.failAllocationsAfter(-1)
			if got, gotLive := dev.allocated(), dev.live(); got != before || gotLive != live {
				t.Errorf("%s failing at allocation %d (%v): %d bytes in %d allocations before, %d in %d after",
					name, n, err, before, live, got, gotLive)
			}
			if err == nil {
				t.Logf("%s: %d allocations", name, n)
				break // n is past the op's last allocation
			}
			if !errors.Is(err, errTestOOM) {
				t.Errorf("%s failing at allocation %d: %v, want the device's error", name, n, err)
			}
			if n > 20 {
				t.Fatalf("%s: still failing after %d allocations", name, n)
			}
		}
	}
	// The inputs are intact and usable.
	if _, err := a.Float64s(); err != nil {
		t.Fatal(err)
	}
}

// Releasing one handle from many goroutines: exactly one Release succeeds and
// the storage is freed once; views released concurrently free it once too.
func TestRobustConcurrentRelease(t *testing.T) {
	dev := newTestDevice()
	for round := 0; round < 20; round++ {
		x, err := tensor.Ones(dev, tensor.Float32, 64)
		if err != nil {
			t.Fatal(err)
		}
		views := []*tensor.Tensor{x}
		for range 4 {
			v, err := x.View(8, 8)
			if err != nil {
				t.Fatal(err)
			}
			views = append(views, v)
		}
		const n = 4
		errs := make(chan error, n*len(views))
		start := make(chan struct{})
		for _, v := range views {
			for range n {
				go func() {
					<-start
					errs <- v.Release()
				}()
			}
		}
		close(start)
		ok := 0
		for range n * len(views) {
			err := <-errs
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, tensor.ErrDoubleRelease):
				t.Errorf("concurrent Release: %v", err)
			}
		}
		if ok != len(views) {
			t.Fatalf("round %d: %d Releases succeeded for %d handles", round, ok, len(views))
		}
		if dev.allocated() != 0 || dev.live() != 0 {
			t.Fatalf("round %d: %d bytes in %d allocations after every handle was released", round, dev.allocated(), dev.live())
		}
	}
}

// Slice with a step so large that the stride times the step, or the length
// computation, overflows: PyTorch's answer (one element), no error, and a
// tensor that prints and reads.
func TestRobustSliceWithAHugeStep(t *testing.T) {
	dev := newTestDevice()
	x, err := tensor.Arange(dev, tensor.Float32, 0, 24, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Release()
	x3, err := x.View(2, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer x3.Release()
	for _, step := range []int{1 << 61, 1 << 62, math.MaxInt, math.MaxInt - 1} {
		for _, dim := range []int{0, 1, 2} {
			s, err := x3.Slice(dim, 0, x3.Shape()[dim], step)
			if err != nil {
				t.Fatalf("Slice(%d, 0, end, %d): %v", dim, step, err)
			}
			l := s.Layout()
			want := slices.Clone(x3.Shape())
			want[dim] = 1
			if !slices.Equal(s.Shape(), want) || l.Validate() != nil {
				t.Errorf("Slice(%d, 0, end, %d) = %v; want shape %v", dim, step, l, want)
			}
			if _, err := s.Float64s(); err != nil {
				t.Errorf("Float64s of %v: %v", l, err)
			}
			c, err := s.Contiguous()
			if err != nil {
				t.Fatal(err)
			}
			if got, want := s.String(), c.String(); got != want {
				t.Errorf("Slice(%d, 0, end, %d) prints\n%s\nits contiguous copy\n%s", dim, step, got, want)
			}
			c.Release()
			s.Release()
		}
	}
}
