package nb02

import (
	"testing"

	"memlab.dev/memlab/internal/nbtest"
)

// TestShortCells: the median experiment cell has at most 12 code lines (blank
// lines and comments left out); plumbing lives in experiments/ch2.
func TestShortCells(t *testing.T) {
	nbtest.ShortCells(t, 12)
}
