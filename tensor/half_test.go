package tensor

import (
	"math"
	"testing"
)

func TestFloat16Bits(t *testing.T) {
	cases := []struct {
		name string
		in   float32
		want uint16
	}{
		{"one", 1, 0x3c00},
		{"minus two", -2, 0xc000},
		{"zero", 0, 0x0000},
		{"negative zero", float32(math.Copysign(0, -1)), 0x8000},
		{"largest normal", 65504, 0x7bff},
		{"rounds to inf", 65520, 0x7c00},
		{"just below the rounding point to inf", 65519, 0x7bff},
		{"inf", float32(math.Inf(1)), 0x7c00},
		{"-inf", float32(math.Inf(-1)), 0xfc00},
		{"smallest normal", 6.103515625e-05, 0x0400},
		{"smallest subnormal", 5.960464477539063e-08, 0x0001},
		{"half the smallest subnormal ties to even zero", 2.9802322387695312e-08, 0x0000},
		{"just above half the smallest subnormal", 2.99e-08, 0x0001},
		{"1/3", 1.0 / 3, 0x3555},
		{"tie rounds to even (down)", 1 + 1.0/2048, 0x3c00},
		{"tie rounds to even (up)", 1 + 3.0/2048, 0x3c02},
		{"above tie rounds up", 1 + 1.0/2048 + 1.0/65536, 0x3c01},
		{"0.1", 0.1, 0x2e66},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Float16Bits(c.in); got != c.want {
				t.Fatalf("Float16Bits(%g) = %#04x, want %#04x", c.in, got, c.want)
			}
		})
	}
	if h := Float16Bits(float32(math.NaN())); h&0x7c00 != 0x7c00 || h&0x3ff == 0 {
		t.Fatalf("NaN encodes as %#04x, not a NaN", h)
	}
}

func TestFloat16RoundTripIsExactForEveryEncoding(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		f := Float16From(uint16(h))
		if f != f {
			if g := Float16Bits(f); g&0x7c00 != 0x7c00 || g&0x3ff == 0 {
				t.Fatalf("NaN %#04x came back as %#04x", h, g)
			}
			continue
		}
		if g := Float16Bits(f); g != uint16(h) {
			t.Fatalf("%#04x -> %g -> %#04x", h, f, g)
		}
	}
}

func TestBFloat16(t *testing.T) {
	cases := []struct {
		name string
		in   float32
		want uint16
	}{
		{"one", 1, 0x3f80},
		{"minus two", -2, 0xc000},
		{"pi", math.Pi, 0x4049},
		{"tie rounds to even (down)", math.Float32frombits(0x3f808000), 0x3f80},
		{"tie rounds to even (up)", math.Float32frombits(0x3f818000), 0x3f82},
		{"above tie", math.Float32frombits(0x3f808001), 0x3f81},
		{"inf", float32(math.Inf(1)), 0x7f80},
		{"largest rounds to inf", math.MaxFloat32, 0x7f80},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := BFloat16Bits(c.in); got != c.want {
				t.Fatalf("BFloat16Bits(%g) = %#04x, want %#04x", c.in, got, c.want)
			}
		})
	}
	for h := 0; h < 1<<16; h++ {
		f := BFloat16From(uint16(h))
		if f != f {
			continue
		}
		if g := BFloat16Bits(f); g != uint16(h) {
			t.Fatalf("%#04x -> %g -> %#04x", h, f, g)
		}
	}
	if h := BFloat16Bits(float32(math.NaN())); BFloat16From(h) == BFloat16From(h) {
		t.Fatalf("NaN encodes as %#04x, not a NaN", h)
	}
}
