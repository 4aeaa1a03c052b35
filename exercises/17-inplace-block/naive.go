package inplace

import "memlab.dev/memlab/tensor"

// NaiveBlock computes relu((x + b) * s) + x out of place, as it is first
// written: every step makes a new tensor, and each intermediate is released as
// soon as the next one exists (as PyTorch frees a temporary when its last
// reference goes). x is a [rows, cols] float32 tensor, b a [cols] bias.
func NaiveBlock(x, b *tensor.Tensor, s float64) (*tensor.Tensor, error) {
	t1, err := x.Add(b)
	if err != nil {
		return nil, err
	}
	t2, err := t1.Scale(s)
	if err := release(t1, err); err != nil {
		return nil, err
	}
	t3, err := t2.Relu()
	if err := release(t2, err); err != nil {
		return nil, err
	}
	out, err := t3.Add(x)
	if err := release(t3, err); err != nil {
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
