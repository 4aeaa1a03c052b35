package oracle_test

import (
	"math"
	"testing"

	"memlab.dev/memlab/device/oracle"
	"memlab.dev/memlab/tensor"
)

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
		if r := oracle.RelErr(tt.got, tt.want); r < tt.lo || r > tt.hi {
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
		b := []byte{byte(tt.h), byte(tt.h >> 8)}
		if got := oracle.Decode(tensor.Float16, b); got[0] != float64(tt.want) {
			t.Errorf("Decode(float16 %#04x) = %v, want %v", tt.h, got[0], tt.want)
		}
	}
}
