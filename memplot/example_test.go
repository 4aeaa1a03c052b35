package memplot_test

import (
	"fmt"
	"os"
	"path/filepath"

	"memlab.dev/memlab/memplot"
)

const mib = 1 << 20

// A memory curve: allocated, reserved and driver-used bytes with phase marks.
func ExampleMemoryCurve() {
	fig, err := memplot.MemoryCurve("forward and backward", memplot.Timeline{
		Samples: []memplot.Sample{
			{X: 0, Allocated: 0, Reserved: 0, DriverUsed: 512 * mib},
			{X: 1, Allocated: 300 * mib, Reserved: 320 * mib, DriverUsed: 832 * mib},
			{X: 2, Allocated: 100 * mib, Reserved: 320 * mib, DriverUsed: 832 * mib},
		},
		Marks: []memplot.Mark{{X: 1, Label: "forward"}, {X: 2, Label: "backward"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, _ := os.MkdirTemp("", "memplot")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, fig.Name+".svg")
	fmt.Println(fig.Name, fig.Save(path))
	// Output: forward-and-backward <nil>
}

// The fragmentation gauge: free memory to spare, but no block large enough.
func ExampleFragmentation() {
	fig, err := memplot.Fragmentation("before the 1.5 GiB request", 1536*mib,
		memplot.Gauge{Label: "fragmented", LargestFree: 496 * mib, TotalFree: 2976 * mib},
		memplot.Gauge{Label: "uniform sizes", LargestFree: 512 * mib, TotalFree: 3072 * mib})
	fmt.Println(fig.Name, err)
	png, err := fig.PNG()
	fmt.Println(len(png) > 0, err)
	// Output:
	// before-the-1-5-gib-request <nil>
	// true <nil>
}
