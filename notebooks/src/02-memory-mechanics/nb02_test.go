package nb02

import (
	"testing"

	"memlab.dev/memlab/internal/nbtest"
)

func TestStorageVsViews(t *testing.T) {
	out := nbtest.Run(t, Cells, "storageVsViews")
	nbtest.Want(t, out,
		`Measured: memory_allocated is 4\.00 MiB after x, 4\.00 MiB after the five views, 8\.00 MiB after x\.t\(\)\.contiguous\(\)`,
		// every view keeps the whole 4 MiB storage; x[512] starts 2 MiB in
		`(?m)^x\[0:1\] +\[1, 1024\] +\[1024 1\] +0 +4\.00 KiB +4\.00 MiB +0 +true +true$`,
		`(?m)^x\[512\] +\[1024\] +\[1\] +524288 +4\.00 KiB +4\.00 MiB +2097152 `,
		`(?m)^x\.t\(\)\.contiguous\(\) .* false$`,
	)
}
