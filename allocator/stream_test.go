package allocator

import (
	"errors"
	"sync"
	"testing"
)

// TestStreamsKeepTheirOwnBlocks: a block freed on one stream is reused only by
// requests on that stream; another stream gets a segment of its own.
func TestStreamsKeepTheirOwnBlocks(t *testing.T) {
	for _, conf := range []string{"", "expandable_segments:True"} {
		a, mem := newTestAllocator(t, conf, uint64(4*giB))
		const s1, s2 = 0x1000, 0x2000
		p, err := a.MallocStream(8*miB, s1)
		if err != nil {
			t.Fatal(err)
		}
		mustFree(t, a, p)
		q, err := a.MallocStream(8*miB, s2)
		if err != nil {
			t.Fatal(err)
		}
		if q == p {
			t.Errorf("%q: stream %#x got the block stream %#x freed", conf, s2, s1)
		}
		r, err := a.MallocStream(8*miB, s1)
		if err != nil {
			t.Fatal(err)
		}
		if r != p {
			t.Errorf("%q: stream %#x did not get its own cached block back (%#x, want %#x)", conf, s1, r, p)
		}
		snap := a.Snapshot()
		streams := map[uint64]bool{}
		for _, seg := range snap.Segments {
			streams[seg.Stream] = true
		}
		if !streams[s1] || !streams[s2] || streams[0] {
			t.Errorf("%q: segments on streams %v, want %#x and %#x", conf, streams, s1, s2)
		}
		if err := checkInvariants(a, mem); err != nil {
			t.Fatalf("%q: %v", conf, err)
		}
	}
}

// TestRecordStreamDefersTheFree: after RecordStream, Free lowers allocated at once but
// the block stays active (pending) and is not reused until CompleteFree; EmptyCache
// completes every pending free first.
func TestRecordStreamDefersTheFree(t *testing.T) {
	a, mem := newTestAllocator(t, "", uint64(4*giB))
	p := mustMalloc(t, a, 4*miB)
	if err := a.RecordStream(p, 0); err != nil { // its own stream: ignored
		t.Fatal(err)
	}
	if err := a.RecordStream(p, 0x77); err != nil {
		t.Fatal(err)
	}
	mustFree(t, a, p)
	st := a.MemoryStats()
	if st["allocated_bytes.all.current"] != 0 || st["active_bytes.all.current"] != 4*miB || st["requested_bytes.all.current"] != 4*miB {
		t.Errorf("after a deferred free: allocated %d active %d requested %d, want 0, 4 MiB, 4 MiB",
			st["allocated_bytes.all.current"], st["active_bytes.all.current"], st["requested_bytes.all.current"])
	}
	if got := a.PendingFrees(); len(got) != 1 || got[0] != p {
		t.Errorf("PendingFrees = %#x, want [%#x]", got, p)
	}
	var pendingSeen bool
	for _, seg := range a.Snapshot().Segments {
		for _, b := range seg.Blocks {
			if b.Address == p && b.State == StateActivePendingFree {
				pendingSeen = true
			}
		}
	}
	if !pendingSeen {
		t.Error("the snapshot does not show the block as active_pending_free")
	}
	if q := mustMalloc(t, a, 4*miB); q == p {
		t.Error("a pending block was handed out again")
	}
	if err := checkInvariants(a, mem); err != nil {
		t.Fatal(err)
	}
	if err := a.Free(p); !errors.Is(err, ErrInvalidPointer) {
		t.Errorf("second Free of a pending block: %v, want ErrInvalidPointer", err)
	}
	if err := a.CompleteFree(p); err != nil {
		t.Fatal(err)
	}
	if err := a.CompleteFree(p); !errors.Is(err, ErrInvalidPointer) {
		t.Errorf("CompleteFree twice: %v, want ErrInvalidPointer", err)
	}
	if st := a.MemoryStats(); st["active_bytes.all.current"] != 4*miB { // the second block
		t.Errorf("active after completion %d, want 4 MiB", st["active_bytes.all.current"])
	}
	if q := mustMalloc(t, a, 4*miB); q != p {
		t.Errorf("completed block not reused: got %#x, want %#x", q, p)
	}

	// EmptyCache synchronises: a pending free completes, then its segment goes back.
	b, _ := newTestAllocator(t, "", uint64(4*giB))
	x := mustMalloc(t, b, 30*miB)
	if err := b.RecordStream(x, 0x77); err != nil {
		t.Fatal(err)
	}
	mustFree(t, b, x)
	if err := b.EmptyCache(); err != nil {
		t.Fatal(err)
	}
	st = b.MemoryStats()
	if b.PendingFreeCount() != 0 || st["reserved_bytes.all.current"] != 0 || st["num_sync_all_streams"] != 1 {
		t.Errorf("after EmptyCache: %d pending, reserved %d, syncs %d; want 0, 0, 1", b.PendingFreeCount(), st["reserved_bytes.all.current"], st["num_sync_all_streams"])
	}
	if err := b.RecordStream(0xdead, 1); !errors.Is(err, ErrInvalidPointer) {
		t.Errorf("RecordStream of an unknown address: %v", err)
	}
}

// TestLargestFreeBlockAcrossStreams: the largest cached block of any stream and pool.
func TestLargestFreeBlockAcrossStreams(t *testing.T) {
	a, _ := newTestAllocator(t, "", uint64(4*giB))
	for _, c := range []struct {
		size   int64
		stream uint64
	}{{30 * miB, 5}, {12 * miB, 9}, {4 * kiB, 0}} {
		p, err := a.MallocStream(c.size, c.stream)
		if err != nil {
			t.Fatal(err)
		}
		mustFree(t, a, p)
	}
	if got := a.LargestFreeBlock(); got != 30*miB {
		t.Errorf("LargestFreeBlock = %d, want %d", got, 30*miB)
	}
}

// TestConcurrentStreams: goroutines on their own streams allocate, mark blocks used on
// other streams, free and complete, while another empties the cache (run with -race).
func TestConcurrentStreams(t *testing.T) {
	a, mem := newTestAllocator(t, "", uint64(8*giB))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stream := uint64(g+1) * 0x100
			for i := range 500 {
				p, err := a.MallocStream(int64(i%7+1)*miB/2, stream)
				if err != nil {
					t.Error(err)
					return
				}
				deferred := i%3 == 0
				if deferred {
					if err := a.RecordStream(p, stream+1); err != nil {
						t.Error(err)
						return
					}
				}
				if err := a.Free(p); err != nil {
					t.Error(err)
					return
				}
				if deferred {
					// A concurrent EmptyCache may have completed it already.
					if err := a.CompleteFree(p); err != nil && !errors.Is(err, ErrInvalidPointer) {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 50 {
			if err := a.EmptyCache(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	wg.Wait()
	if err := a.EmptyCache(); err != nil {
		t.Fatal(err)
	}
	if err := checkInvariants(a, mem); err != nil {
		t.Fatal(err)
	}
	if r := a.MemoryReserved(); r != 0 || a.PendingFreeCount() != 0 {
		t.Errorf("after EmptyCache: %d reserved, %d pending", r, a.PendingFreeCount())
	}
}
