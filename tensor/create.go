package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Empty returns a contiguous tensor of the given shape whose elements are
// whatever the memory held (torch.empty). Its storage is one allocation of
// Numel × dtype.Size() bytes from dev; a tensor without elements allocates
// nothing.
func Empty(dev Device, dtype DType, shape ...int) (*Tensor, error) {
	return empty("empty", dev, dtype, shape)
}

func empty(op string, dev Device, dtype DType, shape []int) (*Tensor, error) {
	if dev == nil {
		return nil, fmt.Errorf("tensor: %s: nil device", op)
	}
	if !dtype.Valid() {
		return nil, fmt.Errorf("tensor: %s: invalid dtype %v", op, dtype)
	}
	n, err := checkNewShape(op, dtype, shape)
	if err != nil {
		return nil, err
	}
	s, err := newStorage(dev, n*int64(dtype.Size()))
	if err != nil {
		return nil, err
	}
	return newTensor(s, ContiguousLayout(shape...), dtype), nil
}

// checkNewShape returns the number of elements of a new tensor of shape, or an
// error naming a negative size, too many dimensions, or a size in bytes that
// overflows int64.
func checkNewShape(op string, dtype DType, shape []int) (int64, error) {
	if err := Shape(shape).check(op); err != nil {
		return 0, err
	}
	if len(shape) > MaxRank {
		return 0, fmt.Errorf("tensor: %s: %d dimensions, more than the %d kernels accept", op, len(shape), MaxRank)
	}
	return checkNumel(op, dtype, shape)
}

// checkNumel returns the number of elements of shape (whose sizes are not
// negative), or an error when its size in bytes overflows int64.
func checkNumel(op string, dtype DType, shape []int) (int64, error) {
	n := int64(1)
	for _, d := range shape {
		if d != 0 && n > math.MaxInt64/int64(dtype.Size())/int64(d) {
			return 0, fmt.Errorf("tensor: %s: shape %v of %v overflows int64 bytes", op, Shape(shape), dtype)
		}
		n *= int64(d)
	}
	return n, nil
}

// Full returns a contiguous tensor with every element set to v (torch.full).
func Full(dev Device, dtype DType, v float64, shape ...int) (*Tensor, error) {
	t, err := empty("full", dev, dtype, shape)
	if err != nil {
		return nil, err
	}
	if err := t.run("full", func() error { return dev.Fill(t.strided(), v) }); err != nil {
		return nil, t.releaseAfter(err)
	}
	return t, nil
}

// Zeros returns a tensor of zeros (torch.zeros).
func Zeros(dev Device, dtype DType, shape ...int) (*Tensor, error) {
	return Full(dev, dtype, 0, shape...)
}

// Ones returns a tensor of ones (torch.ones).
func Ones(dev Device, dtype DType, shape ...int) (*Tensor, error) {
	return Full(dev, dtype, 1, shape...)
}

// Rand returns a tensor of values uniform in [0, 1) from the device's
// counter-based generator: the same seed gives the same values on every device.
func Rand(dev Device, seed uint64, dtype DType, shape ...int) (*Tensor, error) {
	return random("rand", dev, seed, dtype, false, 0, 1, shape)
}

// Randn returns a tensor of standard normal values (mean 0, deviation 1).
func Randn(dev Device, seed uint64, dtype DType, shape ...int) (*Tensor, error) {
	return random("randn", dev, seed, dtype, true, 0, 1, shape)
}

func random(op string, dev Device, seed uint64, dtype DType, normal bool, a, b float64, shape []int) (*Tensor, error) {
	if dtype.Valid() && !dtype.IsFloat() {
		return nil, fmt.Errorf("tensor: %s: %v is not a floating-point dtype", op, dtype)
	}
	t, err := empty(op, dev, dtype, shape)
	if err != nil {
		return nil, err
	}
	if err := t.run(op, func() error { return dev.Random(t.strided(), seed, normal, a, b) }); err != nil {
		return nil, t.releaseAfter(err)
	}
	return t, nil
}

