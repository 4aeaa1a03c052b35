package whatif

import (
	"fmt"
	"slices"
	"sort"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/snapshot"
)

// Private pools (CUDA graph captures, torch.cuda.MemPool) in a replay.
//
// Each allocation the recorded run made goes, in the replay, to the pool it went to in
// the recorded run, under every setting. A trace entry of PyTorch after 2.11 names its
// pool ("pool_id"); PyTorch 2.11 writes none, so the pool of an allocation is inferred
// from the segment its address lies in, and the pool of a segment from:
//   - the snapshot's segments, each with its segment_pool_id, for the segments still
//     held at the dump (the trace's segment_alloc / segment_map at that address, with
//     no segment_free after it, is the same segment);
//   - the destruction of a torch.cuda.MemPool, which gives back the pool's free
//     segments (~MemPool: releasePool, then emptyCache of that pool): a run of
//     segment_free entries whose stack is neither empty_cache's nor the one of the
//     request that follows (the allocator's own release inside a malloc) frees the
//     segments of one pool, given an id of its own;
//   - the capture stream: a segment freed before the dump, allocated on a stream
//     whose segments at the dump all belong to one private pool, belongs to it (a
//     graph capture routes the capturing stream's requests to its pool).
//
// A segment none of these names is taken for the default pool's. A pool whose
// segments the recorded run gave back (by empty_cache, a MemPool's destruction, or the
// out-of-memory path) had been released by then (a graph's reset, a MemPool's
// deletion): the replay releases it there, unless the trace allocates into it later.

// poolPlan is what the inference found for one device's trace.
type poolPlan struct {
	ids []allocator.PoolID // index 0: the default pool
	// alloc is, by trace index, the pool index of each alloc entry (nil: all default)
	alloc []uint16
	// freeOf is, by trace index, the pool index of the segment a segment_free or
	// segment_unmap entry gives back
	freeOf map[int]uint16
	// destroyed marks the segment_free entries of a MemPool's destruction
	destroyed map[int]bool
	// lastAlloc is, by pool index, the trace index of its last allocation
	lastAlloc []int
	// initial gives the pool index of a block live before the trace, by address
	initial func(addr uint64) uint16
	notes   []string
}

// segLife is one segment (or mapped range) of the trace: where it lies, its stream,
// when it was made and given back, and its pool.
type segLife struct {
	span
	stream     uint64
	start, end int    // trace indices (−1: before the trace; len(trace): held at the dump)
	pool       int    // pool index, −1 while unknown
	how        string // what named the pool: "dump", "destroyed" or "stream"
}

// inferPools returns the pools of one device's trace, or nil when the snapshot shows
// no private pool (the replay then routes every request to the default pool). Its steps
// are poolInference's methods, in the order the package comment above gives the rules.
func inferPools(s *snapshot.Snapshot, device int, trace []snapshot.TraceEntry) *poolPlan {
	x := newPoolInference(s, device, trace)
	if slices.ContainsFunc(trace, func(e snapshot.TraceEntry) bool { return e.HasPool() }) {
		return x.named() // PyTorch after 2.11: the entries name their pools
	}
	// Nothing names a private pool: no segment of the dump has one and no
	// segment_free looks like a MemPool's destruction (the common case, at no cost).
	if !slices.ContainsFunc(x.dump, func(seg snapshot.Segment) bool { return seg.PoolID != [2]uint64{} }) &&
		!anyPoolDestroyed(trace) {
		return nil
	}
	x.segmentLives()
	x.heldAtDump()
	x.destroyedPools()
	x.captureStreams()
	notInPool(trace, x.lives)
	if len(x.p.ids) == 1 {
		return nil
	}
	x.allocPools()
	x.p.initial = func(a uint64) uint16 { k, _ := x.dumpPool(a); return uint16(k) }
	x.p.finish(trace)
	x.notes()
	return x.p
}

// poolInference is the state of inferPools: the plan being built, the pool ids met so
// far, the device's segments at the dump and the trace's segments with their lives.
type poolInference struct {
	p      *poolPlan
	device int
	trace  []snapshot.TraceEntry
	index  map[[2]uint64]int  // pool id → index in p.ids
	dump   []snapshot.Segment // the device's segments at the dump, by address
	lives  []*segLife
	// startAt and endAt are the lives by the trace index of their segment_alloc and
	// their segment_free.
	startAt, endAt map[int]*segLife
}

