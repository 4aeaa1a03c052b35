package whatif

import (
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"slices"

	"memlab.dev/memlab/allocator"
)

// The replay stage: one device's prepared history (history, prepare.go) under one
// setting, one timing of the cross-stream frees (schedule, timing.go) and one placement
// of the device allocations (deviceMemory, memory.go), step by step through an
// allocator. A replayer is that replay's state; replaySchedule runs one to the end.

// replayer is one replay in progress: the allocator and the simulated device it runs
// on, the blocks' replay addresses, the pending cross-stream frees, and the figures
// recorded so far.
type replayer struct {
	h     *history
	st    Setting
	opts  Options
	sched schedule // nil: complete deferred frees where the snapshot did
	total int64    // the device's memory
	mem   *deviceMemory
	// usableStep is the step of h.usableSteps the replay's device is in, until the op
	// after trace entry nextBound (setBound; math.MaxInt: to the end)
	usableStep, nextBound int
	a                     *allocator.Allocator
	run                   *Run

	addrs    []uint64 // by block id; 0: not held
	pending  idSet    // block ids of deferred frees not yet completed
	npending int
	// Frees due together complete by rank (op.order: stream by stream, then in the
	// order they were made), at a synchronisation too.
	rank     map[uint64]int64 // replay address of a pending block → its completion order
	pendList []int32          // ids of pending frees, in the order of their Free (lazily pruned)
	pendHead int              // pendList[:pendHead] are completed
	freedAt  []int32          // id of a pending free → cudaFree calls before it (mod 2^32)
	mallocs  int              // allocations replayed so far
	dues     dueHeap          // pending frees by the allocation at which sched makes them due
	// holds are the held frees (op.held) sched moves, by the allocation before which
	// the program lets go of the block (later, or earlier: holdEarly); one sched
	// delays to never is held to the end
	holds   dueHeap
	due     []int32 // scratch of process
	poolIDs []allocator.PoolID

	// the curves: events per bucket, the bucket being filled, the reserved peak seen
	bucket    int
	curBucket int
	peakSeen  int64
}

// newReplayer makes the allocator and device of a replay of h under st, with its cap,
// its private pools and the blocks live before the trace re-made.
func newReplayer(h *history, st Setting, opts Options, sched schedule) (*replayer, error) {
	total := opts.TotalMemory
	if total <= 0 {
		total = H200Memory
	}
	mem := newDeviceMemory(uint64(total))
	mem.usable = uint64(cardUsable(total, h.recordedPeak))
	mem.recordedSpans = h.recordedSpans()
	if opts.placement != 0 {
		mem.placer = rand.New(rand.NewSource(opts.placement))
		// Every other placement moves only the guessed allocations: the driver may
		// also have put the recorded ones where the default run had them
		// (TestAddressPlacementKinds: for gpt2_generate_large's capped run, these
		// reach PyTorch's num_device_free more often than those that move recorded
		// ones too).
		mem.moveRecorded = opts.placement%2 == 1 && opts.pack == noPacking
		if opts.permute {
			mem.recorded = h.recordedAddresses()
			mem.order = opts.order
		}
		mem.pack = opts.pack
	}
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
	r := &replayer{h: h, st: st, opts: opts, sched: sched, total: total, mem: mem, a: a,
		run:       &Run{Setting: st, Device: h.device, Stopped: -1},
		addrs:     make([]uint64, h.ids),
		pending:   make(idSet, (h.ids+63)/64),
		freedAt:   make([]int32, h.ids),
		rank:      map[uint64]int64{},
		nextBound: math.MaxInt,
	}
	if h.usable.bounds(total) {
		r.setBound(0)
	}
	a.SetSyncOrder(func(x, y uint64) int { return cmp.Compare(r.rank[x], r.rank[y]) })
	if h.pools != nil {
		r.poolIDs = h.pools.ids
		for _, id := range r.poolIDs[1:] {
			if err := a.CreateOrIncrefPool(id); err != nil {
				return nil, err
			}
		}
	}
	for _, b := range h.initial {
		mem.step(nil)
		p, err := r.mallocIn(b.size, b.stream, b.pool)
		if err != nil {
			return nil, fmt.Errorf("re-making a block of %d bytes live before the trace: %w", b.size, err)
		}
		r.addrs[b.id] = p
	}
	points := opts.CurvePoints
	if points <= 0 {
		points = 2048
	}
	r.bucket = max((h.events+points-1)/points, 1)
	r.curBucket, r.peakSeen = -1, -1
	r.holdEarly()
	return r, nil
}