// FromFloat32 copies data to a new Float32 tensor of the given shape; without
// a shape the tensor is 1-D. len(data) must equal the shape's number of elements.
func FromFloat32(dev Device, data []float32, shape ...int) (*Tensor, error) {
	if shape == nil {
		shape = []int{len(data)}
	}
	return fromHost("FromFloat32", dev, Float32, len(data), shape, func(b []byte) {
		for i, v := range data {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
	})
}

// FromFloat64 copies data to a new tensor of dtype (converting each value as
// PyTorch's .to(dtype) would, rounding to nearest for float16 and bfloat16).
func FromFloat64(dev Device, dtype DType, data []float64, shape ...int) (*Tensor, error) {
	if shape == nil {
		shape = []int{len(data)}
	}
	return fromHost("FromFloat64", dev, dtype, len(data), shape, func(b []byte) {
		for i, v := range data {
			putElem(dtype, b[i*dtype.Size():], v)
		}
	})
}

// FromInt64 copies data to a new Int64 tensor, as torch.tensor of Python ints.
func FromInt64(dev Device, data []int64, shape ...int) (*Tensor, error) {
	if shape == nil {
		shape = []int{len(data)}
	}
	return fromHost("FromInt64", dev, Int64, len(data), shape, func(b []byte) {
		for i, v := range data {
			binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
		}
	})
}

func fromHost(op string, dev Device, dtype DType, n int, shape []int, encode func([]byte)) (*Tensor, error) {
	if !dtype.Valid() {
		return nil, fmt.Errorf("tensor: %s: invalid dtype %v", op, dtype)
	}
	want, err := checkNewShape(op, dtype, shape)
	if err != nil {
		return nil, err
	}
	if want != int64(n) {
		return nil, fmt.Errorf("tensor: %s: %d values cannot fill shape %v of %d elements", op, n, Shape(shape), want)
	}
	t, err := empty(op, dev, dtype, shape)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return t, nil
	}
	buf := make([]byte, n*dtype.Size())
	encode(buf)
	if err := dev.CopyFromHost(t.storage.ptr, buf); err != nil {
		return nil, t.releaseAfter(fmt.Errorf("tensor: %s: copying to %v: %w", op, dev, err))
	}
	return t, nil
}

// Arange returns the 1-D tensor start, start+step, … below end (torch.arange).
func Arange(dev Device, dtype DType, start, end, step float64) (*Tensor, error) {
	if step == 0 {
		return nil, torchErr("arange", "step must be nonzero")
	}
	if math.IsInf(start, 0) || math.IsInf(end, 0) || math.IsNaN(start) || math.IsNaN(end) {
		return nil, torchErr("arange", "unsupported range: %v -> %v", start, end)
	}
	if (step > 0 && end < start) || (step < 0 && end > start) {
		return nil, torchErr("arange", "upper bound and larger bound inconsistent with step sign")
	}
	size := math.Ceil((end - start) / step)
	if !(size >= 0 && size < math.MaxInt64) {
		return nil, torchErr("arange", "invalid size, possible overflow?")
	}
	// The device allocation comes first: a size too large for the device is
	// its out-of-memory error, not a host allocation of that many values.
	n := int(size)
	t, err := empty("arange", dev, dtype, []int{n})
	if err != nil || n == 0 {
		return t, err
	}
	es := dtype.Size()
	buf := make([]byte, n*es)
	for i := range n {
		putElem(dtype, buf[i*es:], start+float64(i)*step)
	}
	if err := dev.CopyFromHost(t.storage.ptr, buf); err != nil {
		return nil, t.releaseAfter(fmt.Errorf("tensor: arange: copying to %v: %w", dev, err))
	}
	return t, nil
}

// run runs a kernel launch unless the tensor has no elements, wrapping its error.
func (t *Tensor) run(op string, launch func() error) error {
	if t.Numel() == 0 {
		return nil
	}
	if err := launch(); err != nil {
		return fmt.Errorf("tensor: %s on %v: %w", op, t.storage.dev, err)
	}
	return nil
}

// releaseAfter releases a tensor an operation failed to fill and returns the
// operation's error, joined with any from the release.
func (t *Tensor) releaseAfter(err error) error {
	if rerr := t.Release(); rerr != nil {
		return fmt.Errorf("%w (and releasing its output: %v)", err, rerr)
	}
	return err
}
