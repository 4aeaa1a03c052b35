package cpu_test

import (
	"encoding/binary"
	"fmt"
	"math"

	"memlab.dev/memlab/kernels/cpu"
	"memlab.dev/memlab/tensor"
)

// hostMemory is device memory at addresses 0x1000 onwards, held in one slice.
type hostMemory []byte

func (m hostMemory) Bytes(addr tensor.Ptr, n int) ([]byte, error) {
	if addr < 0x1000 || uint64(addr)-0x1000+uint64(n) > uint64(len(m)) {
		return nil, fmt.Errorf("%d bytes at %#x are outside memory", n, uint64(addr))
	}
	off := uint64(addr) - 0x1000
	return m[off : off+uint64(n)], nil
}

func floats(vals ...float32) []byte {
	b := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// Example multiplies a 2×3 matrix by the transpose of another, read through
// strides rather than copied, and takes the softmax of each row.
func Example() {
	k := cpu.New(make(hostMemory, 1024))
	a := tensor.Strided{Base: 0x1000, DType: tensor.Float32, Shape: []int{2, 3}, Strides: []int{3, 1}}
	b := tensor.Strided{Base: 0x1100, DType: tensor.Float32, Shape: []int{3, 2}, Strides: []int{1, 3}} // (2,3) transposed
	c := tensor.Strided{Base: 0x1200, DType: tensor.Float32, Shape: []int{2, 2}, Strides: []int{2, 1}}
	if err := k.CopyFromHost(a.Base, floats(1, 2, 3, 4, 5, 6)); err != nil {
		fmt.Println(err)
	}
	if err := k.CopyFromHost(b.Base, floats(1, 0, 0, 0, 1, 0)); err != nil {
		fmt.Println(err)
	}
	if err := k.Matmul(c, a, b); err != nil {
		fmt.Println(err)
	}
	if err := k.Softmax(c, c); err != nil { // in place
		fmt.Println(err)
	}
	out := make([]byte, 16)
	if err := k.CopyToHost(out, c.Base); err != nil {
		fmt.Println(err)
	}
	probs := make([]float32, 4)
	for i := range probs {
		probs[i] = math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:]))
	}
	fmt.Printf("%.4f\n", probs)

	// A shape mismatch is an error, not a crash.
	fmt.Println(k.Matmul(c, a, a))
	// Output:
	// [0.2689 0.7311 0.2689 0.7311]
	// kernels/cpu: Matmul: shapes do not fit: dst [2 2] = a [2 3] @ b [2 3]
}

// ExampleUniform01 shows the shared counter-based generator: the same seed
// and counter give the same number on every backend.
func ExampleUniform01() {
	fmt.Printf("%.6f %.6f\n", cpu.Uniform01(42, 0), cpu.Uniform01(42, 1))
	fmt.Printf("%.6f\n", cpu.RandomValue(42, 0, false, 10, 20))
	// Output:
	// 0.741565 0.159910
	// 17.415649
}
