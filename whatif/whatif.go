// Package whatif replays the allocation history of a real PyTorch memory snapshot
// (torch.cuda.memory._dump_snapshot after _record_memory_history) under other
// allocator settings and reports what PyTorch would have measured: peaks, device
// allocations and frees, retries, out-of-memory errors with the failing allocation's
// Python frames, fragmentation, every memory_stats key and the memory curves.
//
// Each trace entry is replayed on the stream it was recorded on. A free that waited
// for other streams in the recorded run (record_stream: its free_completed comes later)
// waits until the same point of the replay, unless the replayed allocator synchronises
// first (empty_cache, the out-of-memory retry) or makes a cudaFree, which synchronises
// the device: then it completes at the next allocation, where PyTorch's process_events
// finds its events done.
//
// When those frees complete is GPU timing, which a snapshot holds for its own run
// only: the same program under the same setting, run again, completes them elsewhere
// and can measure other peaks (reference/workloads-2.11/repeats/ shows it). So a
// history with such frees is also replayed under other timings — each free completing
// at the earliest point PyTorch 2.11 could (the next allocation after its free, on any
// stream: process_events runs at the start of every malloc), at the latest the
// recording allows (another setting changes the allocator's decisions, not the GPU's
// kernels: a free waits at most a few times its recorded wait, by the recorded clock;
// one the recording did not time waits until a synchronisation the replay itself
// makes: empty_cache, the retry path's release of cached blocks, a cudaFree), after
// fixed delays, at its recorded lag scaled or capped, and in random step-by-step timings — up to a budget of replayed events
// (long histories get fewer timings). Run.TimingRange holds every figure that differs
// between them, Run.TimingSchedules over how many timings, and Run.CrossStreamFrees how
// many frees it depends on. The range is over the timings tried, not a bound over all.
// The frees of DDP's gradient buckets (ddpBucket; Run.HeldFrees) are timed with them:
// the program makes such a free when the bucket's last holder lets go, which PyTorch's
// runs of one DDP program did at two points (reference/programs-2.11's
// ddp_accum_train_bf16: at the buckets' rebuild, or only during the next backward), so
// the timings also make each later than the snapshot did, up to the end of the trace,
// and a free of the first buckets that the snapshot's run made after their rebuild also
// at the rebuild, before its first allocation, and halfway to it.
// Frees that complete together (at one process_events or one synchronisation) do so
// stream by stream, as PyTorch walks one event list per stream — the streams in the
// order the snapshot's own completions show them — and in the order they were made.
//
// Where the recorded run made a device allocation for a request, the replay places
// the same allocation at the address the driver returned. Other device allocations get
// guessed addresses (Run.Guessed counts them), which matter only when free blocks of
// equal size compete: one of another size than the recorded run made for the request
// ends where the recorded range's 32 MiB chunks end; one the recorded run did not make
// goes right after the previous device allocation if that one was guessed too and the
// range there is free and never held a recorded allocation, else fills a free chunk
// tail or a small freed segment's range first-fit, else the top of a large freed
// segment's range, else goes below every range, as the driver was seen to place them
// (experiments/driver-va, the runs of reference/workloads-2.11 and programs-2.11).
// Where the driver puts them depends on device memory the snapshot does not show
// (cuBLAS and cuDNN workspaces, kernel modules), so a run that guessed is also replayed
// with each guessed allocation, and in every other replay at random half of the others
// too, placed at random among those places, the model's tie-breaks left open (any free
// part of a chunk tail or small freed range that fits, the top of any large freed
// range, below every range, the recorded range of another size), and at places the
// driver was seen to choose that the model does not (a 32 MiB chunk boundary, or the
// top free chunk, inside such a free part: memory.go's candidates says which run showed
// each), replayed several at once (one per processor) until the range stops widening (16
// placements in a row widen no figure's, after at least 24; at most 256), whatever the
// history's length, within a time budget (Options.RangeBudget; a range it stopped
// says so). Three of those placements are fixed, layouts the driver was seen to make
// that random places rarely line up: the guessed allocations packed one after another
// in a range of their own above or below the recorded ones, or each right after the
// last allocation of its size (memory.go's packing). Under a setting other than the snapshot's own (its allocator_settings, with
// no cap: a snapshot does not record a memory fraction, so a capped replay is taken for
// another run), the driver may also place the device allocations the recorded run made
// for the same request elsewhere, or the same-size ones in another order
// (reference/misses-2.11: gpt2_generate_12l's runs under max_split_size_mb:128 and the
// capped GC setting swapped 20 MiB segments of its default run; opt_generate_125m's
// capped one put its weights' 20 MiB segments in another order), so such a replay gets
// the range even when it guessed nothing, and a quarter of its placements (half when
// it guessed nothing; the others as above) put each recorded allocation at a random
// free one of the addresses the recorded run gave allocations of its size; the first
// two lay them on those addresses in fixed orders instead (regionOrder: the driver's
// two regions of same-size segments, below the first one first, or alternating). Under
// the snapshot's own setting the replay is the recorded run, at the driver's addresses
// of that run, and a replay that guessed nothing gets no range (a rerun of it can
// still measure other figures: misses-2.11's rerun/ shows it).
// Run.AddressRange holds every figure that differs between these placements,
// Run.AddressPlacements over how many (reference/misses-2.11: every figure PyTorch
// measured that the model's placement misses lies inside it, but those its misses_test.go
// lists in outsideRange: gpt2_generate_fp16's fragmentation peak under
// max_split_size_mb:128, which few of the swapped orders reach, and one small-pool
// segment more where the driver ordered the 2 MiB segments otherwise; and the default
// snapshot with that run's own addresses moved in gives every figure exactly).
//
// A replay that predicts an out-of-memory error the recorded run did not have stops
// at that allocation, as the program did (Options.ContinueAfterOOM goes on). What the
// program did next is not in the snapshot; frees as its exception unwinds can still
// raise the fragmentation peaks, so Run.AfterOOMRange holds those figures from their
// value at the stop to the most that freeing the live blocks in any order can reach,
// assuming the program only frees after the OOM (afteroom.go).
//
// Segment entries are not replayed as such: the replayed policy makes its own device
// allocations and frees. A run of segment_free (or segment_unmap) entries that is not
// followed by a new segment is taken for an empty_cache call and replayed as one: the
// program's (torch.cuda.empty_cache) or PyTorch's own (a convolution under
// torch.backends.cudnn.benchmark empties the cache after timing cuDNN's algorithms,
// which the warnings name); a run followed by a new segment is the recorded
// allocator's own retry path or garbage collection, unless frames or the run's peak
// say no malloc can have made it (prepare.go, releases). A cuDNN benchmark's
// workspace that does not fit is asked for at half, as PyTorch does (Run.HalvedWorkspaces).
// A history that starts after the program allocated
// (recording started late, or its ring buffer wrapped) is replayed from the blocks it
// shows alive before its first event, re-made in address order; Result.Warnings says
// how many and how large.
//
// Private pools (CUDA graph captures, torch.compile's reduce-overhead, a
// torch.cuda.MemPool): each recorded allocation goes to its pool under every setting,
// and a pool the recorded run gave back is released where it did. PyTorch 2.11's trace
// entries carry no pool id, so the pool is inferred from the segment the allocation
// lies in (the segments' segment_pool_id at the dump, a MemPool's destruction, the
// capture stream; pools.go says how), and Result.Pools says what was inferred; entries
// of later versions that carry a pool_id are routed by it.
//
// A job on several GPUs writes one snapshot per rank: [Files] replays them all under
// the same settings, several at once, and [Ranks.Worst] names the worst rank per
// setting.
//
// The package is the pipeline it runs, one stage per file: read ([File], [Replay]) →
// infer (prepare.go's preparer: the trace into replay steps, the blocks live before
// it, empty_cache calls; pools.go's poolInference: the private pools) → schedule
// (timing.go: when cross-stream frees complete) → replay (replay.go's replayer, over
// memory.go's simulated device) → placements (placements.go: the address range) →
// report (report.go, limits.go, afteroom.go). A new inference rule belongs to the
// preparer or the pool inference, a new kind of placement to memory.go and
// placementOptions, a new figure's presentation to report.go.
//
// A history PyTorch cannot have written is an error naming the device and the entry:
// a free whose size differs from its allocation's request, a segment larger than the
// device's memory (Options.TotalMemory), besides frees of addresses never allocated
// and double allocations.
package whatif

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/snapshot"
)

