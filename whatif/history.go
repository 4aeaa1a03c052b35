package whatif

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strings"

	"memlab.dev/memlab/snapshot"
)

// opKind is what one replay step does.
type opKind uint8

const (
	opAlloc          opKind = iota // MallocStream(size, stream) → block id
	opFree                         // Free(block id), deferred when the snapshot completed it later
	opComplete                     // the snapshot completed a deferred free
	opEmptyCache                   // the program called torch.cuda.empty_cache()
	opOOM                          // the recorded run failed an allocation of size here
	opReleasePool                  // the program released private pool `pool` (a graph's reset, a MemPool's deletion)
	opEmptyCachePool               // a torch.cuda.MemPool's destruction gave back pool `pool`'s free segments
)

// op is one replay step, made from one trace entry (or a run of them, for empty_cache).
// A history holds one for most trace entries, so it is kept small (40 bytes): a
// snapshot of a GB has tens of millions.
type op struct {
	kind     opKind
	deferred bool // opFree: the free waited for other streams in the recorded run
	// held, for opFree, marks the free of one of DDP's gradient buckets (ddpBucket):
	// the program lets go of it when its last holder does, which another run does at
	// another point; the timing range's schedules move the free itself
	// (replayer.holds), later, or earlier down to history.earliest.
	held bool
	// halves, for opAlloc, marks a cuDNN benchmark's workspace: where it does not fit,
	// PyTorch catches the OOM and asks for half as much, down to nothing
	// (benchmarkWorkspace).
	halves bool
	// opFree, deferred: requests (alloc and oom entries) before the free; once the
	// free completes, the requests between the free and its completion (the
	// recorded lag); -1 when it never completed.
	lag   int32
	id    int32
	event int32 // index of the trace entry
	// rank is, for a deferred opFree, its stream's place when frees complete
	// together (completionOrder; see order).
	rank int32
	// hints is 1 + the index in history.hints of the device allocations the
	// recorded run made for this request (0: none).
	hints  int32
	stream uint64
	size   int64
	pool   uint16 // opAlloc, opReleasePool, opEmptyCachePool: index in history.pools.ids (0: the default pool)
}

// order is a deferred free's place when frees complete together: stream by
// stream (completionOrder), then in the order they were made.
func (o *op) order() int64 { return int64(o.rank)<<32 | int64(o.event) }

// hint is a device allocation (segment_alloc) or mapped range (segment_map) that the
// recorded run made while serving the next request: where the driver placed it.
type hint struct {
	addr   uint64
	size   int64
	mapped bool
}

// earlyFree is a held free that may come before its recorded point: its block, the
// requests (alloc and oom entries) before it, and its earliest delay, negative, so that
// the free comes before the rebuild's first allocation.
type earlyFree struct {
	id              int32
	requests, delay int
}

// history is one device's trace prepared for replay.
type history struct {
	device int
	ops    []op
	hints  [][]hint // the ops' device allocations (op.hints)
	// stacks are the trace's distinct stack frames, and stackOf, by trace entry
	// index, 1 + the index of an entry's in stacks (0: none), for OOM reports; nil
	// when the trace has no frames.
	stacks  [][]snapshot.Frame
	stackOf []uint32
	// initial are blocks that were live before the trace's first event (a history
	// that started late, or a ring buffer that wrapped): re-made first, by address.
	initial  []initialBlock
	events   int
	warnings []string
	deferred int // frees that waited for other streams (opFree with deferred)
	held     int // frees of DDP's gradient buckets (opFree with held)
	// earliest are the held frees (op.held) of DDP's first buckets that the
	// snapshot's run made after their rebuild, in the order of their ops, each with
	// the earliest delay it may get (preparer.earliest); a held free it does not name
	// gets no delay below 0.
	earliest []earlyFree
	// latest is, by block id, the latest delay the recording allows a deferred free
	// (boundDelays, timing.go); a free it does not name may wait any time.
	latest map[int32]int
	// ordinal is, by block id, a deferred free's block's place among the blocks
	// the history made, in order: its mixed timings' seed (mixedDelay), the same
	// whichever id the block was given (ids are reused: newID).
	ordinal map[int32]int32
	ids     int32 // block ids handed out: ops' and initial blocks' ids are below it
	// other is a stream the history never uses: the replay records a free that
	// waited for other streams as used on it (record_stream).
	other uint64
	// largest is the largest device allocation the history names (a segment_alloc
	// or segment_map entry, or a segment of the snapshot): largestAt is its event
	// index, or −1 for a segment of the snapshot.
	largest   span
	largestAt int
	// pools are the private pools of the trace (nil: none), see inferPools
	pools *poolPlan
	// own is the setting the snapshot was recorded under (SnapshotSetting); nil when
	// its allocator_settings cannot be read.
	own *Setting
	// usable is what the recorded run's out-of-memory errors say the program could
	// reserve on this device (usable.go); nil when it had none that bounds it.
	// usableSteps is what the replay's device holds up to each of them.
	usable      *UsableMemory
	usableSteps []UsableStep
	// recordedPeak is the recorded run's peak reserved memory on this device.
	recordedPeak int64
}

