package kernels_test

import (
	"fmt"

	"memlab.dev/memlab/kernels"
)

func ExampleModules() {
	fmt.Println(kernels.Modules())
	// Output: [elementwise embedding matmul reduce]
}
