package explore

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/snapshot"
)

// History is one device's allocator history, replayed into the state of its
// segments after every event. Build one with [FromSnapshot] or [FromLab].
type History struct {
	// Title heads the view; Show and Frame put it above the pictures.
	Title string
	// Device is the device whose trace this is.
	Device int

	trace   []snapshot.TraceEntry
	samples []memplot.Sample // after each event: Allocated, Reserved (X = event index)
	split   []int64          // inactive split bytes after each event
	frames  []frame          // the states kept for the view (see MaxFrames)
}

// frame is the state after one event, kept for the view.
type frame struct {
	event int
	segs  []memplot.Segment
}

// MaxFrames is how many states a History of more than [AllFrames] events
// keeps for its slider, sampled evenly; its peaks and out-of-memory events
// are kept too.
const MaxFrames = 24

// AllFrames is the longest history whose every event the view keeps.
const AllFrames = 64

// FromSnapshot replays the trace of the first device that has one (PyTorch
// writes one trace per device) into per-event states. The trace must cover the
// whole run — history recorded from before the first allocation, and a ring
// buffer that never wrapped — since the state at an event is built from every
// event before it; a trace that does not is an error that says so.
//
// Block sizes come from the requests in the trace, rounded as the snapshot's
// allocator settings round them (PyTorch's round_size); a remainder the
// allocator would not have split off (under 1 MiB in the large pool, or the
// slack of a block of max_split_size or more) is counted in the block before
// it, as the allocator counts it.
func FromSnapshot(title string, s *snapshot.Snapshot) (*History, error) {
	if s == nil {
		return nil, errors.New("explore: nil snapshot")
	}
	dev := -1
	for d, tr := range s.Traces {
		if len(tr) > 0 {
			dev = d
			break
		}
	}
	if dev < 0 {
		return nil, errors.New("explore: the snapshot has no trace: record it with torch.cuda.memory._record_memory_history() (memlab: the allocator's RecordHistory) before the first allocation")
	}
	if c := s.Coverage(dev); !c.Complete() {
		return nil, fmt.Errorf("explore: device %d's trace misses the start of the run (%d frees of blocks it never allocated, %d segments it did not create): record the history before the first allocation, with max_entries above the %d entries here",
			dev, c.UnknownFrees, c.UntracedSegments+c.UnknownSegmentFrees, c.Entries)
	}
	cfg := allocator.DefaultConfig()
	if s.HasSettings {
		var err error
		if cfg, err = s.Settings.Config(); err != nil {
			return nil, fmt.Errorf("explore: %w", err)
		}
	}
	h := &History{Title: title, Device: dev, trace: s.Traces[dev]}
	// Twice: the first replay finds the peaks, whose states the second keeps.
	if err := h.replay(cfg, nil); err != nil {
		return nil, err
	}
	keep := h.pickFrames()
	keep[h.FragmentationPeak()] = true
	keep[h.reservedPeak()] = true
	if err := h.replay(cfg, keep); err != nil {
		return nil, err
	}
	return h, nil
}

// Len is the number of events in the history.
func (h *History) Len() int { return len(h.trace) }

// Event returns the i-th trace entry.
func (h *History) Event(i int) snapshot.TraceEntry { return h.trace[i] }

// Allocated is memory_allocated after event i: the bytes in live blocks.
func (h *History) Allocated(i int) int64 { return h.samples[i].Allocated }

// Reserved is memory_reserved after event i: the bytes in segments.
func (h *History) Reserved(i int) int64 { return h.samples[i].Reserved }

// InactiveSplit is inactive_split_bytes after event i: the bytes free in
// segments that also hold live blocks (none under expandable segments, whose
// free pages can be unmapped).
func (h *History) InactiveSplit(i int) int64 { return h.split[i] }

// Frames lists the events whose state the view keeps, in order.
func (h *History) Frames() []int {
	out := make([]int, len(h.frames))
	for i, f := range h.frames {
		out[i] = f.event
	}
	return out
}

// Segments returns the segments after event i, which must be one of
// [History.Frames], in address order, ready for [memplot.SegmentMap].
func (h *History) Segments(i int) ([]memplot.Segment, error) {
	k, ok := slices.BinarySearchFunc(h.frames, i, func(f frame, e int) int { return f.event - e })
	if !ok {
		return nil, fmt.Errorf("explore: event %d is not a kept frame (History.Frames lists them)", i)
	}
	return h.frames[k].segs, nil
}

// FragmentationPeak is the first event after which the most memory is free in
// segments that also hold live blocks (inactive split: memory neither a new
// large request nor empty_cache can use); with none ever, the reserved peak.
func (h *History) FragmentationPeak() int {
	best := 0
	for i, b := range h.split {
		if b > h.split[best] {
			best = i
		}
	}
	if h.split[best] > 0 {
		return best
	}
	return h.reservedPeak()
}

// reservedPeak is the first event after which the most memory is reserved.
func (h *History) reservedPeak() int {
	best := 0
	for i, s := range h.samples {
		if s.Reserved > h.samples[best].Reserved {
			best = i
		}
	}
	return best
}