func newPoolInference(s *snapshot.Snapshot, device int, trace []snapshot.TraceEntry) *poolInference {
	x := &poolInference{device: device, trace: trace, index: map[[2]uint64]int{},
		p: &poolPlan{ids: []allocator.PoolID{{}}, freeOf: map[int]uint16{}, destroyed: map[int]bool{}}}
	for _, seg := range s.Segments {
		if seg.Device == device {
			x.dump = append(x.dump, seg)
		}
	}
	sort.Slice(x.dump, func(i, j int) bool { return x.dump[i].Address < x.dump[j].Address })
	return x
}

// poolIndex returns the index of pool id in the plan, adding it when new.
func (x *poolInference) poolIndex(id [2]uint64) int {
	if id == ([2]uint64{}) {
		return 0
	}
	k, ok := x.index[id]
	if !ok {
		k = len(x.p.ids)
		x.index[id] = k
		x.p.ids = append(x.p.ids, allocator.PoolID{First: id[0], Second: id[1]})
	}
	return k
}

// dumpPool returns the pool of the dump's segment that holds a, if one does.
func (x *poolInference) dumpPool(a uint64) (int, bool) {
	dump := x.dump
	k := sort.Search(len(dump), func(k int) bool { return dump[k].Address > a }) - 1
	if k >= 0 && a < dump[k].Address+uint64(dump[k].TotalSize) {
		return x.poolIndex(dump[k].PoolID), true
	}
	return 0, false
}

// named reads each allocation's pool from its trace entry (PyTorch after 2.11).
func (x *poolInference) named() *poolPlan {
	p := x.p
	p.alloc = make([]uint16, len(x.trace))
	for i, e := range x.trace {
		if e.Action == snapshot.ActionAlloc {
			p.alloc[i] = uint16(x.poolIndex(e.Pool()))
		}
		if (e.Action == snapshot.ActionSegmentFree || e.Action == snapshot.ActionSegmentUnmap) && e.HasPool() {
			p.freeOf[i] = uint16(x.poolIndex(e.Pool()))
		}
	}
	p.initial = func(a uint64) uint16 { k, _ := x.dumpPool(a); return uint16(k) }
	if len(p.ids) == 1 {
		return nil
	}
	p.finish(x.trace)
	p.notes = append(p.notes, fmt.Sprintf("device %d: each allocation's pool is read from its trace entry (pool_id)", x.device))
	return p
}

// segmentLives lists the trace's segments, with their lifetimes.
func (x *poolInference) segmentLives() {
	open := map[uint64]*segLife{}
	x.startAt, x.endAt = map[int]*segLife{}, map[int]*segLife{}
	for i, e := range x.trace {
		switch e.Action {
		case snapshot.ActionSegmentAlloc, snapshot.ActionSegmentMap:
			l := &segLife{span: span{e.Addr, e.Size}, stream: e.Stream, start: i, end: len(x.trace), pool: -1}
			x.lives = append(x.lives, l)
			open[e.Addr] = l
			x.startAt[i] = l
		case snapshot.ActionSegmentFree, snapshot.ActionSegmentUnmap:
			if l := open[e.Addr]; l != nil {
				l.end = i
				x.endAt[i] = l
				delete(open, e.Addr)
			}
		}
	}
}

// heldAtDump gives the segments held at the dump their pool ids.
func (x *poolInference) heldAtDump() {
	for _, l := range x.lives {
		if l.end == len(x.trace) {
			if k, ok := x.dumpPool(l.addr); ok {
				l.pool, l.how = k, "dump"
			}
		}
	}
}

// destroysPool reports whether trace[i] may be a MemPool's destruction: a
// segment_free whose stack is the program's code (`del pool`), not empty_cache's, nor
// an op's inside PyTorch (a convolution's cuDNN benchmark empties the cache; the
// allocator releases inside a malloc), nor that of trace[lastAlloc], the allocation
// just before it (-1: none): a release with its frames is that call's own, as where
// the program calls torch.nn.functional.conv2d itself under
// torch.backends.cudnn.benchmark (timm's layers do), while `del pool` allocates nothing.
func destroysPool(trace []snapshot.TraceEntry, i, lastAlloc int) bool {
	e := &trace[i]
	if e.Action != snapshot.ActionSegmentFree || len(e.Frames) == 0 || calledEmptyCache(e.Frames) || insideTorchOp(e.Frames) {
		return false
	}
	return lastAlloc < 0 || !sameFrames(trace[lastAlloc].Frames, e.Frames)
}

// anyPoolDestroyed reports whether some entry of trace may be a MemPool's destruction
// (destroysPool).
func anyPoolDestroyed(trace []snapshot.TraceEntry) bool {
	lastAlloc := -1
	for i := range trace {
		if trace[i].Action == snapshot.ActionAlloc {
			lastAlloc = i
		}
		if destroysPool(trace, i, lastAlloc) {
			return true
		}
	}
	return false
}

