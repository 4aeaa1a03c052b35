package devicetest

import (
	"math"
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

func TestRelErr(t *testing.T) {
	tests := []struct {
		got, want []float64
		lo, hi    float64
	}{
		{[]float64{1, 2}, []float64{1, 2}, 0, 0},
		{[]float64{1, 2.2}, []float64{1, 2}, 0.08, 0.09},
		{[]float64{0}, []float64{0}, 0, 0},
		{[]float64{1}, []float64{0}, math.Inf(1), math.Inf(1)},
	}
	for _, tt := range tests {
		if r := RelErr(tt.got, tt.want); r < tt.lo || r > tt.hi {
			t.Errorf("RelErr(%v, %v) = %v, want in [%v, %v]", tt.got, tt.want, r, tt.lo, tt.hi)
		}
	}
}

func TestHalfDecode(t *testing.T) {
	tests := []struct {
		h    uint16
		want float32
	}{{0x3c00, 1}, {0xc000, -2}, {0x7bff, 65504}, {0x0001, 5.960464477539063e-08}, {0x8000, 0}}
	for _, tt := range tests {
		if got := half(tt.h); got != tt.want {
			t.Errorf("half(%#04x) = %v, want %v", tt.h, got, tt.want)
		}
	}
}
