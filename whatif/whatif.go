// Package whatif replays the allocation history of a real PyTorch memory snapshot
// (torch.cuda.memory._dump_snapshot after _record_memory_history) under other
// allocator settings and reports what PyTorch would have measured: peaks, device
// allocations and frees, retries, out-of-memory errors with the failing allocation's
// Python frames, fragmentation, every memory_stats key and the memory curves.
//
// Each trace entry is replayed on the stream it was recorded on. A free that waited
// for other streams in the recorded run (record_stream: its free_completed comes later)
// waits until the same point of the replay, unless the replayed allocator synchronises
// first (empty_cache, the out-of-memory retry). Where the recorded run made a device
// allocation for a request, the replay places the same allocation at the address the
// driver returned; other device allocations get guessed addresses (Run.Guessed counts
// them), which matter only when free blocks of equal size compete.
//
// Segment entries are not replayed as such: the replayed policy makes its own device
// allocations and frees. A run of segment_free (or segment_unmap) entries that is not
// followed by a new segment is taken for a torch.cuda.empty_cache() call of the program
// and replayed as one; a run followed by a new segment is the recorded allocator's own
// retry path or garbage collection. A history that starts after the program allocated
// (recording started late, or its ring buffer wrapped) is replayed from the blocks it
// shows alive before its first event, re-made in address order; Result.Warnings says
// how many and how large.
package whatif

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"

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
	// Guessed counts device allocations the recorded run did not make, so their
	// addresses are the driver model's guesses.
	Guessed int
	// Final is the allocator's state after the last event.
	Final allocator.Snapshot
}