// destroyedPools finds MemPools' destructions: segment_free entries that neither
// empty_cache nor a malloc made (destroysPool), each run of them with one stack one
// pool.
func (x *poolInference) destroyedPools() {
	trace := x.trace
	lastAlloc := -1
	for i := 0; i < len(trace); i++ {
		e := trace[i]
		if e.Action == snapshot.ActionAlloc {
			lastAlloc = i
		}
		if !destroysPool(trace, i, lastAlloc) {
			continue
		}
		next := i + 1
		for next < len(trace) && (trace[next].Action == snapshot.ActionSegmentFree || trace[next].Action == snapshot.ActionFreeCompleted || trace[next].Action == snapshot.ActionSnapshot) {
			next++
		}
		if next < len(trace) && sameFrames(trace[next].Frames, e.Frames) {
			continue // the release of the malloc that follows
		}
		// one destroyed pool: this entry and the following frees with its stack
		id := freshUserPool(x.index, x.dump)
		k := x.poolIndex(id)
		for j := i; j < len(trace) && trace[j].Action == snapshot.ActionSegmentFree && sameFrames(trace[j].Frames, e.Frames); j++ {
			x.p.destroyed[j] = true
			if l := x.endAt[j]; l != nil {
				l.pool, l.how = k, "destroyed"
			}
			i = j
		}
	}
}

// captureStreams gives a freed segment the pool of its stream when every segment of
// that stream held at the dump is in one private pool; any other is the default pool's.
func (x *poolInference) captureStreams() {
	streamPool := map[uint64]int{}
	for _, l := range x.lives {
		if l.how != "dump" {
			continue
		}
		if k, seen := streamPool[l.stream]; !seen {
			streamPool[l.stream] = l.pool
		} else if k != l.pool {
			streamPool[l.stream] = 0
		}
	}
	for _, l := range x.lives {
		if l.pool < 0 {
			if k := streamPool[l.stream]; k > 0 {
				l.pool, l.how = k, "stream"
			} else {
				l.pool = 0
			}
		}
	}
}

// allocPools gives each allocation the pool of the segment its address lies in, at its
// time, and each segment_free the pool of the segment it gives back.
func (x *poolInference) allocPools() {
	p := x.p
	p.alloc = make([]uint16, len(x.trace))
	var live []*segLife // by address
	at := func(a uint64) int {
		return sort.Search(len(live), func(k int) bool { return live[k].addr > a }) - 1
	}
	for i, e := range x.trace {
		switch e.Action {
		case snapshot.ActionSegmentAlloc, snapshot.ActionSegmentMap:
			if l := x.startAt[i]; l != nil {
				live = slices.Insert(live, at(l.addr)+1, l)
			}
		case snapshot.ActionSegmentFree, snapshot.ActionSegmentUnmap:
			if k := at(e.Addr); k >= 0 && live[k].addr == e.Addr {
				p.freeOf[i] = uint16(live[k].pool)
				live = slices.Delete(live, k, k+1)
			}
		case snapshot.ActionAlloc:
			if k := at(e.Addr); k >= 0 && live[k].contains(e.Addr) {
				p.alloc[i] = uint16(live[k].pool)
			} else if k, ok := x.dumpPool(e.Addr); ok {
				p.alloc[i] = uint16(k) // a segment made before the trace
			}
		}
	}
}

// notes says, per pool, what was inferred.
func (x *poolInference) notes() {
	p := x.p
	for k := 1; k < len(p.ids); k++ {
		counts := map[string]int{}
		for _, l := range x.lives {
			if l.pool == k {
				counts[l.how]++
			}
		}
		n := 0
		for i := range p.alloc {
			if p.alloc[i] == uint16(k) && x.trace[i].Action == snapshot.ActionAlloc {
				n++
			}
		}
		var how []string
		if c := counts["dump"]; c > 0 {
			how = append(how, fmt.Sprintf("%s held at the dump with this segment_pool_id", plural(c, "segment", "segments")))
		}
		if c := counts["stream"]; c > 0 {
			how = append(how, fmt.Sprintf("%s freed earlier on the same (capture) stream", plural(c, "segment", "segments")))
		}
		if c := counts["destroyed"]; c > 0 {
			how = append(how, fmt.Sprintf("%s given back by a torch.cuda.MemPool's destruction (the id is memlab's: the snapshot no longer names the pool)", plural(c, "segment", "segments")))
		}
		p.notes = append(p.notes, fmt.Sprintf("device %d: pool %v inferred (PyTorch 2.11's trace entries carry no pool id): %s, in %s",
			x.device, p.ids[k], plural(n, "allocation", "allocations"), joinAnd(how)))
	}
}

