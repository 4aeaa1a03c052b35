package tensor

import (
	"slices"
	"strconv"
	"strings"
)

// Shape is the size of each dimension of a tensor, outermost first (PyTorch's
// torch.Size). A Shape of length 0 is a scalar of one element.
type Shape []int

// Numel returns the number of elements of a tensor of this shape: the product of
// its sizes, 1 for a scalar.
func (s Shape) Numel() int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// Dim returns the number of dimensions.
func (s Shape) Dim() int { return len(s) }

// Equal reports whether s and o have the same sizes.
func (s Shape) Equal(o Shape) bool { return slices.Equal(s, o) }

// String formats s as PyTorch formats sizes in its messages: "[2, 3]".
func (s Shape) String() string { return formatInts(s) }

// Clone returns a copy of s that shares no memory with it.
func (s Shape) Clone() Shape { return append(Shape(nil), s...) }

// check returns an error naming the first negative size.
func (s Shape) check(op string) error {
	for i, d := range s {
		if d < 0 {
			return torchErr(op, "Trying to create tensor with negative dimension %d: %v", s[i], s)
		}
	}
	return nil
}

// ContiguousStrides returns the row-major (C order) strides of shape, in
// elements: the last dimension has stride 1 and each other dimension strides
// over the whole of the ones after it. Sizes of 0 count as 1, as in PyTorch.
func ContiguousStrides(shape []int) []int {
	strides := make([]int, len(shape))
	z := 1
	for d := len(shape) - 1; d >= 0; d-- {
		strides[d] = z
		z *= max(shape[d], 1)
	}
	return strides
}

// WrapDim turns a possibly negative dimension index into one in [0, ndim),
// with PyTorch's error when it is out of range. A scalar (ndim 0) accepts 0
// and -1, as PyTorch does.
func WrapDim(dim, ndim int) (int, error) { return wrapDim("dim", dim, ndim) }

// wrapDim is WrapDim with the operation its error names.
func wrapDim(op string, dim, ndim int) (int, error) {
	if ndim <= 0 {
		ndim = 1
	}
	if dim < -ndim || dim > ndim-1 {
		return 0, indexErr(op, "Dimension out of range (expected to be in range of [%d, %d], but got %d)", -ndim, ndim-1, dim)
	}
	if dim < 0 {
		dim += ndim
	}
	return dim, nil
}

// BroadcastShapes returns the shape two tensors of shapes a and b broadcast to,
// aligning trailing dimensions; sizes must match or one of them be 1.
func BroadcastShapes(a, b []int) (Shape, error) { return broadcastShapes("broadcast", a, b) }

// broadcastShapes is BroadcastShapes with the operation its error names.
func broadcastShapes(op string, a, b []int) (Shape, error) {
	n := max(len(a), len(b))
	out := make(Shape, n)
	for i := n - 1; i >= 0; i-- {
		off := n - 1 - i
		sa, sb := 1, 1
		if da := len(a) - 1 - off; da >= 0 {
			sa = a[da]
		}
		if db := len(b) - 1 - off; db >= 0 {
			sb = b[db]
		}
		if sa != sb && sa != 1 && sb != 1 {
			return nil, torchErr(op, "The size of tensor a (%d) must match the size of tensor b (%d) at non-singleton dimension %d", sa, sb, i)
		}
		out[i] = sa
		if sa == 1 {
			out[i] = sb
		}
	}
	return out, nil
}

// InferShape replaces a single -1 in shape by the size that makes the shape hold
// numel elements, with PyTorch's errors ("only one dimension can be inferred",
// "shape '[2, -1]' is invalid for input of size 5").
func InferShape(shape []int, numel int) (Shape, error) { return inferShape("view", shape, numel) }

func inferShape(op string, shape []int, numel int) (Shape, error) {
	res := Shape(shape).Clone()
	newsize := 1
	infer := -1
	for d, s := range shape {
		switch {
		case s == -1:
			if infer >= 0 {
				return nil, torchErr(op, "only one dimension can be inferred")
			}
			infer = d
		case s >= 0:
			newsize *= s
		default:
			return nil, torchErr(op, "invalid shape dimension %d at index %d of shape %s", s, d, formatInts(shape))
		}
	}
	if numel == newsize || (infer >= 0 && newsize > 0 && numel%newsize == 0) {
		if infer >= 0 {
			if newsize == 0 {
				return nil, torchErr(op, "cannot reshape tensor of 0 elements into shape %s because the unspecified dimension size -1 can be any value and is ambiguous", formatInts(shape))
			}
			res[infer] = numel / newsize
		}
		return res, nil
	}
	return nil, torchErr(op, "shape '%s' is invalid for input of size %d", formatInts(shape), numel)
}

func formatInts(v []int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, x := range v {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(x))
	}
	b.WriteByte(']')
	return b.String()
}
