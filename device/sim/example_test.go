package sim_test

import (
	"errors"
	"fmt"

	"memlab.dev/memlab/device/sim"
	"memlab.dev/memlab/tensor"
	"memlab.dev/memlab/units"
)

// Example shows the driver's view of a simulated 24 GiB device: the context
// takes memory before anything is allocated, allocations are whole 2 MiB
// pages, and a request that does not fit fails as on a GPU.
func Example() {
	d, err := sim.New(sim.Config{Capacity: 24 << 30}) // as MEMLAB_DEVICE=sim:24GiB opens it
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()

	show := func(what string) {
		free, total, _ := d.MemGetInfo()
		fmt.Printf("%-22s free %d MiB of %s\n", what, free>>20, units.FormatBytes(total))
	}
	show("new device:")
	a, _ := d.Malloc(1000) // rounded up to one 2 MiB page
	fmt.Printf("Malloc(1000) = %#x\n", a)
	show("after Malloc(1000):")

	_, err = d.Malloc(30 << 30)
	var oom interface{ OutOfMemory() bool }
	fmt.Println(errors.As(err, &oom) && oom.OutOfMemory(), err)

	// Kernels run on the device's memory.
	x := tensor.Strided{Base: tensor.Ptr(a), DType: tensor.Float32, Shape: []int{4}, Strides: []int{1}}
	_ = d.Fill(x, 1.5)
	out := make([]byte, 4)
	_ = d.CopyToHost(out, x.Base)
	fmt.Println(out)
	// Output:
	// new device:            free 24064 MiB of 24 GiB
	// Malloc(1000) = 0x7f0000000000
	// after Malloc(1000):    free 24062 MiB of 24 GiB
	// true sim: Malloc(32212254720): CUDA_ERROR_OUT_OF_MEMORY: out of memory (23.50 GiB free of 24 GiB)
	// [0 0 192 63]
}

// ExampleDevice_Stats counts the driver calls of an allocation pattern and the
// time they would take on an H200.
func ExampleDevice_Stats() {
	d, _ := sim.New(sim.Config{ModelLatency: true, NoWait: true})
	defer d.Close()
	for range 100 {
		a, _ := d.Malloc(2 << 20)
		_ = d.Free(a)
	}
	st := d.Stats()
	fmt.Printf("%d cudaMalloc + %d cudaFree calls: %v of driver time\n", st.Mallocs, st.Frees, st.DriverTime())
	// Output:
	// 100 cudaMalloc + 100 cudaFree calls: 7.463ms of driver time
}
