package nb05

import (
	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/whatif"
)

/*md
## 4 Search the settings

`whatif.Sweep` tries `max_split_size_mb` × `roundup_power2_divisions` ×
`expandable_segments` (and, under a cap, `garbage_collection_threshold`) around a base
setting and returns the runs that did not run out of memory, lowest reserved peak first.
*/

//nb:cell plot
func sweepSettings() {
	s := load("gpt2_train__default.pickle")
	base := whatif.Setting{Conf: allocator.DefaultConfig()}
	runs := memlab.Must(whatif.Sweep(s, base, whatif.Options{}))
	tried := len(whatif.SweepSettings(base))
	top := runs[:min(8, len(runs))]
	memlab.TableOf(&whatif.Result{Runs: top}).Show()
	var names []string
	reserved := memplot.BarSeries{Name: "peak reserved"}
	allocated := memplot.BarSeries{Name: "peak allocated"}
	for _, r := range top {
		names = append(names, r.Setting.ShortLabel())
		reserved.Values = append(reserved.Values, float64(r.MaxReserved)/(1<<20))
		allocated.Values = append(allocated.Values, float64(r.MaxAllocated)/(1<<20))
	}
	memlab.Measured("%d of %d settings replayed without OOM; the lowest reserved peak, %s, is %s",
		len(runs), tried, memlab.FormatBytes(top[0].MaxReserved), top[0].Setting.Label())
	memlab.Show(memplot.Bars("GPT-2: the settings with the lowest reserved peak", "MiB", names, reserved, allocated))
}

/*md
The best settings are the ones that let the cache shrink and grow without fragmenting;
the allocated bars show what rounding costs in memory the tensors do not use.

**Try it:** sweep around a cap, `base := whatif.Setting{Conf: allocator.DefaultConfig(),
Cap: 6 << 30}`: `garbage_collection_threshold` joins the search, so more settings are
tried, and no run kept reserves more than the 6 GiB cap.
*/
