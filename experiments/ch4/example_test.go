package ch4_test

import (
	"fmt"

	"memlab.dev/memlab/experiments/ch4"
)

// relu out of place holds input and output at once; relu_ only the input.
func ExampleReluPeak() {
	r, err := ch4.ReluPeak(ch4.Setup{Device: "sim"}, 1024, 1024)
	if err != nil {
		panic(err)
	}
	fmt.Printf("relu peak %d MiB, relu_ peak %d MiB\n", r.OutOfPlacePeak>>20, r.InPlacePeak>>20)
	// Output:
	// relu peak 8 MiB, relu_ peak 4 MiB
}

// Only some of the view operations copy, depending on the layout.
func ExampleViewCopies() {
	r, err := ch4.ViewCopies(ch4.Setup{Device: "sim"}, 1024)
	if err != nil {
		panic(err)
	}
	for _, row := range r.Rows {
		if row.Copied {
			fmt.Printf("%s copies %d MiB\n", row.Op, row.Bytes>>20)
		}
	}
	// Output:
	// x.t().reshape(-1) copies 4 MiB
	// x.t().contiguous() copies 4 MiB
	// x[:, ::2].contiguous() copies 2 MiB
	// x.expand(4, n, n).contiguous() copies 16 MiB
	// x.view(4, n/4, n).permute(1, 0, 2).reshape(n/4, 4n) copies 4 MiB
}
