package tensor

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
)

// Layout is a tensor's metadata: how its elements map to the flat storage they
// live in. Element (i0, i1, …) is storage element Offset + Σ ik·Strides[k].
// Strides and Offset count elements, not bytes, as in PyTorch. Views change the
// Layout and never the storage; every method returns a new Layout and leaves its
// receiver unchanged.
type Layout struct {
	Shape   Shape
	Strides []int
	Offset  int
}

// ContiguousLayout returns the row-major layout of shape at offset 0: what
// torch.empty(shape) has.
func ContiguousLayout(shape ...int) Layout {
	return Layout{Shape: Shape(shape).Clone(), Strides: ContiguousStrides(shape)}
}

// Dim returns the number of dimensions.
func (l Layout) Dim() int { return len(l.Shape) }

// Numel returns the number of elements.
func (l Layout) Numel() int { return l.Shape.Numel() }

// String formats l as "shape [2, 3] strides [3, 1] offset 0".
func (l Layout) String() string {
	return fmt.Sprintf("shape %v strides %s offset %d", l.Shape, formatInts(l.Strides), l.Offset)
}

func (l Layout) clone() Layout {
	return Layout{Shape: l.Shape.Clone(), Strides: append([]int(nil), l.Strides...), Offset: l.Offset}
}

// Validate returns an error unless l is well formed: as many strides as
// sizes, and no negative size, stride or offset. Every method that returns an
// error checks it; the predicates report false for a malformed layout.
func (l Layout) Validate() error {
	if len(l.Shape) != len(l.Strides) {
		return fmt.Errorf("tensor: malformed layout: %d sizes but %d strides", len(l.Shape), len(l.Strides))
	}
	if l.Offset < 0 {
		return fmt.Errorf("tensor: malformed layout: negative offset %d", l.Offset)
	}
	for i := range l.Shape {
		if l.Shape[i] < 0 || l.Strides[i] < 0 {
			return fmt.Errorf("tensor: malformed layout: negative size or stride in dimension %d: %v", i, l)
		}
	}
	return nil
}

// IsContiguous reports whether the elements are laid out row-major without gaps
// (PyTorch's is_contiguous): walking dimensions from the last, each stride equals
// the number of elements after it. Dimensions of size 1 are ignored, whatever
// their stride, and a tensor without elements is contiguous.
func (l Layout) IsContiguous() bool {
	if l.Validate() != nil {
		return false
	}
	if l.Numel() == 0 {
		return true
	}
	z := 1
	for d := len(l.Shape) - 1; d >= 0; d-- {
		if l.Shape[d] != 1 {
			if l.Strides[d] != z {
				return false
			}
			z *= l.Shape[d]
		}
	}
	return true
}

// IsNonOverlappingAndDense reports whether the elements fill a block of storage
// exactly once in some order of dimensions (PyTorch's
// is_non_overlapping_and_dense): a transposed contiguous tensor is, a slice with
// a step or a broadcast (stride 0) tensor is not. A contiguous layout always is,
// and so a layout without elements is, whatever its strides (PyTorch's
// TensorImpl computes it as is_contiguous or …).
func (l Layout) IsNonOverlappingAndDense() bool {
	if l.Validate() != nil {
		return false
	}
	if l.IsContiguous() {
		return true
	}
	n := len(l.Shape)
	if n == 0 {
		return true
	}
	if n == 1 {
		return l.Shape[0] < 2 || l.Strides[0] == 1
	}
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	sort.SliceStable(perm, func(i, j int) bool {
		a, b := perm[i], perm[j]
		if l.Shape[a] < 2 {
			return false
		}
		if l.Shape[b] < 2 {
			return true
		}
		return l.Strides[a] < l.Strides[b]
	})
	require := 1
	for _, d := range perm {
		if l.Shape[d] < 2 {
			return true
		}
		if l.Strides[d] != require {
			return false
		}
		require *= l.Shape[d]
	}
	return true
}

// HasInternalOverlap reports whether two different elements of l are certainly
// the same storage element: a dimension of size above 1 with stride 0, as made
// by Expand. Writing in place to such a tensor is an error in PyTorch.
func (l Layout) HasInternalOverlap() bool {
	if l.Validate() != nil || l.IsNonOverlappingAndDense() {
		return false
	}
	for i := range l.Shape {
		if l.Shape[i] > 1 && l.Strides[i] == 0 {
			return true
		}
	}
	return false
}

