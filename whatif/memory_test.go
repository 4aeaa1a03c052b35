package whatif

import (
	"fmt"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/snapshot"
)

const mib = 1 << 20

// TestDriverPlacesResizedAllocation: where the replay makes a device allocation of
// another size than the recorded run made for the same request, the guess ends where
// the recorded range's 32 MiB chunks end, as the driver carves top-down (the
// roundup_power2_divisions:4 run of phases_empty_cache put its 1280 MiB segment 64 MiB
// below the default run's 1200 MiB one, and its 32 MiB segment where the default run's
// 30 MiB one was).
func TestDriverPlacesResizedAllocation(t *testing.T) {
	const top = 0x7fdf00000000
	for _, c := range []struct {
		recorded, size, want uint64
	}{
		{30 * mib, 32 * mib, top - 32*mib},       // same chunk: same address
		{1200 * mib, 1280 * mib, top - 1280*mib}, // 1216 MiB of chunks end at top
		{48 * mib, 36 * mib, top - 64*mib + 0},   // both in 64 MiB: same address
		{100 * mib, 20 * mib, top - 32*mib},      // smaller: the top chunk
	} {
		m := newDeviceMemory(1 << 40)
		rec := top - chunkRound(c.recorded)
		m.step([]hint{{addr: rec, size: int64(c.recorded)}})
		a, err := m.Malloc(c.size)
		if err != nil {
			t.Fatal(err)
		}
		if a != c.want || m.guessed != 1 {
			t.Errorf("recorded %d MiB at top−%d MiB, replay %d MiB: placed at top−%d MiB (guessed %d), want top−%d MiB, one guess",
				c.recorded/mib, (top-rec)/mib, c.size/mib, (top-a)/mib, m.guessed, (top-c.want)/mib)
		}
	}
}

// TestDriverReusesFreedRanges: a new range the recorded run did not make fills a chunk's
// free tail first-fit; a small freed segment's range is such a hole; the range of a
// large freed segment (releasedRange) is carved from its top down, as the driver did
// after phases_empty_cache's empty_cache() released 2.6 GB.
func TestDriverReusesFreedRanges(t *testing.T) {
	const base = 0x7f0000000000
	var m *deviceMemory
	place := func(addr, size uint64) {
		t.Helper()
		// a recorded allocation: the replay knows its range from the history
		m.recordedSpans = mergeSpans(append(m.recordedSpans, liveSpan{addr: addr, size: size}))
		m.step([]hint{{addr: addr, size: int64(size)}})
		if a, err := m.Malloc(size); err != nil || a != addr {
			t.Fatalf("hinted allocation of %d MiB at %#x: got %#x, %v", size/mib, addr, a, err)
		}
	}
	guess := func(size uint64) int64 {
		t.Helper()
		m.step(nil)
		a, err := m.Malloc(size)
		if err != nil {
			t.Fatal(err)
		}
		return int64(a-base) / mib
	}
	free := func(addr uint64) {
		t.Helper()
		if err := m.Free(addr); err != nil {
			t.Fatal(err)
		}
	}

	m = newDeviceMemory(1 << 40)
	place(base, 1200*mib) // chunks to +1216: a 16 MiB tail
	if a := guess(8 * mib); a != 1200 {
		t.Errorf("8 MiB: placed at base%+d MiB, want the chunk tail, +1200", a)
	}

	m = newDeviceMemory(1 << 40)
	place(base, 20*mib)
	place(base+20*mib, 12*mib) // fills the tail
	free(base)
	if a := guess(20 * mib); a != 0 {
		t.Errorf("20 MiB after a 20 MiB segment was freed: placed at base%+d MiB, want its range, +0", a)
	}

	m = newDeviceMemory(1 << 40)
	place(base, 1216*mib)
	place(base-800*mib, 800*mib)
	free(base)
	free(base - 800*mib)
	if a := guess(14 * mib); a != 1184 {
		t.Errorf("14 MiB after 2016 MiB were freed: placed at base%+d MiB, want the top chunk of the freed range, +1184", a)
	}
	if a := guess(40 * mib); a != 1120 {
		t.Errorf("40 MiB next: placed at base%+d MiB, want the next 64 MiB down, +1120", a)
	}
	if a := guess(10 * mib); a != 1160 {
		t.Errorf("10 MiB next: placed at base%+d MiB, want the 40 MiB range's chunk tail, +1160", a)
	}
}

