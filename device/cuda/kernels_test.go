package cuda

import "testing"

// TestGridContig checks the grid of the contiguous fast paths: one 16-byte
// vector per thread of 256-thread blocks, at least one block, and no more
// than the driver's 2^31-1 blocks (the kernels loop over the rest).
func TestGridContig(t *testing.T) {
	tests := []struct {
		nv   int
		want uint32
	}{
		{0, 1}, {1, 1}, {255, 1}, {256, 1}, {257, 2},
		{16 << 20, 65536}, // 256 MiB: 65536 blocks, no loop
		{256 * (1<<31 - 1), 1<<31 - 1},
		{1 << 50, 1<<31 - 1},
	}
	for _, tc := range tests {
		g := gridContig(tc.nv)
		if g != [3]uint32{tc.want, 1, 1} {
			t.Errorf("gridContig(%d) = %v, want [%d 1 1]", tc.nv, g, tc.want)
		}
		if tc.nv > 0 && uint64(g[0])*256 < uint64(tc.nv) && g[0] != 1<<31-1 {
			t.Errorf("gridContig(%d) = %v covers %d vectors only", tc.nv, g, uint64(g[0])*256)
		}
	}
}
