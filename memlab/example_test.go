package memlab_test

import (
	"fmt"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/tensor"
)

// A lab is a device with PyTorch's caching allocator in front of it; tensors
// allocate through it, and the torch.cuda functions read it.
func ExampleOpen() {
	lab, err := memlab.Open(memlab.Sim("24GiB"), memlab.AllocConf(""))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer lab.Close()

	x, _ := tensor.Empty(lab, tensor.Float32, 1024, 1024) // 4 MiB
	fmt.Println("allocated:", allocator.FormatSize(memlab.MemoryAllocated()))
	fmt.Println("reserved: ", allocator.FormatSize(memlab.MemoryReserved()))
	x.Release()
	fmt.Println("after release, allocated:", allocator.FormatSize(memlab.MemoryAllocated()),
		"reserved:", allocator.FormatSize(memlab.MemoryReserved()))
	memlab.EmptyCache()
	fmt.Println("after EmptyCache, reserved:", allocator.FormatSize(memlab.MemoryReserved()))
	// Output:
	// allocated: 4.00 MiB
	// reserved:  20.00 MiB
	// after release, allocated: 0 bytes reserved: 20.00 MiB
	// after EmptyCache, reserved: 0 bytes
}

// A recorder turns allocator events into a memory curve with labelled
// phases; package memplot draws it.
func ExampleLab_Record() {
	lab := memlab.MustOpen(memlab.Sim("24GiB"), memlab.AllocConf(""))
	defer lab.Close()

	rec := lab.Record()
	rec.Mark("forward")
	a, _ := tensor.Empty(lab, tensor.Float32, 256, 1024) // 1 MiB
	b, _ := tensor.Empty(lab, tensor.Float32, 256, 1024)
	rec.Mark("backward")
	a.Release()
	b.Release()
	rec.Stop()

	peak, reserved := rec.Peak()
	fmt.Println("events:", rec.Events())
	fmt.Println("peak allocated:", allocator.FormatSize(peak), "peak reserved:", allocator.FormatSize(reserved))
	tl := rec.Timeline() // the start and one sample an event: what memplot.Curve("…", rec) draws
	fmt.Println("samples:", len(tl.Samples), "marks:", tl.Marks[0].Label, tl.Marks[1].Label)
	// Output:
	// events: 7
	// peak allocated: 2.00 MiB peak reserved: 2.00 MiB
	// samples: 8 marks: forward backward
}

// The leak-check idiom: compare allocated memory before and after.
func ExampleCheckLeaks() {
	lab := memlab.MustOpen(memlab.Sim("24GiB"), memlab.AllocConf(""))
	defer lab.Close()

	var history []*tensor.Tensor
	leaked, err := memlab.CheckLeaks(func() error {
		for i := 0; i < 3; i++ {
			t, err := tensor.Zeros(lab, tensor.Float32, 256, 1024)
			if err != nil {
				return err
			}
			history = append(history, t) // keeps 1 MiB alive per step
		}
		return nil
	})
	fmt.Println(allocator.FormatSize(leaked), err)
	// Output: 3.00 MiB <nil>
}

// A notebook cell: Must stops the cell at the first error, Steps records the
// memory after each step, Table shows as HTML in a notebook and as text here,
// Measured prints the sentence a notebook states, from the measurement.
func ExampleLab_Steps() {
	l := memlab.MustOpen(memlab.Sim("24GiB"), memlab.AllocConf(""))
	defer l.Close()
	steps := l.Steps()
	x := memlab.Must(tensor.Empty(l, tensor.Uint8, 256<<20))
	steps.Add("x = empty(256 MiB)")
	memlab.Check(x.Release())
	after := steps.Add("del x")
	steps.Table().Show()
	memlab.Measured("after del x: allocated %s, reserved %s", memlab.FormatBytes(after.Allocated), memlab.FormatBytes(after.Reserved))
	// Output:
	// step                allocated   reserved    driver-used  cudaMalloc calls  error
	// x = empty(256 MiB)  256.00 MiB  256.00 MiB  768.00 MiB   1
	// del x               0 bytes     256.00 MiB  768.00 MiB   1
	// Measured: after del x: allocated 0 bytes, reserved 256.00 MiB
}

// Budget makes any card behave like a small one: the simulator is opened
// with exactly that much memory, and a real GPU lends the lab a budget of it,
// which mem_get_info() reports as the device.
func ExampleBudget() {
	l := memlab.MustOpen(memlab.Budget(1<<30), memlab.AllocConf(""))
	defer l.Close()
	_, err := tensor.Empty(l, tensor.Uint8, 2<<30)
	fmt.Println(memlab.IsOutOfMemory(err))
	// Output: true
}
