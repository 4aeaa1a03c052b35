package units_test

import (
	"fmt"

	"memlab.dev/memlab/units"
)

func ExampleParseBytes() {
	n, err := units.ParseBytes("1.5GiB")
	fmt.Println(n, err)
	_, err = units.ParseBytes("NaN")
	fmt.Println(err)
	// Output:
	// 1610612736 <nil>
	// units: size "NaN": not a number (want bytes, or a number and a unit such as 24GiB): not a byte size
}

func ExampleFormatBytes() {
	fmt.Println(units.FormatBytes(80<<30), units.FormatBytes(int64(1536<<10)), units.FormatBytes(100))
	// Output: 80 GiB 1.50 MiB 100 B
}