// Setting is one configuration to replay under: PYTORCH_CUDA_ALLOC_CONF and an optional
// cap on reserved memory (torch.cuda.set_per_process_memory_fraction).
type Setting struct {
	// Conf is the allocator configuration.
	Conf allocator.Config
	// Fraction caps reserved memory at Fraction × the device's memory (0 or 1: no cap).
	Fraction float64
	// Cap caps reserved memory at Cap bytes (0: no cap). Fraction and Cap are exclusive.
	Cap int64
}

// Label is the setting as the table shows it: the configuration string ("default" when
// empty) and the cap.
func (s Setting) Label() string {
	l := s.Conf.String()
	if l == "" {
		l = "default"
	}
	switch {
	case s.Cap > 0:
		l += fmt.Sprintf(" cap=%s", allocator.FormatSize(s.Cap))
	case s.Fraction > 0 && s.Fraction < 1:
		l += fmt.Sprintf(" fraction=%g", s.Fraction)
	}
	return l
}

// ShortLabel is [Setting.Label] abbreviated for a table or a plot's key:
// "expandable + max_split 128 + roundup 4" for
// "expandable_segments:True,max_split_size_mb:128,roundup_power2_divisions:4".
func (s Setting) ShortLabel() string { return shortener.Replace(s.Label()) }

