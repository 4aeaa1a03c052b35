package nb02

import (
	"testing"

	"memlab.dev/memlab/internal/nbtest"
)

// TestExerciseProgress runs the notebook's last cell: the learner's progress on
// its exercises (package progress), read from the repository's exercises/.
func TestExerciseProgress(t *testing.T) {
	nbtest.Want(t, nbtest.Run(t, Cells, "exerciseProgress"),
		`(?m)^01-strides +Row-major strides +`,
		`(?m)^09-stats +memory_allocated vs memory_reserved +`,
		`of 13 exercises pass`)
}
