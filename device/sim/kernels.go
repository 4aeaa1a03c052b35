package sim

import (
	"errors"
	"time"

	"memlab.dev/memlab/tensor"
)

// kernel runs f while no memory can be released under it.
func (d *Device) kernel(f func() error) error {
	d.life.RLock()
	defer d.life.RUnlock()
	if err := d.Synchronize(); err != nil {
		return err
	}
	return f()
}

// CopyFromHost writes src to device memory at dst.
func (d *Device) CopyFromHost(dst tensor.Ptr, src []byte) error {
	return d.kernel(func() error { return d.k.CopyFromHost(dst, src) })
}

// CopyToHost reads len(dst) bytes of device memory at src.
func (d *Device) CopyToHost(dst []byte, src tensor.Ptr) error {
	return d.kernel(func() error { return d.k.CopyToHost(dst, src) })
}

// Fill runs [cpu.Kernels.Fill] on the device's memory.
func (d *Device) Fill(dst tensor.Strided, v float64) error {
	return d.kernel(func() error { return d.k.Fill(dst, v) })
}

// Random runs [cpu.Kernels.Random], the generator every backend shares.
func (d *Device) Random(dst tensor.Strided, seed uint64, normal bool, lo, hi float64) error {
	return d.kernel(func() error { return d.k.Random(dst, seed, normal, lo, hi) })
}

// Copy runs [cpu.Kernels.Copy].
func (d *Device) Copy(dst, src tensor.Strided) error {
	return d.kernel(func() error { return d.k.Copy(dst, src) })
}

// Unary runs [cpu.Kernels.Unary].
func (d *Device) Unary(op tensor.UnaryOp, dst, src tensor.Strided, alpha float64) error {
	return d.kernel(func() error { return d.k.Unary(op, dst, src, alpha) })
}

// Binary runs [cpu.Kernels.Binary].
func (d *Device) Binary(op tensor.BinaryOp, dst, a, b tensor.Strided) error {
	return d.kernel(func() error { return d.k.Binary(op, dst, a, b) })
}

// Reduce runs [cpu.Kernels.Reduce].
func (d *Device) Reduce(op tensor.ReduceOp, dst, src tensor.Strided, dim int) error {
	return d.kernel(func() error { return d.k.Reduce(op, dst, src, dim) })
}

// Softmax runs [cpu.Kernels.Softmax].
func (d *Device) Softmax(dst, src tensor.Strided) error {
	return d.kernel(func() error { return d.k.Softmax(dst, src) })
}

// LayerNorm runs [cpu.Kernels.LayerNorm].
func (d *Device) LayerNorm(dst, src, gamma, beta tensor.Strided, eps float64) error {
	return d.kernel(func() error { return d.k.LayerNorm(dst, src, gamma, beta, eps) })
}

// Matmul runs [cpu.Kernels.Matmul].
func (d *Device) Matmul(dst, a, b tensor.Strided) error {
	return d.kernel(func() error { return d.k.Matmul(dst, a, b) })
}

// Embedding runs [cpu.Kernels.Embedding].
func (d *Device) Embedding(dst, weight, idx tensor.Strided) error {
	return d.kernel(func() error { return d.k.Embedding(dst, weight, idx) })
}

// Synchronize returns nil (ErrClosed on a closed device): kernels run
// synchronously.
func (d *Device) Synchronize() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	return nil
}

// Time runs f and returns the wall-clock time it took: kernels run
// synchronously, so that is their device time. f's error is returned with it.
func (d *Device) Time(f func() error) (time.Duration, error) {
	if f == nil {
		return 0, errors.New("sim: Time: nil function")
	}
	if err := d.Synchronize(); err != nil {
		return 0, err
	}
	start := time.Now()
	err := f()
	return time.Since(start), err
}