var shortener = strings.NewReplacer("expandable_segments:True", "expandable", "max_split_size_mb:", "max_split ",
	"roundup_power2_divisions:", "roundup ", "garbage_collection_threshold:", "gc ", ",", " + ")

// Options tune a replay.
type Options struct {
	// TotalMemory is the simulated device's memory in bytes (0: H200Memory). Fractions
	// are of this size.
	TotalMemory int64
	// CurvePoints bounds each curve (0: 2048); longer histories keep the maximum of
	// each bucket of events.
	CurvePoints int
	// MaxSnapshotSize bounds the pickle of a gzip-compressed snapshot that File and
	// Files read, once decompressed (0: snapshot.DefaultMaxSize; see
	// snapshot.ReadFileMax).
	MaxSnapshotSize int64
	// Completion is when the frees that waited for other streams complete in the
	// replay whose figures Run reports (the zero value: where the snapshot completed
	// them). The timing range is computed whatever it is.
	Completion Completion
	// NoTimingRange skips the extra replays of a history with cross-stream frees (or
	// frees of DDP's gradient buckets):
	// Run.TimingRange stays nil (Run.CrossStreamFrees is still counted).
	NoTimingRange bool
	// NoAddressRange skips the extra replays of Run.AddressRange (a run that guessed
	// device addresses, or under another setting than the snapshot's own): it stays
	// nil (Run.Guessed is still counted), and Run.AddressUnranged says so.
	NoAddressRange bool
	// RangeBudget bounds the wall-clock time of one setting's address range (0:
	// DefaultRangeBudget). Its placements stop when the range converges; a range the
	// budget stopped first says so (Run.AddressBudgetSpent).
	RangeBudget time.Duration
	// unranged is the reason Run.AddressUnranged gives under NoAddressRange.
	unranged string
	// placement, when not 0, seeds random places for guessed device allocations
	// (the extra replays of Run.AddressRange).
	placement int64
	// permute, with placement, places each device allocation the recorded run made
	// for the request at a random free one of the addresses it gave allocations of
	// that size (deviceMemory.swapped).
	permute bool
	// order, with permute, lays them in a fixed order instead (regionOrder).
	order regionOrder
	// pack, with placement, packs the guessed device allocations in a range of
	// their own (packing).
	pack packing
	// ContinueAfterOOM goes on replaying after an allocation fails that the recorded
	// run made. By default the replay stops there, as the program would have: PyTorch
	// raised torch.OutOfMemoryError at that call, and what the program did next is not
	// in the snapshot. Run.Stopped says where. (An OOM the recorded run also had, and
	// went on from, is replayed through either way.) Likewise a replay stops at a
	// request the recorded run failed and this setting serves (Run.Served): what follows
	// is the program's reaction to an OOM it did not have here.
	ContinueAfterOOM bool
}

