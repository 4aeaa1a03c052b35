package nb04

import (
	"testing"

	"memlab.dev/memlab/internal/nbtest"
)

func TestReluVsReluInPlace(t *testing.T) {
	out := nbtest.Run(t, Cells, "reluVsReluInPlace")
	nbtest.Want(t, out, `Measured: y = x\.relu\(\) peaks at 8\.00 MiB, x\.relu_\(\) at 4\.00 MiB: 50 % less`)
}

func TestRebindVsAddInPlace(t *testing.T) {
	out := nbtest.Run(t, Cells, "rebindVsAddInPlace")
	nbtest.Want(t, out,
		`a = a \+ 1: same storage false, version 0`,
		`a \+= 1: +same storage true, version 1, a\[0, 0\] = 2`,
		`Measured: a = a \+ 1 needs 4\.00 MiB beyond a at its peak, a \+= 1 needs 0 bytes`)
}

func TestSharedBranch(t *testing.T) {
	out := nbtest.Run(t, Cells, "sharedBranch")
	nbtest.Want(t, out, `Measured: 3 of 6 results wrong and no error; x\._version went 0 → 1`)
}

func TestSavedTensorError(t *testing.T) {
	out := nbtest.Run(t, Cells, "savedTensorError")
	nbtest.Want(t, out,
		`in place true: tape \[ExpBackward0 MulBackward1\], saved 256\.00 KiB; backward: .*output 0 of ExpBackward0, is at version 1; expected version 0 instead`,
		`in place false: .*backward: ok`)
}

func TestViewWriteThrough(t *testing.T) {
	out := nbtest.Run(t, Cells, "viewWriteThrough")
	nbtest.Want(t, out,
		`x = \[999 1 2 3 4 5 6 7 8 9 10 11\]`,
		`y shares x's storage: true; x\._version 1, y\._version 1`,
		`Measured: writing y\[0, 0\] changed x\[0\] to 999; the views allocated 0 bytes`)
}

func TestViewCopies(t *testing.T) {
	out := nbtest.Run(t, Cells, "viewCopies")
	nbtest.Want(t, out,
		`(?m)^x\.view\(512, 2048\) +0 bytes +true +true`,
		`(?m)^x\.t\(\)\.view\(-1\) +0 bytes .*view size is not compatible with input tensor's size and stride`,
		`(?m)^x\.t\(\)\.reshape\(-1\) +4\.00 MiB +false +true`,
		`(?m)^x\[:, ::2\]\.view\(1024, 256, 2\) +0 bytes +true +false`,
		`(?m)^x\[:, ::2\]\.contiguous\(\) +2\.00 MiB +false +true`,
		`(?m)^x\.expand\(4, n, n\)\.contiguous\(\) +16\.00 MiB +false +true`)
}

func TestViewNonContiguous(t *testing.T) {
	out := nbtest.Run(t, Cells, "viewNonContiguous")
	nbtest.Want(t, out,
		`x\[:, ::2\]\.view\(1024, 256, 2\): shape \[1024, 256, 2\] strides \[1024 4 2\]`,
		`Measured: view of the non-contiguous x\[:, ::2\] succeeded: true; x\.t\(\)\.view\(-1\) refused: true`)
}
