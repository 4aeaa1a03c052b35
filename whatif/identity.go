package whatif

import (
	"fmt"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/snapshot"
)

// SameSegments compares a replay's final state with a snapshot's segments of one
// device: the same segments at the same addresses with the same blocks (address, size,
// state; requested sizes of active blocks). It returns nil when they agree, else an
// error naming the first difference.
func SameSegments(got allocator.Snapshot, want []snapshot.Segment) error {
	if len(got.Segments) != len(want) {
		return fmt.Errorf("%d segments, the snapshot has %d", len(got.Segments), len(want))
	}
	for i, g := range got.Segments {
		w := want[i]
		if g.Address != w.Address || g.TotalSize != w.TotalSize || g.Stream != w.Stream || g.Expandable != w.Expandable {
			return fmt.Errorf("segment %d: %#x+%d stream %#x expandable %v, the snapshot has %#x+%d stream %#x expandable %v",
				i, g.Address, g.TotalSize, g.Stream, g.Expandable, w.Address, w.TotalSize, w.Stream, w.Expandable)
		}
		if len(g.Blocks) != len(w.Blocks) {
			return fmt.Errorf("segment %#x: %d blocks, the snapshot has %d", g.Address, len(g.Blocks), len(w.Blocks))
		}
		for j, gb := range g.Blocks {
			wb := w.Blocks[j]
			if gb.Address != wb.Address || gb.Size != wb.Size || gb.State != wb.State ||
				(gb.State != allocator.StateInactive && gb.RequestedSize != wb.RequestedSize) {
				return fmt.Errorf("segment %#x block %d: %#x+%d %s (requested %d), the snapshot has %#x+%d %s (requested %d)",
					g.Address, j, gb.Address, gb.Size, gb.State, gb.RequestedSize, wb.Address, wb.Size, wb.State, wb.RequestedSize)
			}
		}
	}
	return nil
}