// Completion is a policy for when a free that waited for other streams (record_stream)
// completes in a replay: a stand-in for the GPU timing, which the snapshot holds only
// for the run that recorded it. Under every policy a synchronisation the replay makes
// (empty_cache, the out-of-memory retry, a cudaFree) completes every pending free.
type Completion uint8

const (
	// CompleteAsRecorded completes each free where the snapshot's free_completed is.
	CompleteAsRecorded Completion = iota
	// CompleteEarliest completes each free at the next allocation after it (on any
	// stream), the first process_events that could find its events done: the GPU had
	// finished with the block by the time the program asked for more memory. DDP's
	// first gradient buckets that the snapshot's run let go of after their rebuild are
	// let go of at the rebuild.
	CompleteEarliest
	// CompleteLatest completes each free as late as the recording allows: at the first
	// allocation after its recorded wait, stretched as the timing range stretches it
	// (boundDelays), and a free the recording does not time (it never completed, or a
	// synchronisation completed it, or the trace has no time stamps) only at a
	// synchronisation the replay makes: the GPU was as slow as another run may be.
	// DDP's gradient buckets are held to the end.
	CompleteLatest
)

// String is the policy's name: "recorded", "earliest" or "latest".
func (c Completion) String() string {
	switch c {
	case CompleteAsRecorded:
		return "recorded"
	case CompleteEarliest:
		return "earliest"
	case CompleteLatest:
		return "latest"
	}
	return fmt.Sprintf("Completion(%d)", uint8(c))
}

// OOM is the first allocation that failed in a replay.
type OOM struct {
	Message string           `json:"message"` // PyTorch's text
	Event   int              `json:"event"`   // index of the trace entry (its device's trace)
	Size    int64            `json:"size"`    // the request
	Stream  uint64           `json:"stream"`  // its stream
	Frames  []snapshot.Frame `json:"frames"`  // the allocation's Python frames, when recorded
}

// Curve is memory over the trace's event index: at most Options.CurvePoints points,
// each the maximum over its bucket of events.
type Curve struct {
	Event     []int   // trace index of the last event of each bucket
	Allocated []int64 // memory_allocated
	Reserved  []int64 // memory_reserved
}

