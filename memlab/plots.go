package memlab

import (
	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/memplot"
)

// Segments converts a snapshot for [memplot.SegmentMap]: an allocated block is
// Allocated; a free block is Free when it is its segment's only block (so
// EmptyCache would release it) and InactiveSplit otherwise.
func Segments(s allocator.Snapshot) []memplot.Segment {
	out := make([]memplot.Segment, 0, len(s.Segments))
	for _, seg := range s.Segments {
		ms := memplot.Segment{Address: seg.Address, Pool: seg.Pool}
		for _, b := range seg.Blocks {
			st := memplot.InactiveSplit
			switch {
			case b.State != allocator.StateInactive:
				st = memplot.Allocated
			case len(seg.Blocks) == 1:
				st = memplot.Free
			}
			ms.Blocks = append(ms.Blocks, memplot.Block{Size: b.Size, State: st})
		}
		out = append(out, ms)
	}
	return out
}

// SegmentMap draws the lab's segments now, as memory_viz's allocator-state view.
func (l *Lab) SegmentMap(title string) (*memplot.Figure, error) {
	return memplot.SegmentMap(title, Segments(l.Snapshot()))
}

// Gauge reads the fragmentation gauge off the lab's snapshot: the largest free
// block and all free bytes in the allocator's segments.
func (l *Lab) Gauge(label string) memplot.Gauge {
	return GaugeOf(label, l.Snapshot())
}

// GaugeOf reads the fragmentation gauge off a snapshot.
func GaugeOf(label string, s allocator.Snapshot) memplot.Gauge {
	return memplot.Gauge{Label: label, LargestFree: s.LargestFreeBlock(), TotalFree: s.TotalFree()}
}
