package nb05

import (
	"fmt"

	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/snapshot"
	"memlab.dev/memlab/whatif"
)

/*md
## 5 Several streams

Real jobs allocate on side streams (prefetch, communication, parallel branches). PyTorch
keeps free blocks per stream and reuses a block only on its own stream; a block handed to
another stream with `record_stream` becomes free only when that stream's work is done:
its `free_completed` entry comes later than its `free_requested`. The replay follows the
recorded stream of every event and completes those frees where the snapshot did. The
shipped `multistream_branches` runs two branches of a model on two side streams:
*/

// deferredFrees counts the frees in trace that completed later than they were
// requested (blocks used on another stream): free_completed not right after its
// free_requested.
//
//nb:decl
func deferredFrees(trace []snapshot.TraceEntry) int {
	n := 0
	for i, e := range trace {
		if e.Action == snapshot.ActionFreeCompleted &&
			(i == 0 || trace[i-1].Action != snapshot.ActionFreeRequested || trace[i-1].Addr != e.Addr) {
			n++
		}
	}
	return n
}

//nb:cell plot
func severalStreams() {
	s := load("multistream_branches__default.pickle")
	streams := map[uint64]int{}
	for _, e := range s.Traces[0] {
		if e.Action == snapshot.ActionAlloc {
			streams[e.Stream]++
		}
	}
	fmt.Printf("allocations per stream: %v\n", streams)
	settings := memlab.Must(whatif.ParseSettings("", "expandable_segments:True", "max_split_size_mb:128"))
	res := memlab.Must(whatif.Replay(s, settings, whatif.Options{}))
	memlab.TableOf(res).Show()
	memlab.Measured("%d streams allocate; %d frees completed later than requested (cross-stream)", len(streams), deferredFrees(s.Traces[0]))
	memlab.Measured("peak reserved %s by default, %s with expandable segments",
		memlab.FormatBytes(res.Runs[0].MaxReserved), memlab.FormatBytes(res.Runs[1].MaxReserved))
	memlab.Show(res.Plot("multistream_branches: reserved and allocated under three settings"))
}

/*md
A figure with `[low, high]` beside it depends on GPU timing: the replay also completed
the cross-stream frees under other timings, from as early as PyTorch could (the next
allocation) to as late (the next synchronisation), and the brackets hold the figure's
range over those replays (`Run.TimingRange`); the figure itself is the one with the
snapshot's own timing.

**Try it:** load `resnet_multiscale_train__default.pickle` instead: one stream allocates
and no free completes later than it was requested — a single-stream program has nothing
that depends on GPU timing, which is why its predictions (section 2's Try it) hold in every
figure.

### Where the prediction depends on GPU timing

When the GPU lets a cross-stream free complete is a matter of timing: PyTorch checks, at
the start of a later `malloc`, whether the other stream's work is done. Another run of the
same program completes those frees at other points, and no snapshot holds another run's
timing. The cell compares the replay of the default snapshot under each recorded setting
with what PyTorch measured in that run, as section 2 did for GPT-2, and names every
figure that differs.
*/

//nb:cell
func streamsVsPyTorch() {
	s := load("multistream_branches__default.pickle")
	tab := memlab.NewTable("recorded under", "figure", "replay", "PyTorch")
	equal := 0
	for _, tag := range recorded {
		f := readFacts("multistream_branches__" + tag)
		r := predict(s, f)
		for _, k := range figures {
			if r.Stats[k] == f.Stats[k] {
				equal++
			} else {
				tab.Row(r.Setting.ShortLabel(), k, figure(k, r.Stats[k]), figure(k, f.Stats[k]))
			}
		}
	}
	tab.Show()
	memlab.Measured("%d of %d figures equal what PyTorch measured; %d differ (listed above)",
		equal, len(figures)*len(recorded), len(tab.Rows))
}

/*md
What differs is only the fragmentation peak (`inactive_split_bytes.all.peak`): which
free block is split at a given moment depends on which cross-stream frees have completed
by then. Peaks of allocated and reserved memory, device allocations and frees, retries and
OOMs are the same. memlab's test (`go test -run TestPredictsRecordedSettings ./whatif`)
also moves each recorded run's completion points into the default snapshot, and then
every figure is equal, so the policy is not what differs; see
[BENCHMARKS.md](../BENCHMARKS.md). For your own multi-stream job: trust the peaks, and
read the fragmentation figure as one possible timing.

**Try it:** replace `"multistream_branches__"` by `"gpt2_train__"` (and load
`gpt2_train__default.pickle`): a single-stream program has no cross-stream frees, and the
table is empty — every figure equal.
*/
