package nb00

import (
	"testing"

	"memlab.dev/memlab/internal/nbtest"
)

// TestChineseEdition runs every cell in the Chinese edition: memlab's own
// words print in Chinese (no catalog miss, no English prose outside the
// glossary's kept terms and PyTorch's own texts).
func TestChineseEdition(t *testing.T) {
	nbtest.ChineseEdition(t, Cells, "../../GLOSSARY.md")
}
