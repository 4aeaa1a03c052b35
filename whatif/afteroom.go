package whatif

import (
	"fmt"
	"strings"

	"memlab.dev/memlab/allocator"
)

// What frees after a predicted OOM can still change.
//
// A replay that predicts an out-of-memory error stops at the failing allocation
// (Options.ContinueAfterOOM), as the program did: PyTorch raised
// torch.OutOfMemoryError there. What the program did next is not in the snapshot. The
// common case is that it freed tensors: an exception unwinding (caught, or on its way
// out) drops the frames that held them. Under that assumption — after the OOM the
// program only frees blocks: it allocates nothing, calls no empty_cache and destroys
// no torch.cuda.MemPool (whose destructor empties the pool: cudaFree) — PyTorch 2.11's
// rules say which figures can still move:
//
//   - free() lowers the allocated statistics and calls free_block (or, with pending
//     stream uses, waits for process_events or a synchronisation to call it); neither
//     calls cudaFree or synchronises. So the peaks of allocated, active, requested and
//     reserved bytes, of allocations and segments, num_device_alloc, num_device_free,
//     retries, OOMs and synchronisations cannot rise.
//   - free_block merges the block with free neighbours and counts it in inactive_split
//     while its segment has other blocks (expandable segments are left out of
//     inactive_split). In a segment no two free blocks are adjacent, so while a
//     segment holds a live block (allocated or pending), all its free bytes are split
//     and inactive; once it holds none it is one free block and counts nothing. The
//     most a segment can reach is its size less its smallest live block (free the
//     others); the most free blocks it can hold is the most runs of non-live blocks
//     that keeping some of its live blocks leaves. Segments are independent, so
//     freeing in one order reaches every segment's most at once: that sum is the
//     highest inactive_split_bytes (inactive_split) the peak can reach, in all and
//     per pool kind (small, large; private pools' segments count as the default
//     pool's do).
//
// The cumulative counters (".allocated", ".freed") and the current figures do change
// with frees; they are left at the stop, as the table's note says.
//
// afterOOMRange returns those figures' ranges for a replay stopped at an OOM, from the
// allocator's Snapshot snap and memory_stats at the stop: low the figure at the stop,
// high the most the rules above allow. Figures whose high equals their low are left
// out.
func afterOOMRange(snap allocator.Snapshot, stats map[string]int64) map[string][2]int64 {
	bytesHigh := map[string]int64{}
	countHigh := map[string]int64{}
	for _, seg := range snap.Segments {
		if seg.Expandable {
			continue
		}
		b, c := splitMost(seg.Blocks)
		for _, kind := range []string{"all", seg.Pool + "_pool"} {
			bytesHigh[kind] += b
			countHigh[kind] += c
		}
	}
	out := map[string][2]int64{}
	widen := func(key string, most int64) {
		if v := stats[key]; most > v {
			out[key] = [2]int64{v, most}
		}
	}
	for _, kind := range []string{"all", "small_pool", "large_pool"} {
		widen("inactive_split_bytes."+kind+".peak", bytesHigh[kind])
		widen("inactive_split."+kind+".peak", countHigh[kind])
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// splitMost returns, for one segment's blocks in address order, the most inactive
// split bytes and the most inactive split blocks it can hold after any frees of its
// live (allocated or pending) blocks: 0, 0 without a live block.
func splitMost(blocks []allocator.Block) (bytes, count int64) {
	smallest := int64(-1)
	var size int64
	for _, b := range blocks {
		size += b.Size
		if b.State != allocator.StateInactive && (smallest < 0 || b.Size < smallest) {
			smallest = b.Size
		}
	}
	if smallest < 0 {
		return 0, 0
	}
	// Keep a non-empty set of live blocks; count the runs of the others. best[k][s]:
	// the most runs so far, k whether a live block was kept, s whether the last
	// block was kept; −1 where not reachable.
	best := [2][2]int64{{0, -1}, {-1, -1}}
	first := true
	for _, b := range blocks {
		next := [2][2]int64{{-1, -1}, {-1, -1}}
		for k := range 2 {
			for s := range 2 {
				v := best[k][s]
				if v < 0 {
					continue
				}
				// not kept: a run starts after a kept block or at the segment's start
				runs := v
				if s == 1 || first {
					runs++
				}
				next[k][0] = max(next[k][0], runs)
				if b.State != allocator.StateInactive {
					next[1][1] = max(next[1][1], v)
				}
			}
		}
		best, first = next, false
	}
	return size - smallest, max(best[1][0], best[1][1])
}

// afterOOMNote is the note beside a run whose figures carry an after-OOM range
// (Run.AfterOOMRange), naming the table's columns that do; "" when none does.
func (r *Run) afterOOMNote() string {
	if len(r.AfterOOMRange) == 0 {
		return ""
	}
	var cols []string
	for _, k := range tableKeys {
		if _, ok := r.AfterOOMRange[k.key]; ok {
			cols = append(cols, k.column)
		}
	}
	what := "some memory_stats figures"
	if len(cols) > 0 {
		what = strings.Join(cols, ", ")
	}
	return fmt.Sprintf("%s depend%s on what the program did after its OOM: the replay stops at the OOM, and after it the program's own exception handling frees tensors; a <low, high> beside a figure is its range from the figure at the OOM to the most that freeing the blocks still live, in any order, could reach (over every placement tried, where the figure depends on driver addresses); it assumes the program only frees after the OOM, as an exception unwinding does (an allocation, empty_cache or a MemPool's destruction after it is outside the range)",
		what, verbS(len(cols)))
}
