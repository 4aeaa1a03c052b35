package sim_test

import (
	"sync"
	"testing"

	"memlab.dev/memlab/device/sim"
	"memlab.dev/memlab/tensor"
)

// TestConcurrentUse allocates, maps, computes and frees from several
// goroutines at once; run with -race. Afterwards all memory is free again.
func TestConcurrentUse(t *testing.T) {
	d := newDevice(t, sim.Config{Capacity: 4 * GiB})
	free0, _ := memInfo(t, d)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				if err := work(d, g, i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if free, _ := memInfo(t, d); free != free0 {
		t.Errorf("free memory %d after everything was released, want %d", free, free0)
	}
}

func work(d *sim.Device, g, i int) error {
	if g%2 == 0 {
		a, err := d.Malloc(uint64(1+i) * MiB)
		if err != nil {
			return err
		}
		x := tensor.Strided{Base: tensor.Ptr(a), DType: tensor.Float32, Shape: []int{64, 64}, Strides: []int{64, 1}}
		y := x
		y.Offset = 64 * 64
		if err := d.Random(x, uint64(i), true, 0, 1); err != nil {
			return err
		}
		if err := d.Matmul(y, x, x); err != nil {
			return err
		}
		return d.Free(a)
	}
	r, err := d.ReserveAddress(4 * page)
	if err != nil {
		return err
	}
	if err := d.Map(r, page); err != nil {
		return err
	}
	if err := d.Map(r+page, page); err != nil {
		return err
	}
	x := tensor.Strided{Base: tensor.Ptr(r + page - 256), DType: tensor.Float32, Shape: []int{128}, Strides: []int{1}}
	if err := d.Fill(x, float64(i)); err != nil {
		return err
	}
	if err := d.Softmax(x, x); err != nil {
		return err
	}
	if err := d.Unmap(r, page); err != nil {
		return err
	}
	if err := d.Unmap(r+page, page); err != nil {
		return err
	}
	_, _, err = d.MemGetInfo()
	if err != nil {
		return err
	}
	_ = d.Stats()
	return d.FreeAddress(r, 4*page)
}
