package nb05

import (
	"fmt"

	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/whatif"
)

/*md
## 3 Under a cap: would it run out of memory?

A cap on reserved memory (`torch.cuda.set_per_process_memory_fraction`, or `Cap` in
bytes) makes the allocator free its cache and retry before it gives up. `whatif.MinCap`
finds, for a setting, the smallest cap under which the job still runs (it bisects to
2 MiB); the cell then replays 2 MiB below it: the first OOM comes with PyTorch's message
and, when the snapshot recorded them, the Python frames of the allocation that failed.
*/

//nb:cell plot
func underCap() {
	s := load("gpt2_train__default.pickle")
	var below []whatif.Setting
	for _, st := range memlab.Must(whatif.ParseSettings("", "expandable_segments:True")) {
		c := memlab.Must(whatif.MinCap(s, st, whatif.Options{}))
		memlab.Measured("%s: the smallest cap without OOM is %s", st.Label(), memlab.FormatBytes(c))
		st.Cap = c - 2<<20
		below = append(below, st)
	}
	res := memlab.Must(whatif.Replay(s, below, whatif.Options{}))
	for _, r := range res.Runs {
		if o := r.FirstOOM; o != nil {
			fmt.Printf("%s: %d OOMs; the first at event %d:\n  %s\n", r.Setting.Label(), r.OOMs, o.Event, o.Message)
			for _, fr := range o.Frames[:min(3, len(o.Frames))] {
				fmt.Printf("    %s:%d %s\n", fr.Filename, fr.Line, fr.Name)
			}
			if len(o.Frames) == 0 {
				fmt.Println("  (the snapshot recorded no Python frames for this allocation)")
			}
		}
	}
	memlab.Show(res.Plot("GPT-2 training, 2 MiB below each setting's smallest cap"))
}

/*md
Expandable segments need a smaller cap: the cache they keep can be unmapped page by page
when the cap is reached, while fixed segments are released only whole. The message is
the one PyTorch prints, with the cap ("allowed") and what the cache held at that moment.

**Try it:** set `st.Cap = c` instead of `c - 2<<20`: both replays run to the end without
an OOM (that is what `MinCap` promises), and no OOM message is printed.
*/
