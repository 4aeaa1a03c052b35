package whatif

import (
	"fmt"
	"sort"

	"memlab.dev/memlab/snapshot"
)

// The infer stage: one device's trace checked and turned into replay steps (ops), with
// what the trace does not say outright inferred — the private pools (pools.go), the
// blocks live before its first event, which releases of cached segments were the
// program's empty_cache() and which the allocator's own, the order in which
// cross-stream frees complete (completionOrder), the device allocations the recorded
// run made for each request (hints). prepare runs the steps in order; each step is a
// method of preparer.

// liveBlock is what the preparation knows of a block the snapshot shows allocated.
type liveBlock struct {
	id        int32
	ordinal   int32 // its place among the blocks the history made (history.ordinal)
	size      int64 // the request (0: allocated before the trace, unknown)
	event     int   // where it was allocated (−1: before the trace)
	requested bool
	freeOp    int        // index in ops of its opFree (−1: none)
	bucket    bucketKind // one of DDP's gradient buckets (ddpBucket): its free is held (op.held)
	request   int32      // the requests (alloc and oom entries) up to its allocation
}

// preparer is the state of prepare: the trace, the history being built, and what the
// walk over the trace knows at the entry it is at.
type preparer struct {
	s      *snapshot.Snapshot
	device int
	trace  []snapshot.TraceEntry
	h      *history

	// before are the segments that existed before the trace (beforeIdx indexes
	// them); the recorded run's reserved memory before the trace and at its peak.
	before                       []span
	beforeIdx                    spanIndex
	initialReserved, maxReserved int64
	reservedAt                   int64 // reservedBefore's running sum, up to entry reservedNext
	reservedNext                 int
	usable                       usableSeen // what the recorded OOMs say of the device

	live     map[uint64]liveBlock // snapshot address → block, allocated or pending
	nextID   int32
	freeIDs  []int32         // ids a later allocation may take (reuseID)
	made     int32           // blocks given an id so far (their ordinals)
	touched  map[uint64]bool // the final segments' blocks the trace allocates or frees
	released map[uint16]bool // the private pools whose release has been replayed

	hints []hint // the device allocations made since the last request
	// Frees completed by the synchronisation of the recorded run's own retry path
	// (the free_completed entries inside a release run that precedes a new segment)
	// are completed right after that request instead: the replayed allocator
	// synchronises itself if its policy takes the same path.
	releaseEnd int
	postponed  []op
	requests   int32   // alloc and oom entries so far
	ambiguous  int     // releases followed by a new segment, in a trace without frames
	nextAlloc  []int32 // the index of the first alloc at or after each entry (made when first needed)
	hasFrames  bool
	// collectives counts the allocations torch.distributed made (its warning)
	collectives collectiveAllocs
	// opCaches counts the empty_cache calls PyTorch's ops made (its warning)
	opCaches opEmptyCaches
	// DDP's buckets: requests up to the last first bucket's allocation and up to the
	// first rebuilt bucket's after it (0: none yet), and whether the last allocation
	// was a rebuilt bucket (a free there is at the rebuild)
	firstBuckets, rebuild int32
	atRebuild             bool
}

// prepare checks one device's trace and turns it into replay steps. Errors name the
// trace entry ("device 0 event 17: …").
func prepare(s *snapshot.Snapshot, device int) (*history, error) {
	var trace []snapshot.TraceEntry
	if device < len(s.Traces) {
		trace = s.Traces[device]
	}
	p := &preparer{s: s, device: device, trace: trace, released: map[uint16]bool{}, releaseEnd: -1,
		h: &history{device: device, events: len(trace), pools: inferPools(s, device, trace)}}
	if own, err := SnapshotSetting(s); err == nil {
		p.h.own = &own
	}
	p.segmentsBefore()
	if err := p.recordedReserved(); err != nil {
		return nil, err
	}
	p.liveBlocks()
	if err := p.steps(); err != nil {
		return nil, err
	}
	completionOrder(trace, p.h.ops)
	boundDelays(p.h, trace)
	p.indexStacks()
	p.initialBlocks()
	p.h.ids = p.nextID
	return p.h, nil
}

func (p *preparer) errAt(i int, format string, args ...any) error {
	return fmt.Errorf("whatif: device %d event %d (%s): %s", p.device, i, p.trace[i].Action, fmt.Sprintf(format, args...))
}

