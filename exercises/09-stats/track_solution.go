//go:build solution

package stats

import "fmt"

// Increase is the reference solution; track.go documents the contract.
func (s *Stat) Increase(n uint64) {
	s.Current += n
	s.Allocated += n
	s.Peak = max(s.Peak, s.Current)
}

// Decrease is the reference solution; track.go documents the contract.
func (s *Stat) Decrease(n uint64) error {
	if n > s.Current {
		return fmt.Errorf("stats: cannot decrease by %d below zero (current %d)", n, s.Current)
	}
	s.Current -= n
	s.Freed += n
	return nil
}

// ResetPeak is the reference solution; track.go documents the contract.
func (s *Stat) ResetPeak() { s.Peak = s.Current }

// Apply is the reference solution; track.go documents the contract.
func (t *Tracker) Apply(e Event) error {
	if e.Size == 0 {
		return fmt.Errorf("stats: %v of 0 bytes", e.Kind)
	}
	next := t.stats
	var err error
	switch e.Kind {
	case SegmentAlloc:
		next.Reserved.Increase(e.Size)
		next.Segments.Increase(1)
	case SegmentFree:
		if err = next.Reserved.Decrease(e.Size); err == nil {
			err = next.Segments.Decrease(1)
		}
	case Alloc, Free:
		if e.Requested == 0 || e.Requested > e.Size {
			return fmt.Errorf("stats: %v of a %d-byte block for a request of %d bytes: the request must be between 1 and the block size", e.Kind, e.Size, e.Requested)
		}
		if e.Kind == Alloc {
			next.Allocated.Increase(e.Size)
			next.Requested.Increase(e.Requested)
			next.Allocations.Increase(1)
			break
		}
		if err = next.Allocated.Decrease(e.Size); err == nil {
			if err = next.Requested.Decrease(e.Requested); err == nil {
				err = next.Allocations.Decrease(1)
			}
		}
	default:
		return fmt.Errorf("stats: unknown event kind %v", e.Kind)
	}
	if err != nil {
		return fmt.Errorf("stats: %v of %d bytes: %w", e.Kind, e.Size, err)
	}
	if next.Allocated.Current > next.Reserved.Current {
		return fmt.Errorf("stats: %v of %d bytes would leave %d bytes allocated but only %d reserved; blocks live inside segments", e.Kind, e.Size, next.Allocated.Current, next.Reserved.Current)
	}
	t.stats = next
	return nil
}