// Span returns the smallest and one past the largest storage element l reaches;
// lo == hi when l has no elements or is malformed.
func (l Layout) Span() (lo, hi int) {
	if l.Validate() != nil || l.Numel() == 0 {
		return l.Offset, l.Offset
	}
	hi = l.Offset
	for i := range l.Shape {
		hi += (l.Shape[i] - 1) * l.Strides[i]
	}
	return l.Offset, hi + 1
}

// computeStride is PyTorch's computeStride: the strides that let a tensor of
// layout l be viewed with newShape (same number of elements), or ok=false when a
// dimension of newShape would have to span two separate blocks of memory.
func (l Layout) computeStride(newShape Shape) (strides []int, ok bool) {
	oldShape, oldStride := l.Shape, l.Strides
	if len(oldShape) == 0 {
		strides = make([]int, len(newShape))
		for i := range strides {
			strides[i] = 1
		}
		return strides, true
	}
	numel := oldShape.Numel()
	if numel == 0 && oldShape.Equal(newShape) {
		return append([]int(nil), oldStride...), true
	}
	newStride := make([]int, len(newShape))
	if numel == 0 {
		for d := len(newShape) - 1; d >= 0; d-- {
			if d == len(newShape)-1 {
				newStride[d] = 1
			} else {
				newStride[d] = max(newShape[d+1], 1) * newStride[d+1]
			}
		}
		return newStride, true
	}
	viewD := len(newShape) - 1
	chunkBaseStride := oldStride[len(oldStride)-1]
	tensorNumel, viewNumel := 1, 1
	for tensorD := len(oldShape) - 1; tensorD >= 0; tensorD-- {
		tensorNumel *= oldShape[tensorD]
		if tensorD == 0 || (oldShape[tensorD-1] != 1 && oldStride[tensorD-1] != tensorNumel*chunkBaseStride) {
			for viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] == 1) {
				newStride[viewD] = viewNumel * chunkBaseStride
				viewNumel *= newShape[viewD]
				viewD--
			}
			if viewNumel != tensorNumel {
				return nil, false
			}
			if tensorD > 0 {
				chunkBaseStride = oldStride[tensorD-1]
				tensorNumel, viewNumel = 1, 1
			}
		}
	}
	if viewD != -1 {
		return nil, false
	}
	return newStride, true
}