// Run is the result of one setting on one device.
type Run struct {
	Setting Setting
	Device  int
	// Peaks and counters, as torch.cuda reports them.
	MaxAllocated, MaxReserved int64
	DeviceAllocs, DeviceFrees int64 // num_device_alloc, num_device_free
	AllocRetries              int64 // num_alloc_retries
	OOMs                      int64 // num_ooms
	PeakInactiveSplit         int64 // inactive_split_bytes.all.peak
	LargestFreeAtPeak         int64 // largest cached block when reserved peaked
	Stats                     map[string]int64
	FirstOOM                  *OOM // nil when nothing failed
	Curve                     Curve
	// HalvedWorkspaces counts the cuDNN benchmark workspaces that did not fit, where
	// the replay, as PyTorch does, asked for half as much until one fitted (each
	// failure an OOM in Stats' num_ooms, none the run's end).
	HalvedWorkspaces int
	// Guessed counts device allocations the recorded run did not make, so their
	// addresses are the driver model's guesses.
	Guessed int
	// placeable is whether the replay made a cudaMalloc call, whose address another
	// placement can move. A run that only mapped pages into reserved ranges
	// (expandable segments) gets the same figures under every placement: each
	// reservation is placed by the model's rule, and a pool's blocks never mix with
	// another's, so nothing for an address range to vary.
	placeable bool
	// beforeGuess is how many allocation requests the replay made before its first
	// guessed device allocation (all of them when none was guessed): the prefix the
	// placements of guessed allocations leave alone (TestGuessesComeEarly).
	beforeGuess, requests int
	// Final is the allocator's state after the last event.
	Final allocator.Snapshot
	// CrossStreamFrees counts the frees of the history that waited for other streams
	// (record_stream): their completion points are GPU timing (0: none, the figures
	// do not depend on timing).
	CrossStreamFrees int
	// HeldFrees counts the frees of DDP's gradient buckets (ddpBucket): the program
	// makes them when the last holder of the bucket lets go, which another run does at
	// another point; the timing range moves them too (0: none).
	HeldFrees int
	// EarlierHeldFrees counts those of HeldFrees, frees of DDP's first buckets that the
	// snapshot's run made only after their rebuild, that the timing range also makes at
	// the rebuild (0: none).
	EarlierHeldFrees int
	// TimingRange holds, for each memory_stats key whose figure differs between the
	// timings the replay tried for those frees (the package doc says which), the lowest
	// and highest figure; nil when none differs. Every figure PyTorch measured in the
	// shipped runs lies inside it; it is not a proof for every timing.
	TimingRange map[string][2]int64
	// Stopped is the trace index of the allocation whose failure ended the replay (see
	// Options.ContinueAfterOOM); −1 when the replay ran to the end of the history.
	Stopped int
	// NewOOMs counts the allocation requests that failed under this setting though the
	// recorded run's succeeded: out-of-memory errors of the setting's own. The recorded
	// run's OOMs (a program that caught torch.OutOfMemoryError went on after them) are
	// not among them, so a replay that fails just those and runs through has none. The
	// replay stops at the first unless Options.ContinueAfterOOM.
	NewOOMs int64
	// RangeRanOut is true when a timing or placement tried for TimingRange or
	// AddressRange had a new OOM (its NewOOMs > 0): that the setting runs out depends
	// on them. See [Run.RunsOut].
	RangeRanOut bool
	// PlacementsRanOut and TimingsRanOut count the placements of AddressRange and the
	// timings of TimingRange, the replay's own not among them, that had a new OOM: with
	// the replay's own outcome, they say how many of the AddressPlacements and
	// TimingSchedules tried ran out (RunsOutNote).
	PlacementsRanOut, TimingsRanOut int
	// Avoided lists the trace indexes of the recorded run's out-of-memory errors that
	// this replay served (AvoidedOOMNote): the request fitted under this setting.
	Avoided []int
	// TimingSchedules is how many timings the range was taken over (the replay's own
	// among them); 0 without cross-stream frees or with Options.NoTimingRange.
	TimingSchedules int
	// Allowed is the cap on reserved memory in bytes (from Setting.Cap,
	// Setting.Fraction or the configuration's per_process_memory_fraction); 0: none.
	Allowed int64
	// Limits says whether the cap and garbage_collection_threshold engaged in the
	// replay: a cap that refused no device allocation and a collection that never
	// ran changed nothing (see [Run.LimitNotes]).
	Limits allocator.Limits
	// AddressRange holds, for each memory_stats key whose figure differs when the
	// device allocations the recorded run did not make (Guessed), and some it made,
	// are placed elsewhere — at random among the places the driver model could choose,
	// or, under a setting other than the snapshot's own, the recorded ones swapped
	// among the recorded addresses of their size (the package doc says which) — the
	// lowest and highest figure; nil when none differs, or under the snapshot's own
	// setting when nothing was guessed. Where the driver puts them depends on device
	// memory the snapshot does not show (cuBLAS and cuDNN workspaces, kernel modules),
	// and on the run, so such a figure is not fixed by the snapshot.
	AddressRange map[string][2]int64
	// AddressPlacements is how many placements the range was taken over (the
	// replay's own among them); 0 under the snapshot's own setting when nothing was
	// guessed, and with Options.NoAddressRange (AddressUnranged says so).
	AddressPlacements int
	// AddressConverged is true when the address range stopped widening before its
	// placements ended: the last placementWindow (16) placements widened no figure's
	// range. False with AddressBudgetSpent (Options.RangeBudget ran out first) or when
	// maxPlacements (256) were tried.
	AddressConverged bool
	// AddressBudgetSpent is true when Options.RangeBudget ran out before the address
	// range converged: the range is over the placements that fit in it.
	AddressBudgetSpent bool
	// AddressUnranged, when not "", says why a run whose figures depend on where the
	// driver places device allocations has no address range (Options.NoAddressRange:
	// Sweep and MinCap's searches compute none).
	AddressUnranged string
	// Alike lists, for a run of [Sweep], the other settings it tried whose replays gave
	// the same figures on every device (sameFigures), fewest options set first; this
	// run's setting is the one with the fewest. Nil outside a sweep.
	Alike []Setting
	// AfterOOMRange holds, for a replay that stopped at a predicted OOM (Stopped ≥ 0),
	// each memory_stats key that frees after the OOM could still change — the
	// fragmentation peaks, inactive_split_bytes and inactive_split — with its figure
	// at the stop and the most it can reach if the program, after the OOM, only frees
	// blocks, in any order (afteroom.go derives it from PyTorch's rules), widened to
	// take in every placement of the address range (widenAfterOOM); nil when no figure
	// can move.
	AfterOOMRange map[string][2]int64
}

