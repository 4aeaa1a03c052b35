//go:build !solution

package stats

// Increase adds n to Current and Allocated and raises Peak to Current if Current
// is now higher.
func (s *Stat) Increase(n uint64) {
	panic("not implemented")
}

// Decrease subtracts n from Current and adds it to Freed. It returns an error, and
// leaves s unchanged, if n exceeds Current.
func (s *Stat) Decrease(n uint64) error {
	panic("not implemented")
}

// ResetPeak sets Peak to Current, as reset_peak_memory_stats does.
func (s *Stat) ResetPeak() {
	panic("not implemented")
}

// Apply updates the statistics for one event: SegmentAlloc and SegmentFree move
// Reserved by e.Size and Segments by 1; Alloc and Free move Allocated by e.Size,
// Requested by e.Requested and Allocations by 1.
//
// It returns an error, and changes nothing, if the event is impossible: an unknown
// kind, a zero Size, Requested above Size (or zero) for Alloc/Free, a decrease below
// zero, allocated bytes above reserved bytes afterwards.
func (t *Tracker) Apply(e Event) error {
	panic("not implemented")
}
