package snapshot

import (
	"slices"
	"sort"
)

// Coverage is what one device's trace shows about its own completeness. A trace
// covers the whole run when history was switched on before the program allocated
// on the device and the ring buffer (_record_memory_history's max_entries) never
// dropped an event; otherwise events are missing at the start, and the trace
// itself shows it: frees of blocks it never allocated, segments it never created.
// Coverage reports those facts; what to do about them is the caller's choice.
type Coverage struct {
	Device  int
	Entries int
	// Actions counts the entries per action.
	Actions map[Action]int
	// Streams are the distinct streams of the device's entries and segments, in
	// ascending order (0 is the default stream).
	Streams []uint64
	// FirstTimeUS and LastTimeUS are the time stamps of the first and last entry.
	FirstTimeUS, LastTimeUS int64

	// UnknownFrees counts free_requested and free_completed entries of blocks the
	// trace did not allocate before them: their alloc came before the trace began.
	UnknownFrees int
	// FirstUnknownFree is the index of the first such entry, -1 when none.
	FirstUnknownFree int
	// UnknownSegmentFrees counts segment_free and segment_unmap entries of memory
	// the trace did not allocate or map before them.
	UnknownSegmentFrees int
	// UntracedSegments counts the snapshot's segments on the device whose memory
	// the trace did not (entirely) create, and UntracedSegmentBytes is the memory
	// of theirs that no segment_alloc or segment_map in the trace accounts for:
	// what was reserved before the trace began.
	UntracedSegments     int
	UntracedSegmentBytes int64
	// UntracedBlocks counts the snapshot's allocated or pending-free blocks on the
	// device that the trace did not allocate (and UntracedBlockBytes their size):
	// tensors alive since before the trace began.
	UntracedBlocks     int
	UntracedBlockBytes int64
}

// Complete reports whether the trace shows no sign of missing events. A trace may
// still miss events that left no trace (an alloc and its free both dropped).
func (c Coverage) Complete() bool {
	return c.UnknownFrees == 0 && c.UnknownSegmentFrees == 0 && c.UntracedSegments == 0 && c.UntracedBlocks == 0
}

// Coverage walks the trace of one device and checks it against itself and against
// the snapshot's segments (see [Coverage]). A device without a trace has a
// Coverage with no entries.
func (s *Snapshot) Coverage(device int) Coverage {
	c := Coverage{Device: device, Actions: map[Action]int{}, FirstUnknownFree: -1}
	var trace []TraceEntry
	if device >= 0 && device < len(s.Traces) {
		trace = s.Traces[device]
	}
	c.Entries = len(trace)
	if len(trace) > 0 {
		c.FirstTimeUS, c.LastTimeUS = trace[0].TimeUS, trace[len(trace)-1].TimeUS
	}
	streams := map[uint64]bool{}
	live := map[uint64]bool{}    // allocated blocks
	pending := map[uint64]bool{} // free requested, not completed
	var mapped ranges            // device memory the trace allocated or mapped
	for i := range trace {
		e := &trace[i]
		c.Actions[e.Action]++
		if e.Action != ActionOOM && e.Action != ActionSnapshot {
			streams[e.Stream] = true
		}
		switch e.Action {
		case ActionAlloc:
			live[e.Addr] = true
		case ActionFreeRequested:
			if !live[e.Addr] {
				c.unknownFree(i)
			}
			delete(live, e.Addr)
			pending[e.Addr] = true
		case ActionFreeCompleted:
			if !pending[e.Addr] && !live[e.Addr] {
				c.unknownFree(i)
			}
			delete(pending, e.Addr)
			delete(live, e.Addr)
		case ActionSegmentAlloc, ActionSegmentMap:
			mapped.add(e.Addr, e.Addr+uint64(e.Size))
		case ActionSegmentFree, ActionSegmentUnmap:
			if !mapped.covers(e.Addr, e.Addr+uint64(e.Size)) {
				c.UnknownSegmentFrees++
			}
			mapped.remove(e.Addr, e.Addr+uint64(e.Size))
		}
	}
	for i := range s.Segments {
		seg := &s.Segments[i]
		if seg.Device != device {
			continue
		}
		streams[seg.Stream] = true
		if missing := int64(seg.TotalSize) - mapped.overlap(seg.Address, seg.Address+uint64(seg.TotalSize)); missing > 0 {
			c.UntracedSegments++
			c.UntracedSegmentBytes += missing
		}
		for j := range seg.Blocks {
			b := &seg.Blocks[j]
			switch b.State {
			case StateActiveAllocated:
				if !live[b.Address] {
					c.UntracedBlocks++
					c.UntracedBlockBytes += b.Size
				}
			case StateActivePendingFree:
				if !live[b.Address] && !pending[b.Address] {
					c.UntracedBlocks++
					c.UntracedBlockBytes += b.Size
				}
			}
		}
	}
	for st := range streams {
		c.Streams = append(c.Streams, st)
	}
	sort.Slice(c.Streams, func(i, j int) bool { return c.Streams[i] < c.Streams[j] })
	return c
}

func (c *Coverage) unknownFree(i int) {
	c.UnknownFrees++
	if c.FirstUnknownFree < 0 {
		c.FirstUnknownFree = i
	}
}

// ranges is a set of disjoint half-open address ranges in ascending order.
type ranges [][2]uint64

// add inserts [lo, hi), merging with the ranges it touches.
func (r *ranges) add(lo, hi uint64) {
	if hi <= lo {
		return
	}
	rs := *r
	i := sort.Search(len(rs), func(i int) bool { return rs[i][1] >= lo })
	j := i
	for j < len(rs) && rs[j][0] <= hi {
		lo, hi = min(lo, rs[j][0]), max(hi, rs[j][1])
		j++
	}
	*r = slices.Replace(rs, i, j, [2]uint64{lo, hi})
}

// remove takes [lo, hi) out of the set.
func (r *ranges) remove(lo, hi uint64) {
	if hi <= lo {
		return
	}
	rs := *r
	i := sort.Search(len(rs), func(i int) bool { return rs[i][1] > lo })
	j := i
	for j < len(rs) && rs[j][0] < hi {
		j++
	}
	if i == j {
		return
	}
	var keep [][2]uint64
	if rs[i][0] < lo {
		keep = append(keep, [2]uint64{rs[i][0], lo})
	}
	if rs[j-1][1] > hi {
		keep = append(keep, [2]uint64{hi, rs[j-1][1]})
	}
	*r = slices.Replace(rs, i, j, keep...)
}

// overlap returns how many bytes of [lo, hi) the set holds.
func (r ranges) overlap(lo, hi uint64) int64 {
	var n int64
	for i := sort.Search(len(r), func(i int) bool { return r[i][1] > lo }); i < len(r) && r[i][0] < hi; i++ {
		a, b := max(lo, r[i][0]), min(hi, r[i][1])
		n += int64(b - a)
	}
	return n
}

// covers reports whether the set holds all of [lo, hi).
func (r ranges) covers(lo, hi uint64) bool {
	return hi <= lo || r.overlap(lo, hi) == int64(hi-lo)
}