// newID gives an allocation its block id: one a free let go (reuseID) when there
// is one, so that a replay's arrays by id (its blocks' addresses, a schedule)
// are as long as the most blocks live at once, not as the history (issue 28: a
// million-event history replayed on sixteen cores at once).
func (p *preparer) newID() int32 {
	if n := len(p.freeIDs); n > 0 {
		id := p.freeIDs[n-1]
		p.freeIDs = p.freeIDs[:n-1]
		p.made++
		return id
	}
	return p.freshID()
}

// freshID gives a block an id no other block had: a block allocated before the
// trace holds its id from the replay's start, so it must not share it with an
// earlier allocation of the trace.
func (p *preparer) freshID() int32 { id := p.nextID; p.nextID++; p.made++; return id }

// reuseID lets a later allocation take the id of a block whose free completed at
// once: every replay frees it there and keeps nothing of it by id (a deferred
// free's id stays its own: replays complete it at different points, and the
// schedules name it).
func (p *preparer) reuseID(id int32) { p.freeIDs = append(p.freeIDs, id) }

// segmentsBefore finds the segments that existed before the trace (final segments the
// trace never creates, and segments the trace frees without having created them), the
// largest device allocation the history names, and a stream it never uses.
func (p *preparer) segmentsBefore() {
	h := p.h
	var created []span
	h.largestAt = -1
	streams := map[uint64]bool{}
	for i, e := range p.trace {
		streams[e.Stream] = true
		if e.Action == snapshot.ActionSegmentAlloc || e.Action == snapshot.ActionSegmentMap {
			created = append(created, span{e.Addr, e.Size})
			if e.Size > h.largest.size {
				h.largest, h.largestAt = span{e.Addr, e.Size}, i
			}
		}
	}
	for _, seg := range p.s.Segments {
		if seg.Device == p.device {
			streams[seg.Stream] = true
			if seg.TotalSize > h.largest.size {
				h.largest, h.largestAt = span{seg.Address, seg.TotalSize}, -1
			}
		}
	}
	h.other = ^uint64(0)
	for streams[h.other] {
		h.other--
	}
	createdIdx := newSpanIndex(created)
	for _, seg := range p.s.Segments {
		if seg.Device == p.device && !createdIdx.contains(seg.Address) {
			p.before = append(p.before, span{seg.Address, seg.TotalSize})
		}
	}
	for _, e := range p.trace {
		if (e.Action == snapshot.ActionSegmentFree || e.Action == snapshot.ActionSegmentUnmap) && !createdIdx.contains(e.Addr) {
			p.before = append(p.before, span{e.Addr, e.Size})
		}
	}
	p.beforeIdx = newSpanIndex(p.before)
}

// recordedReserved sums the recorded run's reserved memory before the trace and at its
// peak (a release inside a malloc, the retry path, means a device allocation had just
// failed, which cannot be where the run later reserved more), and notes what its OOMs
// say of the device (usableAt, usableSeen.holds).
func (p *preparer) recordedReserved() error {
	for _, sp := range p.before {
		p.initialReserved += sp.size
	}
	reserved := p.initialReserved
	p.maxReserved = reserved
	p.usable.reserved(reserved)
	for i, e := range p.trace {
		switch e.Action {
		case snapshot.ActionSegmentAlloc, snapshot.ActionSegmentMap:
			reserved += e.Size
			p.maxReserved = max(p.maxReserved, reserved)
			p.usable.reserved(reserved)
		case snapshot.ActionSegmentFree, snapshot.ActionSegmentUnmap:
			reserved -= e.Size
		case snapshot.ActionOOM:
			if err := p.usableAt(i, reserved); err != nil {
				return err
			}
		}
	}
	p.reservedAt = p.initialReserved
	p.h.recordedPeak = p.maxReserved
	p.h.usable, p.h.usableSteps = p.usable.holds(p.device, &p.h.warnings)
	return nil
}

