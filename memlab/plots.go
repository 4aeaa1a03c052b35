package memlab

import (
	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/memplot/plotdata"
)

// Segments converts a snapshot for plotdata.SegmentMap: an allocated block is
// Allocated; a free block is Free when it is its segment's only block (so
// EmptyCache would release it) and InactiveSplit otherwise.
func Segments(s allocator.Snapshot) []plotdata.Segment {
	out := make([]plotdata.Segment, 0, len(s.Segments))
	for _, seg := range s.Segments {
		ms := plotdata.Segment{Address: seg.Address, Pool: seg.Pool}
		for _, b := range seg.Blocks {
			st := plotdata.InactiveSplit
			switch {
			case b.State != allocator.StateInactive:
				st = plotdata.Allocated
			case len(seg.Blocks) == 1:
				st = plotdata.Free
			}
			ms.Blocks = append(ms.Blocks, plotdata.Block{Size: b.Size, State: st})
		}
		out = append(out, ms)
	}
	return out
}

// Segments is the lab's segments now, for memory_viz's allocator-state view:
// memlab.Show(plotdata.SegmentMap("…", l.Segments())) draws them.
func (l *Lab) Segments() []plotdata.Segment { return Segments(l.Snapshot()) }

// Gauge reads the fragmentation gauge off the lab's snapshot: the largest free
// block and all free bytes in the allocator's segments.
func (l *Lab) Gauge(label string) plotdata.Gauge {
	return GaugeOf(label, l.Snapshot())
}

// GaugeOf reads the fragmentation gauge off a snapshot.
func GaugeOf(label string, s allocator.Snapshot) plotdata.Gauge {
	return plotdata.Gauge{Label: label, LargestFree: s.LargestFreeBlock(), TotalFree: s.TotalFree()}
}
