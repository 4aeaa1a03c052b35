package whatif

import (
	"fmt"

	"memlab.dev/memlab/allocator"
)

// LimitNotes says, for a run under a cap or a garbage_collection_threshold, whether
// they engaged: a cap that refused no device allocation, or a collection that never
// ran, changed nothing, and the figures are the ones without them; how many cuDNN
// benchmark workspaces did not fit (Run.HalvedWorkspaces); and, for a run whose
// reserved memory came near the whole device ab.TotalMemory where no recorded OOM says
// how much of it the program could have, that its figures hang on how much of the card
// the process and others held outside PyTorch's cache (fullCardNote). Nil when there
// is nothing to say.
func (r *Run) LimitNotes(ab About) []string {
	var notes []string
	st := r.Setting
	total := ab.TotalMemory
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
	if n := r.HalvedWorkspaces; n > 0 {
		notes = append(notes, fmt.Sprintf("%s of cuDNN's benchmark did not fit: PyTorch catches that OOM (counted among the OOMs, not the run's end) and asks for half as much until one fits, as the replay did; the algorithm cuDNN then runs fits the smaller workspace, where the replay keeps the recorded run's requests",
			plural(n, "workspace", "workspaces")))
	}
	if n := r.fullCardNote(ab); n != "" {
		notes = append(notes, n)
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

// AvoidedOOMNote says, for a run that served a request the recorded run failed
// (Run.Avoided), what that means: the replay stops there (Run.Served), since the
// snapshot holds what the program did after its OOM — caught it and tried less, or
// ended — not what it would have done without one; replayed on (ContinueAfterOOM),
// the figures after it are of that reaction. "" when the run served none. own says
// the run is under the snapshot's own setting without a cap: there the request fitted
// the device the OOMs show, so the recorded run ran out under a cap the snapshot does
// not record, which the note says.
func (r *Run) AvoidedOOMNote(own bool) string {
	if len(r.Avoided) == 0 {
		return ""
	}
	if own {
		return fmt.Sprintf("the recorded run's OOM at event %d does not happen under its own setting here: it fitted the device, so the run ran out under a memory cap the snapshot does not record (set_per_process_memory_fraction); give it with --fraction or --cap", r.Avoided[0])
	}
	if r.Served() {
		return fmt.Sprintf("the recorded run's OOM at event %d does not happen under this setting: the replay stops there, since what the snapshot holds next is what the program did after that OOM; record the program under this setting to see what it does instead", r.Avoided[0])
	}
	if len(r.Avoided) == 1 {
		return fmt.Sprintf("the recorded run's OOM at event %d does not happen under this setting; the requests after it are what the program did after its OOM (caught it and asked for less, or ended), not what it would have done without one", r.Avoided[0])
	}
	return fmt.Sprintf("%d of the recorded run's OOMs (the first at event %d) do not happen under this setting; the requests after them are what the program did after its OOMs (caught them and asked for less, or ended), not what it would have done without them", len(r.Avoided), r.Avoided[0])
}

// nearCard is how close to the whole device a run's reserved memory may come before
// fullCardNote says its figures hang on what the card held outside PyTorch's cache
// (heldSeen, up to 750.8 MiB; other processes hold more).
const nearCard = 1 << 30

// fullCardNote says, for a run whose peak reserved (the high end of its range) came
// within nearCard of the whole device, uncapped below that, on a device no
// recorded OOM bounds (About.Usable), that its figures hang on how much of the card
// the process and others held outside PyTorch's cache, which the snapshot does not
// show: the replay kept contextHeld back, and with more held a cudaMalloc fails
// sooner, after which PyTorch frees cached segments and retries, or runs out. ""
// otherwise.
func (r *Run) fullCardNote(ab About) string {
	total := ab.TotalMemory
	if total < toyDevice || (r.Allowed > 0 && r.Allowed <= total-nearCard) {
		return ""
	}
	for _, u := range ab.Usable {
		if u.Device == r.Device {
			return ""
		}
	}
	peak := figureSpan(r, "reserved_bytes.all.peak", r.MaxReserved)[2]
	if peak <= total-nearCard {
		return ""
	}
	return fmt.Sprintf("peak reserved reaches %s of the device's %s: the replay kept %s of the card back for what the process holds outside PyTorch's cache (CUDA's context, the libraries, the loaded kernels; %s to %s on the shipped runs that ran out at their card's limit), which the snapshot does not show, and other processes take more. With more held, a cudaMalloc fails sooner than here, and PyTorch then frees cached segments and retries (which changes the cudaMalloc and cudaFree counts) or runs out; to replay a card that left the program less, give --total as that amount plus %s",
		allocator.FormatSize(peak), allocator.FormatSize(total), allocator.FormatSize(contextHeld),
		allocator.FormatSize(heldSeen[0]), allocator.FormatSize(heldSeen[1]), allocator.FormatSize(contextHeld))
}