// reservedBefore is the recorded run's reserved memory before entry i, for i that never
// decrease (kept as a running sum, not an array of the trace's length).
func (p *preparer) reservedBefore(i int) int64 {
	for ; p.reservedNext < i; p.reservedNext++ {
		switch e := &p.trace[p.reservedNext]; e.Action {
		case snapshot.ActionSegmentAlloc, snapshot.ActionSegmentMap:
			p.reservedAt += e.Size
		case snapshot.ActionSegmentFree, snapshot.ActionSegmentUnmap:
			p.reservedAt -= e.Size
		}
	}
	return p.reservedAt
}

// liveBlocks starts the walk: no block live yet, and the final segments' allocated
// blocks marked untouched.
func (p *preparer) liveBlocks() {
	p.live = make(map[uint64]liveBlock, 1024)
	p.touched = map[uint64]bool{}
	for _, seg := range p.s.Segments {
		if seg.Device == p.device {
			for _, b := range seg.Blocks {
				if b.State != snapshot.StateInactive {
					p.touched[b.Address] = false
				}
			}
		}
	}
	p.h.ops = make([]op, 0, len(p.trace)*2/3+1)
}

func (p *preparer) touch(a uint64) {
	if _, ok := p.touched[a]; ok {
		p.touched[a] = true
	}
}

// steps walks the trace, entry by entry, into ops.
func (p *preparer) steps() error {
	trace := p.trace
	for i := 0; i < len(trace); i++ {
		e := trace[i]
		var err error
		switch e.Action {
		case snapshot.ActionAlloc:
			err = p.alloc(i)
		case snapshot.ActionFreeRequested:
			i, err = p.freeRequested(i)
		case snapshot.ActionFreeCompleted:
			err = p.freeCompleted(i)
		case snapshot.ActionSegmentAlloc, snapshot.ActionSegmentMap:
			p.hints = append(p.hints, hint{addr: e.Addr, size: e.Size, mapped: e.Action == snapshot.ActionSegmentMap})
		case snapshot.ActionSegmentFree, snapshot.ActionSegmentUnmap:
			i = p.releases(i)
		case snapshot.ActionOOM:
			p.requests++
			p.buckets(notBucket)
			p.h.ops = append(p.h.ops, op{kind: opOOM, event: int32(i), stream: e.Stream, size: e.Size, hints: p.h.addHints(p.hints)})
			p.endRequest()
		case snapshot.ActionSnapshot:
		default:
			return p.errAt(i, "unknown action %q", e.Action)
		}
		if err != nil {
			return err
		}
		if len(e.Frames) > 0 {
			p.hasFrames = true
		}
	}
	if w := p.collectives.warning(p.device, p.h.held, len(p.h.earliest)); w != "" {
		p.h.warnings = append(p.h.warnings, w)
	}
	if w := p.opCaches.warning(p.device); w != "" {
		p.h.warnings = append(p.h.warnings, w)
	}
	if p.ambiguous > 0 {
		p.h.warnings = append(p.h.warnings, fmt.Sprintf(
			"device %d: %d releases of cached segments are followed at once by a new segment; without stack frames an empty_cache() call there cannot be told from the allocator's own release (garbage collection, or the retry path under a memory cap), so they are taken for the allocator's (record with stacks to tell them apart)",
			p.device, p.ambiguous))
	}
	// a deferred free still pending at the end never completed
	for _, b := range p.live {
		if b.requested && b.freeOp >= 0 {
			p.h.ops[b.freeOp].lag = -1
		}
	}
	return nil
}

// endRequest appends the completions postponed to after a request, and starts the
// next request's hints.
func (p *preparer) endRequest() {
	p.h.ops = append(p.h.ops, p.postponed...)
	p.hints, p.postponed = nil, nil
}

// alloc is an alloc entry: a request, with the device allocations made for it.
func (p *preparer) alloc(i int) error {
	e := p.trace[i]
	p.requests++
	if e.Size <= 0 {
		return p.errAt(i, "size %d", e.Size)
	}
	if b, ok := p.live[e.Addr]; ok {
		return p.errAt(i, "%#x is already allocated (event %d)", e.Addr, b.event)
	}
	p.collectives.add(&p.trace[i])
	id := p.newID()
	bucket := ddpBucket(e.Frames)
	p.buckets(bucket)
	p.live[e.Addr] = liveBlock{id: id, ordinal: p.made - 1, size: e.Size, event: i, freeOp: -1, bucket: bucket, request: p.requests}
	p.touch(e.Addr)
	var pool uint16
	if p.h.pools != nil {
		pool = p.h.pools.alloc[i]
	}
	p.h.ops = append(p.h.ops, op{kind: opAlloc, id: id, event: int32(i), stream: e.Stream, size: e.Size, hints: p.h.addHints(p.hints), pool: pool})
	p.endRequest()
	return nil
}