// View returns l seen with a new shape over the same elements, as Tensor.view:
// one size may be -1 and is inferred. A non-contiguous layout can still be viewed
// when every new dimension lies within one block of evenly strided memory;
// otherwise the error is PyTorch's, which suggests reshape.
func (l Layout) View(shape ...int) (Layout, error) {
	if err := l.Validate(); err != nil {
		return Layout{}, err
	}
	s, err := inferShape("view", shape, l.Numel())
	if err != nil {
		return Layout{}, err
	}
	strides, ok := l.computeStride(s)
	if !ok {
		return Layout{}, torchErr("view", "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
	}
	return Layout{Shape: s, Strides: strides, Offset: l.Offset}, nil
}

// Reshape returns the layout Tensor.reshape gives: a view of l when View would
// succeed (copy false), otherwise the contiguous layout of the new shape at
// offset 0, which the data must be copied into (copy true).
func (l Layout) Reshape(shape ...int) (out Layout, copy bool, err error) {
	if err := l.Validate(); err != nil {
		return Layout{}, false, err
	}
	s, err := inferShape("reshape", shape, l.Numel())
	if err != nil {
		return Layout{}, false, err
	}
	if strides, ok := l.computeStride(s); ok {
		return Layout{Shape: s, Strides: strides, Offset: l.Offset}, false, nil
	}
	return ContiguousLayout(s...), true, nil
}

// Transpose swaps dimensions d0 and d1 (sizes and strides); no data moves.
func (l Layout) Transpose(d0, d1 int) (Layout, error) {
	if err := l.Validate(); err != nil {
		return Layout{}, err
	}
	a, err := wrapDim("transpose", d0, l.Dim())
	if err != nil {
		return Layout{}, err
	}
	b, err := wrapDim("transpose", d1, l.Dim())
	if err != nil {
		return Layout{}, err
	}
	out := l.clone()
	if l.Dim() == 0 {
		return out, nil
	}
	out.Shape[a], out.Shape[b] = out.Shape[b], out.Shape[a]
	out.Strides[a], out.Strides[b] = out.Strides[b], out.Strides[a]
	return out, nil
}

// T transposes a layout of at most 2 dimensions (Tensor.t); 0-D and 1-D layouts
// are returned unchanged.
func (l Layout) T() (Layout, error) {
	if err := l.Validate(); err != nil {
		return Layout{}, err
	}
	if l.Dim() > 2 {
		return Layout{}, torchErr("t", "t() expects a tensor with <= 2 dimensions, but self is %dD", l.Dim())
	}
	if l.Dim() < 2 {
		return l.clone(), nil
	}
	return l.Transpose(0, 1)
}

// Permute reorders the dimensions: dimension i of the result is dimension
// dims[i] of l.
func (l Layout) Permute(dims ...int) (Layout, error) {
	if err := l.Validate(); err != nil {
		return Layout{}, err
	}
	if len(dims) != l.Dim() {
		return Layout{}, torchErr("permute", "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = %d is not equal to len(dims) = %d", l.Dim(), len(dims))
	}
	out := Layout{Shape: make(Shape, len(dims)), Strides: make([]int, len(dims)), Offset: l.Offset}
	seen := make([]bool, len(dims))
	for i, d := range dims {
		w, err := wrapDim("permute", d, l.Dim())
		if err != nil {
			return Layout{}, err
		}
		if seen[w] {
			return Layout{}, torchErr("permute", "permute(): duplicate dims are not allowed.")
		}
		seen[w] = true
		out.Shape[i], out.Strides[i] = l.Shape[w], l.Strides[w]
	}
	return out, nil
}

// Slice keeps the elements start, start+step, … below end of dimension dim, as
// Python's t[start:end:step]. Negative start and end count from the end; both
// are clamped to the dimension as PyTorch does, so an out-of-range slice is empty
// rather than an error. The step must be positive.
func (l Layout) Slice(dim, start, end, step int) (Layout, error) {
	if err := l.Validate(); err != nil {
		return Layout{}, err
	}
	if l.Dim() == 0 {
		return Layout{}, indexErr("slice", "slice() cannot be applied to a 0-dim tensor.")
	}
	d, err := wrapDim("slice", dim, l.Dim())
	if err != nil {
		return Layout{}, err
	}
	// The messages of Python indexing (t[::0], t[::-1]), what learners meet.
	if step == 0 {
		return Layout{}, torchErr("slice", "slice step cannot be zero")
	}
	if step < 0 {
		return Layout{}, torchErr("slice", "step must be greater than zero")
	}
	size := l.Shape[d]
	if start < 0 {
		start += size
	}
	if end < 0 {
		end += size
	}
	if start < 0 {
		start = 0
	} else if start >= size {
		start = size
	}
	if end < start {
		end = start
	} else if end >= size {
		end = size
	}
	out := l.clone()
	out.Offset += start * l.Strides[d]
	out.Shape[d] = 0
	if n := end - start; n > 0 {
		out.Shape[d] = (n-1)/step + 1 // ceil(n/step), without overflowing near MaxInt
	}
	// The new stride is stride × step. When that overflows, the step is larger
	// than the dimension, so the result holds at most one element along it and
	// its stride addresses nothing: PyTorch's wraps around (to a negative
	// number, even), memlab keeps the old one.
	if stride, ok := mulInt(l.Strides[d], step); ok {
		out.Strides[d] = stride
	}
	return out, nil
}

// mulInt returns a×b for non-negative a and b, and whether it fits in an int.
func mulInt(a, b int) (int, bool) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	return int(lo), hi == 0 && lo <= math.MaxInt
}

