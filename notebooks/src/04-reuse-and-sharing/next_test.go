package nb04

import (
	"testing"

	"memlab.dev/memlab/internal/nbtest"
)

// TestExerciseProgress runs the notebook's last cell: the learner's progress on
// its exercises (package progress), read from the repository's exercises/.
func TestExerciseProgress(t *testing.T) {
	nbtest.Want(t, nbtest.Run(t, Cells, "exerciseProgress"),
		`(?m)^12-tensor-pool +A fixed-shape tensor pool +`,
		`of 6 exercises pass`)
}
