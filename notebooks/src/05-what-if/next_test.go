package nb05

import (
	"testing"

	"memlab.dev/memlab/internal/nbtest"
)

// TestExerciseProgress runs the notebook's last cell: the learner's progress on
// its exercises (package progress), read from the repository's exercises/.
func TestExerciseProgress(t *testing.T) {
	nbtest.Want(t, nbtest.Run(t, Cells, "exerciseProgress"),
		`Notebook 05 has no exercises of its own`,
		`of 19 exercises pass`)
}
