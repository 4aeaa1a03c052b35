package tensor

// Views: new tensors over the same storage with a new Layout. None of them
// allocates device memory or copies data; each returns a new handle that keeps
// the storage alive until it is released. The rules and error messages are
// PyTorch's; see the Layout methods of the same names.

func (t *Tensor) viewOp(op, gradFn string, f func(Layout) (Layout, error)) (*Tensor, error) {
	if err := t.live(op); err != nil {
		return nil, err
	}
	l, err := f(t.layout)
	if err != nil {
		return nil, err
	}
	return t.alias(op, l, gradFn)
}

// View returns a view with a new shape (one size may be -1). It fails, with
// PyTorch's message suggesting Reshape, when the layout cannot express the new
// shape without copying.
func (t *Tensor) View(shape ...int) (*Tensor, error) {
	return t.viewOp("view", "ViewBackward0", func(l Layout) (Layout, error) { return l.View(shape...) })
}

// Transpose returns a view with dimensions d0 and d1 swapped: only the strides
// change.
func (t *Tensor) Transpose(d0, d1 int) (*Tensor, error) {
	return t.viewOp("transpose", "TransposeBackward0", func(l Layout) (Layout, error) { return l.Transpose(d0, d1) })
}

// T returns the transpose of a tensor of at most 2 dimensions (Tensor.t()).
func (t *Tensor) T() (*Tensor, error) {
	return t.viewOp("t", "TBackward0", Layout.T)
}

// Permute returns a view whose dimension i is dimension dims[i] of t.
func (t *Tensor) Permute(dims ...int) (*Tensor, error) {
	return t.viewOp("permute", "PermuteBackward0", func(l Layout) (Layout, error) { return l.Permute(dims...) })
}

// Slice returns t[start:end:step] along dim, a view. Out-of-range bounds are
// clamped as in Python; step must be positive.
func (t *Tensor) Slice(dim, start, end, step int) (*Tensor, error) {
	return t.viewOp("slice", "SliceBackward0", func(l Layout) (Layout, error) { return l.Slice(dim, start, end, step) })
}

// Narrow returns length elements of dimension dim from start, a view; the
// range must lie inside the dimension.
func (t *Tensor) Narrow(dim, start, length int) (*Tensor, error) {
	return t.viewOp("narrow", "SliceBackward0", func(l Layout) (Layout, error) { return l.Narrow(dim, start, length) })
}

// Select returns the view at index of dimension dim, which it removes
// (t[index] for dim 0).
func (t *Tensor) Select(dim, index int) (*Tensor, error) {
	return t.viewOp("select", "SelectBackward0", func(l Layout) (Layout, error) { return l.Select(dim, index) })
}

// Expand returns a view broadcast to shape: expanded dimensions have stride 0,
// so all their elements are one storage element. Writing in place to the
// result is an error.
func (t *Tensor) Expand(shape ...int) (*Tensor, error) {
	return t.viewOp("expand", "ExpandBackward0", func(l Layout) (Layout, error) {
		return l.expand(torchTypeName(t.dtype)+"{"+l.Shape.String()+"}", shape)
	})
}

// Squeeze returns a view without the given dimensions of size 1, or without
// all dimensions of size 1 when none are given.
func (t *Tensor) Squeeze(dims ...int) (*Tensor, error) {
	fn := "SqueezeBackward0"
	switch {
	case len(dims) == 1:
		fn = "SqueezeBackward1"
	case len(dims) > 1:
		fn = "SqueezeBackward2"
	}
	return t.viewOp("squeeze", fn, func(l Layout) (Layout, error) { return l.Squeeze(dims...) })
}

// Unsqueeze returns a view with a dimension of size 1 inserted at dim.
func (t *Tensor) Unsqueeze(dim int) (*Tensor, error) {
	return t.viewOp("unsqueeze", "UnsqueezeBackward0", func(l Layout) (Layout, error) { return l.Unsqueeze(dim) })
}

// Flatten merges dimensions start..end into one, as Reshape: a view when the
// layout allows it, a copy otherwise; t itself (a new handle) when start and
// end name one dimension, as in PyTorch.
func (t *Tensor) Flatten(start, end int) (*Tensor, error) {
	if err := t.live("flatten"); err != nil {
		return nil, err
	}
	shape, same, err := t.layout.flatten(start, end)
	if err != nil {
		return nil, err
	}
	if same {
		return t.sameHandle("flatten")
	}
	return t.Reshape(shape...)
}
