package cuda_test

import (
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/device/cuda"
	"memlab.dev/memlab/device/devicetest"
	"memlab.dev/memlab/tensor"
)

func newFakeDevice(t *testing.T) (*cuda.Device, func() []string) {
	t.Helper()
	d, launched, err := cuda.NewFakeDevice(1 << 30)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, launched
}

// hostOnly names the suite's cases that need no kernel to run: memory,
// virtual memory, bad input (validation happens before any launch), and the
// work done by memset, memcpy or the host path of integer and bool work.
func hostOnly(name string) bool {
	switch {
	case strings.HasPrefix(name, "Kernels/Int/"), strings.HasPrefix(name, "Kernels/Bool/"),
		name == "Kernels/Copy/contiguous/f32-odd", name == "Kernels/Fill/f32/contiguous",
		name == "Kernels/Fill/u8/contiguous", name == "Kernels/Fill/bool/contiguous":
		return true
	case strings.HasPrefix(name, "Kernels/"), strings.HasPrefix(name, "Known/"), name == "BadInput/embedding index out of range":
		return false
	}
	return true
}

// TestSuiteOnFakeDriver runs the part of the conformance suite that needs no
// kernel execution on a Device over a fake driver, so CI checks the CUDA
// device's bookkeeping, validation and host paths without a GPU.
func TestSuiteOnFakeDriver(t *testing.T) {
	d, _ := newFakeDevice(t)
	devicetest.RunExcept(t, d, func(name string) bool { return !hostOnly(name) })
}

func TestKernelChoice(t *testing.T) {
	d, launched := newFakeDevice(t)
	p, err := d.Malloc(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	base := tensor.Ptr(p)
	f32 := func(shape, strides []int, off int) tensor.Strided {
		return tensor.Strided{Base: base, DType: tensor.Float32, Shape: shape, Strides: strides, Offset: off}
	}
	half := tensor.Strided{Base: base + 1<<19, DType: tensor.Float32, Shape: []int{64, 64}, Strides: []int{64, 1}}
	tests := []struct {
		name string
		run  func() error
		want string // kernel launched; "" for none
	}{
		{"contiguous copy", func() error { return d.Copy(half, f32([]int{64, 64}, []int{64, 1}, 0)) }, "copy_contig_vec16"},
		{"transposed copy", func() error { return d.Copy(half, f32([]int{64, 64}, []int{1, 64}, 0)) }, "transpose_4"},
		{"permuted 3-D copy", func() error {
			return d.Copy(f32([]int{4, 8, 16}, []int{128, 16, 1}, 1<<16), f32([]int{4, 8, 16}, []int{1, 4, 32}, 0))
		}, "copy_strided_same"},
		{"converting copy", func() error {
			dst := half
			dst.DType = tensor.BFloat16
			return d.Copy(dst, f32([]int{64, 64}, []int{64, 1}, 0))
		}, "copy_strided_convert"},
		{"contiguous unary", func() error { return d.Unary(tensor.Gelu, half, half, 0) }, "unary_contig_f32"},
		{"strided unary", func() error { return d.Unary(tensor.Exp, half, f32([]int{64, 64}, []int{1, 64}, 0), 0) }, "unary_strided"},
		{"broadcast binary", func() error {
			return d.Binary(tensor.Add, half, half, f32([]int{64, 64}, []int{0, 1}, 0))
		}, "binary_strided"},
		{"vectorised softmax", func() error { return d.Softmax(half, f32([]int{64, 64}, []int{64, 1}, 0)) }, "softmax_f32_vec"},
		{"softmax of odd rows", func() error {
			return d.Softmax(f32([]int{3, 63}, []int{63, 1}, 200000), f32([]int{3, 63}, []int{63, 1}, 0))
		}, "softmax_f32"},
		{"reduce along rows", func() error { return d.Reduce(tensor.Sum, f32([]int{64, 1}, []int{1, 1}, 200000), half, 1) }, "reduce_inner"},
		{"reduce along columns", func() error { return d.Reduce(tensor.Max, f32([]int{1, 64}, []int{64, 1}, 200000), half, 0) }, "reduce_dim"},
		{"float32 matmul without cuBLAS", func() error {
			return d.Matmul(f32([]int{64, 64}, []int{64, 1}, 200000), half, f32([]int{64, 64}, []int{64, 1}, 0))
		}, "matmul_f32"},
		{"contiguous fill is a memset", func() error { return d.Fill(half, 1) }, ""},
	}
	d.SetCUBLAS(false)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(launched())
			if err := tt.run(); err != nil {
				t.Fatal(err)
			}
			got := launched()[before:]
			if tt.want == "" && len(got) != 0 || tt.want != "" && !slices.Equal(got, []string{tt.want}) {
				t.Errorf("launched %v, want [%s]", got, tt.want)
			}
		})
	}
}

func TestOutOfMemoryOnFakeDriver(t *testing.T) {
	d, _ := newFakeDevice(t)
	_, err := d.Malloc(2 << 30)
	if e, ok := err.(*cuda.Error); !ok || !e.OutOfMemory() {
		t.Fatalf("Malloc beyond the device: %v, want an *Error with OutOfMemory", err)
	}
}
