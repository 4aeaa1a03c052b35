package whatif

import (
	"fmt"
	"math"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/snapshot"
)

// The usable memory: what a snapshot's recorded out-of-memory errors say the program
// could reserve on its device, and what the replay's device holds at each point of the
// run because of it.
//
// PyTorch writes an oom entry after its retry path has released the cached segments
// and cudaMalloc still failed, with device_free the driver's free bytes then: the
// program held the run's reserved memory and could get at most device_free more, so it
// could reserve no more than their sum — the device's memory less the CUDA context,
// other processes and what the process holds outside PyTorch's cache. What the process
// holds outside the cache only grows during a run (in the shipped runs that ran out at
// the card's own limit, the sum fell by 2 MiB after the training program's second OOM
// and by 68 MiB after the serving program's first, and never rose: TestUsableOfShippedOOMs),
// so before an OOM the program could reserve at least what it says. The replay's
// device holds, up to each OOM, that OOM's sum, and after the last OOM the last one's;
// each less one driver page (driverPage), but never less than the run reserved in that
// stretch.

// UsableMemory is what a recorded out-of-memory error says of a device: at trace
// entry Event the program held Reserved bytes and the driver reported DeviceFree
// bytes free (the oom entry's device_free), so the program could reserve at most
// Bytes = Reserved + DeviceFree there. That is the device's memory less the CUDA
// context, other processes and what the process held outside PyTorch's cache, which
// the snapshot does not show otherwise; with it, a replay under the recorded setting
// runs out where the program did, and one under another setting says whether it would
// have. About.Usable gives the recorded OOM with the least Bytes.
//
// The replay's device holds Held after the last OOM: that OOM's sum (Bytes, where the
// sums never rose) less one 2 MiB page (driverPage), but never less than the run
// reserved after it. The driver's own use of the
// device grows by pages during a run, which no trace entry records: in each of the six
// shipped runs of oom_batch_halving_train_bf16 the first two OOMs gave 2 MiB more than
// every later one, and under two settings a cudaMalloc that would have left 1.1 MiB of
// the later OOMs' usable memory free was refused; so was one in
// oom_split_batch_serve_fp16's capped run, recorded after the rule was written
// (TestOwnSnapshotsOfShippedOOMs). Before an earlier OOM that said more, the device
// holds more (Earlier).
type UsableMemory struct {
	Device     int   `json:"device"`
	Event      int   `json:"event"`
	Reserved   int64 `json:"reserved"`
	DeviceFree int64 `json:"device_free"`
	Bytes      int64 `json:"bytes"`
	Held       int64 `json:"held"`
	// Earlier lists, when earlier OOMs said more, what the replay's device holds up to
	// each of them (trace entry Until, inclusive) before it holds Held.
	Earlier []UsableStep `json:"earlier,omitempty"`
}

// UsableStep is what the replay's device holds (Held bytes) up to trace entry Until
// (math.MaxInt: to the end).
type UsableStep struct {
	Until int   `json:"until"`
	Held  int64 `json:"held"`
}

// driverPage is what the replay's device keeps back of a recorded OOM's usable memory
// for the driver (UsableMemory.Held).
const driverPage = pageSize

// contextHeld is what the replay's device keeps back of the card, where no recorded
// OOM says how much the program could reserve (UsableMemory), for what the process
// holds outside PyTorch's cache: the CUDA context, the libraries' handles and
// workspaces, the loaded kernels. The shipped runs that ran out at their card's own
// limit held heldSeen there (692.8 to 694.8 MiB of an H200). With 694 MiB the replay of
// reference/programs-2.11's Evoformer stack under max_split_size_mb:128, whose cached
// oversize blocks filled an H100 without an OOM, frees cached blocks where PyTorch did
// and gives every figure PyTorch measured; so it does with 686 or 704 MiB, not with 680
// or 708, and with the whole card it reserved 0.7 GB more (TestContextHeldWindow). How
// much a run holds outside the cache depends on what it loads, so a row that comes
// near the card says its figures hang on it (fullCardNote).
const contextHeld = 694 << 20