// Result is a snapshot replayed under several settings.
type Result struct {
	Runs []Run // setting-major: every device of Settings[0], then Settings[1], …
	// Warnings say what the snapshot lacks (history that starts late, a wrapped ring
	// buffer) and how much; the replay goes on with what there is.
	Warnings []string
	Events   int // trace entries replayed, all devices
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

// File reads the snapshot at path and replays it (see Replay).
func File(path string, settings []Setting, opts Options) (*Result, error) {
	s, err := snapshot.ReadFile(path)
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
	for i, st := range settings {
		if err := st.check(); err != nil {
			return nil, fmt.Errorf("whatif: setting %d (%s): %w", i, st.Label(), err)
		}
	}
	var hs []*history
	res := &Result{}
	for d := 0; d < s.Devices(); d++ {
		if d >= len(s.Traces) || len(s.Traces[d]) == 0 {
			continue
		}
		h, err := prepare(s, d)
		if err != nil {
			return nil, err
		}
		hs = append(hs, h)
		res.Warnings = append(res.Warnings, h.warnings...)
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
				r, err := replay(h, st, opts)
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

// replay runs one device's history under one setting.
func replay(h *history, st Setting, opts Options) (*Run, error) {
	total := opts.TotalMemory
	if total <= 0 {
		total = H200Memory
	}
	mem := newDeviceMemory(uint64(total))
	a, err := allocator.New(mem, st.Conf)
	if err != nil {
		return nil, err
	}
	switch {
	case st.Cap > 0:
		if st.Cap < total {
			if err := a.SetPerProcessMemoryFraction(fractionFor(st.Cap, total)); err != nil {
				return nil, err
			}
		}
	case st.Fraction > 0 && st.Fraction < 1:
		if err := a.SetPerProcessMemoryFraction(st.Fraction); err != nil {
			return nil, err
		}
	}
	run := &Run{Setting: st, Device: h.device}
	addrs := make([]uint64, len(h.ops)+len(h.initial)) // by block id; 0: not held
	pending := make([]bool, len(addrs))
	npending := 0
	// A synchronisation completes pending frees in the order the recorded run
	// completed them.
	rank := map[uint64]int32{} // replay address of a pending block → recorded completion
	a.SetSyncOrder(func(x, y uint64) int { return cmp.Compare(rank[x], rank[y]) })
	for _, b := range h.initial {
		mem.step(nil)
		p, err := a.MallocStream(b.size, b.stream)
		if err != nil {
			return nil, fmt.Errorf("re-making a block of %d bytes live before the trace: %w", b.size, err)
		}
		addrs[b.id] = p
	}
	points := opts.CurvePoints
	if points <= 0 {
		points = 2048
	}
	bucket := (h.events + points - 1) / points
	if bucket < 1 {
		bucket = 1
	}
	c := &run.Curve
	var peakSeen int64 = -1
	curBucket := -1
	fail := func(o op, err error) error {
		var oom *allocator.OutOfMemoryError
		if !errors.As(err, &oom) {
			return fmt.Errorf("event %d: %w", o.event, err)
		}
		if run.FirstOOM == nil {
			run.FirstOOM = &OOM{Message: oom.Error(), Event: int(o.event), Size: o.size, Stream: o.stream}
			if h.frames != nil {
				run.FirstOOM.Frames = h.frames[o.event]
			}
		}
		return nil
	}
	for _, o := range h.ops {
		switch o.kind {
		case opAlloc:
			mem.step(o.hints)
			p, err := a.MallocStream(o.size, o.stream)
			if err != nil {
				if err := fail(o, err); err != nil {
					return nil, err
				}
				break
			}
			addrs[o.id] = p
			if npending > 0 && a.PendingFreeCount() == 0 {
				npending = 0 // the retry path synchronised every stream
				clear(pending)
			}
		case opFree:
			p := addrs[o.id]
			if p == 0 {
				break // its allocation failed
			}
			addrs[o.id] = 0
			if o.deferred {
				if err := a.RecordStream(p, ^uint64(0)); err != nil {
					return nil, fmt.Errorf("event %d: %w", o.event, err)
				}
			}
			if err := a.Free(p); err != nil {
				return nil, fmt.Errorf("event %d: %w", o.event, err)
			}
			if o.deferred {
				addrs[o.id] = p
				pending[o.id] = true
				npending++
				rank[p] = o.done
			}
		case opComplete:
			if !pending[o.id] {
				break // completed by a synchronisation, or never allocated
			}
			pending[o.id] = false
			npending--
			if err := a.CompleteFree(addrs[o.id]); err != nil {
				return nil, fmt.Errorf("event %d: %w", o.event, err)
			}
			addrs[o.id] = 0
		case opEmptyCache:
			mem.step(nil)
			if err := a.EmptyCache(); err != nil {
				return nil, fmt.Errorf("event %d: empty_cache: %w", o.event, err)
			}
			if npending > 0 {
				npending = 0
				clear(pending)
			}
		case opOOM:
			// The recorded run failed here; the replay tries the same request and, if
			// it fits under this setting, gives it back at once (the program did not
			// get the memory, so nothing later frees it).
			mem.step(o.hints)
			p, err := a.MallocStream(o.size, o.stream)
			if err != nil {
				if err := fail(o, err); err != nil {
					return nil, err
				}
				break
			}
			if err := a.Free(p); err != nil {
				return nil, fmt.Errorf("event %d: %w", o.event, err)
			}
		}
		alloc, resv := a.Usage()
		if resv > peakSeen {
			peakSeen = resv
			run.LargestFreeAtPeak = a.LargestFreeBlock()
		}
		if bk := int(o.event) / bucket; bk != curBucket {
			curBucket = bk
			c.Event = append(c.Event, int(o.event))
			c.Allocated = append(c.Allocated, alloc)
			c.Reserved = append(c.Reserved, resv)
		} else {
			n := len(c.Event) - 1
			c.Event[n] = int(o.event)
			c.Allocated[n] = max(c.Allocated[n], alloc)
			c.Reserved[n] = max(c.Reserved[n], resv)
		}
	}
	run.Stats = a.MemoryStats()
	run.MaxAllocated = run.Stats["allocated_bytes.all.peak"]
	run.MaxReserved = run.Stats["reserved_bytes.all.peak"]
	run.DeviceAllocs = run.Stats["num_device_alloc"]
	run.DeviceFrees = run.Stats["num_device_free"]
	run.AllocRetries = run.Stats["num_alloc_retries"]
	run.OOMs = run.Stats["num_ooms"]
	run.PeakInactiveSplit = run.Stats["inactive_split_bytes.all.peak"]
	run.Guessed = mem.guessed
	run.Final = a.Snapshot()
	return run, nil
}
