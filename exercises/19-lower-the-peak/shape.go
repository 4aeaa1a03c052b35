package peak

import (
	"fmt"

	"memlab.dev/memlab/tensor"
)

// errBadShape is the error for an input that is not [batch, seq, hidden].
func errBadShape(s tensor.Shape) error {
	return fmt.Errorf("peak: input of shape %v, want [batch, seq, hidden]", s)
}
