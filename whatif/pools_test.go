package whatif

import (
	"strings"
	"testing"

	"memlab.dev/memlab/snapshot"
)

const (
	segA = 0x7f0000000000
	segB = 0x7f0000200000
	segC = 0x7f0000400000
	segD = 0x7f0000600000
	twoM = 2 << 20
)

func segAlloc(addr uint64, size int64, stream uint64) snapshot.TraceEntry {
	return snapshot.TraceEntry{Action: snapshot.ActionSegmentAlloc, Addr: addr, Size: size, Stream: stream}
}

func segFree(addr uint64, size int64, stream uint64, frames []snapshot.Frame) snapshot.TraceEntry {
	return snapshot.TraceEntry{Action: snapshot.ActionSegmentFree, Addr: addr, Size: size, Stream: stream, Frames: frames}
}

func on(e snapshot.TraceEntry, stream uint64) snapshot.TraceEntry { e.Stream = stream; return e }

// dumpSeg is a small segment held at the dump with one live block of size at addr.
func dumpSeg(addr uint64, stream uint64, pool [2]uint64, size int64) snapshot.Segment {
	return snapshot.Segment{Address: addr, TotalSize: twoM, Stream: stream, SegmentType: snapshot.SegmentSmall, PoolID: pool,
		Blocks: []snapshot.Block{{Address: addr, Size: (size + 511) &^ 511, RequestedSize: size, State: snapshot.StateActiveAllocated},
			{Address: addr + uint64((size+511)&^511), Size: twoM - (size+511)&^511, State: snapshot.StateInactive}}}
}

var (
	emptyCacheFrames = []snapshot.Frame{{Filename: "/x/torch/cuda/memory.py", Line: 224, Name: "empty_cache"}, {Filename: "main.py", Line: 9, Name: "main"}}
	delPoolFrames    = []snapshot.Frame{{Filename: "main.py", Line: 7, Name: "main"}}
)