// Narrow keeps length elements of dimension dim from start (Tensor.narrow).
// Unlike Slice it does not clamp: the range must lie inside the dimension.
func (l Layout) Narrow(dim, start, length int) (Layout, error) {
	if err := l.Validate(); err != nil {
		return Layout{}, err
	}
	if l.Dim() == 0 {
		return Layout{}, torchErr("narrow", "narrow() cannot be applied to a 0-dim tensor.")
	}
	if length < 0 {
		return Layout{}, torchErr("narrow", "narrow(): length must be non-negative.")
	}
	d, err := wrapDim("narrow", dim, l.Dim())
	if err != nil {
		return Layout{}, err
	}
	size := l.Shape[d]
	if start < -size || start > size {
		return Layout{}, indexErr("narrow", "start out of range (expected to be in range of [%d, %d], but got %d)", -size, size, start)
	}
	if start < 0 {
		start += size
	}
	if start > size-length {
		return Layout{}, torchErr("narrow", "start (%d) + length (%d) exceeds dimension size (%d).", start, length, size)
	}
	return l.Slice(d, start, start+length, 1)
}

// Select removes dimension dim, keeping the elements at index (t[..., index, ...]).
func (l Layout) Select(dim, index int) (Layout, error) {
	if err := l.Validate(); err != nil {
		return Layout{}, err
	}
	if l.Dim() == 0 {
		return Layout{}, indexErr("select", "select() cannot be applied to a 0-dim tensor.")
	}
	d, err := wrapDim("select", dim, l.Dim())
	if err != nil {
		return Layout{}, err
	}
	size := l.Shape[d]
	if index < -size || index >= size {
		return Layout{}, indexErr("select", "select(): index %d out of range for tensor of size %v at dimension %d", index, l.Shape, d)
	}
	if index < 0 {
		index += size
	}
	out := Layout{Offset: l.Offset + index*l.Strides[d]}
	out.Shape = append(l.Shape[:d:d].Clone(), l.Shape[d+1:]...)
	out.Strides = append(append([]int(nil), l.Strides[:d]...), l.Strides[d+1:]...)
	return out, nil
}

// Expand broadcasts l to shape without copying: dimensions of size 1 (and new
// leading dimensions) get stride 0, so every index reads the same element. A size
// of -1 keeps the existing size.
func (l Layout) Expand(shape ...int) (Layout, error) {
	return l.expand("Tensor{"+l.Shape.String()+"}", shape)
}

// expand is Expand with the description of the tensor PyTorch puts in its
// message about too few sizes ("torch.cuda.FloatTensor{[2, 3]}").
func (l Layout) expand(desc string, sizes []int) (Layout, error) {
	if err := l.Validate(); err != nil {
		return Layout{}, err
	}
	if len(sizes) < l.Dim() {
		return Layout{}, torchErr("expand", "expand(%s, size=%s): the number of sizes provided (%d) must be greater or equal to the number of dimensions in the tensor (%d)", desc, formatInts(sizes), len(sizes), l.Dim())
	}
	n := len(sizes)
	out := Layout{Shape: make(Shape, n), Strides: make([]int, n), Offset: l.Offset}
	if l.Dim() == 0 {
		// PyTorch's inferExpandGeometry takes a 0-D tensor's sizes as they are,
		// every stride 0 (so expand((1,)) has stride 0, not 1), and checks
		// negative sizes only when it counts the elements.
		prod, overflow := uint64(1), false
		for i, s := range sizes {
			hi, lo := bits.Mul64(prod, uint64(s))
			prod, overflow = lo, overflow || hi != 0
			out.Shape[i] = s
		}
		if overflow || prod > math.MaxInt64 {
			return Layout{}, torchErr("expand", "numel: integer multiplication overflow")
		}
		if slices.ContainsFunc(sizes, func(s int) bool { return s < 0 }) {
			// PyTorch makes a tensor of negative size here (expand((-1, 0))).
			return Layout{}, torchErr("expand", "Trying to create tensor with negative dimension: %s", formatInts(sizes))
		}
		return out, nil
	}
	for i := n - 1; i >= 0; i-- {
		d := l.Dim() - 1 - (n - 1 - i)
		size, stride := 1, 1
		if d >= 0 {
			size, stride = l.Shape[d], l.Strides[d]
		} else if i+1 < n {
			stride = out.Shape[i+1] * out.Strides[i+1]
		}
		target := sizes[i]
		if target == -1 {
			if d < 0 {
				return Layout{}, torchErr("expand", "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension %d", i)
			}
			target = size
		}
		if target < 0 {
			return Layout{}, torchErr("expand", "Trying to create tensor with negative dimension %d: %s", target, formatInts(sizes))
		}
		if size != target {
			if size != 1 {
				return Layout{}, torchErr("expand", "The expanded size of the tensor (%d) must match the existing size (%d) at non-singleton dimension %d.  Target sizes: %s.  Tensor sizes: %v", target, size, i, formatInts(sizes), l.Shape)
			}
			size, stride = target, 0
		}
		out.Shape[i], out.Strides[i] = size, stride
	}
	return out, nil
}

