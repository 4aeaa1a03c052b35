package whatif

import (
	"fmt"

	"memlab.dev/memlab/allocator"
)

// LimitNotes says, for a run under a cap or a garbage_collection_threshold, whether
// they engaged: a cap that refused no device allocation, or a collection that never
// ran, changed nothing, and the figures are the ones without them. Nil when the
// setting has neither.
func (r *Run) LimitNotes(total int64) []string {
	var notes []string
	st := r.Setting
	switch {
	case r.Allowed > 0 && r.Limits.CapRefusals == 0 && r.Limits.GCPasses == 0:
		notes = append(notes, fmt.Sprintf("the cap of %s never engaged: no device allocation reached it (peak reserved %s), so the figures are those without a cap",
			allocator.FormatSize(r.Allowed), allocator.FormatSize(r.MaxReserved)))
	case r.Allowed > 0 && r.Limits.CapRefusals == 0:
		notes = append(notes, fmt.Sprintf("the cap of %s refused no device allocation (peak reserved %s); its garbage collection ran",
			allocator.FormatSize(r.Allowed), allocator.FormatSize(r.MaxReserved)))
	case r.Allowed > 0:
		notes = append(notes, fmt.Sprintf("the cap of %s refused %s (each sent the allocator to free cached segments and retry, or to an OOM)",
			allocator.FormatSize(r.Allowed), plural(int(r.Limits.CapRefusals), "device allocation", "device allocations")))
	case st.Cap > 0:
		notes = append(notes, fmt.Sprintf("the cap of %s is not below the device's %s: nothing was capped",
			allocator.FormatSize(st.Cap), allocator.FormatSize(total)))
	}
	if gc := st.Conf.GarbageCollectionThreshold; gc > 0 {
		switch {
		case r.Allowed == 0:
			notes = append(notes, fmt.Sprintf("garbage_collection_threshold:%g never engaged: PyTorch collects only under a memory cap (set_per_process_memory_fraction; --cap or --fraction here)", gc))
		case r.Limits.GCPasses == 0:
			notes = append(notes, fmt.Sprintf("garbage_collection_threshold:%g never engaged: reserved memory never exceeded %g × the cap (%s) when an allocation missed the cache",
				gc, gc, allocator.FormatSize(int64(gc*float64(r.Allowed)))))
		default:
			notes = append(notes, fmt.Sprintf("garbage_collection_threshold:%g: the collection ran %s and freed %s (%s)",
				gc, plural(int(r.Limits.GCPasses), "time", "times"), plural(int(r.Limits.GCReleased), "segment", "segments"), allocator.FormatSize(r.Limits.GCReleasedBytes)))
		}
	}
	return notes
}
