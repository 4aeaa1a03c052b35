package device_test

import (
	"fmt"
	"io"

	"memlab.dev/memlab/device"
)

func ExampleParseSpec() {
	for _, s := range []string{"cuda:1", "sim:24GiB", "tpu"} {
		spec, err := device.ParseSpec(s)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Printf("%s -> kind %s, index %d, capacity %d\n", s, spec.Kind, spec.Index, spec.Capacity)
	}
	// Output:
	// cuda:1 -> kind cuda, index 1, capacity 0
	// sim:24GiB -> kind sim, index 0, capacity 25769803776
	// error: device: bad device "tpu": unknown kind "tpu"; want "auto", "cuda", "cuda:N", "sim", "sim:N", "sim:CAPACITY" or "sim:N:CAPACITY" (CAPACITY such as 24GiB)
}

func ExampleOpen() {
	device.Notes = io.Discard // no note about falling back to the simulator
	d, err := device.Open("sim:1GiB")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	_, total, _ := d.MemGetInfo()
	fmt.Println(d, d.Kind(), total>>20, "MiB")
	fmt.Println(device.LastSelection().Reason)
	// Output:
	// sim:0 sim 1024 MiB
	// requested
}
