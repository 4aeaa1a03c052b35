package units_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"memlab.dev/memlab/units"
)

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in      string
		want    uint64
		wantErr string
	}{
		{"24GiB", 24 << 30, ""},
		{"80 GB", 80e9, ""},
		{"512MiB", 512 << 20, ""},
		{"512mb", 512e6, ""},
		{"1.5GiB", 3 << 29, ""},
		{".5KiB", 512, ""},
		{"2.", 2, ""},
		{"1048576", 1 << 20, ""},
		{"0", 0, ""},
		{"100B", 100, ""},
		{" 2 tib ", 2 << 40, ""},
		{"1PiB", 1 << 50, ""},
		{"18446744073709551615", math.MaxUint64, ""},
		{"16777215.9990234375TiB", 16777215*(1<<40) + 1098437885952, ""},
		{"", 0, "empty"},
		{"   ", 0, "empty"},
		{"GiB", 0, "no number before the unit"},
		{"24 parsecs", 0, `unknown unit "parsecs"`},
		{"1e9", 0, `unknown unit "e9"`},
		{"NaN", 0, "not a number"},
		{"nan GiB", 0, "not a number"},
		{"Inf", 0, "not a number"},
		{"+Inf", 0, "not a number"},
		{"+5", 0, "not a number"},
		{"-1", 0, "negative"},
		{"-0.5GiB", 0, "negative"},
		{"0.5", 0, "not a whole number of bytes"},
		{"1.5B", 0, "not a whole number of bytes"},
		{"0.3KiB", 0, "not a whole number of bytes"},
		{"1.2.3GB", 0, `"1.2.3" is not a number`},
		{".", 0, "no digits"},
		{"18446744073709551616", 0, "too large"},
		{"16EiB", 0, "unknown unit"},
		{"16384PiB", 0, "too large"},
		{"99999999999TiB", 0, "too large"},
		{"99999999999.5TiB", 0, "too large"},
		{"0x10", 0, `unknown unit "x10"`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := units.ParseBytes(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseBytes(%q) = %d, %v; want an error containing %q", tc.in, got, err, tc.wantErr)
				}
				if !errors.Is(err, units.ErrSyntax) || !strings.Contains(err.Error(), "units: size ") {
					t.Fatalf("ParseBytes(%q): error %q does not wrap ErrSyntax or name the size", tc.in, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseBytes(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestFormatBytes(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0 B"},
		{100, "100 B"},
		{1023, "1023 B"},
		{1024, "1 KiB"},
		{1536, "1.50 KiB"},
		{1536 << 10, "1.50 MiB"},
		{2 << 20, "2 MiB"},
		{80 << 30, "80 GiB"},
		{3 << 40, "3 TiB"},
		{150_100_000_000 &^ (1<<20 - 1), "139.79 GiB"},
		{1<<30 - 1, "1.00 GiB"},
		{-(2 << 20), "-2 MiB"},
		{math.MinInt64, "-8 EiB"},
		{math.MaxInt64, "8.00 EiB"},
	}
	for _, tc := range tests {
		if got := units.FormatBytes(tc.n); got != tc.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
	if got := units.FormatBytes(uint64(math.MaxUint64)); got != "16.00 EiB" {
		t.Errorf("FormatBytes(MaxUint64) = %q, want 16.00 EiB", got)
	}
	if got := units.FormatBytes(uint32(4096)); got != "4 KiB" {
		t.Errorf("FormatBytes(uint32(4096)) = %q, want 4 KiB", got)
	}
}

// FuzzParseBytes: any string either parses to a size that formats and
// re-parses consistently, or is an error wrapping ErrSyntax; never a panic.
func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"24GiB", "80 GB", "1.5GiB", "NaN", "-1", "1e9", "0.5", "18446744073709551616", ".", "2 tib"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := units.ParseBytes(s)
		if err != nil {
			if !errors.Is(err, units.ErrSyntax) {
				t.Fatalf("ParseBytes(%q): %v does not wrap ErrSyntax", s, err)
			}
			return
		}
		// A formatted size re-parses to itself when it is exact (no decimals).
		out := units.FormatBytes(n)
		if strings.Contains(out, ".") {
			return
		}
		if back, err := units.ParseBytes(out); err != nil || back != n {
			t.Fatalf("ParseBytes(%q) = %d; FormatBytes gives %q, which parses to %d, %v", s, n, out, back, err)
		}
	})
}
