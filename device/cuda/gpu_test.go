package cuda_test

import (
	"errors"
	"testing"

	"memlab.dev/memlab/device/cuda"
	"memlab.dev/memlab/device/devicetest"
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
