package ch4

import (
	"fmt"

	"memlab.dev/memlab/lang"
)

// Faster says a latency change the way a learner reads it, in the edition
// MEMLAB_LANG names: v is the percent of the baseline's time saved, so 4.5
// prints "4.5 % faster" and -15.4 "15.4 % slower" (never "-15.4 % faster").
func Faster(v float64) string {
	if v < 0 {
		return fmt.Sprintf(lang.Text("%.1f %% slower"), -v)
	}
	return fmt.Sprintf(lang.Text("%.1f %% faster"), v)
}

// Saved says a change in memory the same way: v is the percent of the
// baseline's bytes saved, so 6.3 prints "6.3 % saved" and -6.3 "6.3 % more".
func Saved(v float64) string {
	if v < 0 {
		return fmt.Sprintf(lang.Text("%.1f %% more"), -v)
	}
	return fmt.Sprintf(lang.Text("%.1f %% saved"), v)
}