// Squeeze removes dimensions of size 1: all of them when dims is empty,
// otherwise those listed that have size 1 (others are left alone, as in PyTorch).
// A dimension may be named once: two names of it (such as -2 and 0 of a 2-D
// layout) are an error, as in PyTorch's squeeze of a list of dims.
func (l Layout) Squeeze(dims ...int) (Layout, error) {
	if err := l.Validate(); err != nil {
		return Layout{}, err
	}
	drop := make([]bool, max(l.Dim(), 1))
	if len(dims) == 0 {
		for i, s := range l.Shape {
			drop[i] = s == 1
		}
	}
	seen := make([]bool, max(l.Dim(), 1))
	for _, dim := range dims {
		d, err := wrapDim("squeeze", dim, l.Dim())
		if err != nil {
			return Layout{}, err
		}
		if seen[d] {
			return Layout{}, torchErr("squeeze", "dim %d appears multiple times in the list of dims", d)
		}
		seen[d] = true
		if l.Dim() > 0 && l.Shape[d] == 1 {
			drop[d] = true
		}
	}
	out := Layout{Shape: Shape{}, Strides: []int{}, Offset: l.Offset}
	for i := range l.Shape {
		if !drop[i] {
			out.Shape = append(out.Shape, l.Shape[i])
			out.Strides = append(out.Strides, l.Strides[i])
		}
	}
	return out, nil
}

// Unsqueeze inserts a dimension of size 1 at dim, which may be l.Dim() (append)
// or negative (counted from the end of the result).
func (l Layout) Unsqueeze(dim int) (Layout, error) {
	if err := l.Validate(); err != nil {
		return Layout{}, err
	}
	d, err := wrapDim("unsqueeze", dim, l.Dim()+1)
	if err != nil {
		return Layout{}, err
	}
	stride := 1
	if d < l.Dim() {
		stride = l.Shape[d] * l.Strides[d]
	}
	out := Layout{Offset: l.Offset}
	out.Shape = append(append(append(Shape{}, l.Shape[:d]...), 1), l.Shape[d:]...)
	out.Strides = append(append(append([]int{}, l.Strides[:d]...), stride), l.Strides[d:]...)
	return out, nil
}

// Flatten returns the layout Tensor.flatten(start, end) gives: the layout
// itself when start and end name one dimension (PyTorch returns the input),
// otherwise Reshape to FlattenShape's shape (a view, or a copy when copy is
// true).
func (l Layout) Flatten(start, end int) (out Layout, copy bool, err error) {
	shape, same, err := l.flatten(start, end)
	if err != nil || same {
		return l.clone(), false, err
	}
	return l.Reshape(shape...)
}

// flatten is FlattenShape and whether flatten(start, end) returns its input
// unchanged: start and end naming one dimension of a layout of at least one.
func (l Layout) flatten(start, end int) (shape Shape, same bool, err error) {
	shape, err = l.FlattenShape(start, end)
	if err != nil || l.Dim() == 0 {
		return shape, false, err
	}
	s, _ := wrapDim("flatten", start, l.Dim())
	e, _ := wrapDim("flatten", end, l.Dim())
	return shape, s == e, nil
}

// FlattenShape returns the shape Tensor.flatten(start, end) gives: dimensions
// start..end (inclusive, negative counting from the end) merged into one. A
// scalar flattens to [1]. Flattening may need a copy: see Reshape.
func (l Layout) FlattenShape(start, end int) (Shape, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	s, err := wrapDim("flatten", start, l.Dim())
	if err != nil {
		return nil, err
	}
	e, err := wrapDim("flatten", end, l.Dim())
	if err != nil {
		return nil, err
	}
	if s > e {
		return nil, torchErr("flatten", "flatten() has invalid args: start_dim cannot come after end_dim")
	}
	if l.Dim() == 0 {
		return Shape{1}, nil
	}
	out := append(Shape{}, l.Shape[:s]...)
	out = append(out, Shape(l.Shape[s:e+1]).Numel())
	return append(out, l.Shape[e+1:]...), nil
}
