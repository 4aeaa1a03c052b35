package allocator

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// segPools maps each segment's address to its pool id.
func segPools(a *Allocator) map[uint64]PoolID {
	out := map[uint64]PoolID{}
	for _, s := range a.Snapshot().Segments {
		out[s.Address] = s.PoolID
	}
	return out
}

// poolOf returns the pool id of the segment holding addr.
func poolOf(t *testing.T, a *Allocator, addr uint64) PoolID {
	t.Helper()
	for _, s := range a.Snapshot().Segments {
		if addr >= s.Address && addr < s.Address+uint64(s.TotalSize) {
			return s.PoolID
		}
	}
	t.Fatalf("no segment holds %#x", addr)
	return PoolID{}
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestPoolRoutingByFilter(t *testing.T) {
	a, mem := newTestAllocator(t, "", 8<<30)
	g := a.NewPoolID(false)
	if g != (PoolID{1, 0}) {
		t.Fatalf("first graph pool id %v, want (1, 0)", g)
	}
	u := a.NewPoolID(true)
	if u != (PoolID{0, 1}) {
		t.Fatalf("first user pool id %v, want (0, 1)", u)
	}
	const capStream = 7
	mustOK(t, a.BeginAllocateToPool(g, func(s uint64) bool { return s == capStream }))
	if n, _ := a.PoolUseCount(g); n != 1 {
		t.Fatalf("use count after Begin = %d, want 1 (created)", n)
	}
	inGraph, err := a.MallocStream(4*miB, capStream)
	mustOK(t, err)
	smallInGraph, err := a.MallocStream(1000, capStream)
	mustOK(t, err)
	other, err := a.MallocStream(4*miB, 0) // another stream: default pool
	mustOK(t, err)
	mustOK(t, a.EndAllocateToPool(g))
	after, err := a.MallocStream(4*miB, capStream) // capture over: default pool
	mustOK(t, err)

	for _, c := range []struct {
		addr uint64
		want PoolID
	}{{inGraph, g}, {smallInGraph, g}, {other, PoolID{}}, {after, PoolID{}}} {
		if got := poolOf(t, a, c.addr); got != c.want {
			t.Errorf("block %#x in pool %v, want %v", c.addr, got, c.want)
		}
	}
	// The private pool's small request got a small segment of its own.
	var privSmall, privLarge int
	for _, s := range a.Snapshot().Segments {
		if s.PoolID == g {
			if s.Pool == "small" {
				privSmall++
			} else {
				privLarge++
			}
		}
	}
	if privSmall != 1 || privLarge != 1 {
		t.Errorf("private pool holds %d small and %d large segments, want 1 and 1", privSmall, privLarge)
	}
	// Most recently begun pool wins when two filters match.
	mustOK(t, a.BeginAllocateToPool(u, nil))
	mustOK(t, a.BeginAllocateToPool(g, nil))
	x, err := a.MallocStream(3*miB, 0)
	mustOK(t, err)
	if got := poolOf(t, a, x); got != g {
		t.Errorf("with two pools begun, request went to %v, want the last begun %v", got, g)
	}
	mustOK(t, a.EndAllocateToPool(g))
	y, err := a.MallocStream(3*miB, 0)
	mustOK(t, err)
	if got := poolOf(t, a, y); got != u {
		t.Errorf("after ending %v, request went to %v, want %v", g, got, u)
	}
	mustOK(t, a.EndAllocateToPool(u))
	if n, _ := a.PoolUseCount(g); n != 2 {
		t.Errorf("use count of %v after a second Begin = %d, want 2", g, n)
	}
	if err := checkInvariants(a, mem); err != nil {
		t.Fatal(err)
	}
}

func TestPoolBlocksNeverServeTheDefaultPool(t *testing.T) {
	a, mem := newTestAllocator(t, "", 8<<30)
	id := a.NewPoolID(true)
	mustOK(t, a.CreateOrIncrefPool(id))
	p, err := a.MallocInPool(30*miB, 0, id)
	mustOK(t, err)
	mustFree(t, a, p) // a cached 30 MiB block in the private pool
	segs := len(a.Snapshot().Segments)
	d := mustMalloc(t, a, 30*miB) // same size, same stream, default pool
	if got := poolOf(t, a, d); !got.IsDefault() {
		t.Fatalf("default request served from pool %v", got)
	}
	if n := len(a.Snapshot().Segments); n != segs+1 {
		t.Fatalf("default request made %d new segments, want 1 (no reuse of the private block)", n-segs)
	}
	mustFree(t, a, d)
	// And the reverse: a cached default block does not serve the pool.
	q, err := a.MallocInPool(30*miB, 0, id)
	mustOK(t, err)
	if q != p {
		t.Fatalf("pool request got %#x, want its own cached block %#x", q, p)
	}
	mustFree(t, a, q)
	// A freed block returns to its owning pool even when freed outside any routing.
	mustOK(t, a.BeginAllocateToPool(id, nil))
	r := mustMalloc(t, a, 2*miB)
	mustOK(t, a.EndAllocateToPool(id))
	mustFree(t, a, r)
	if got := poolOf(t, a, r); got != id {
		t.Fatalf("freed block's segment in pool %v, want %v", got, id)
	}
	if err := checkInvariants(a, mem); err != nil {
		t.Fatal(err)
	}
}

func TestPoolReleasedOnlyWhenFreeable(t *testing.T) {
	a, mem := newTestAllocator(t, "", 8<<30)
	id := a.NewPoolID(false)
	mustOK(t, a.BeginAllocateToPool(id, nil)) // use count 1
	mustOK(t, a.CreateOrIncrefPool(id))       // a second graph shares it: 2
	kept := mustMalloc(t, a, 40*miB)
	gone := mustMalloc(t, a, 40*miB)
	mustOK(t, a.EndAllocateToPool(id))
	mustFree(t, a, gone)
	reserved := a.MemoryReserved()

	// In use: EmptyCache keeps the pool's free segment.
	mustOK(t, a.EmptyCache())
	if got := a.MemoryReserved(); got != reserved {
		t.Fatalf("EmptyCache with the pool in use: reserved %d, want %d", got, reserved)
	}
	mustOK(t, a.ReleasePool(id)) // 1 left
	mustOK(t, a.EmptyCache())
	if got := a.MemoryReserved(); got != reserved {
		t.Fatalf("EmptyCache with one use left: reserved %d, want %d", got, reserved)
	}
	mustOK(t, a.ReleasePool(id)) // 0: freeable
	if err := a.ReleasePool(id); err == nil {
		t.Fatal("ReleasePool below 0 succeeded")
	}
	if err := a.CreateOrIncrefPool(id); err == nil {
		t.Fatal("sharing a released pool succeeded")
	}
	// Freeable: the free segment goes, the one with a live block stays, and so
	// does the pool.
	mustOK(t, a.EmptyCache())
	if got := a.MemoryReserved(); got != 40*miB {
		t.Fatalf("EmptyCache of a freeable pool: reserved %d, want %d (the live block's segment)", got, 40*miB)
	}
	if pools := a.Pools(); len(pools) != 1 {
		t.Fatalf("pools %v, want the freeable one still listed", pools)
	}
	mustFree(t, a, kept)
	mustOK(t, a.EmptyCache())
	if got := a.MemoryReserved(); got != 0 {
		t.Fatalf("reserved %d after the last block went, want 0", got)
	}
	if pools := a.Pools(); len(pools) != 0 {
		t.Fatalf("pools %v after all memory went back, want none", pools)
	}
	if _, err := a.PoolUseCount(id); !errors.Is(err, ErrUnknownPool) {
		t.Fatalf("PoolUseCount of a forgotten pool: %v, want ErrUnknownPool", err)
	}
	if err := checkInvariants(a, mem); err != nil {
		t.Fatal(err)
	}
}

func TestEmptyCachePoolOnlyTouchesThatPool(t *testing.T) {
	a, mem := newTestAllocator(t, "", 8<<30)
	p1, p2 := a.NewPoolID(true), a.NewPoolID(true)
	mustOK(t, a.CreateOrIncrefPool(p1))
	mustOK(t, a.CreateOrIncrefPool(p2))
	for _, id := range []PoolID{p1, p2} {
		x, err := a.MallocInPool(20*miB, 0, id)
		mustOK(t, err)
		mustFree(t, a, x)
	}
	mustFree(t, a, mustMalloc(t, a, 20*miB)) // default pool, cached
	mustOK(t, a.ReleasePool(p1))
	mustOK(t, a.ReleasePool(p2))
	mustOK(t, a.EmptyCachePool(p1)) // MemPool p1's destructor
	sp := segPools(a)
	var n1, n2, nd int
	for _, id := range sp {
		switch id {
		case p1:
			n1++
		case p2:
			n2++
		default:
			nd++
		}
	}
	if n1 != 0 || n2 != 1 || nd != 1 {
		t.Fatalf("after EmptyCachePool(%v): %d/%d/%d segments in p1/p2/default, want 0/1/1", p1, n1, n2, nd)
	}
	if err := a.EmptyCachePool(p1); !errors.Is(err, ErrUnknownPool) {
		t.Fatalf("EmptyCachePool of a forgotten pool: %v", err)
	}
	if err := checkInvariants(a, mem); err != nil {
		t.Fatal(err)
	}
}

func TestEmptyCacheDuringCaptureKeepsDefaultPool(t *testing.T) {
	a, _ := newTestAllocator(t, "", 8<<30)
	mustFree(t, a, mustMalloc(t, a, 20*miB))
	old := a.NewPoolID(false)
	mustOK(t, a.CreateOrIncrefPool(old))
	x, err := a.MallocInPool(20*miB, 0, old)
	mustOK(t, err)
	mustFree(t, a, x)
	mustOK(t, a.ReleasePool(old)) // freeable
	g := a.NewPoolID(false)
	mustOK(t, a.BeginAllocateToPool(g, func(s uint64) bool { return s == 5 }))
	mustOK(t, a.EmptyCache())
	// PyTorch: the default pool is released only when no capture is under way;
	// freeable private pools are released regardless.
	if got := a.MemoryReserved(); got != 20*miB {
		t.Fatalf("EmptyCache during a capture: reserved %d, want the default pool's 20 MiB", got)
	}
	if a.MemoryStats()["num_sync_all_streams"] != 0 {
		t.Fatal("EmptyCache during a capture synchronised")
	}
	mustOK(t, a.EndAllocateToPool(g))
	mustOK(t, a.EmptyCache())
	if got := a.MemoryReserved(); got != 0 {
		t.Fatalf("EmptyCache after the capture: reserved %d, want 0", got)
	}
}

func TestOOMWhileCapturing(t *testing.T) {
	// 100 MiB device. 60 MiB cached in the default pool; a capture asks for 60 MiB:
	// PyTorch does not free every cached segment while a capture is under way, so
	// the request fails, where without the capture it succeeds.
	for _, capturing := range []bool{true, false} {
		a, mem := newTestAllocator(t, "", 100<<20)
		mustFree(t, a, mustMalloc(t, a, 60*miB))
		id := a.NewPoolID(false)
		if capturing {
			mustOK(t, a.BeginAllocateToPool(id, nil))
		}
		_, err := a.MallocStream(60*miB, 0)
		var oom *OutOfMemoryError
		if capturing {
			if !errors.As(err, &oom) {
				t.Fatalf("capturing: Malloc(60 MiB) = %v, want out of memory", err)
			}
			if got := a.MemoryReserved(); got != 60*miB {
				t.Fatalf("capturing: the failed request freed the default pool's cache (reserved %d)", got)
			}
			if a.MemoryStats()["num_alloc_retries"] != 0 {
				t.Fatal("capturing: the release-everything retry ran")
			}
		} else if err != nil {
			t.Fatalf("not capturing: Malloc(60 MiB) = %v, want it to succeed after freeing the cache", err)
		}
		if err := checkInvariants(a, mem); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOOMMessageCountsPrivatePools(t *testing.T) {
	a, _ := newTestAllocator(t, "", 100<<20)
	id := a.NewPoolID(true)
	mustOK(t, a.CreateOrIncrefPool(id))
	x, err := a.MallocInPool(40*miB, 0, id)
	mustOK(t, err)
	mustFree(t, a, x) // 40 MiB free in the private pool
	live := mustMalloc(t, a, 20*miB)
	_, err = a.Malloc(60 * miB)
	var oom *OutOfMemoryError
	if !errors.As(err, &oom) {
		t.Fatalf("Malloc(60 MiB) = %v, want out of memory", err)
	}
	if oom.InPrivatePools != 40*miB {
		t.Fatalf("InPrivatePools = %d, want %d", oom.InPrivatePools, 40*miB)
	}
	msg := oom.Error()
	want := "Of the allocated memory 60.00 MiB is allocated by PyTorch, with 40.00 MiB allocated in private pools (e.g., CUDA Graphs), and 0 bytes is reserved by PyTorch but unallocated."
	if !strings.Contains(msg, want) {
		t.Fatalf("OOM message\n%s\nlacks\n%s", msg, want)
	}
	mustFree(t, a, live)
}

func TestPoolStatsSummaryAndSnapshot(t *testing.T) {
	a, _ := newTestAllocator(t, "", 8<<30)
	id := a.NewPoolID(true)
	mustOK(t, a.CreateOrIncrefPool(id))
	mustMalloc(t, a, 30*miB)
	_, err := a.MallocInPool(30*miB, 0, id)
	mustOK(t, err)
	_, err = a.MallocInPool(1000, 0, id)
	mustOK(t, err)
	st := a.MemoryStats()
	if st["segment.all.current"] != 3 || st["segment.large_pool.current"] != 2 || st["segment.small_pool.current"] != 1 {
		t.Fatalf("segments all/large/small = %d/%d/%d, want 3/2/1 (private pools count in the aggregate)",
			st["segment.all.current"], st["segment.large_pool.current"], st["segment.small_pool.current"])
	}
	if st["reserved_bytes.all.current"] != 62*miB {
		t.Fatalf("reserved %d, want 62 MiB", st["reserved_bytes.all.current"])
	}
	sum := a.MemorySummary(false)
	if !strings.Contains(sum, "| GPU reserved segments |       3    |") {
		t.Fatalf("summary does not count the private pool's segments:\n%s", sum)
	}
	var buf bytes.Buffer
	mustOK(t, a.Snapshot().WriteMemoryVizJSON(&buf))
	var out struct {
		Segments []struct {
			SegmentPoolID [2]uint64 `json:"segment_pool_id"`
			SegmentType   string    `json:"segment_type"`
		} `json:"segments"`
	}
	mustOK(t, json.Unmarshal(buf.Bytes(), &out))
	var ids []string
	for _, s := range out.Segments {
		ids = append(ids, PoolID{s.SegmentPoolID[0], s.SegmentPoolID[1]}.String()+s.SegmentType)
	}
	got := strings.Join(ids, " ")
	for _, want := range []string{"(0, 0)large", "(0, 1)large", "(0, 1)small"} {
		if !strings.Contains(got, want) {
			t.Fatalf("segment_pool_id list %q lacks %q", got, want)
		}
	}
}

func TestPoolCallErrors(t *testing.T) {
	a, _ := newTestAllocator(t, "", 8<<30)
	id := a.NewPoolID(true)
	if err := a.CreateOrIncrefPool(PoolID{}); err == nil {
		t.Error("creating the default pool's id succeeded")
	}
	if _, err := a.MallocInPool(10, 0, id); !errors.Is(err, ErrUnknownPool) {
		t.Errorf("MallocInPool into an unknown pool: %v", err)
	}
	if err := a.ReleasePool(id); !errors.Is(err, ErrUnknownPool) {
		t.Errorf("ReleasePool of an unknown pool: %v", err)
	}
	if err := a.EndAllocateToPool(id); err == nil {
		t.Error("EndAllocateToPool without Begin succeeded")
	}
	mustOK(t, a.BeginAllocateToPool(id, nil))
	if err := a.BeginAllocateToPool(id, nil); err == nil {
		t.Error("a second Begin of the same pool succeeded")
	}
	if n, _ := a.PoolUseCount(id); n != 1 {
		t.Errorf("failed Begin changed the use count to %d", n)
	}
	mustOK(t, a.EndAllocateToPool(id))
	mustOK(t, a.ReleasePool(id))
	if _, err := a.MallocInPool(10, 0, id); err == nil {
		t.Error("MallocInPool into a released pool succeeded")
	}
	if _, err := a.MallocInPool(-1, 0, id); !errors.Is(err, ErrInvalidSize) {
		t.Errorf("MallocInPool(-1): %v", err)
	}
	// A pool created under an id of the caller's (a replay's) is not handed out again.
	mustOK(t, a.CreateOrIncrefPool(PoolID{0, 2}))
	if next := a.NewPoolID(true); next != (PoolID{0, 3}) {
		t.Errorf("NewPoolID after (0, 2) was taken: %v, want (0, 3)", next)
	}
}

func TestExpandableSegmentsInPrivatePools(t *testing.T) {
	// 2.11 keeps expandable segments on for private pools (only a MemPool with its
	// own allocator is excluded): the pool gets an expandable segment of its own.
	a, mem := newTestAllocator(t, "expandable_segments:True", 8<<30)
	id := a.NewPoolID(false)
	mustOK(t, a.BeginAllocateToPool(id, nil))
	x := mustMalloc(t, a, 30*miB)
	mustOK(t, a.EndAllocateToPool(id))
	y := mustMalloc(t, a, 30*miB)
	var exp int
	for _, s := range a.Snapshot().Segments {
		if s.Expandable {
			exp++
		}
	}
	if exp != 2 || poolOf(t, a, x) != id || !poolOf(t, a, y).IsDefault() {
		t.Fatalf("%d expandable segments, x in %v, y in %v; want 2, %v, (0, 0)", exp, poolOf(t, a, x), poolOf(t, a, y), id)
	}
	mustFree(t, a, x)
	mustFree(t, a, y)
	mustOK(t, a.ReleasePool(id))
	mustOK(t, a.EmptyCache())
	if r := a.MemoryReserved(); r != 0 {
		t.Fatalf("reserved %d after releasing everything", r)
	}
	if err := checkInvariants(a, mem); err != nil {
		t.Fatal(err)
	}
	if len(a.Pools()) != 0 {
		t.Fatalf("pools %v left after the pool's pages were unmapped", a.Pools())
	}
}

func TestPoolWhoseFirstMappingFailedIsForgotten(t *testing.T) {
	// A private pool's first request under expandable segments reserves an address
	// range and runs out mapping it: the pool holds the range but no memory. Released
	// and emptied, it is forgotten (PyTorch erases a pool whose cudaMalloc_count, the
	// mappings that succeeded, is 0), and the range stays reserved, as PyTorch keeps it.
	a, mem := newTestAllocator(t, "expandable_segments:True", 1<<30)
	id := a.NewPoolID(true)
	mustOK(t, a.BeginAllocateToPool(id, nil))
	var oom *OutOfMemoryError
	if _, err := a.Malloc(2 << 30); !errors.As(err, &oom) {
		t.Fatalf("Malloc(2 GiB) on a 1 GiB device: %v, want an OutOfMemoryError", err)
	}
	mustOK(t, a.EndAllocateToPool(id))
	mustOK(t, a.ReleasePool(id))
	if got := a.Pools(); len(got) != 1 {
		t.Fatalf("pools %v before EmptyCache, want the released one still listed", got)
	}
	mustOK(t, a.EmptyCache())
	if got := a.Pools(); len(got) != 0 {
		t.Fatalf("pools %v after EmptyCache: a released pool holding no memory is forgotten", got)
	}
	if mem.used != 0 || len(mem.vas) != 1 {
		t.Fatalf("device holds %d bytes and %d reserved ranges, want 0 and the pool's range", mem.used, len(mem.vas))
	}
	if err := checkInvariants(a, mem); err != nil {
		t.Fatal(err)
	}
	x := mustMalloc(t, a, 30*miB) // the allocator works on after it
	mustFree(t, a, x)
}

func TestHistoryCarriesPoolIDs(t *testing.T) {
	a, _ := newTestAllocator(t, "", 8<<30)
	a.RecordHistory(HistoryOptions{Enabled: true})
	id := a.NewPoolID(true)
	mustOK(t, a.CreateOrIncrefPool(id))
	x, err := a.MallocInPool(5*miB, 3, id)
	mustOK(t, err)
	mustFree(t, a, x)
	for _, e := range a.Snapshot().Trace {
		if e.Pool != id {
			t.Fatalf("%s event carries pool %v, want %v", e.Action, e.Pool, id)
		}
	}
}

// TestConcurrentPools runs graph captures, MemPool allocations and default-pool
// traffic from several goroutines at once (run with -race), then releases every pool
// and checks that EmptyCache gives everything back.
func TestConcurrentPools(t *testing.T) {
	for _, conf := range []string{"", "expandable_segments:True"} {
		t.Run(conf, func(t *testing.T) {
			a, mem := newTestAllocator(t, conf, 16<<30)
			var ids []PoolID
			for i := 0; i < 4; i++ {
				id := a.NewPoolID(i%2 == 0)
				mustOK(t, a.CreateOrIncrefPool(id))
				ids = append(ids, id)
			}
			errs := make(chan error, 16)
			done := make(chan struct{})
			for g := 0; g < 4; g++ {
				go func(g int) {
					defer func() { done <- struct{}{} }()
					id, stream := ids[g], uint64(g+1)
					var live []uint64
					for i := 0; i < 300; i++ {
						var addr uint64
						var err error
						switch i % 3 {
						case 0: // use_mem_pool on this goroutine's stream: begin, end, release
							if err = a.BeginAllocateToPool(id, func(s uint64) bool { return s == stream }); err == nil {
								addr, err = a.MallocStream(int64(1+i%7)*miB/3, stream)
								if e := a.EndAllocateToPool(id); err == nil {
									err = e
								}
								if e := a.ReleasePool(id); err == nil {
									err = e
								}
							}
						case 1:
							addr, err = a.MallocInPool(int64(i%5+1)*miB, stream, id)
						default:
							addr, err = a.MallocStream(int64(i%9+1)*miB, stream)
						}
						if err != nil {
							errs <- err
							return
						}
						live = append(live, addr)
						if len(live) > 8 {
							if err := a.Free(live[0]); err != nil {
								errs <- err
								return
							}
							live = live[1:]
						}
						if i%50 == 0 {
							_ = a.Snapshot()
							if err := a.EmptyCache(); err != nil {
								errs <- err
								return
							}
						}
					}
					for _, addr := range live {
						if err := a.Free(addr); err != nil {
							errs <- err
							return
						}
					}
				}(g)
			}
			for g := 0; g < 4; g++ {
				<-done
			}
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if err := checkInvariants(a, mem); err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				mustOK(t, a.ReleasePool(id))
			}
			mustOK(t, a.EmptyCache())
			if r := a.MemoryReserved(); r != 0 || len(a.Pools()) != 0 {
				t.Fatalf("reserved %d, pools %v after releasing every pool", r, a.Pools())
			}
		})
	}
}

// TestOOMPathReleasesOnlyFreeablePools: the out-of-memory path's full release gives
// back a released pool's free segment, never one of a pool still in use.
func TestOOMPathReleasesOnlyFreeablePools(t *testing.T) {
	for _, released := range []bool{false, true} {
		a, mem := newTestAllocator(t, "", 100<<20)
		id := a.NewPoolID(true)
		mustOK(t, a.CreateOrIncrefPool(id))
		x, err := a.MallocInPool(60*miB, 0, id)
		mustOK(t, err)
		mustFree(t, a, x) // 60 MiB cached in the pool
		if released {
			mustOK(t, a.ReleasePool(id))
		}
		_, err = a.Malloc(60 * miB) // the default pool needs the room
		var oom *OutOfMemoryError
		switch {
		case released && err != nil:
			t.Fatalf("pool released: Malloc(60 MiB) = %v, want the pool's segment freed for it", err)
		case !released && !errors.As(err, &oom):
			t.Fatalf("pool in use: Malloc(60 MiB) = %v, want out of memory", err)
		case !released && oom.InPrivatePools != 60*miB:
			t.Fatalf("pool in use: InPrivatePools %d, want 60 MiB", oom.InPrivatePools)
		}
		if err := checkInvariants(a, mem); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMallocInPoolDuringACapture: a replay's one-request routing wins over a capture
// in force, and leaves the capture (and the use counts) as they were.
func TestMallocInPoolDuringACapture(t *testing.T) {
	a, _ := newTestAllocator(t, "", 8<<30)
	g, u := a.NewPoolID(false), a.NewPoolID(true)
	mustOK(t, a.BeginAllocateToPool(g, nil))
	mustOK(t, a.CreateOrIncrefPool(u))
	x, err := a.MallocInPool(3*miB, 0, u)
	mustOK(t, err)
	y := mustMalloc(t, a, 3*miB)
	if poolOf(t, a, x) != u || poolOf(t, a, y) != g {
		t.Fatalf("x in %v, y in %v; want %v and %v", poolOf(t, a, x), poolOf(t, a, y), u, g)
	}
	if n, _ := a.PoolUseCount(u); n != 1 {
		t.Fatalf("MallocInPool changed the use count to %d", n)
	}
	if !a.AllocatingToPools() {
		t.Fatal("MallocInPool ended the capture in force")
	}
	mustOK(t, a.EndAllocateToPool(g))
	if a.AllocatingToPools() {
		t.Fatal("still allocating to a pool after the only End")
	}
}
