package allocator

import "testing"

// TestLimits: the cap counts the device allocations it refuses, and the garbage
// collection its passes and what they freed; neither counts while it has nothing
// to do.
func TestLimits(t *testing.T) {
	const MiB = 1 << 20
	a, _ := newTestAllocator(t, "garbage_collection_threshold:0.5", 1<<30)
	if err := a.SetPerProcessMemoryFraction(100.0 / 1024); err != nil { // a 100 MiB cap
		t.Fatal(err)
	}
	// 40 MiB reserved: below both the cap and the threshold (50 MiB).
	p, err := a.Malloc(40 * MiB)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Limits(); got != (Limits{}) {
		t.Fatalf("below the cap and the threshold: %+v, want zero", got)
	}
	if err := a.Free(p); err != nil {
		t.Fatal(err)
	}
	// 60 MiB more misses the cache (the 40 MiB block is too small): reserved 40 MiB
	// is below the threshold, so no pass; 100 MiB then.
	q, err := a.Malloc(60 * MiB)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Limits(); got != (Limits{}) {
		t.Fatalf("at 100 MiB reserved: %+v, want zero", got)
	}
	if err := a.Free(q); err != nil {
		t.Fatal(err)
	}
	// 80 MiB: no cached block fits; reserved 100 MiB is above the threshold, so a
	// pass runs and frees what has aged; the cap refuses what would exceed it.
	if _, err := a.Malloc(80 * MiB); err != nil {
		t.Fatal(err)
	}
	got := a.Limits()
	if got.GCPasses != 1 || got.GCReleased == 0 || got.GCReleasedBytes < 20*MiB {
		t.Errorf("after a collection: %+v, want one pass that freed at least 20 MiB", got)
	}
	// Without a threshold, a refused device allocation counts for the cap alone.
	b, _ := newTestAllocator(t, "", 1<<30)
	if err := b.SetPerProcessMemoryFraction(100.0 / 1024); err != nil {
		t.Fatal(err)
	}
	r, err := b.Malloc(60 * MiB)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Free(r); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Malloc(80 * MiB); err != nil { // 60 + 80 > 100: refused, then freed and retried
		t.Fatal(err)
	}
	if got := b.Limits(); got.CapRefusals == 0 || got.GCPasses != 0 {
		t.Errorf("a cap that refused: %+v, want CapRefusals > 0 and no pass", got)
	}
}
