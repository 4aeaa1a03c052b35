package nb05

/*md
## 1 Compare settings

`whatif.ParseSettings` turns `PYTORCH_CUDA_ALLOC_CONF` strings into settings (`""` is
PyTorch's defaults); `whatif.Replay` replays the history under each of them (in
parallel) and returns one run per setting, with the figures `torch.cuda` would report
and the memory curves. `memlab.TableOf(res)` shows its table (the one `memlab whatif`
prints, settings in short: `expandable` for `expandable_segments:True`, `max_split 128`
for `max_split_size_mb:128`); `Plot` draws each setting's reserved (solid) and
allocated (dashed) memory over the trace's events, one colour per setting.
*/

import (
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/whatif"
)

//nb:cell plot
func compareSettings() {
	s := load("gpt2_train__default.pickle")
	settings := memlab.Must(whatif.ParseSettings("", "expandable_segments:True",
		"max_split_size_mb:128", "roundup_power2_divisions:4"))
	res := memlab.Must(whatif.Replay(s, settings, whatif.Options{}))
	memlab.TableOf(res).Show()
	def := res.Runs[0]
	for _, r := range res.Runs[1:] {
		memlab.Measured("%s: peak reserved %s (%+.1f %% against the defaults' %s), peak inactive split %s",
			r.Setting.Label(), memlab.FormatBytes(r.MaxReserved),
			100*float64(r.MaxReserved-def.MaxReserved)/float64(def.MaxReserved),
			memlab.FormatBytes(def.MaxReserved), memlab.FormatBytes(r.PeakInactiveSplit))
	}
	memlab.Show(res.Plot("GPT-2 training: reserved and allocated under four settings"))
}

/*md
Read the table from the left: the allocated peak is what the tensors need (it moves only
with rounding: `roundup_power2_divisions` rounds requests up), the reserved peak is what
the process holds from the GPU, and the gap between them is the cache. `peak inactive
split` is PyTorch's measure of fragmentation: free pieces of segments that also hold live
blocks, which cannot be given back. Expandable segments grow one mapped range instead of
making a segment per request, so that gap closes; `max_split_size_mb:128` keeps large
blocks from being split, which here costs more segments and a higher reserved peak.

**Try it:** add `"max_split_size_mb:512"` to the list: its row equals the defaults',
because no block this program allocates is as large as 512 MiB, so the limit never
applies. The limit only changes blocks above it; pick it below the sizes you want kept
whole.
*/
