package cuda_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"

	"memlab.dev/memlab/device/cuda"
	"memlab.dev/memlab/device/devicetest"
	"memlab.dev/memlab/tensor"
)

// TestConformance runs the device suite on cuda:0 with this build's default
// binding (purego, or gorgonia.org/cu with -tags cuda). It is skipped where
// there is no driver (CI); GPU machines run it from the test binaries that
// "make -f Makefile.gpu gpu-binaries" builds.
func TestConformance(t *testing.T) {
	d, err := cuda.Open(0)
	if errors.Is(err, cuda.ErrNoDriver) {
		t.Skipf("no GPU: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	maj, min := d.ComputeCapability()
	t.Logf("%s: %s, compute capability %d.%d, %d SMs, driver CUDA %d, binding %s, cuBLAS %s",
		d, d.Name(), maj, min, d.Multiprocessors(), d.DriverVersion(), d.Binding(), d.CUBLAS())
	devicetest.Run(t, d)
}

// TestTiledMatmul runs the kernel suite with cuBLAS off, so that memlab's own
// tiled matmul kernel is checked too where cuBLAS is present.
func TestTiledMatmul(t *testing.T) {
	d, err := cuda.Open(0)
	if errors.Is(err, cuda.ErrNoDriver) {
		t.Skipf("no GPU: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if !d.SetCUBLAS(false) {
		t.Skipf("no cuBLAS (%s): TestConformance already ran the tiled kernel", d.CUBLAS())
	}
	devicetest.Kernels(t, d)
}

// TestPuregoBindingOpens checks that the purego binding opens explicitly; in
// a -tags cuda build it runs beside gorgonia.org/cu, as the virtual-memory
// calls of that build do.
func TestPuregoBindingOpens(t *testing.T) {
	d, err := cuda.OpenWith(0, cuda.Options{Binding: "purego"})
	if errors.Is(err, cuda.ErrNoDriver) {
		t.Skipf("no GPU: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Binding() != "purego" {
		t.Errorf("Binding() = %q, want purego", d.Binding())
	}
}

// TestConcurrentUse drives one device from several goroutines at once: each
// allocates, fills, reads back and frees its own memory.
func TestConcurrentUse(t *testing.T) {
	d, err := cuda.Open(0)
	if errors.Is(err, cuda.ErrNoDriver) {
		t.Skipf("no GPU: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				p, err := d.Malloc(1 << 20)
				if err != nil {
					errs <- err
					return
				}
				s := tensor.Strided{Base: tensor.Ptr(p), DType: tensor.Int32, Shape: []int{1 << 18}, Strides: []int{1}}
				if err := d.Fill(s, float64(g*100+i)); err != nil {
					errs <- err
					return
				}
				b := make([]byte, 4)
				if err := d.CopyToHost(b, tensor.Ptr(p+4*12345)); err != nil {
					errs <- err
					return
				}
				if got := int(binary.LittleEndian.Uint32(b)); got != g*100+i {
					errs <- fmt.Errorf("goroutine %d: read %d, want %d", g, got, g*100+i)
					return
				}
				if err := d.Free(p); err != nil {
					errs <- err
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestClosedDevice checks that a closed device refuses work with ErrClosed.
func TestClosedDevice(t *testing.T) {
	d, err := cuda.Open(0)
	if errors.Is(err, cuda.ErrNoDriver) {
		t.Skipf("no GPU: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Malloc(1024); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("Malloc after Close: %v, want ErrClosed", err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
