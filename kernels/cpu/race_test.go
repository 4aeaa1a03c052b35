package cpu_test

import (
	"sync"
	"testing"

	"memlab.dev/memlab/tensor"
)

// TestConcurrentKernels runs large kernels (themselves split over goroutines)
// from several goroutines on one Kernels; run with -race.
func TestConcurrentKernels(t *testing.T) {
	e := newEnv(t)
	const n = 1 << 16
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 4 {
		x := e.alloc(tensor.Float32, []int{256, 256}, nil, 0)
		y := e.alloc(tensor.Float32, []int{256, 256}, nil, 0)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := e.k.Random(x, uint64(g), false, -1, 1); err != nil {
				errs <- err
				return
			}
			if err := e.k.Matmul(y, x, x); err != nil {
				errs <- err
				return
			}
			if err := e.k.Softmax(y, y); err != nil {
				errs <- err
				return
			}
			flat := tensor.Strided{Base: y.Base, DType: tensor.Float32, Shape: []int{n}, Strides: []int{1}}
			if err := e.k.Binary(tensor.Add, flat, flat, flat); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
