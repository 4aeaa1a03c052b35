package nb06

import (
	"os"
	"testing"

	"memlab.dev/memlab/device"
)

// TestMain runs the cells on the simulated device, whose numbers the tests
// check, even on a machine with a GPU.
func TestMain(m *testing.M) {
	os.Setenv(device.EnvVar, "sim")
	os.Exit(m.Run())
}
