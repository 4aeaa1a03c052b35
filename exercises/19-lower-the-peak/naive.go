package peak

import "memlab.dev/memlab/tensor"

// NaiveForward is one feed-forward layer as first written: out = gelu(x @ w +
// bias) * 0.5 for x of shape [batch, seq, hidden], w [hidden, hidden] and bias
// [hidden], returned as [batch, seq, hidden]. It copies x before flattening it
// and makes a new tensor at every step, releasing each temporary as soon as the
// next one exists.
func NaiveForward(x, w, bias *tensor.Tensor) (*tensor.Tensor, error) {
	shape := x.Shape()
	if len(shape) != 3 {
		return nil, errBadShape(shape)
	}
	c, err := x.Clone()
	if err != nil {
		return nil, err
	}
	flat, err := c.Reshape(shape[0]*shape[1], shape[2])
	if err := release(c, err); err != nil {
		return nil, err
	}
	h, err := flat.Matmul(w)
	if err := release(flat, err); err != nil {
		return nil, err
	}
	a, err := h.Add(bias)
	if err := release(h, err); err != nil {
		return nil, err
	}
	g, err := a.Gelu()
	if err := release(a, err); err != nil {
		return nil, err
	}
	s, err := g.Scale(0.5)
	if err := release(g, err); err != nil {
		return nil, err
	}
	out, err := s.Reshape(shape...)
	if err := release(s, err); err != nil {
		return nil, err
	}
	return out, nil
}

// release releases t and returns err, or the release's error if err is nil.
func release(t *tensor.Tensor, err error) error {
	if rerr := t.Release(); err == nil {
		return rerr
	}
	return err
}