// Timeline is the allocated and reserved memory over the events, for
// [memplot.MemoryCurve]; out-of-memory events are marked.
func (h *History) Timeline() memplot.Timeline {
	tl := memplot.Timeline{XLabel: lang.Text("allocator event"), Samples: h.samples}
	for i, e := range h.trace {
		if e.Action == snapshot.ActionOOM {
			tl.Marks = append(tl.Marks, memplot.Mark{X: float64(i), Label: "OOM"})
		}
	}
	return tl
}

// seg is a segment (or an expandable segment's contiguous mapped range)
// during the replay.
type seg struct {
	addr  uint64
	size  int64
	small bool
	live  []blk // allocated blocks by address
}

type blk struct {
	addr uint64
	size int64
}

func (s *seg) end() uint64 { return s.addr + uint64(s.size) }

// state is the replay's segments, by address.
type state struct {
	segs       []*seg
	expandable bool
	cfg        allocator.Config
}

func (st *state) find(addr uint64) int {
	i := sort.Search(len(st.segs), func(i int) bool { return st.segs[i].end() > addr })
	if i < len(st.segs) && st.segs[i].addr <= addr {
		return i
	}
	return -1
}

// replay walks the trace, recording the memory after each event and the
// segments after each event keep marks.
func (h *History) replay(cfg allocator.Config, keep []bool) error {
	st := &state{expandable: cfg.ExpandableSegments, cfg: cfg}
	h.frames = nil
	var allocated, reserved int64
	sizes := map[uint64]int64{} // live block address → its size in the segment
	h.samples = make([]memplot.Sample, len(h.trace))
	h.split = make([]int64, len(h.trace))
	for i, e := range h.trace {
		switch e.Action {
		case snapshot.ActionSegmentAlloc, snapshot.ActionSegmentMap:
			if e.Size <= 0 {
				return fmt.Errorf("explore: trace entry %d: %s of %d bytes", i, e.Action, e.Size)
			}
			if err := st.add(e.Addr, e.Size); err != nil {
				return fmt.Errorf("explore: trace entry %d (%s at %#x): %w", i, e.Action, e.Addr, err)
			}
			reserved += e.Size
		case snapshot.ActionSegmentFree, snapshot.ActionSegmentUnmap:
			if err := st.remove(e.Addr, e.Size); err != nil {
				return fmt.Errorf("explore: trace entry %d (%s at %#x): %w", i, e.Action, e.Addr, err)
			}
			reserved -= e.Size
		case snapshot.ActionAlloc:
			k := st.find(e.Addr)
			if k < 0 {
				return fmt.Errorf("explore: trace entry %d: alloc at %#x lies in no segment", i, e.Addr)
			}
			s := st.segs[k]
			if len(s.live) == 0 && e.Size <= allocator.SmallSize && s.size <= allocator.SmallBuffer {
				s.small = true
			}
			j, found := slices.BinarySearchFunc(s.live, e.Addr, func(b blk, a uint64) int { return cmpAddr(b.addr, a) })
			if found {
				return fmt.Errorf("explore: trace entry %d: alloc at %#x, where a live block is", i, e.Addr)
			}
			// The block is cut from the front of the free block at its
			// address, which runs to the next live block or the segment's end.
			free := s.end()
			if j < len(s.live) {
				free = s.live[j].addr
			}
			size := st.blockSize(s, allocator.RoundSize(max(e.Size, 1), cfg), int64(free-e.Addr))
			s.live = slices.Insert(s.live, j, blk{e.Addr, size})
			sizes[e.Addr] = size
			allocated += size
		case snapshot.ActionFreeCompleted:
			k := st.find(e.Addr)
			if k < 0 {
				return fmt.Errorf("explore: trace entry %d: free at %#x lies in no segment", i, e.Addr)
			}
			s := st.segs[k]
			j, found := slices.BinarySearchFunc(s.live, e.Addr, func(b blk, a uint64) int { return cmpAddr(b.addr, a) })
			if !found {
				return fmt.Errorf("explore: trace entry %d: free at %#x of no live block", i, e.Addr)
			}
			s.live = slices.Delete(s.live, j, j+1)
			allocated -= sizes[e.Addr]
			delete(sizes, e.Addr)
		}
		h.samples[i] = memplot.Sample{X: float64(i), Allocated: allocated, Reserved: reserved, DriverUsed: -1}
		h.split[i] = st.inactiveSplit()
		if keep != nil && keep[i] {
			h.frames = append(h.frames, frame{event: i, segs: st.segments()})
		}
	}
	return nil
}