// freeRequested is a free_requested entry: a free, deferred when its free_completed
// does not follow at once (record_stream). It returns the index of the last entry it
// took (its free_completed, when not deferred).
func (p *preparer) freeRequested(i int) (int, error) {
	e := p.trace[i]
	h := p.h
	b, ok := p.live[e.Addr]
	if !ok {
		if !p.beforeIdx.contains(e.Addr) {
			return i, p.errAt(i, "%#x was never allocated", e.Addr)
		}
		id := p.freshID()
		b = liveBlock{id: id, ordinal: p.made - 1, event: -1, freeOp: -1}
		h.initial = append(h.initial, initialBlock{addr: e.Addr, size: e.Size, stream: e.Stream, id: b.id, pool: poolOfInitial(h.pools, e.Addr)})
		p.touch(e.Addr)
	}
	if b.requested {
		return i, p.errAt(i, "%#x is already freed (double free)", e.Addr)
	}
	if b.event >= 0 && e.Size != b.size {
		return i, p.errAt(i, "size %d, but event %d allocated %d at %#x (a free records its allocation's request)", e.Size, b.event, b.size, e.Addr)
	}
	b.requested = true
	deferred := completesLater(p.trace, i)
	held := b.bucket != notBucket && !deferred
	switch {
	case deferred:
		h.deferred++
	case held:
		h.held++
		p.earliest(b)
	}
	if deferred || held {
		if h.ordinal == nil {
			h.ordinal = map[int32]int32{}
		}
		h.ordinal[b.id] = b.ordinal
	}
	b.freeOp = len(h.ops)
	h.ops = append(h.ops, op{kind: opFree, id: b.id, event: int32(i), stream: e.Stream, deferred: deferred, held: held, lag: p.requests})
	if !deferred {
		delete(p.live, e.Addr)
		if !held {
			p.reuseID(b.id) // a held free's id stays its own: replays free it at different points
		}
		return i + 1, nil // its free_completed
	}
	p.live[e.Addr] = b
	return i, nil
}

// buckets follows DDP's buckets through the allocations (bucket: the allocation's).
func (p *preparer) buckets(bucket bucketKind) {
	switch bucket {
	case firstBucket:
		p.firstBuckets, p.rebuild = p.requests, 0
	case rebuiltBucket:
		if p.rebuild == 0 && p.firstBuckets > 0 {
			p.rebuild = p.requests
		}
	}
	p.atRebuild = bucket == rebuiltBucket
}

// earliest notes the earliest point of the held free of block b (history.earliest):
// a first bucket the snapshot's run let go of after the rebuild (the last allocation
// before its free was not the rebuild's) could have been let go of at the rebuild,
// before its first allocation, as PyTorch's other runs of the program did.
func (p *preparer) earliest(b liveBlock) {
	if b.bucket != firstBucket || p.rebuild <= b.request || p.atRebuild {
		return
	}
	p.h.earliest = append(p.h.earliest, earlyFree{id: b.id, requests: int(p.requests), delay: int(p.rebuild - p.requests - 1)})
}

// freeCompleted is the free_completed entry of a deferred free.
func (p *preparer) freeCompleted(i int) error {
	e := p.trace[i]
	h := p.h
	b, ok := p.live[e.Addr]
	if !ok || !b.requested {
		if !ok && p.beforeIdx.contains(e.Addr) {
			// freed before the trace started, completed inside it: nothing to replay
			return nil
		}
		return p.errAt(i, "%#x has no free_requested before it", e.Addr)
	}
	if b.event >= 0 && e.Size != b.size {
		return p.errAt(i, "size %d, but event %d allocated %d at %#x (a free records its allocation's request)", e.Size, b.event, b.size, e.Addr)
	}
	delete(p.live, e.Addr)
	if b.freeOp >= 0 {
		h.ops[b.freeOp].lag = p.requests - h.ops[b.freeOp].lag
		if i < p.releaseEnd {
			h.ops[b.freeOp].lag = -1 // completed by the retry path's synchronisation, not by timing
		}
	}
	if i < p.releaseEnd {
		p.postponed = append(p.postponed, op{kind: opComplete, id: b.id, event: int32(i)})
	} else {
		h.ops = append(h.ops, op{kind: opComplete, id: b.id, event: int32(i)})
	}
	return nil
}