// holdEarly readies the held frees (op.held) the schedule makes the program let go of
// before their recorded point (a negative delay, history.earliest): each at the
// allocation its delay names, counted from the requests before its op.
func (r *replayer) holdEarly() {
	if r.sched == nil {
		return
	}
	for _, e := range r.h.earliest {
		if d := r.sched[e.id]; d < 0 {
			heap.Push(&r.holds, dueFree{at: e.requests + d + 1, id: e.id})
		}
	}
}

// replaySchedule runs one device's history under one setting, completing the frees
// that waited for other streams by sched (nil: where the snapshot completed them).
func replaySchedule(h *history, st Setting, opts Options, sched schedule) (*Run, error) {
	r, err := newReplayer(h, st, opts, sched)
	if err != nil {
		return nil, err
	}
	return r.through(h.ops)
}

// through replays ops (the rest of the history) and returns the run's figures.
func (r *replayer) through(ops []op) (*Run, error) {
	for _, o := range ops {
		if int(o.event) > r.nextBound {
			r.boundAt(o.event)
		}
		stop, err := r.step(o)
		if err != nil {
			return nil, err
		}
		if stop {
			break
		}
	}
	return r.finish(), nil
}

// dropAll forgets every pending free: a synchronisation completed them all.
func (r *replayer) dropAll() {
	for _, id := range r.pendList[r.pendHead:] {
		r.pending.clear(id)
	}
	r.npending, r.pendList, r.pendHead, r.dues = 0, r.pendList[:0], 0, r.dues[:0]
}

// synced notes a synchronisation inside a malloc (the retry path's release of cached
// blocks, successful or not), which completed every pending free.
func (r *replayer) synced() {
	if r.npending > 0 && r.a.PendingFreeCount() == 0 {
		r.dropAll()
	}
}

// process is process_events at the start of a malloc: it completes the pending frees
// the schedule says are due, and those a cudaFree since their Free synchronised.
func (r *replayer) process() error {
	if r.npending == 0 {
		r.pendList, r.pendHead, r.dues = r.pendList[:0], 0, r.dues[:0]
		return nil
	}
	r.due = r.due[:0]
	// a cudaFree since a free: freedAt grows along pendList, so these are a prefix
	for ; r.pendHead < len(r.pendList); r.pendHead++ {
		id := r.pendList[r.pendHead]
		if r.pending.has(id) {
			if r.freedAt[id] == int32(r.mem.frees) {
				break
			}
			r.pending.clear(id)
			r.due = append(r.due, id)
		}
	}
	if r.pendHead > 1024 && r.pendHead > len(r.pendList)/2 {
		r.pendList = r.pendList[:copy(r.pendList, r.pendList[r.pendHead:])]
		r.pendHead = 0
	}
	for len(r.dues) > 0 && r.dues[0].at <= r.mallocs {
		d := heap.Pop(&r.dues).(dueFree)
		if r.pending.has(d.id) {
			r.pending.clear(d.id)
			r.due = append(r.due, d.id)
		}
	}
	// stream by stream (completionOrder), as a synchronisation does
	slices.SortStableFunc(r.due, func(x, y int32) int { return cmp.Compare(r.rank[r.addrs[x]], r.rank[r.addrs[y]]) })
	for _, id := range r.due {
		r.npending--
		if err := r.a.CompleteFree(r.addrs[id]); err != nil {
			return err
		}
		r.addrs[id] = 0
	}
	return nil
}

// letGo frees the held blocks (op.held) the schedule makes the program let go of
// before this allocation.
func (r *replayer) letGo() error {
	for len(r.holds) > 0 && r.holds[0].at <= r.mallocs {
		d := heap.Pop(&r.holds).(dueFree)
		if r.addrs[d.id] == 0 {
			continue // its allocation failed, or (let go of early) its op came first
		}
		if err := r.a.Free(r.addrs[d.id]); err != nil {
			return err
		}
		r.addrs[d.id] = 0
	}
	return nil
}

// mallocIn is MallocStream, or MallocInPool for a request of a private pool.
func (r *replayer) mallocIn(size int64, stream uint64, pool uint16) (uint64, error) {
	if pool == 0 {
		return r.a.MallocStream(size, stream)
	}
	return r.a.MallocInPool(size, stream, r.poolIDs[pool])
}