func replayOwn(t *testing.T, s *snapshot.Snapshot) *Result {
	t.Helper()
	res, err := Replay(s, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestPoolFromDumpSegments: an allocation in a segment the dump names as a private
// pool's goes to that pool, so a default-pool request does not share its segment,
// and the output says the pool was inferred.
func TestPoolFromDumpSegments(t *testing.T) {
	s := trace(segAlloc(segA, twoM, 0), alloc(segA, 512), segAlloc(segB, twoM, 0), alloc(segB, 1024))
	s.Segments = []snapshot.Segment{dumpSeg(segA, 0, [2]uint64{}, 512), dumpSeg(segB, 0, [2]uint64{0, 1}, 1024)}
	res := replayOwn(t, s)
	if got := res.Runs[0].DeviceAllocs; got != 2 {
		t.Errorf("%d cudaMallocs, want 2 (the pool's request in a segment of its own)", got)
	}
	if len(res.Pools) != 1 || !strings.Contains(res.Pools[0], "pool (0, 1) inferred") || !strings.Contains(res.Pools[0], "1 allocation, in 1 segment held at the dump with this segment_pool_id") {
		t.Errorf("pool notes %q", res.Pools)
	}
	if len(res.About.Pools) != 1 || res.About.Pools[0] != [2]uint64{0, 1} {
		t.Errorf("header pools %v, want [(0, 1)]", res.About.Pools)
	}
	// the same segments, all in the default pool: one segment serves both
	s.Segments[1].PoolID = [2]uint64{}
	if got := replayOwn(t, s).Runs[0].DeviceAllocs; got != 1 {
		t.Errorf("without a pool: %d cudaMallocs, want 1", got)
	}
}

// TestPoolFromMemPoolDestruction: segments given back by a segment_free that neither
// empty_cache nor a malloc made are a destroyed MemPool's: its allocations go to a
// pool of their own, which is released and emptied there.
func TestPoolFromMemPoolDestruction(t *testing.T) {
	s := trace(segAlloc(segA, twoM, 0), alloc(segA, 512),
		segAlloc(segB, twoM, 0), alloc(segB, 1024), freeReq(segB, 1024), freeDone(segB, 1024),
		segFree(segB, twoM, 0, delPoolFrames),
		alloc(segA+512, 1024))
	s.Traces[0][len(s.Traces[0])-1].Frames = []snapshot.Frame{{Filename: "main.py", Line: 8, Name: "main"}}
	s.Segments = []snapshot.Segment{dumpSeg(segA, 0, [2]uint64{}, 512)}
	res := replayOwn(t, s)
	r := res.Runs[0]
	if r.DeviceAllocs != 2 || r.DeviceFrees != 1 {
		t.Errorf("cudaMalloc %d, cudaFree %d; want 2 and 1", r.DeviceAllocs, r.DeviceFrees)
	}
	if len(res.Pools) != 1 || !strings.Contains(res.Pools[0], "given back by a torch.cuda.MemPool's destruction") {
		t.Errorf("pool notes %q", res.Pools)
	}
}

// TestPoolFromCaptureStream: a segment freed before the dump, on a stream whose held
// segments are all one pool's, is that pool's (and empty_cache giving it back means
// the pool was released); unless the recorded run made a new segment of the pool for
// a request the freed segment had room for: then it was the default pool's (a
// capture's first requests, before it routes to the pool).
func TestPoolFromCaptureStream(t *testing.T) {
	const st = 7
	// C holds 1 MiB + 600 KiB of the pool: no room for D's 1 MiB.
	s := trace(segAlloc(segC, twoM, st), on(alloc(segC, 1<<20), st), on(alloc(segC+1<<20, 600<<10), st),
		segAlloc(segD, twoM, st), on(alloc(segD, 1<<20), st),
		on(freeReq(segC, 1<<20), st), on(freeDone(segC, 1<<20), st), on(freeReq(segC+1<<20, 600<<10), st), on(freeDone(segC+1<<20, 600<<10), st),
		segFree(segC, twoM, st, emptyCacheFrames))
	s.Segments = []snapshot.Segment{dumpSeg(segD, st, [2]uint64{1, 0}, 1<<20)}
	res := replayOwn(t, s)
	if r := res.Runs[0]; r.DeviceAllocs != 2 || r.DeviceFrees != 1 {
		t.Errorf("cudaMalloc %d, cudaFree %d; want 2 and 1 (the released pool's free segment given back)", r.DeviceAllocs, r.DeviceFrees)
	}
	if len(res.Pools) != 1 || !strings.Contains(res.Pools[0], "3 allocations, in 1 segment held at the dump with this segment_pool_id and 1 segment freed earlier on the same (capture) stream") {
		t.Errorf("pool notes %q", res.Pools)
	}
	// C holds 8 bytes (RNG state) when D is made for 1 MiB: C had room, so C was not
	// the pool's.
	s = trace(segAlloc(segC, twoM, st), on(alloc(segC, 8), st),
		segAlloc(segD, twoM, st), on(alloc(segD, 1<<20), st),
		on(freeReq(segC, 8), st), on(freeDone(segC, 8), st),
		segFree(segC, twoM, st, emptyCacheFrames))
	s.Segments = []snapshot.Segment{dumpSeg(segD, st, [2]uint64{1, 0}, 1<<20)}
	res = replayOwn(t, s)
	if r := res.Runs[0]; r.DeviceAllocs != 2 || r.DeviceFrees != 1 {
		t.Errorf("RNG state: cudaMalloc %d, cudaFree %d; want 2 and 1", r.DeviceAllocs, r.DeviceFrees)
	}
	if len(res.Pools) != 1 || !strings.Contains(res.Pools[0], "1 allocation, in 1 segment held at the dump") {
		t.Errorf("RNG state: pool notes %q", res.Pools)
	}
}

// TestPoolFromEntries: trace entries that name their pool (PyTorch after 2.11) are
// routed by it, and the output says it was read, not inferred.
func TestPoolFromEntries(t *testing.T) {
	b := alloc(segB, 1024)
	b.Meta = &snapshot.EntryMeta{PoolID: &[2]uint64{0, 4}}
	s := trace(segAlloc(segA, twoM, 0), alloc(segA, 512), segAlloc(segB, twoM, 0), b)
	s.Traces[0][1].Meta = &snapshot.EntryMeta{PoolID: &[2]uint64{}}
	s.Segments = []snapshot.Segment{dumpSeg(segA, 0, [2]uint64{}, 512), dumpSeg(segB, 0, [2]uint64{}, 1024)}
	res := replayOwn(t, s)
	if got := res.Runs[0].DeviceAllocs; got != 2 {
		t.Errorf("%d cudaMallocs, want 2", got)
	}
	if len(res.Pools) != 1 || !strings.Contains(res.Pools[0], "read from its trace entry (pool_id)") {
		t.Errorf("pool notes %q", res.Pools)
	}
}

// TestPoolDestructionBeforeTrace: a MemPool's destruction that gives back a segment
// made before the trace (no pool is known for it) replays without an error and
// without emptying the default pool in its stead.
func TestPoolDestructionBeforeTrace(t *testing.T) {
	s := trace(segAlloc(segA, twoM, 0), alloc(segA, 512), freeReq(segA, 512), freeDone(segA, 512),
		freeReq(segB, 1024), freeDone(segB, 1024), segFree(segB, twoM, 0, delPoolFrames))
	s.Segments = []snapshot.Segment{dumpSeg(segA, 0, [2]uint64{}, 512)}
	s.Segments[0].Blocks = []snapshot.Block{{Address: segA, Size: twoM, State: snapshot.StateInactive}}
	res := replayOwn(t, s)
	if got := res.Runs[0].DeviceFrees; got != 0 {
		t.Errorf("%d cudaFrees: the default pool's free segment was given back", got)
	}
}