func cmpAddr(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// add makes a segment, or maps a range into an expandable segment (joining the
// mapped ranges it touches, as the snapshot shows them).
func (st *state) add(addr uint64, size int64) error {
	ns := &seg{addr: addr, size: size}
	i := sort.Search(len(st.segs), func(i int) bool { return st.segs[i].addr >= addr })
	if i < len(st.segs) && st.segs[i].addr < ns.end() || i > 0 && st.segs[i-1].end() > addr {
		return errors.New("it overlaps a segment the trace holds")
	}
	st.segs = slices.Insert(st.segs, i, ns)
	if !st.expandable {
		return nil
	}
	if i+1 < len(st.segs) && st.segs[i+1].addr == ns.end() {
		nx := st.segs[i+1]
		ns.size += nx.size
		ns.live = append(ns.live, nx.live...)
		ns.small = ns.small || nx.small
		st.segs = slices.Delete(st.segs, i+1, i+2)
	}
	if i > 0 && st.segs[i-1].end() == addr {
		pv := st.segs[i-1]
		pv.size += ns.size
		pv.live = append(pv.live, ns.live...)
		st.segs = slices.Delete(st.segs, i, i+1)
	}
	return nil
}

// remove frees a segment, or unmaps a range of an expandable one (splitting
// the range it was in).
func (st *state) remove(addr uint64, size int64) error {
	k := st.find(addr)
	if k < 0 {
		return errors.New("no segment holds it")
	}
	s := st.segs[k]
	end := addr + uint64(size)
	if end > s.end() || size <= 0 {
		return fmt.Errorf("%d bytes run past its segment's end", size)
	}
	for _, b := range s.live {
		if b.addr < end && b.addr+uint64(b.size) > addr {
			return fmt.Errorf("a live block at %#x is in it", b.addr)
		}
	}
	var parts []*seg
	if addr > s.addr {
		parts = append(parts, &seg{addr: s.addr, size: int64(addr - s.addr), small: s.small})
	}
	if end < s.end() {
		parts = append(parts, &seg{addr: end, size: int64(s.end() - end), small: s.small})
	}
	for _, b := range s.live {
		for _, p := range parts {
			if b.addr >= p.addr && b.addr < p.end() {
				p.live = append(p.live, b)
			}
		}
	}
	st.segs = slices.Replace(st.segs, k, k+1, parts...)
	return nil
}

// blocks cuts s into its blocks: each live block, and the free gaps between
// them.
func (st *state) blocks(s *seg, emit func(size int64, live bool)) {
	off := s.addr
	for j, b := range s.live {
		if b.addr > off {
			emit(int64(b.addr-off), false)
		}
		end := b.addr + uint64(b.size)
		if j+1 < len(s.live) && end > s.live[j+1].addr { // cannot be: trust the addresses
			end = s.live[j+1].addr
		}
		end = min(end, s.end())
		emit(int64(end-b.addr), true)
		off = end
	}
	if off < s.end() {
		emit(int64(s.end()-off), false)
	}
}

// blockSize is the size of the block a request of the given rounded size gets
// when cut from a free block of free bytes: the whole free block when the
// allocator does not split it (PyTorch's should_split), else the request.
func (st *state) blockSize(s *seg, size, free int64) int64 {
	if free <= size {
		return free
	}
	remaining := free - size
	switch {
	case s.small || st.expandable:
		if remaining >= allocator.MinBlockSize {
			return size
		}
	case (st.cfg.MaxSplitSize <= 0 || size < st.cfg.MaxSplitSize) && remaining > allocator.SmallSize:
		return size
	}
	return free
}

// inactiveSplit is PyTorch's inactive_split_bytes: the free blocks of
// segments that also hold live blocks. A free block of an expandable segment
// is not one: its pages can be unmapped.
func (st *state) inactiveSplit() int64 {
	if st.expandable {
		return 0
	}
	var n int64
	for _, s := range st.segs {
		if len(s.live) == 0 {
			continue
		}
		st.blocks(s, func(size int64, live bool) {
			if !live {
				n += size
			}
		})
	}
	return n
}

// segments is the state as memplot draws it.
func (st *state) segments() []memplot.Segment {
	out := make([]memplot.Segment, len(st.segs))
	for i, s := range st.segs {
		ms := memplot.Segment{Address: s.addr, Pool: "large"}
		if s.small {
			ms.Pool = "small"
		}
		if len(s.live) == 0 {
			ms.Blocks = []memplot.Block{{Size: s.size, State: memplot.Free}}
		} else {
			st.blocks(s, func(size int64, live bool) {
				state := memplot.InactiveSplit
				if live {
					state = memplot.Allocated
				}
				ms.Blocks = append(ms.Blocks, memplot.Block{Size: size, State: state})
			})
		}
		out[i] = ms
	}
	return out
}

// pickFrames chooses the events whose state is kept: every event of a trace
// of AllFrames events or fewer; of a longer one, MaxFrames spread evenly from
// the first event to the last, and every out-of-memory event.
func (h *History) pickFrames() []bool {
	n := len(h.trace)
	keep := make([]bool, n)
	if n <= AllFrames {
		for i := range keep {
			keep[i] = true
		}
		return keep
	}
	for k := 0; k < MaxFrames; k++ { // the first and the last event among them
		keep[k*(n-1)/(MaxFrames-1)] = true
	}
	for i, e := range h.trace {
		if e.Action == snapshot.ActionOOM {
			keep[i] = true
		}
	}
	return keep
}