type initialBlock struct {
	addr   uint64
	size   int64
	stream uint64
	id     int32
	pool   uint16
}

// span is an address range.
type span struct {
	addr uint64
	size int64
}

func (s span) contains(a uint64) bool { return a >= s.addr && a < s.end() }

// end is the address after the span (saturating: a span at the top of the address
// space ends there).
func (s span) end() uint64 {
	if s.size <= 0 {
		return s.addr
	}
	if e := s.addr + uint64(s.size); e >= s.addr {
		return e
	}
	return math.MaxUint64
}

// spanIndex answers whether any of a set of spans contains an address, in
// logarithmic time (a history can release hundreds of thousands of segments).
type spanIndex struct {
	spans  []span   // by address
	maxEnd []uint64 // maxEnd[i]: the highest end of spans[:i+1]
}

func newSpanIndex(list []span) spanIndex {
	x := spanIndex{spans: slices.Clone(list)}
	slices.SortFunc(x.spans, func(a, b span) int { return cmp.Compare(a.addr, b.addr) })
	x.maxEnd = make([]uint64, len(x.spans))
	var m uint64
	for i, sp := range x.spans {
		m = max(m, sp.end())
		x.maxEnd[i] = m
	}
	return x
}

// contains reports whether a span contains a.
func (x spanIndex) contains(a uint64) bool {
	i := sort.Search(len(x.spans), func(i int) bool { return x.spans[i].addr > a }) - 1
	return i >= 0 && x.maxEnd[i] > a
}

// hintsOf returns the device allocations the recorded run made for op o's request.
func (h *history) hintsOf(o *op) []hint {
	if o.hints == 0 {
		return nil
	}
	return h.hints[o.hints-1]
}

// recordedSpans returns the address ranges of the device allocations (segment_alloc,
// not segment_map) the recorded run made, merged, by address.
func (h *history) recordedSpans() []liveSpan {
	var spans []liveSpan
	for _, hs := range h.hints {
		for _, x := range hs {
			if !x.mapped {
				spans = append(spans, liveSpan{addr: x.addr, size: uint64(x.size)})
			}
		}
	}
	return mergeSpans(spans)
}

// recordedAddresses returns, by size, the distinct addresses of the device allocations
// (segment_alloc, not segment_map) the recorded run made.
func (h *history) recordedAddresses() map[uint64][]uint64 {
	out := map[uint64][]uint64{}
	for _, hs := range h.hints {
		for _, x := range hs {
			if !x.mapped {
				out[uint64(x.size)] = append(out[uint64(x.size)], x.addr)
			}
		}
	}
	for k, v := range out {
		slices.Sort(v)
		out[k] = slices.Compact(v)
	}
	return out
}

// addHints stores the hints of one request and returns its op.hints.
func (h *history) addHints(hs []hint) int32 {
	if len(hs) == 0 {
		return 0
	}
	h.hints = append(h.hints, hs)
	return int32(len(h.hints))
}

// frames returns the stack frames of trace entry i (nil when not recorded).
func (h *history) frames(i int32) []snapshot.Frame {
	if h.stackOf == nil || h.stackOf[i] == 0 {
		return nil
	}
	return h.stacks[h.stackOf[i]-1]
}

// poolOfInitial is the pool index of a block live before the trace.
func poolOfInitial(p *poolPlan, addr uint64) uint16 {
	if p == nil {
		return 0
	}
	return p.initial(addr)
}