// finish notes each pool's last allocation.
func (p *poolPlan) finish(trace []snapshot.TraceEntry) {
	p.lastAlloc = make([]int, len(p.ids))
	for k := range p.lastAlloc {
		p.lastAlloc[k] = -1
	}
	for i, k := range p.alloc {
		if trace[i].Action == snapshot.ActionAlloc {
			p.lastAlloc[k] = i
		}
	}
}

// freshUserPool returns an id (0, n) no segment or entry of the snapshot uses, for a
// pool the snapshot no longer names.
func freshUserPool(index map[[2]uint64]int, dump []snapshot.Segment) [2]uint64 {
	var n uint64
	for id := range index {
		n = max(n, id[1])
	}
	for _, seg := range dump {
		n = max(n, seg.PoolID[1])
	}
	return [2]uint64{0, n + 1}
}

func sameFrames(a, b []snapshot.Frame) bool { return slices.Equal(a, b) }

// joinAnd joins "a", "b" and "c" as "a, b and c" ("no segment" for none).
func joinAnd(parts []string) string {
	if len(parts) == 0 {
		return "no segment"
	}
	return lang.List(lang.English, parts)
}

// notInPool undoes the capture-stream rule for a segment that cannot have been in the
// pool: the recorded run made a new segment of that pool, on that stream, for a
// request the segment had a free gap for (a capture's first requests, such as the RNG
// state CUDAGraph.capture_begin makes before it routes to the pool, are the default
// pool's, on the capture stream). Blocks are taken at their requests rounded up to 512
// bytes; a small request (1 MiB or less) fits only a small segment (2 MiB).
func notInPool(trace []snapshot.TraceEntry, lives []*segLife) {
	var cands []*segLife
	startAt := map[int]*segLife{}
	for _, l := range lives {
		startAt[l.start] = l
		if l.how == "stream" {
			cands = append(cands, l)
		}
	}
	if len(cands) == 0 {
		return
	}
	blocks := map[*segLife]map[uint64]int64{} // candidate → its live blocks, address → rounded size
	candAt := map[int]*segLife{}
	for _, l := range cands {
		candAt[l.start] = l
	}
	var live []*segLife // the candidates alive, by address
	at := func(a uint64) int {
		return sort.Search(len(live), func(k int) bool { return live[k].addr > a }) - 1
	}
	in := func(a uint64) *segLife {
		if k := at(a); k >= 0 && live[k].contains(a) {
			return live[k]
		}
		return nil
	}
	round := func(n int64) int64 { return (n + 511) &^ 511 }
	for i, e := range trace {
		if l := candAt[i]; l != nil {
			live = slices.Insert(live, at(l.addr)+1, l)
		}
		switch e.Action {
		case snapshot.ActionSegmentFree, snapshot.ActionSegmentUnmap:
			if k := at(e.Addr); k >= 0 && live[k].addr == e.Addr && live[k].end == i {
				live = slices.Delete(live, k, k+1)
			}
		case snapshot.ActionAlloc:
			if l := in(e.Addr); l != nil {
				if blocks[l] == nil {
					blocks[l] = map[uint64]int64{}
				}
				blocks[l][e.Addr] = round(e.Size)
			}
		case snapshot.ActionFreeCompleted:
			if l := in(e.Addr); l != nil {
				delete(blocks[l], e.Addr)
			}
		case snapshot.ActionSegmentAlloc:
			y := startAt[i]
			if y == nil || y.how != "dump" || y.pool <= 0 {
				break
			}
			var r int64 = -1 // the request the new segment was made for
			for k := i + 1; k < len(trace); k++ {
				if trace[k].Action == snapshot.ActionAlloc {
					r = round(trace[k].Size)
					break
				}
			}
			if r < 0 {
				break
			}
			for _, l := range live {
				if l.pool != y.pool || l.stream != y.stream || (r <= 1<<20) != (l.size == 2<<20) {
					continue
				}
				if largestGap(l.span, blocks[l]) >= r {
					l.pool, l.how = 0, ""
				}
			}
		}
	}
}

// largestGap is the largest free range of segment sp with the given blocks.
func largestGap(sp span, blocks map[uint64]int64) int64 {
	addrs := make([]uint64, 0, len(blocks))
	for a := range blocks {
		addrs = append(addrs, a)
	}
	slices.Sort(addrs)
	at, gap := sp.addr, int64(0)
	for _, a := range addrs {
		gap = max(gap, int64(a-at))
		at = max(at, a+uint64(blocks[a]))
	}
	return max(gap, int64(sp.end()-at))
}