// TestCandidatesWhereTheDriverPlaced: the places a random placement chooses from take
// in the kinds the driver was seen to use in gpt2_generate_large's capped run
// (candidates): the rest of a chunk tail a recorded allocation took part of, the chunk
// boundary inside a free range (free space does not merge across the driver's chunks),
// and the top chunk of a freed segment's range too small for releasedRange.
func TestCandidatesWhereTheDriverPlaced(t *testing.T) {
	const base = 0x7f0000000000
	m := newDeviceMemory(1 << 40)
	place := func(addr, size uint64) {
		t.Helper()
		m.step([]hint{{addr: addr, size: int64(size)}})
		if a, err := m.Malloc(size); err != nil || a != addr {
			t.Fatalf("hinted allocation of %d MiB at %#x: got %#x, %v", size/mib, addr, a, err)
		}
	}
	place(base, 48*mib)        // its chunks to +64: a 16 MiB tail
	place(base+48*mib, 14*mib) // takes the tail but 2 MiB
	place(base+64*mib, 48*mib)
	place(base+128*mib, 48*mib)
	place(base+176*mib, 2*mib) // the third one's tail: 14 MiB left
	if err := m.Free(base + 64*mib); err != nil {
		t.Fatal(err)
	}
	m.step(nil)
	has := func(size uint64, want ...int64) {
		t.Helper()
		cands, _ := m.candidates(size)
		got := map[int64]bool{}
		for _, c := range cands {
			got[int64(c-base)/mib] = true
		}
		for _, w := range want {
			if !got[w] {
				t.Errorf("%d MiB: candidates %v at base + MiB, want %+d among them", size/mib, got, w)
			}
		}
	}
	has(14*mib, 178)    // the rest of the tail after the recorded 2 MiB segment
	has(24*mib, 62, 64) // the free 2 MiB + the freed segment's range, and its chunk boundary
	has(24*mib, 96)     // the freed 48 MiB segment's range, carved from its top chunk
	has(14*mib, 96)
}

// addressTrace is a history whose figures depend on where the driver put its two
// segments: a 36 MiB segment split by a 10 MiB block leaves 26 MiB free beside a
// free 26 MiB segment (in the first one's 32 MiB chunk tail, or below it); a 26 MiB
// request takes the lower of the two, and the 36 MiB request after the 10 MiB block is
// freed fits in the first segment only if the request took the other. segs, when
// given, are the recorded segment_alloc entries (addresses of the 36 and the 26 MiB
// segment, and of a third if the run made one).
func addressTrace(segs ...uint64) *snapshot.Snapshot {
	const p, q, r, s, u = 0x1000, 0x2000, 0x3000, 0x4000, 0x5000
	var es []snapshot.TraceEntry
	seg := func(i int, size int64) {
		if i < len(segs) {
			es = append(es, snapshot.TraceEntry{Action: snapshot.ActionSegmentAlloc, Addr: segs[i], Size: size})
		}
	}
	seg(0, 36*mib)
	es = append(es, alloc(p, 36*mib))
	seg(1, 26*mib)
	es = append(es, alloc(q, 26*mib), freeReq(p, 36*mib), freeDone(p, 36*mib), alloc(r, 10*mib),
		freeReq(q, 26*mib), freeDone(q, 26*mib), alloc(s, 26*mib), freeReq(r, 10*mib), freeDone(r, 10*mib))
	seg(2, 36*mib)
	es = append(es, alloc(u, 36*mib))
	return trace(es...)
}