// Served reports whether the replay stopped (Stopped) at a request the recorded run
// failed and this setting served (the last of Avoided): what the snapshot holds after
// it is what the program did after its OOM, which under this setting it did not have
// (Options.ContinueAfterOOM replays on instead).
func (r *Run) Served() bool {
	return r.Stopped >= 0 && len(r.Avoided) > 0 && r.Avoided[len(r.Avoided)-1] == r.Stopped
}

// RunsOut reports whether the setting runs out of memory where the recorded run did
// not: the replay had a new OOM (NewOOMs), or a timing or placement of its ranges did
// (RangeRanOut). A replay that fails only the recorded run's own OOMs does not.
func (r *Run) RunsOut() bool { return r.NewOOMs > 0 || r.RangeRanOut }

// RunsOutNote is "" when every placement and timing tried ran out where the replay
// did, or none did; else it says that whether the setting runs out depends on them,
// and how many of each ran out. Under a cap just above what the run needs, where the
// driver puts the device allocations the recorded run did not make decides which of
// the equal-sized free blocks the allocator takes, and so whether the cap is met: the
// capped run of reference/programs-2.11's raft_corr_volume_train ran through in
// PyTorch, 4 MiB under its cap, and runs out under the driver model's placement and 65
// of the 123 others.
func (r *Run) RunsOutNote() string {
	self := 0
	if r.NewOOMs > 0 {
		self = 1
	}
	var parts, on []string
	if n := r.AddressPlacements; n > 1 && r.PlacementsRanOut+self != 0 && r.PlacementsRanOut+self != n {
		parts = append(parts, fmt.Sprintf("%d of the %d placements of device allocations tried ran out", r.PlacementsRanOut+self, n))
		on = append(on, "where the driver places device allocations")
	}
	if n := r.TimingSchedules; n > 1 && r.TimingsRanOut+self != 0 && r.TimingsRanOut+self != n {
		parts = append(parts, fmt.Sprintf("%d of the %d timings of the frees tried ran out", r.TimingsRanOut+self, n))
		on = append(on, "GPU timing (when frees that wait for other streams, or DDP's buckets, are let go)")
	}
	if len(parts) == 0 {
		return ""
	}
	own := "this replay ran through, so its figures are of a run without an OOM"
	if self == 1 {
		own = "this replay ran out (its figures are up to its OOM)"
	}
	return fmt.Sprintf("whether this setting runs out depends on %s, which the snapshot does not fix: %s; %s. Trust neither outcome: leave headroom, or record a run under it",
		strings.Join(on, " and on "), strings.Join(parts, ", and "), own)
}

