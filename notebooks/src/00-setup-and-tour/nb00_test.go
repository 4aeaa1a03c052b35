package nb00

import (
	"testing"

	"memlab.dev/memlab/internal/nbtest"
)

// The tests run each cell of notebook 00 as the notebook does, on the
// simulated device (MEMLAB_DEVICE=sim, so that a GPU on the machine does not
// change the numbers).

func TestWhichDevice(t *testing.T) {
	nbtest.Want(t, nbtest.Run(t, Cells, "whichDevice"),
		`device: +sim:0, memlab simulated GPU \(80 GiB\), 80\.00 GiB`,
		`Measured: the driver reports 79\.50 GiB free of 80\.00 GiB: 512\.00 MiB in use before any tensor`)
}

func TestFirstTensor(t *testing.T) {
	nbtest.Want(t, nbtest.Run(t, Cells, "firstTensor"),
		`x\.shape \[2, 3\] x\.stride\(\) \[3 1\] x\.dtype float32 x\.device sim:0`,
		`Measured: x\.Nbytes\(\) is 24 bytes; memory_allocated\(\) is 512 bytes and memory_reserved\(\) 2\.00 MiB`,
		`Measured: after x\.Release\(\): memory_allocated\(\) 0 bytes, memory_reserved\(\) 2\.00 MiB`)
}

func TestFirstCurve(t *testing.T) {
	nbtest.Want(t, nbtest.Run(t, Cells, "firstCurve"),
		`Measured: 21 allocator events; peak allocated 2\.50 GiB, peak reserved 2\.50 GiB; 4 cudaMalloc calls`)
}

func TestEveryCellTested(t *testing.T) {
	if len(Cells) != 4 {
		t.Errorf("%d cells; the tests cover whichDevice, firstTensor, firstCurve and exerciseProgress (next_test.go)", len(Cells))
	}
}