// release appends the release of the private pools whose segments trace[i:j] gives
// back, unless the trace allocates into them later.
func (p *preparer) release(i, j int) {
	pools := p.h.pools
	if pools == nil {
		return
	}
	for k := i; k < j; k++ {
		pk, ok := pools.freeOf[k]
		if !ok || pk == 0 || p.released[pk] || pools.lastAlloc[pk] > k {
			continue
		}
		p.released[pk] = true
		p.h.ops = append(p.h.ops, op{kind: opReleasePool, event: int32(k), pool: pk})
	}
}

// releases is a run of segment_free (or segment_unmap) entries starting at i. It
// belongs to an empty_cache call when its stack frames say so (torch.cuda.empty_cache,
// or the allocator's emptyCache in C++ frames). Otherwise, without frames or with
// frames where the collector cannot have run (a malloc then releases only after a
// device allocation failed; PyTorch's own code empties the cache too, which only C++
// frames show: a convolution's cuDNN benchmark), it is one when no new segment
// follows it; when one of the released (whole, free) segments could have served the
// request that follows (the malloc would have taken it before collecting garbage or
// retrying); or when the new segment fits under what the run reserved at its peak (no
// device allocation can have failed: not the retry path) and the collector cannot
// have run (reserved at most its threshold of the peak). Otherwise it is the
// allocator's own retry path or garbage collection inside a malloc, which the replayed
// policy decides. It returns the index of the last entry it took.
func (p *preparer) releases(i int) int {
	trace, h := p.trace, p.h
	if i < p.releaseEnd {
		return i // a later release of a run already taken for the allocator's
	}
	if h.pools != nil && h.pools.destroyed[i] {
		// a MemPool's destruction: releasePool, then emptyCache of the pool
		j := i
		for j+1 < len(trace) && h.pools.destroyed[j+1] {
			j++
		}
		p.release(i, j+1)
		if pk := h.pools.freeOf[i]; pk != 0 { // 0: a segment from before the trace, of no known pool
			h.ops = append(h.ops, op{kind: opEmptyCachePool, event: int32(i), pool: pk})
		}
		return j
	}
	j := i
	for j < len(trace) && (trace[j].Action == snapshot.ActionSegmentFree || trace[j].Action == snapshot.ActionSegmentUnmap || trace[j].Action == snapshot.ActionFreeCompleted) {
		j++
	}
	var next snapshot.Action
	if j < len(trace) {
		next = trace[j].Action
	}
	inMalloc := next == snapshot.ActionSegmentAlloc || next == snapshot.ActionSegmentMap || next == snapshot.ActionOOM
	gc := p.s.Settings.GarbageCollectionThreshold > 0
	frames := len(trace[i].Frames) > 0
	// The collector runs inside a malloc only while reserved memory is above its
	// threshold of the cap, and the cap is at least the run's peak reserved.
	noGC := !gc || float64(p.reservedBefore(i)) <= p.s.Settings.GarbageCollectionThreshold*float64(p.maxReserved)
	switch {
	case frames && calledEmptyCache(trace[i].Frames):
		inMalloc = false
	case frames && !noGC:
		inMalloc = true // the collector's, inside a malloc
	case !inMalloc || next == snapshot.ActionOOM:
	case cachedBlockServes(trace, i, j, p.s.Settings.MaxSplitSize, &p.nextAlloc):
		inMalloc = false // the malloc would have taken that block, releasing nothing
	case noGC && p.reservedBefore(i)+trace[j].Size <= p.maxReserved:
		inMalloc = false
	case frames:
		inMalloc = true
	default:
		p.ambiguous++
	}
	p.release(i, j)
	if inMalloc {
		p.releaseEnd = j
		return i
	}
	h.ops = append(h.ops, op{kind: opEmptyCache, event: int32(i)})
	p.opCaches.add(trace[i].Frames)
	p.benchmarkWorkspace(i)
	// the free_completed events of the run are handled one by one
	for k := i + 1; k < j; k++ {
		if trace[k].Action == snapshot.ActionSegmentFree || trace[k].Action == snapshot.ActionSegmentUnmap {
			i = k
		} else {
			break
		}
	}
	return i
}