// TestAddressRange: a figure that depends on where the driver places a device
// allocation the recorded run did not make carries the range over other placements,
// with the figure under every placement inside it; given the recorded addresses, it
// is fixed and carries none.
func TestAddressRange(t *testing.T) {
	res, err := Replay(addressTrace(), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Runs[0]
	if r.Guessed != 3 || r.AddressPlacements != 1+minPlacements || !r.AddressConverged {
		t.Errorf("guessed %d device allocations over %d placements (converged %v), want 3 over %d, converged", r.Guessed, r.AddressPlacements, r.AddressConverged, 1+minPlacements)
	}
	want := map[string][2]int64{"num_device_alloc": {2, 3}, "segment.all.peak": {2, 3}, "reserved_bytes.all.peak": {62 * mib, 98 * mib}}
	for k, w := range want {
		if got, ok := r.AddressRange[k]; !ok || got != w {
			t.Errorf("%s: address range %v (flagged %v), want %v", k, got, ok, w)
		}
	}
	for _, c := range []struct {
		segs          []uint64
		allocs, resvd int64
	}{
		{[]uint64{0x7f0000000000, 0x7f0002400000, 0x7f0008000000}, 3, 98 * mib}, // the 26 MiB segment in the tail: the request takes the split piece
		{[]uint64{0x7f0004000000, 0x7f0000000000}, 2, 62 * mib},                 // below: it takes the segment
	} {
		res, err := Replay(addressTrace(c.segs...), nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		r := res.Runs[0]
		if r.Guessed != 0 || r.AddressDependent() || r.DeviceAllocs != c.allocs || r.MaxReserved != c.resvd {
			t.Errorf("segments at %#x: %d device allocations, peak reserved %d MiB, guessed %d, address range %v; want %d, %d MiB, none guessed, no range",
				c.segs, r.DeviceAllocs, r.MaxReserved/mib, r.Guessed, r.AddressRange, c.allocs, c.resvd/mib)
		}
	}
}

// TestPrepareBytesPerEntry bounds what preparing a history allocates per trace
// entry (runtime.MemStats.TotalAlloc, which no collector timing changes; not
// time), on a real workload with stack frames: issue 21's goal (memlab whatif
// holding at most 3× the snapshot's size) has the prepared history beside the
// converted trace (112 bytes an entry, about 1.3× the file). A history keeps a
// 40-byte op for most entries and a 4-byte stack index per entry; it allocated
// 83 bytes an entry before ops shrank and the per-entry frames and reserved
// memory arrays went.
func TestPrepareBytesPerEntry(t *testing.T) {
	s := referenceSnapshot(t, reference.Workloads211, "gpt2_generate__default.pickle")
	n := len(s.Traces[0])
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	h, err := prepare(s, 0)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if h.stackOf == nil {
		t.Fatal("a trace with frames prepared without them")
	}
	perEntry := float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
	t.Logf("%d entries, %d ops: %.0f bytes allocated per entry", n, len(h.ops), perEntry)
	if perEntry > 48 {
		t.Errorf("preparing allocates %.0f bytes per trace entry, want at most 48", perEntry)
	}
}

// TestAfterGuessed: a guessed device allocation goes right after the previous one when
// that was guessed too, not into the lowest chunk tail that fits, unless a recorded
// allocation of the run held that range at some time; after a recorded allocation the
// lowest tail takes it.
func TestAfterGuessed(t *testing.T) {
	const rec = 0x7f0000000000
	for _, c := range []struct {
		what     string
		recorded []liveSpan // ranges of the run's recorded allocations at other times
		want     uint64
	}{
		{"right after the guessed one", nil, rec + 31*mib},
		{"a recorded allocation held that range: the lowest tail", []liveSpan{{addr: rec + 31*mib, size: mib}}, rec - 28*mib},
	} {
		m := newDeviceMemory(1 << 40)
		m.recordedSpans = mergeSpans(append(c.recorded, liveSpan{addr: rec, size: 2 * mib}, liveSpan{addr: rec - 32*mib, size: 4 * mib}))
		for _, r := range []liveSpan{{addr: rec, size: 2 * mib}, {addr: rec - 32*mib, size: 4 * mib}} { // tails of 30 and 28 MiB
			m.step([]hint{{addr: r.addr, size: int64(r.size)}})
			if a, err := m.Malloc(r.size); err != nil || a != r.addr {
				t.Fatalf("%s: the recorded allocation went to %#x (%v), want %#x", c.what, a, err, r.addr)
			}
		}
		m.step(nil)
		if a, err := m.Malloc(mib); err != nil || a != rec-28*mib {
			t.Errorf("%s: 1 MiB after a recorded allocation at %#x (%v), want the lowest tail, rec-28 MiB", c.what, a, err)
		}
		if err := m.Free(rec - 28*mib); err != nil {
			t.Fatal(err)
		}
		m.step(nil)
		if a, err := m.Malloc(29 * mib); err != nil || a != rec+2*mib {
			t.Fatalf("%s: 29 MiB at %#x (%v), want the 30 MiB tail at rec+2 MiB", c.what, a, err)
		}
		m.step(nil)
		if a, err := m.Malloc(mib); err != nil || a != c.want {
			t.Errorf("%s: 1 MiB after the guessed 29 MiB at rec%+d MiB (%v), want rec%+d MiB", c.what, (int64(a)-rec)/mib, err, (int64(c.want)-rec)/mib)
		}
	}
}

// TestAfterSameSize: the placement that packs after same-size allocations puts a
// guessed one right after the last device allocation of its size, where free and never
// recorded (DPO's first new 48 MiB segment under max_split_size_mb:128); the model's own
// rule does not, and neither does that placement over a recorded allocation's range.
func TestAfterSameSize(t *testing.T) {
	const rec = 0x7f0000000000
	for _, c := range []struct {
		what     string
		pack     packing
		recorded []liveSpan // ranges of the run's recorded allocations at other times
		after    bool
	}{
		{"the placement after same sizes", packAfterSameSize, nil, true},
		{"the model's own rule", noPacking, nil, false},
		{"over a recorded range", packAfterSameSize, []liveSpan{{addr: rec + 48*mib, size: 2 * mib}}, false},
	} {
		m := newDeviceMemory(1 << 40)
		m.pack = c.pack
		m.recordedSpans = mergeSpans(append(c.recorded, liveSpan{addr: rec, size: 48 * mib}, liveSpan{addr: rec + 512*mib, size: 2 * mib}))
		for _, r := range []liveSpan{{addr: rec, size: 48 * mib}, {addr: rec + 512*mib, size: 2 * mib}} {
			m.step([]hint{{addr: r.addr, size: int64(r.size)}})
			if a, err := m.Malloc(r.size); err != nil || a != r.addr {
				t.Fatalf("%s: the recorded allocation went to %#x (%v), want %#x", c.what, a, err, r.addr)
			}
		}
		m.step(nil)
		a, err := m.Malloc(48 * mib)
		if err != nil {
			t.Fatal(err)
		}
		if after := a == rec+48*mib; after != c.after {
			t.Errorf("%s: a guessed 48 MiB went to rec%+d MiB; right after the recorded 48 MiB: %v, want %v", c.what, (int64(a)-rec)/mib, after, c.after)
		}
	}
}

// TestPackedPlacements: a packing placement puts guessed allocations that no chunk
// tail takes one after another, ascending, in a range of their own above or below
// the recorded ones, leaving no chunk tails between them; a chunk tail still takes
// what fits in it first, as in the model.
func TestPackedPlacements(t *testing.T) {
	const rec = 0x7f0000000000
	for _, pack := range []packing{packAbove, packBelow} {
		m := newDeviceMemory(1 << 40)
		m.pack = pack
		m.step([]hint{{addr: rec, size: 2 * mib}})
		if a, err := m.Malloc(2 * mib); err != nil || a != rec {
			t.Fatalf("pack %d: the recorded allocation went to %#x (%v), want its own address", pack, a, err)
		}
		m.step(nil)
		tail, err := m.Malloc(2 * mib) // the recorded segment's chunk tail takes it
		if err != nil || tail != rec+2*mib {
			t.Fatalf("pack %d: a 2 MiB guess went to %#x (%v), want the chunk tail at %#x", pack, tail, err, rec+2*mib)
		}
		first, err := m.Malloc(40 * mib)
		if err != nil {
			t.Fatal(err)
		}
		second, err := m.Malloc(30 * mib) // more than the 28 MiB left of the tail
		if err != nil {
			t.Fatal(err)
		}
		if second != first+40*mib {
			t.Errorf("pack %d: 40 MiB at %#x then 30 MiB at %#x, want it packed right after", pack, first, second)
		}
		if above := first > rec; above != (pack == packAbove) {
			t.Errorf("pack %d: the packed range starts at %#x, recorded segment at %#x", pack, first, rec)
		}
		for _, h := range m.holes {
			if h.addr >= first && h.addr < second+30*mib {
				t.Errorf("pack %d: a chunk tail %#x+%d MiB inside the packed range", pack, h.addr, h.size/mib)
			}
		}
	}
}

// TestDriverModelAgreement measures how often the driver model's own rule (deviceMemory
// with no recorded address to follow) puts a device allocation where the H200's driver
// put it, given the driver's true layout before it: every cudaMalloc call of the
// practitioners' programs' recorded runs but those with expandable segments (which map
// pages instead), each run replayed on a simulated device at its own addresses, its
// first call left out (nothing is known before it). Then, of the calls a run under
// another setting made and its default run did not (the ones a replay guesses), how
// many the rule places where the driver did, in all and per setting, and how many of
// the driver's addresses are among the places the address range's random placements
// choose from (candidates; placementsAmongCandidates), and the same for each run with a
// figure outside its range (programsKnown). BENCHMARKS.md quotes every line;
// a change to the rule or the candidates that moves them must say so there.
func TestDriverModelAgreement(t *testing.T) {
	paths, err := reference.GlobPickles(reference.Programs211, "*__*.pickle")
	if err != nil {
		t.Fatal(err)
	}
	hit, total, runs := 0, 0, 0
	var added addedCalls
	bySetting := map[string]*addedCalls{}
	defaults := map[string][]snapshot.TraceEntry{}
	for _, path := range paths {
		if strings.Contains(filepath.Base(path), "expandable_segments_True") {
			continue
		}
		s, err := snapshot.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		h, n, err := agreement(s.Traces[0])
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		hit, total, runs = hit+h, total+n, runs+1
		prog, setting, _ := strings.Cut(filepath.Base(reference.TrimPickle(path)), "__")
		if setting == "default" {
			continue
		}
		if defaults[prog] == nil {
			defaults[prog] = referenceSnapshot(t, reference.Programs211, prog+"__default.pickle").Traces[0]
		}
		c, err := placementsAmongCandidates(defaults[prog], s.Traces[0])
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		added.add(c)
		if knownOutside(prog, setting) {
			line := fmt.Sprintf("added calls of %s under %s, a run with a figure outside its range: %d of %d placed where the driver put them",
				prog, setting, c.model, c.total)
			t.Log(line)
			quotedInBenchmarks(t, "the driver model's agreement line for "+prog+" under "+setting, line)
		}
		if bySetting[setting] == nil {
			bySetting[setting] = &addedCalls{}
		}
		bySetting[setting].add(c)
	}
	if runs < 200 || total == 0 || added.total == 0 {
		t.Fatalf("%d runs, %d device allocations: the practitioners' programs are not all there", runs, total)
	}
	line := fmt.Sprintf("driver model: %d of %d device allocations (%.1f %%) of %d recorded runs placed where the driver put them, given its layout before each",
		hit, total, 100*float64(hit)/float64(total), runs)
	t.Log(line)
	quotedInBenchmarks(t, "the driver model's agreement line", line)
	line = fmt.Sprintf("added calls: %d of the %d device allocations a run's default run did not make placed where the driver put them, given its layout before each (%.1f %%)",
		added.model, added.total, 100*float64(added.model)/float64(added.total))
	t.Log(line)
	quotedInBenchmarks(t, "the driver model's agreement line on the calls a setting adds", line)
	for _, setting := range slices.Sorted(maps.Keys(bySetting)) {
		c := bySetting[setting]
		line := fmt.Sprintf("added calls under %s: %d of %d placed where the driver put them (%.1f %%)",
			setting, c.model, c.total, 100*float64(c.model)/float64(c.total))
		t.Log(line)
		quotedInBenchmarks(t, "the driver model's agreement line under "+setting, line)
	}
	line = fmt.Sprintf("candidates: %d of the %d addresses the driver gave device allocations a run's default run did not make are among the places the random placements choose from (%.1f %%)",
		added.in, added.total, 100*float64(added.in)/float64(added.total))
	t.Log(line)
	quotedInBenchmarks(t, "the candidates' coverage line", line)
}

// TestDriverRerunAgreement measures how far the driver itself repeats its placements:
// each practitioners' program whose default setting was recorded twice (rerun/), its two
// runs' cudaMalloc calls compared in order up to the first of another size, each run's
// addresses taken relative to the shift most of the calls share (where the process's
// address range began). The share of calls at the same place bounds what any model of
// the driver could place where it did, and says why the replay gives address ranges
// (BENCHMARKS.md quotes the line beside TestDriverModelAgreement's).
func TestDriverRerunAgreement(t *testing.T) {
	paths, err := reference.GlobPickles(reference.Programs211, "rerun/*__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	progs, repeated, same, calls := 0, 0, 0, 0
	for _, path := range paths {
		name := filepath.Base(reference.TrimPickle(path))
		a := deviceAllocations(referenceSnapshot(t, reference.Programs211, name+".pickle").Traces[0])
		b := deviceAllocations(referenceSnapshot(t, reference.Programs211, "rerun/"+name+".pickle").Traces[0])
		n := 0
		for n < min(len(a), len(b)) && a[n].Size == b[n].Size {
			n++
		}
		votes := map[int64]int{}
		for i := range n {
			votes[int64(a[i].Addr)-int64(b[i].Addr)]++
		}
		shift := int64(0)
		for d, v := range votes {
			if v > votes[shift] || v == votes[shift] && d < shift {
				shift = d
			}
		}
		at := votes[shift]
		progs, same, calls = progs+1, same+at, calls+n
		if at == n {
			repeated++
		}
	}
	if progs < 20 || calls == 0 {
		t.Fatalf("%d programs recorded twice, %d calls compared: reference/programs-2.11/rerun is not all there", progs, calls)
	}
	line := fmt.Sprintf("driver reruns: %d programs recorded twice under the default setting, %d with every cudaMalloc call at the same place in both runs; %d of %d calls (%.1f %%) at the same place, relative to where each run's range began",
		progs, repeated, same, calls, 100*float64(same)/float64(calls))
	t.Log(line)
	quotedInBenchmarks(t, "the driver's rerun agreement line", line)
}

// deviceAllocations returns trace's cudaMalloc calls (segment_alloc entries) in order.
func deviceAllocations(trace []snapshot.TraceEntry) []snapshot.TraceEntry {
	var out []snapshot.TraceEntry
	for _, e := range trace {
		if e.Action == snapshot.ActionSegmentAlloc {
			out = append(out, e)
		}
	}
	return out
}

// knownOutside reports whether programsKnown lists a figure of prog under setting as
// outside its range.
func knownOutside(prog, setting string) bool {
	for id, why := range programsKnown {
		if strings.HasPrefix(id, prog+" under "+setting+": ") && strings.HasPrefix(why, "outside") {
			return true
		}
	}
	return false
}

// agreement replays trace's cudaMalloc and cudaFree calls on a simulated device at
// their recorded addresses and counts, of the calls after the first, those the model's
// rule alone would have placed at the recorded address.
func agreement(trace []snapshot.TraceEntry) (hit, total int, err error) {
	m := newDeviceMemory(H200Memory)
	first := true
	for i, e := range trace {
		switch e.Action {
		case snapshot.ActionSegmentAlloc:
			if !first {
				c := m.clone()
				c.step(nil)
				if c.place(uint64(e.Size), false) == e.Addr {
					hit++
				}
				total++
			}
			first = false
			m.step([]hint{{addr: e.Addr, size: e.Size}})
			if a, err := m.Malloc(uint64(e.Size)); err != nil || a != e.Addr {
				return 0, 0, fmt.Errorf("entry %d: segment at %#x placed at %#x: %v", i, e.Addr, a, err)
			}
		case snapshot.ActionSegmentFree:
			if err := m.Free(e.Addr); err != nil {
				return 0, 0, fmt.Errorf("entry %d: %w", i, err)
			}
		}
	}
	return hit, total, nil
}

// clone returns a copy of m that places and frees without changing m.
func (m *deviceMemory) clone() *deviceMemory {
	c := *m
	c.live, c.holes, c.freed = slices.Clone(m.live), slices.Clone(m.holes), slices.Clone(m.freed)
	c.hints, c.taken = slices.Clone(m.hints), slices.Clone(m.taken)
	return &c
}
