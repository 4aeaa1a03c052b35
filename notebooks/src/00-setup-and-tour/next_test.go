package nb00

import (
	"testing"

	"memlab.dev/memlab/internal/nbtest"
)

// TestExerciseProgress runs the notebook's last cell: the learner's progress on
// its exercises (package progress), read from the repository's exercises/.
func TestExerciseProgress(t *testing.T) {
	nbtest.Want(t, nbtest.Run(t, Cells, "exerciseProgress"),
		`Notebook 00 has no exercises of its own`,
		`(?m)^14-version-counter +Catching in-place changes with version counters +`,
		`of 19 exercises pass`)
}
