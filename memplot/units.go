package memplot

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// ByteUnit is a unit for axes that show bytes.
type ByteUnit struct {
	Name  string // "B", "KiB", "MiB" or "GiB"
	Bytes float64
}

// Units memplot scales byte axes to.
var (
	Byte = ByteUnit{"B", 1}
	KiB  = ByteUnit{"KiB", 1 << 10}
	MiB  = ByteUnit{"MiB", 1 << 20}
	GiB  = ByteUnit{"GiB", 1 << 30}
)

// UnitFor picks the unit in which max bytes reads as a number between 4 and
// 4096: GiB from 4 GiB up, MiB from 4 MiB, KiB from 4 KiB, else bytes.
func UnitFor(max int64) ByteUnit {
	switch {
	case max >= 4<<30:
		return GiB
	case max >= 4<<20:
		return MiB
	case max >= 4<<10:
		return KiB
	}
	return Byte
}

// Of converts n bytes to u.
func (u ByteUnit) Of(n int64) float64 { return float64(n) / u.Bytes }

// Format prints n bytes in u with up to four significant digits: "768 MiB".
func (u ByteUnit) Format(n int64) string {
	return strconv.FormatFloat(u.Of(n), 'g', 4, 64) + " " + u.Name
}

// niceTicks labels about five round values between min and max (steps of 1, 2
// or 5 × 10^k), with unlabelled minor ticks between them, and prints them
// without needless decimals: 0, 500, 1000 rather than 0.00, 500.00.
func niceTicks(min, max float64) []plot.Tick {
	if !(max > min) {
		return []plot.Tick{{Value: min, Label: strconv.FormatFloat(min, 'g', 4, 64)}}
	}
	raw := (max - min) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag * 10
	for _, m := range []float64{1, 2, 5} {
		if raw <= m*mag {
			step = m * mag
			break
		}
	}
	decimals := int(math.Max(0, -math.Floor(math.Log10(step)+1e-9)))
	var ticks []plot.Tick
	minor := step / 5
	for v := math.Ceil(min/minor) * minor; v <= max+minor/1e6; v += minor {
		t := plot.Tick{Value: v}
		if r := math.Round(v / step); math.Abs(v/step-r) < 1e-6 {
			t.Value = r * step
			t.Label = strconv.FormatFloat(t.Value, 'f', decimals, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// roundTicks is the ticker memplot's value axes use.
var roundTicks = plot.TickerFunc(niceTicks)