// ranThrough reports whether the replay ran to the end of the history with no new
// OOM: the recorded run's own OOMs, if any, and no other.
func (r *Run) ranThrough() bool { return r.Stopped < 0 && r.NewOOMs == 0 }

// TimingDependent reports whether any figure of the run depends on GPU timing (when the
// frees that waited for other streams completed).
func (r *Run) TimingDependent() bool { return len(r.TimingRange) > 0 }

// AddressDependent reports whether any figure of the run depends on where the driver
// places device allocations: those the recorded run did not make, or, under another
// setting than the snapshot's, those it made (Run.AddressRange).
func (r *Run) AddressDependent() bool { return len(r.AddressRange) > 0 }

// Result is a snapshot replayed under several settings.
type Result struct {
	Runs []Run // setting-major: every device of Settings[0], then Settings[1], …
	// Warnings say what the snapshot lacks (history that starts late, a wrapped ring
	// buffer) and how much; the replay goes on with what there is.
	Warnings []string
	Events   int // trace entries replayed, all devices
	// About is what the replay ran on: the snapshot's PyTorch, the device size,
	// events, streams and pools (the header of the output).
	About About
	// Pools say, per device and private pool, how its allocations were found: read
	// from the trace entries, or inferred (PyTorch 2.11 writes no pool ids in them).
	Pools []string
	// Advice is what the runs recommend among several settings ([Result.Advise]);
	// nil until Advise is called, or with one setting.
	Advice *Advice
	// Stopped are, for a sweep's ranking ([SweepResult.Result]), the settings whose
	// replay stopped, which it does not rank; WriteTable lists them below the table.
	Stopped []SweepStop
	// swept are the settings the sweep tried, for the notes on Stopped.
	swept []Setting
	// own is the setting the snapshot was recorded under, whose row the table
	// compares the others with (nil: the "default" row, if any).
	own *Setting
}

// ErrNoHistory is returned for a snapshot without trace entries (memory history was not
// recorded): there is nothing to replay.
var ErrNoHistory = errors.New("whatif: the snapshot has no allocation history (record it with torch.cuda.memory._record_memory_history() before the program allocates)")

// SnapshotSetting returns the setting a snapshot was recorded under (its
// allocator_settings; a memory fraction is not recorded in snapshots).
func SnapshotSetting(s *snapshot.Snapshot) (Setting, error) {
	if s == nil {
		return Setting{}, errors.New("whatif: nil snapshot")
	}
	if !s.HasSettings {
		return Setting{Conf: allocator.DefaultConfig()}, nil
	}
	c, err := s.Settings.Config()
	if err != nil {
		return Setting{}, fmt.Errorf("whatif: the snapshot's allocator_settings: %w", err)
	}
	return Setting{Conf: c}, nil
}

// File reads the snapshot at path, a pickle or a gzip-compressed one (see
// snapshot.ReadFileMax and Options.MaxSnapshotSize), and replays it (see Replay).
func File(path string, settings []Setting, opts Options) (*Result, error) {
	s, err := snapshot.ReadFileMax(path, opts.MaxSnapshotSize)
	if err != nil {
		return nil, fmt.Errorf("whatif: %w", err)
	}
	return Replay(s, settings, opts)
}