// fail notes an out-of-memory error of op o as the run's first OOM; another error is
// returned.
func (r *replayer) fail(o op, err error) error {
	var oom *allocator.OutOfMemoryError
	if !errors.As(err, &oom) {
		return fmt.Errorf("event %d: %w", o.event, err)
	}
	if r.run.FirstOOM == nil {
		r.run.FirstOOM = &OOM{Message: oom.Error(), Event: int(o.event), Size: o.size, Stream: o.stream}
		r.run.FirstOOM.Frames = r.h.frames(o.event)
	}
	return nil
}

// malloc replays one allocation request: process_events first, then the allocator; ok
// is false when the request failed (an OOM, recorded by fail).
func (r *replayer) malloc(o op) (p uint64, ok bool, err error) {
	r.mallocs++
	if err := r.letGo(); err != nil {
		return 0, false, fmt.Errorf("event %d: %w", o.event, err)
	}
	if err := r.process(); err != nil {
		return 0, false, fmt.Errorf("event %d: %w", o.event, err)
	}
	r.mem.step(r.h.hintsOf(&o))
	p, err = r.mallocIn(o.size, o.stream, o.pool)
	if r.mem.guessed == 0 {
		r.run.beforeGuess = r.mallocs
	}
	r.synced()
	if err != nil {
		return 0, false, r.fail(o, err)
	}
	return p, true, nil
}

// halve replays what PyTorch does where a cuDNN benchmark's workspace (op.halves)
// did not fit: it caught the OOM and asked for half as much, until one fitted or
// nothing was left. It returns the address of the workspace that fitted (0: none).
func (r *replayer) halve(o op) (uint64, error) {
	if r.run.FirstOOM != nil && r.run.FirstOOM.Event == int(o.event) {
		r.run.FirstOOM = nil // caught: not the run's end
	}
	r.run.HalvedWorkspaces++
	for size := o.size / 2; size > 0; size /= 2 {
		r.mem.step(nil)
		p, err := r.mallocIn(size, o.stream, o.pool)
		r.synced()
		var oom *allocator.OutOfMemoryError
		switch {
		case err == nil:
			return p, nil
		case !errors.As(err, &oom):
			return 0, fmt.Errorf("event %d: %w", o.event, err)
		}
	}
	return 0, nil
}

// record notes the memory after op o: the peak's largest free block, the curves.
func (r *replayer) record(o op) {
	alloc, resv := r.a.Usage()
	if resv > r.peakSeen {
		r.peakSeen = resv
		r.run.LargestFreeAtPeak = r.a.LargestFreeBlock()
	}
	cv := &r.run.Curve
	if bk := int(o.event) / r.bucket; bk != r.curBucket {
		r.curBucket = bk
		cv.Event = append(cv.Event, int(o.event))
		cv.Allocated = append(cv.Allocated, alloc)
		cv.Reserved = append(cv.Reserved, resv)
	} else {
		n := len(cv.Event) - 1
		cv.Event[n] = int(o.event)
		cv.Allocated[n] = max(cv.Allocated[n], alloc)
		cv.Reserved[n] = max(cv.Reserved[n], resv)
	}
}

