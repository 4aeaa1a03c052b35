package devicetest

import (
	"testing"

	"memlab.dev/memlab/device/sim"
)

// TestSimulatedDevice runs the suite on the simulated device, as CI does.
func TestSimulatedDevice(t *testing.T) {
	d, err := sim.New(sim.Config{Capacity: 4 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	Run(t, d)
}
