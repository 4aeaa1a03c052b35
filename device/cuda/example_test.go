package cuda_test

import (
	"errors"
	"fmt"

	"memlab.dev/memlab/device/cuda"
	"memlab.dev/memlab/tensor"
)

// Opening the first GPU, running a kernel on it, and reading the result back.
// Where there is no driver, Open says so and nothing else happens.
func ExampleOpen() {
	d, err := cuda.Open(0)
	if errors.Is(err, cuda.ErrNoDriver) {
		fmt.Println("no GPU here:", err)
		return
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	p, err := d.Malloc(1 << 20)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Free(p)
	x := tensor.Strided{Base: tensor.Ptr(p), DType: tensor.Float32, Shape: []int{512, 512}, Strides: []int{512, 1}}
	if err := d.Fill(x, 2); err != nil {
		fmt.Println(err)
		return
	}
	t, _ := d.Time(func() error { return d.Unary(tensor.Exp, x, x, 0) })
	fmt.Println(d, d.Name(), "exp of 256 Ki floats took", t)
}
