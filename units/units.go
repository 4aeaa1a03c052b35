// Package units parses and formats byte sizes: the one home for the sizes
// users type ("24GiB", "80 GB", "1048576") and the sizes memlab prints for
// people ("80 GiB", "1.50 MiB").
//
// PyTorch's own formats stay where their rules live: the allocator's OOM
// message format is allocator.FormatSize, memory_summary's is in the
// allocator's summary.
package units

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Binary and decimal byte multiples.
const (
	KiB uint64 = 1 << 10
	MiB uint64 = 1 << 20
	GiB uint64 = 1 << 30
	TiB uint64 = 1 << 40
	PiB uint64 = 1 << 50
	KB  uint64 = 1e3
	MB  uint64 = 1e6
	GB  uint64 = 1e9
	TB  uint64 = 1e12
	PB  uint64 = 1e15
)

var multiples = map[string]uint64{
	"": 1, "b": 1,
	"kb": KB, "mb": MB, "gb": GB, "tb": TB, "pb": PB,
	"kib": KiB, "mib": MiB, "gib": GiB, "tib": TiB, "pib": PiB,
}

// unitNames lists the units ParseBytes accepts, for error messages.
const unitNames = "B, KB, MB, GB, TB, PB (powers of 1000) or KiB, MiB, GiB, TiB, PiB (powers of 1024)"

// ErrSyntax is wrapped by every error ParseBytes returns.
var ErrSyntax = errors.New("not a byte size")

// ParseBytes parses a byte size: a plain number of bytes ("1048576") or a
// decimal number and a unit, with or without a space ("24GiB", "80 GB",
// "1.5GiB", "512mib"). Units are B, KB, MB, GB, TB, PB (powers of 1000) and
// KiB, MiB, GiB, TiB, PiB (powers of 1024), in any case. The number is
// decimal digits with at most one point; signs, exponents, NaN and Inf are
// refused, and so are sizes that are not a whole number of bytes ("1.5B",
// "0.3KiB") or that do not fit in a uint64. Zero is a valid size: callers
// that need a positive one check for it.
func ParseBytes(s string) (uint64, error) {
	bad := func(why string) (uint64, error) {
		return 0, fmt.Errorf("units: size %q: %s: %w", s, why, ErrSyntax)
	}
	t := strings.TrimSpace(s)
	if t == "" {
		return bad("empty (want bytes, or a number and a unit such as 24GiB)")
	}
	if t[0] == '-' {
		return bad("negative")
	}
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(t)
	}
	num, unit := t[:i], strings.TrimSpace(t[i:])
	mult, ok := multiples[strings.ToLower(unit)]
	if num == "" {
		if ok {
			return bad("no number before the unit")
		}
		return bad("not a number (want bytes, or a number and a unit such as 24GiB)")
	}
	if !ok {
		return bad(fmt.Sprintf("unknown unit %q (use %s)", unit, unitNames))
	}
	whole, frac, dot := strings.Cut(num, ".")
	if strings.Contains(frac, ".") {
		return bad(fmt.Sprintf("%q is not a number", num))
	}
	if whole == "" && frac == "" {
		return bad("no digits")
	}
	if !dot {
		n, err := strconv.ParseUint(whole, 10, 64)
		if err != nil || n > math.MaxUint64/mult {
			return bad("too large (more than 2^64-1 bytes)")
		}
		return n * mult, nil
	}
	// value = whole.frac × mult exactly, as a fraction over 10^len(frac).
	digits, _ := new(big.Int).SetString(whole+frac, 10)
	if digits == nil {
		digits = new(big.Int)
	}
	digits.Mul(digits, new(big.Int).SetUint64(mult))
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(frac))), nil)
	q, r := new(big.Int).QuoRem(digits, den, new(big.Int))
	if r.Sign() != 0 {
		return bad("not a whole number of bytes")
	}
	if !q.IsUint64() {
		return bad("too large (more than 2^64-1 bytes)")
	}
	return q.Uint64(), nil
}

// Integer is the integer types FormatBytes accepts.
type Integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr
}

var binaryUnits = [...]struct {
	name string
	size uint64
}{{"EiB", 1 << 60}, {"PiB", PiB}, {"TiB", TiB}, {"GiB", GiB}, {"MiB", MiB}, {"KiB", KiB}}

// FormatBytes writes a byte count for people, in the largest binary unit
// that is not more than it: a whole number when the unit divides it exactly
// ("80 GiB", "2 MiB", "100 B"), else two decimals ("1.50 GiB", "139.80 GiB").
// Negative counts get a minus sign.
func FormatBytes[T Integer](n T) string {
	var u uint64
	sign := ""
	if n < 0 {
		sign = "-"
		u = uint64(-(int64(n) + 1)) + 1 // |n| without overflow at math.MinInt64
	} else {
		u = uint64(n)
	}
	for i, bu := range binaryUnits {
		if u < bu.size {
			continue
		}
		if u%bu.size == 0 {
			return sign + strconv.FormatUint(u/bu.size, 10) + " " + bu.name
		}
		v := float64(u) / float64(bu.size)
		if v >= 1023.995 && i > 0 { // would print as 1024.00 of this unit
			return sign + "1.00 " + binaryUnits[i-1].name
		}
		return sign + strconv.FormatFloat(v, 'f', 2, 64) + " " + bu.name
	}
	return sign + strconv.FormatUint(u, 10) + " B"
}