// Replay replays every device's history of s under each setting, the settings in
// parallel. No settings means the snapshot's own. Bad input (an unknown action, a free
// of an address never allocated, a double allocation) is an error naming the device and
// the trace entry.
func Replay(s *snapshot.Snapshot, settings []Setting, opts Options) (*Result, error) {
	if s == nil {
		return nil, errors.New("whatif: nil snapshot")
	}
	if !s.HasHistory() {
		return nil, ErrNoHistory
	}
	if len(settings) == 0 {
		own, err := SnapshotSetting(s)
		if err != nil {
			return nil, err
		}
		settings = []Setting{own}
	}
	if opts.Completion > CompleteLatest {
		return nil, fmt.Errorf("whatif: unknown completion policy %d", opts.Completion)
	}
	for i, st := range settings {
		if err := st.check(); err != nil {
			return nil, fmt.Errorf("whatif: setting %d (%s): %w", i, st.Label(), err)
		}
	}
	var hs []*history
	res := &Result{About: describe(s, opts)}
	if own, err := SnapshotSetting(s); err == nil {
		res.own = &own
	}
	// Only devices with history are replayed (segments alone name others).
	for d := range s.Traces {
		if len(s.Traces[d]) == 0 {
			continue
		}
		h, err := prepare(s, d)
		if err != nil {
			return nil, err
		}
		total := opts.TotalMemory
		if total <= 0 {
			total = H200Memory
		}
		if h.largest.size > total {
			var where string
			if h.largestAt >= 0 {
				where = fmt.Sprintf("device %d event %d (%s)", d, h.largestAt, s.Traces[d][h.largestAt].Action)
			} else {
				where = fmt.Sprintf("device %d: the snapshot's segment at %#x", d, h.largest.addr)
			}
			return nil, fmt.Errorf("whatif: %s: size %d is more than the device's memory (%d bytes; Options.TotalMemory, --total, sets it)", where, h.largest.size, total)
		}
		hs = append(hs, h)
		if h.usable.bounds(total) {
			res.About.Usable = append(res.About.Usable, *h.usable)
			if w := h.usable.smallerCard(total, opts.TotalMemory > 0); w != "" {
				res.Warnings = append(res.Warnings, w)
			}
		}
		res.Warnings = append(res.Warnings, h.warnings...)
		if h.pools != nil {
			res.Pools = append(res.Pools, h.pools.notes...)
			for _, id := range h.pools.ids[1:] {
				if pid := [2]uint64{id.First, id.Second}; !slices.Contains(res.About.Pools, pid) {
					res.About.Pools = append(res.About.Pools, pid)
				}
			}
		}
		res.Events += h.events
	}
	res.Runs = make([]Run, len(settings)*len(hs))
	errs := make([]error, len(res.Runs))
	// One worker per processor: more would only take turns on them.
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(res.Runs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range jobs {
				st, h := settings[k/len(hs)], hs[k%len(hs)]
				r, err := replayTimed(h, st, opts)
				if err != nil {
					errs[k] = fmt.Errorf("whatif: setting %q, device %d: %w", st.Label(), h.device, err)
					continue
				}
				res.Runs[k] = *r
			}
		}()
	}
	for k := range res.Runs {
		jobs <- k
	}
	close(jobs)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return res, nil
}

func (s Setting) check() error {
	if s.Cap < 0 {
		return fmt.Errorf("negative cap %d", s.Cap)
	}
	if math.IsNaN(s.Fraction) || s.Fraction < 0 || s.Fraction > 1 {
		return fmt.Errorf("fraction %v outside [0, 1]", s.Fraction)
	}
	if s.Cap > 0 && s.Fraction > 0 && s.Fraction < 1 {
		return errors.New("both a fraction and a cap")
	}
	return nil
}

// fractionFor returns the fraction f with int64(f × total) == limit (the cap in bytes).
func fractionFor(limit, total int64) float64 {
	f := float64(limit) / float64(total)
	for i := 0; i < 8 && int64(f*float64(total)) < limit; i++ {
		f = math.Nextafter(f, 2)
	}
	for i := 0; i < 8 && int64(f*float64(total)) > limit; i++ {
		f = math.Nextafter(f, -1)
	}
	return f
}
