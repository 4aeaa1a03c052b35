package nb06

import (
	"testing"

	"memlab.dev/memlab/internal/nbtest"
)

func TestTheCard(t *testing.T) {
	nbtest.Want(t, nbtest.Run(t, Cells, "theCard"),
		`Measured: the exercises' card: 1\.00 GiB, of which 896\.00 MiB free and 128\.00 MiB the CUDA context`)
}