// completesLater reports whether the free_requested at trace[i] waited for other
// streams (record_stream): its free_completed is not the next entry.
func completesLater(trace []snapshot.TraceEntry, i int) bool {
	return !(i+1 < len(trace) && trace[i+1].Action == snapshot.ActionFreeCompleted && trace[i+1].Addr == trace[i].Addr)
}

// completionOrder sets the order key of every deferred free in ops: the order in which
// frees that are due at the same process_events, or at one synchronisation, complete.
//
// PyTorch keeps one FIFO list of CUDA events per stream the block was used on
// (record_stream), walks those lists in hash order, and frees a block when its last
// event is done. The snapshot does not say which streams used a block, so the replay
// takes the block's own stream as a stand-in: streams rank in the order the snapshot's
// groups of completions (consecutive free_completed entries of deferred frees) show
// them, most often first; a stream never seen in a group ranks after those that are,
// in the order of its first deferred free; within a stream, frees complete in the
// order they were made. A free the snapshot completed and one it never completed (the
// history ended first) are ordered by the same rule.
func completionOrder(trace []snapshot.TraceEntry, ops []op) {
	// groups of consecutive deferred completions, as streams in order
	deferredAt := map[uint64]bool{} // addresses with a deferred free pending
	var groups [][]uint64
	var cur []uint64
	flush := func() {
		if len(cur) > 1 {
			groups = append(groups, cur)
		}
		cur = nil
	}
	for i, e := range trace {
		switch e.Action {
		case snapshot.ActionFreeRequested:
			flush()
			if completesLater(trace, i) {
				deferredAt[e.Addr] = true
			}
		case snapshot.ActionFreeCompleted:
			if deferredAt[e.Addr] {
				delete(deferredAt, e.Addr)
				if len(cur) == 0 || cur[len(cur)-1] != e.Stream {
					cur = append(cur, e.Stream)
				}
				continue
			}
			flush()
		case snapshot.ActionSegmentFree, snapshot.ActionSegmentUnmap:
			// a synchronisation's completions may sit among the releases
		default:
			flush()
		}
	}
	flush()
	before := map[[2]uint64]int{} // (a, b) → groups in which a came before b
	first := map[uint64]int{}     // stream → rank of its first appearance
	note := func(st uint64) {
		if _, ok := first[st]; !ok {
			first[st] = len(first)
		}
	}
	for _, g := range groups {
		for x, a := range g {
			note(a)
			for _, b := range g[x+1:] {
				if a != b {
					before[[2]uint64{a, b}]++
				}
			}
		}
	}
	seen := len(first)
	for _, o := range ops {
		if o.kind == opFree && o.deferred {
			note(o.stream)
		}
	}
	streams := make([]uint64, 0, len(first))
	score := map[uint64]int{}
	for st := range first {
		streams = append(streams, st)
	}
	for _, a := range streams {
		for _, b := range streams {
			switch d := before[[2]uint64{a, b}] - before[[2]uint64{b, a}]; {
			case d > 0:
				score[a]++
			case d < 0:
				score[a]--
			}
		}
	}
	sort.Slice(streams, func(i, j int) bool {
		a, b := streams[i], streams[j]
		if sa, sb := first[a] < seen, first[b] < seen; sa != sb {
			return sa
		}
		if score[a] != score[b] {
			return score[a] > score[b]
		}
		return first[a] < first[b]
	})
	pos := make(map[uint64]int64, len(streams))
	for k, st := range streams {
		pos[st] = int64(k)
	}
	for k := range ops {
		if o := &ops[k]; o.kind == opFree && o.deferred {
			o.rank = int32(pos[o.stream])
		}
	}
}

// calledEmptyCache reports whether frames (a trace entry's stack, innermost first)
// pass through torch.cuda.empty_cache, or, where the snapshot has C++ frames
// (`_record_memory_history(stacks="all")`, its default), through the caching
// allocator's emptyCache other than a MemPool's destruction: PyTorch's own code calls
// it too (a convolution under torch.backends.cudnn.benchmark empties the cache after
// timing its algorithms, reference/programs-2.11's resnet_cudnn_benchmark_train_bf16).
func calledEmptyCache(frames []snapshot.Frame) bool {
	return calledTorchEmptyCache(frames) || cppEmptyCache(frames)
}