// indexStacks keeps each distinct call stack of the trace once, for OOM reports: one
// call stack is recorded many times, as one shared slice (snapshot.Read) or as equal
// slices.
func (p *preparer) indexStacks() {
	if !p.hasFrames {
		return
	}
	h := p.h
	type sliceKey struct {
		first *snapshot.Frame
		n     int
	}
	at := map[sliceKey]uint32{}
	h.stackOf = make([]uint32, len(p.trace))
	for i := range p.trace {
		fs := p.trace[i].Frames
		if len(fs) == 0 {
			continue
		}
		k := sliceKey{&fs[0], len(fs)}
		j, ok := at[k]
		if !ok {
			h.stacks = append(h.stacks, fs)
			j = uint32(len(h.stacks))
			at[k] = j
		}
		h.stackOf[i] = j
	}
}

// initialBlocks adds the blocks allocated before the trace and still allocated at its
// end, and warns when the history starts after the program allocated.
func (p *preparer) initialBlocks() {
	h := p.h
	for _, seg := range p.s.Segments {
		if seg.Device != p.device {
			continue
		}
		for _, b := range seg.Blocks {
			if b.State == snapshot.StateInactive || p.touched[b.Address] {
				continue
			}
			if !p.beforeIdx.contains(b.Address) {
				continue
			}
			size := b.RequestedSize
			if size <= 0 {
				size = b.Size
			}
			h.initial = append(h.initial, initialBlock{addr: b.Address, size: size, stream: seg.Stream, id: p.freshID(), pool: poolOfInitial(h.pools, b.Address)})
		}
	}
	sort.Slice(h.initial, func(i, j int) bool { return h.initial[i].addr < h.initial[j].addr })
	if len(h.initial) > 0 {
		var n int64
		for _, b := range h.initial {
			n += b.size
		}
		var segBytes int64
		for _, sp := range p.before {
			segBytes += sp.size
		}
		h.warnings = append(h.warnings, fmt.Sprintf(
			"device %d: the history starts after the program allocated: %d blocks (%d bytes) in %d segments (%d bytes) were live before its first event (history recorded late, or its ring buffer of max_entries wrapped); they are re-made first, in address order, so peaks before the first event are not known",
			p.device, len(h.initial), n, len(p.before), segBytes))
	}
}

// benchmarkWorkspace marks the allocation that an op's empty_cache at trace entry i
// follows at once, freed just before it, as a cuDNN benchmark's workspace (op.halves):
// under torch.backends.cudnn.benchmark a convolution allocates the workspace of the
// largest algorithm it times, frees it and empties the cache; where the workspace does
// not fit, PyTorch catches the OOM and asks for half as much, down to nothing
// (aten/src/ATen/native/cudnn/Conv_v8.cpp, generate_and_filter_plans; a run capped at
// its default run's peak did, reference/programs-2.11/tight/). The empty_cache must be
// PyTorch's own (not torch.cuda.empty_cache), and the allocation made in the same
// call (the same frames), or without frames in a snapshot that has them elsewhere (a
// backward pass has none).
func (p *preparer) benchmarkWorkspace(i int) {
	trace := p.trace
	if i < 3 || calledTorchEmptyCache(trace[i].Frames) {
		return
	}
	a, req, done := &trace[i-3], &trace[i-2], &trace[i-1]
	if a.Action != snapshot.ActionAlloc || req.Action != snapshot.ActionFreeRequested || done.Action != snapshot.ActionFreeCompleted ||
		req.Addr != a.Addr || done.Addr != a.Addr {
		return
	}
	switch {
	case len(a.Frames) == 0 && !p.hasFrames:
		return // a snapshot without frames: a program's own empty_cache looks the same
	case len(a.Frames) > 0 && !sameFrames(a.Frames, trace[i].Frames):
		return // not made in the call that emptied the cache
	}
	ops := p.h.ops
	for k := len(ops) - 1; k >= 0 && k >= len(ops)-4; k-- {
		if ops[k].kind == opAlloc && ops[k].event == int32(i-3) {
			ops[k].halves = true
			return
		}
	}
}
