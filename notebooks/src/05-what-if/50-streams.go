package nb05

import (
	"fmt"
	"maps"
	"slices"

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
the cross-stream frees under other timings — as early as PyTorch could (the next
allocation), as late (the next synchronisation), and many timings between —
and the brackets hold the figure's range over those replays (`Run.TimingRange`;
`Run.TimingSchedules` says how many); the figure itself is the one with the snapshot's
own timing.

**Try it:** load `resnet_multiscale_train__default.pickle` instead: one stream allocates
and no free completes later than it was requested — a single-stream program has nothing
that depends on GPU timing, which is why its predictions (section 2's Try it) hold in every
figure.

### Where the prediction depends on GPU timing

When the GPU lets a cross-stream free complete is a matter of timing: PyTorch checks, at
the start of a later `malloc`, whether the other stream's work is done. Another run of the
same program completes those frees at other points, and no snapshot holds another run's
timing. The cell compares the replay of the default snapshot under each recorded setting
with what PyTorch measured in that run, as section 2 did for GPT-2, and lists every
figure that differs with the replay's range.
*/

//nb:cell
func streamsVsPyTorch() {
	s := load("multistream_branches__default.pickle")
	tab := memlab.NewTable("recorded under", "figure", "replay", "range", "PyTorch")
	equal, inside := 0, 0
	for _, tag := range recorded {
		f := readFacts("multistream_branches__" + tag)
		r := predict(s, f)
		for _, k := range figures {
			if r.Stats[k] == f.Stats[k] {
				equal++
				continue
			}
			lr, flagged := r.TimingRange[k]
			if flagged && lr[0] <= f.Stats[k] && f.Stats[k] <= lr[1] {
				inside++
			}
			tab.Row(r.Setting.ShortLabel(), k, figure(k, r.Stats[k]),
				"["+figure(k, lr[0])+", "+figure(k, lr[1])+"]", figure(k, f.Stats[k]))
		}
	}
	tab.Show()
	memlab.Measured("%d of %d figures equal what PyTorch measured; of the %d that differ, %d lie inside the replay's timing range",
		equal, len(figures)*len(recorded), len(tab.Rows), inside)
}

/*md
Is that a fault of the replay, or does PyTorch itself measure different figures when the
same program runs again? The repository ships eight more runs of `multistream_branches`
under each setting, recorded one after another on the H200
(`reference/workloads-2.11/repeats/`). The cell collects, per setting, every figure that
PyTorch did not measure the same in all eight runs, and checks each measured value
against the replay's range:
*/

//nb:cell
func repeatedRuns() {
	s := load("multistream_branches__default.pickle")
	tab := memlab.NewTable("setting", "figure", "PyTorch, 8 runs", "replay range")
	varying, values, inside, flaggedN := 0, 0, 0, 0
	for _, tag := range recorded {
		seen := map[string]map[int64]int{} // figure → value → runs
		var r whatif.Run
		for run := 1; run <= 8; run++ {
			f := readFacts(fmt.Sprintf("repeats/%d/multistream_branches__%s", run, tag))
			if run == 1 {
				r = predict(s, f)
			}
			for _, k := range figures {
				if seen[k] == nil {
					seen[k] = map[int64]int{}
				}
				seen[k][f.Stats[k]]++
			}
		}
		for _, k := range figures {
			if len(seen[k]) < 2 {
				continue
			}
			varying++
			lr, flagged := r.TimingRange[k]
			if flagged {
				flaggedN++
			}
			measured := ""
			for _, v := range slices.Sorted(maps.Keys(seen[k])) {
				values++
				if flagged && lr[0] <= v && v <= lr[1] {
					inside++
				}
				measured += fmt.Sprintf("%s (%d×) ", figure(k, v), seen[k][v])
			}
			tab.Row(r.Setting.ShortLabel(), k, measured, "["+figure(k, lr[0])+", "+figure(k, lr[1])+"]")
		}
	}
	tab.Show()
	memlab.Measured("%d figures took more than one value in eight runs of one program under one setting; the replay flags %d of them", varying, flaggedN)
	memlab.Measured("%d of the %d values PyTorch measured for them lie inside the replay's timing range", inside, values)
}

/*md
So for a multi-stream program the exact figure under another setting is not a property of
the program and the setting: the same run repeated gives different peaks of reserved
memory, device allocations and fragmentation, depending on how far the GPU lagged behind
the CPU when each `malloc` looked. What the replay can give — and gives — is every figure
that does not depend on timing exactly, each one that does with the range of timings it
tried, and, given a run's own completion points, that run's figures exactly: memlab's
tests (`go test -run 'TestPredictsRecordedSettings|TestRepeatedRuns' ./whatif`) move
each recorded run's completion points into the default snapshot and then every figure is
equal, so the policy is not what differs; see [BENCHMARKS.md](../BENCHMARKS.md). For your
own multi-stream job: trust the figures without brackets, and read a bracketed one as a
range.

**Try it:** replace `"multistream_branches__"` by `"gpt2_train__"` in `streamsVsPyTorch`
(and load `gpt2_train__default.pickle`): a single-stream program has no cross-stream
frees, and the table is empty — every figure equal.
*/