// calledTorchEmptyCache reports whether frames pass through the Python function
// torch.cuda.empty_cache.
func calledTorchEmptyCache(frames []snapshot.Frame) bool {
	for _, f := range frames {
		if file, ok := pythonFile(f); ok && f.Name == "empty_cache" && strings.HasSuffix(file, "torch/cuda/memory.py") {
			return true
		}
	}
	return false
}

// cppEmptyCache reports whether frames hold a C++ frame of the caching allocator's
// emptyCache and none of a MemPool's destruction (which calls it for its pool).
func cppEmptyCache(frames []snapshot.Frame) bool {
	found := false
	for _, f := range frames {
		if strings.Contains(f.Name, "MemPool::~MemPool") {
			return false
		}
		found = found || strings.Contains(f.Name, "CUDACachingAllocator::") && strings.Contains(f.Name, "::emptyCache(")
	}
	return found
}

// insideTorchOp reports whether the innermost Python frame of frames lies in the
// installed PyTorch (torchPackage): PyTorch's own code, inside an op, made the entry,
// not the program's code (C++ frames, which have no .py file, are passed over).
func insideTorchOp(frames []snapshot.Frame) bool {
	for _, f := range frames {
		if file, ok := pythonFile(f); ok {
			return strings.Contains(file, torchPackage)
		}
	}
	return false
}

// torchPackage marks the files of an installed PyTorch: the boundary between
// PyTorch's frames and the program's, its libraries' among them. Not any "/torch/":
// the H200's recordings ran from a virtual environment under /opt/torch/, where every
// frame would read as PyTorch's (TestCollectivesWarning).
const torchPackage = "-packages/torch/"

// pythonFile returns f's file with forward slashes and whether it is a Python file;
// a C++ frame (a snapshot recorded with stacks="all") has none.
func pythonFile(f snapshot.Frame) (string, bool) {
	file := strings.ReplaceAll(f.Filename, `\`, "/")
	return file, strings.HasSuffix(file, ".py")
}

// cachedBlockServes reports whether one of the segments released by trace[i:j] (each a
// whole free block of the recorded run's cache, unless a free completed inside the run
// made it so) could have served the allocation that
// follows the new segment at trace[j], under PyTorch's get_free_block rules: same
// stream and pool (2 MiB segments are the small pool's), large enough, and not kept
// from it by max_split_size (maxSplit ≤ 0: unlimited).
//
// *next is the index of the first alloc entry at or after each entry, made on the
// first call.
func cachedBlockServes(trace []snapshot.TraceEntry, i, j int, maxSplit int64, next *[]int32) bool {
	if trace[j].Action != snapshot.ActionSegmentAlloc {
		return false
	}
	if *next == nil {
		*next = make([]int32, len(trace)+1)
		(*next)[len(trace)] = int32(len(trace))
		for k := len(trace) - 1; k >= 0; k-- {
			(*next)[k] = (*next)[k+1]
			if trace[k].Action == snapshot.ActionAlloc {
				(*next)[k] = int32(k)
			}
		}
	}
	k := int((*next)[j+1])
	if k == len(trace) {
		return false
	}
	req := trace[k]
	const smallSize, smallSegment, largeBuffer = 1 << 20, 2 << 20, 20 << 20
	// a segment holding a block whose free completed inside the run (a
	// synchronisation of the retry path) was not free when the malloc looked
	var completed []uint64 // addresses, sorted
	for _, c := range trace[i:j] {
		if c.Action == snapshot.ActionFreeCompleted {
			completed = append(completed, c.Addr)
		}
	}
	slices.Sort(completed)
	completedIn := func(r snapshot.TraceEntry) bool {
		k, _ := slices.BinarySearch(completed, r.Addr)
		return k < len(completed) && completed[k] < (span{r.Addr, r.Size}).end()
	}
	for _, r := range trace[i:j] {
		if r.Action != snapshot.ActionSegmentFree || r.Stream != req.Stream || r.Size < req.Size || completedIn(r) {
			continue
		}
		if (req.Size <= smallSize) != (r.Size == smallSegment) {
			continue
		}
		if maxSplit > 0 && (req.Size < maxSplit && r.Size >= maxSplit || req.Size >= maxSplit && r.Size >= req.Size+largeBuffer) {
			continue
		}
		return true
	}
	return false
}