// cardUsable is what the replay's device holds of a card of total bytes when no
// recorded OOM bounds it: total less contextHeld, but never less than the recorded run
// reserved there (recordedPeak), which it had. A device smaller than toyDevice keeps
// nothing back.
func cardUsable(total, recordedPeak int64) int64 {
	if total < toyDevice {
		return total
	}
	return max(total-contextHeld, min(recordedPeak, total))
}

// heldSeen is the least and the most of a card the shipped runs that ran out at its
// limit held outside PyTorch's cache (the card's total_memory less what their OOMs say
// was usable): 618.8 and 750.8 MiB, both on an H100 (TestUsableOfShippedOOMs).
var heldSeen = [2]int64{648871936, 787283968}

// toyDevice is the size below which a device is a toy (a test's, or --total given
// small to see an OOM), not a card with a CUDA context: 8 × contextHeld, 5.42 GiB,
// less than any card the shipped recordings came from.
const toyDevice = 8 * contextHeld

// bounds reports whether u bounds a device of total bytes (a recorded OOM under a
// cap, or on a larger card than the one assumed, leaves more than it).
func (u *UsableMemory) bounds(total int64) bool { return u != nil && u.Bytes < total }

// smallerCardGap is how much less than the assumed device a recorded OOM must leave
// usable before the replay says the card may be smaller. The shipped runs that ran out
// at their card's own limit left 0.68 GiB of an H200's total_memory and 0.67 GiB of an
// H100's outside it (TestUsableOfShippedOOMs' figures against their facts' totals).
const smallerCardGap = 4 << 30

// smallerCard is a warning when u leaves far less usable than the device total a
// replay assumed without being given one (H200Memory): the snapshot may come from a
// smaller card, whose size fractions (Setting.Fraction) and the OOM messages take as
// the device's. "" when the total was given or the gap is small.
func (u *UsableMemory) smallerCard(total int64, given bool) string {
	if given || total-u.Bytes <= smallerCardGap {
		return ""
	}
	return fmt.Sprintf("device %d: the recorded OOMs say the program could reserve at most %s of the %s assumed (an H200's): if the card was smaller, give its memory (Options.TotalMemory, --total), from which a fraction's cap and the OOM messages' total capacity are taken; if other processes held the rest, leave it",
		u.Device, allocator.FormatSize(u.Bytes), allocator.FormatSize(total))
}

// String is "device 0: 7.75 GiB usable (the recorded OOM at event 118: 7.50 GiB
// reserved, 258.00 MiB free; the replay keeps 2.00 MiB of it for the driver, and
// holds more up to event 40, as the OOMs up to it said)".
func (u UsableMemory) String() string {
	var more string
	if u.Held < u.Bytes {
		more = fmt.Sprintf("; the replay keeps %s of it for the driver", allocator.FormatSize(u.Bytes-u.Held))
	}
	if n := len(u.Earlier); n > 0 {
		sep := "; the replay"
		if more != "" {
			sep = ", and"
		}
		more += fmt.Sprintf("%s holds more up to event %d, as the OOMs up to it said", sep, u.Earlier[n-1].Until)
	}
	return fmt.Sprintf("device %d: %s usable (the recorded OOM at event %d: %s reserved, %s free%s)",
		u.Device, allocator.FormatSize(u.Bytes), u.Event, allocator.FormatSize(u.Reserved), allocator.FormatSize(u.DeviceFree), more)
}

// usableOn is what device d's recorded OOMs say of it (nil: nothing, or a trace
// prepare refuses). Replay has it from prepare; Describe, for callers without a
// replay's histories, walks the trace's reserved memory for it.
func usableOn(s *snapshot.Snapshot, d int) *UsableMemory {
	p := &preparer{s: s, device: d, trace: s.Traces[d], h: &history{device: d}}
	p.segmentsBefore()
	if err := p.recordedReserved(); err != nil {
		return nil
	}
	return p.h.usable
}

