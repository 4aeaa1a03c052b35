package tensor

import "slices"

// The layouts PyTorch gives new tensors made from existing ones. They matter
// to the lessons: the result of an elementwise operation on a transposed
// tensor is transposed too, so a later View of it can fail.

// CloneLayout is the layout PyTorch gives clone() and to(dtype) of a tensor of
// layout l (memory_format=torch.preserve_format): l's strides when l is dense
// and without overlap, otherwise the dense strides that keep the order of l's
// dimensions in memory (infer_dense_strides). The offset is 0.
func CloneLayout(l Layout) Layout {
	if l.IsNonOverlappingAndDense() {
		return Layout{Shape: l.Shape.Clone(), Strides: append([]int(nil), l.Strides...)}
	}
	return permutedLayout(l.Shape, []Layout{l}, false)
}

// ElementwiseLayout is the layout PyTorch's TensorIterator gives the output of
// an elementwise operation on inputs broadcast to shape: when every input has
// that shape, contiguous if every input is, the inputs' strides if they all
// have the same dense strides; otherwise strides that order dimensions as the
// inputs do in memory, the first input deciding first (so x.t() + y is
// transposed like x). Those are TensorIterator's compatible strides: each the
// product of the sizes of the faster dimensions, zero included, so every
// dimension slower than one of size 0 has stride 0 (x * 2 on an empty(1,1,0,1)
// has strides [0, 0, 1, 0]); row-major order gives the contiguous strides. A
// Python number operand (x * 2.0) is an input of shape [] (ScalarLayout), so
// the inputs never all have the output's shape unless it is [].
func ElementwiseLayout(shape Shape, inputs ...Layout) Layout {
	same, contiguous, dense := true, true, true
	for _, in := range inputs {
		same = same && in.Shape.Equal(shape)
		contiguous = contiguous && in.IsContiguous()
		dense = dense && in.IsNonOverlappingAndDense() && slices.Equal(in.Strides, inputs[0].Strides)
	}
	if same && len(inputs) > 0 {
		if contiguous {
			return ContiguousLayout(shape...)
		}
		if dense {
			return Layout{Shape: shape.Clone(), Strides: append([]int(nil), inputs[0].Strides...)}
		}
	}
	return permutedLayout(shape, inputs, true)
}

// ScalarLayout is the layout of a Python number in an elementwise operation
// (a wrapped 0-dim tensor): pass it to ElementwiseLayout for x * alpha.
func ScalarLayout() Layout { return ContiguousLayout() }

// permutedLayout sorts the dimensions of shape by the strides of the inputs
// (broadcast to shape), as TensorIterator's reorder_dimensions does, and
// returns the dense layout with that order in memory. With iterator set, the
// strides are TensorIterator's (compatible_stride: a size 0 zeroes every
// slower stride; row-major order is contiguous); without, infer_dense_strides'
// for empty_like (a size 0 counts as 1).
func permutedLayout(shape Shape, inputs []Layout, iterator bool) Layout {
	n := len(shape)
	if n <= 1 {
		return ContiguousLayout(shape...)
	}
	// Strides of each input in the dimensions of shape; 0 where broadcast.
	strides := make([][]int, len(inputs))
	for k, in := range inputs {
		st := make([]int, n)
		off := n - in.Dim()
		for d := off; d < n; d++ {
			if in.Shape[d-off] != 1 || shape[d] == 1 {
				st[d] = in.Strides[d-off]
			}
		}
		strides[k] = st
	}
	// swap says whether dimension d0 should come after d1 in memory order
	// (fastest first): 1 yes, -1 no, 0 undecided.
	swap := func(d0, d1 int) int {
		for _, st := range strides {
			s0, s1 := st[d0], st[d1]
			switch {
			case s0 == 0 || s1 == 0:
				continue
			case s0 < s1:
				return -1
			case s0 > s1:
				return 1
			case shape[d0] > shape[d1]:
				return 1
			}
		}
		return 0
	}
	perm := make([]int, n) // fastest dimension first; starts as row-major
	for i := range perm {
		perm[i] = n - 1 - i
	}
	for i := 1; i < n; i++ {
		d1 := i
		for d0 := i - 1; d0 >= 0; d0-- {
			c := swap(perm[d0], perm[d1])
			if c > 0 {
				perm[d0], perm[d1] = perm[d1], perm[d0]
				d1 = d0
			} else if c < 0 {
				break
			}
		}
	}
	rowMajor := true
	for i, d := range perm {
		rowMajor = rowMajor && d == n-1-i
	}
	if iterator && rowMajor {
		return ContiguousLayout(shape...)
	}
	out := Layout{Shape: shape.Clone(), Strides: make([]int, n)}
	z := 1
	for _, d := range perm {
		out.Strides[d] = z
		if iterator {
			z *= shape[d]
		} else {
			z *= max(shape[d], 1)
		}
	}
	return out
}
