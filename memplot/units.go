package memplot

import "strconv"

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