// usableSeen collects, over the trace, the recorded OOMs and the most the run reserved
// before each of them and after the last.
type usableSeen struct {
	ooms  []UsableMemory
	peaks []int64 // peaks[k]: the most reserved since the OOM before ooms[k] (or the trace's start)
	peak  int64   // the most reserved since the last OOM (or the trace's start)
}

// reserved notes the run's reserved memory: before the trace, and after each device
// allocation.
func (u *usableSeen) reserved(bytes int64) { u.peak = max(u.peak, bytes) }

// usableAt notes what the recorded OOM at entry i, with reserved bytes reserved
// before it, says of the device (see above); a negative or impossible device_free is
// an error naming the entry.
func (p *preparer) usableAt(i int, reserved int64) error {
	e := &p.trace[i]
	free := e.DeviceFree()
	if free < 0 {
		return p.errAt(i, "device_free %d (the driver's free bytes cannot be negative)", free)
	}
	if free > math.MaxInt64-reserved {
		return p.errAt(i, "device_free %d is more than any device holds", free)
	}
	u := &p.usable
	u.ooms = append(u.ooms, UsableMemory{Device: p.device, Event: i, Reserved: reserved, DeviceFree: free, Bytes: reserved + free})
	u.peaks = append(u.peaks, u.peak)
	u.peak = reserved
	return nil
}

// holds returns the least of the recorded OOMs (nil: none) and what the replay's
// device holds up to each of them and after the last. When the run reserved more
// before an OOM, or after the last, than that OOM left usable, what else held the
// device did not only grow (another process freed memory?), and no bound holds for
// all of the run: a warning says so and nothing is returned.
func (u *usableSeen) holds(device int, warnings *[]string) (*UsableMemory, []UsableStep) {
	n := len(u.ooms)
	if n == 0 {
		return nil, nil
	}
	steps := make([]UsableStep, n+1)
	least := 0 // the OOM with the least Bytes, the earliest of equals
	for k := range n + 1 {
		o, until, peak, what := u.ooms[min(k, n-1)], math.MaxInt, u.peak, "after"
		if k < n {
			until, peak, what = o.Event, u.peaks[k], "before"
			if o.Bytes < u.ooms[least].Bytes {
				least = k
			}
		}
		if peak > o.Bytes {
			*warnings = append(*warnings, fmt.Sprintf(
				"device %d: the recorded OOM at event %d left %s usable (%s reserved, %s free), less than the %s the run reserved %s it: the device's free memory changed during the run (another process?), so the replay does not bound the device by it",
				device, o.Event, allocator.FormatSize(o.Bytes), allocator.FormatSize(o.Reserved), allocator.FormatSize(o.DeviceFree), allocator.FormatSize(peak), what))
			return nil, nil
		}
		steps[k] = UsableStep{Until: until, Held: max(o.Bytes-driverPage, peak)}
	}
	out := u.ooms[least]
	out.Held = steps[n].Held
	for _, s := range steps[:n] {
		if s.Held > out.Held {
			out.Earlier = append(out.Earlier, s)
		}
	}
	return &out, steps
}

// setBound makes usable step k of the history (history.usableSteps) the one the
// replay's device is in: it holds that step's bytes, at most the device total, until
// the op after trace entry nextBound.
func (r *replayer) setBound(k int) {
	s := r.h.usableSteps[k]
	r.usableStep, r.nextBound = k, s.Until
	r.mem.usable = uint64(min(s.Held, r.total))
}

// boundAt moves the replay's device to the usable step the op at trace entry event
// lies in; the replay calls it only past nextBound.
func (r *replayer) boundAt(event int32) {
	k := r.usableStep
	for int(event) > r.h.usableSteps[k].Until { // the last step's Until is math.MaxInt
		k++
	}
	r.setBound(k)
}