// step replays op o; stop is true when the replay ends there (an OOM the program
// would not have survived, unless Options.ContinueAfterOOM).
func (r *replayer) step(o op) (stop bool, err error) {
	a := r.a
	switch o.kind {
	case opAlloc:
		p, ok, err := r.malloc(o)
		if err != nil {
			return false, err
		}
		if ok {
			r.addrs[o.id] = p
			break
		}
		if o.halves {
			p, err := r.halve(o)
			if err != nil {
				return false, err
			}
			r.addrs[o.id] = p // 0: nothing fitted, and the benchmark ran without a workspace
			break
		}
		r.run.NewOOMs++
		if !r.opts.ContinueAfterOOM {
			r.run.Stopped = int(o.event)
			r.record(o)
			return true, nil
		}
	case opFree:
		p := r.addrs[o.id]
		if p == 0 {
			break // its allocation failed
		}
		// a held free the schedule makes earlier (holdEarly) was made already (p is
		// 0), or is made here
		if o.held && r.sched != nil && r.sched[o.id] > 0 {
			if r.sched[o.id] != never {
				heap.Push(&r.holds, dueFree{at: r.mallocs + r.sched[o.id] + 1, id: o.id})
			}
			break
		}
		r.addrs[o.id] = 0
		if o.deferred {
			if err := a.RecordStream(p, r.h.other); err != nil {
				return false, fmt.Errorf("event %d: %w", o.event, err)
			}
		}
		if err := a.Free(p); err != nil {
			return false, fmt.Errorf("event %d: %w", o.event, err)
		}
		if o.deferred {
			r.addrs[o.id] = p
			r.pending.set(o.id)
			r.npending++
			r.rank[p] = o.order()
			r.pendList = append(r.pendList, o.id)
			r.freedAt[o.id] = int32(r.mem.frees)
			if r.sched != nil && r.sched[o.id] != never {
				heap.Push(&r.dues, dueFree{at: r.mallocs + r.sched[o.id] + 1, id: o.id})
			}
		}
	case opComplete:
		if r.sched != nil || !r.pending.has(o.id) {
			break // completed by a synchronisation, or never allocated
		}
		r.pending.clear(o.id)
		r.npending--
		if err := a.CompleteFree(r.addrs[o.id]); err != nil {
			return false, fmt.Errorf("event %d: %w", o.event, err)
		}
		r.addrs[o.id] = 0
	case opEmptyCache:
		r.mem.step(nil)
		if err := a.EmptyCache(); err != nil {
			return false, fmt.Errorf("event %d: empty_cache: %w", o.event, err)
		}
		if r.npending > 0 {
			r.dropAll()
		}
	case opReleasePool:
		if err := a.ReleasePool(r.poolIDs[o.pool]); err != nil {
			return false, fmt.Errorf("event %d: %w", o.event, err)
		}
	case opEmptyCachePool:
		r.mem.step(nil)
		if err := a.EmptyCachePool(r.poolIDs[o.pool]); err != nil {
			return false, fmt.Errorf("event %d: a MemPool's destruction: %w", o.event, err)
		}
		r.synced()
	case opOOM:
		// The recorded run failed here; the replay tries the same request and, if it
		// fits under this setting, gives it back at once (the program did not get the
		// memory, so nothing later frees it) and stops (Run.Served) unless
		// Options.ContinueAfterOOM.
		p, ok, err := r.malloc(o)
		if err != nil {
			return false, err
		}
		if ok {
			r.run.Avoided = append(r.run.Avoided, int(o.event))
			if err := a.Free(p); err != nil {
				return false, fmt.Errorf("event %d: %w", o.event, err)
			}
			if !r.opts.ContinueAfterOOM {
				// What follows is what the program did after its OOM, which under
				// this setting it did not have: the replay stops, as at a predicted
				// OOM.
				r.run.Stopped = int(o.event)
				r.record(o)
				return true, nil
			}
		}
	}
	r.record(o)
	return false, nil
}

// finish reads the run's figures from the allocator after the last op replayed.
func (r *replayer) finish() *Run {
	run, a, st := r.run, r.a, r.st
	run.Stats = a.MemoryStats()
	run.MaxAllocated = run.Stats["allocated_bytes.all.peak"]
	run.MaxReserved = run.Stats["reserved_bytes.all.peak"]
	run.DeviceAllocs = run.Stats["num_device_alloc"]
	run.DeviceFrees = run.Stats["num_device_free"]
	run.AllocRetries = run.Stats["num_alloc_retries"]
	run.OOMs = run.Stats["num_ooms"]
	run.PeakInactiveSplit = run.Stats["inactive_split_bytes.all.peak"]
	run.Guessed = r.mem.guessed
	run.placeable = r.mem.mallocs > 0
	run.requests = r.mallocs
	run.Final = a.Snapshot()
	run.Limits = a.Limits()
	if run.Stopped >= 0 && !run.Served() {
		run.AfterOOMRange = afterOOMRange(run.Final, run.Stats)
	}
	switch {
	case st.Cap > 0 && st.Cap < r.total:
		run.Allowed = st.Cap
	case st.Fraction > 0 && st.Fraction < 1:
		run.Allowed = int64(st.Fraction * float64(r.total))
	case a.PerProcessMemoryFraction() < 1: // per_process_memory_fraction in the configuration
		run.Allowed = int64(st.Conf.PerProcessMemoryFraction * float64(r.total))
	}
	return run
}

// dueFree is a pending free and the allocation at which its schedule makes it due.
type dueFree struct {
	at int
	id int32
}

// dueHeap is a min-heap of dueFree by at (container/heap).
type dueHeap []dueFree

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(dueFree)) }
func (h *dueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// idSet is a set of block ids, a bit each: a replay holds one per placement
// replayed at once (issue 28: a million-event history on sixteen cores).
type idSet []uint64

func (s idSet) has(id int32) bool { return s[id/64]&(1<<(id%64)) != 0 }
func (s idSet) set(id int32)      { s[id/64] |= 1 << (id % 64) }
func (s idSet) clear(id int32)    { s[id/64] &^= 1 << (id % 64) }
