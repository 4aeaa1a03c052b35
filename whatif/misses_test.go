package whatif

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/snapshot"
)

// TestAddressDependentMisses is issue 20's single-stream misses, on programs of
// memlab's own that reproduce them (reference/misses-2.11): the default snapshot
// replayed under each recorded setting gives every figure PyTorch measured, or flags
// it as depending on where the driver placed device allocations the default run did
// not make, with PyTorch's figure inside its address range; and where that run's
// pickle is shipped, the default snapshot replayed with that run's device addresses
// (the segment_alloc entries of each request moved in) gives every figure exactly —
// the policy is right, and the address is the only thing the default snapshot lacks.
// A figure outside its address range (or with none) passes only when outsideRange
// lists it and that run's pickle is shipped, so that its own addresses are tried; the
// values PyTorch measured for it in every recorded run of that setting are logged.
func TestAddressDependentMisses(t *testing.T) {
	defs, err := reference.GlobPickles(reference.Misses211, "*__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) < 8 {
		t.Fatalf("%d programs in %s, want the 8 shipped", len(defs), reference.Misses211)
	}
	pairs, exact, placed, wide, outside, withAddrs := 0, 0, 0, 0, 0, 0
	var widths rangeWidths
	seen := map[string]bool{}
	widest, widestAt := 0.0, "none"
	for _, def := range defs {
		prog := strings.TrimSuffix(filepath.Base(reference.TrimPickle(def)), "__default")
		s, err := snapshot.ReadFile(def)
		if err != nil {
			t.Fatal(err)
		}
		hD, err := prepare(s, 0)
		if err != nil {
			t.Fatal(err)
		}
		ffs, err := reference.Glob(reference.Misses211, prog+"__*.facts.json")
		if err != nil {
			t.Fatal(err)
		}
		for _, ff := range ffs {
			name := settingName(prog, ff)
			what := prog + " under " + name
			f := readFacts(t, ff)
			r := replayLike(t, what, s, f)
			pairs++
			if r.CrossStreamFrees != 0 {
				t.Errorf("%s: %d cross-stream frees in a single-stream program", what, r.CrossStreamFrees)
			}
			widths.add(what, "address", r.AddressRange)
			inRange := maps.Clone(r.AddressRange)
			needAddrs := false
			for _, k := range acceptanceKeys {
				got, w := r.Stats[k], f.Stats[k]
				lr, ok := r.AddressRange[k]
				why := outsideRange[what+": "+k]
				if why != "" {
					seen[what+": "+k] = true
				}
				if ok && lr[1] > 0 {
					if wd := float64(lr[1]-lr[0]) / float64(lr[1]); wd > widest {
						widest, widestAt = wd, what+", "+k
					}
				}
				switch {
				case got == w || ok && lr[0] <= w && w <= lr[1]:
					if why != "" {
						t.Errorf("%s: %s = %d (address range %v), PyTorch measured %d: take it off outsideRange", what, k, got, lr, w)
					}
					if got == w {
						exact++
						break
					}
					placed++
					if width(lr) > informative(k) {
						wide++
					}
					t.Logf("%s: %s = %d, PyTorch measured %d, inside its address range [%d, %d] over %d placements (%d device allocations guessed)",
						what, k, got, w, lr[0], lr[1], r.AddressPlacements, r.Guessed)
				case why != "":
					outside++
					needAddrs = true
					delete(inRange, k)
					rg := "no address range"
					if ok {
						rg = fmt.Sprintf("address range %v", lr)
					}
					t.Logf("%s: %s = %d (%s, %d device allocations guessed), PyTorch measured %d; in each recorded run of this setting %v: outside the range (%s)",
						what, k, got, rg, r.Guessed, w, measuredRuns(t, prog, name, k), why)
				default:
					t.Errorf("%s: %s = %d (address range %v), PyTorch measured %d", what, k, got, lr, w)
				}
			}
			checkRange(t, what, "address", inRange, r, f, nil)
			logRow(t, prog, name, "", r, f)
			logPlacements(t, what, r)
			if _, err := pickleBeside(ff); errors.Is(err, fs.ErrNotExist) {
				if needAddrs {
					t.Errorf("%s: a figure outside its address range, and that run's pickle is not shipped", what)
				}
				continue // only the missed settings' pickles are shipped
			} else if err != nil {
				t.Fatal(err)
			}
			if other := checkWithOwnAddresses(t, s, hD, what, ff, r, f); other != "" {
				t.Errorf("%s: the program made other requests than its default run (%s)", what, other)
			}
			withAddrs++
		}
	}
	t.Log(fmt.Sprintf("%d programs × settings, %d figures: %d equal to PyTorch's; %d others depend on driver addresses and lie inside their range (%d of them a range wider than informative); %d outside it (outsideRange); %d settings exact in every figure with their own run's addresses",
		pairs, pairs*len(acceptanceKeys), exact, placed, wide, outside, withAddrs))
	widths.log(t, "misses", missesWide)
	for k := range outsideRange {
		if !seen[k] {
			t.Errorf("outsideRange lists %q, which no shipped program and setting has", k)
		}
	}
	t.Logf("widest address range: %.2f of its top (%s)", widest, widestAt)
	if withAddrs == 0 {
		t.Error("no recorded run's addresses tried")
	}
}

// outsideRange are the figures of reference/misses-2.11 that PyTorch measured outside
// the replay's address range, or where the replay reports none, each with what the
// recordings show. Each is exact with that run's own device addresses moved in (its
// pickle ships), so the driver's placement is the cause; the range does not yet take
// in the placements the driver chose. A listed figure that comes out exact or inside
// its range fails the test, so the list cannot outlive its reason.
var outsideRange = map[string]string{
	// Taken off since the range also permutes the recorded allocations under settings other
	// than the snapshot's own (deviceMemory.swapped): gpt2_generate_12l's
	// inactive_split_bytes.all.peak under max_split_size_mb:128 and under the capped
	// setting, and opt_generate_125m's under the capped setting, were listed here with
	// no range, as nothing was guessed (TestSameCallsPlacedElsewhere says why).
	// gpt2_generate_fp16's inactive_split_bytes.all.peak under the capped setting was
	// listed here too until the range also tried the fixed orders of regionOrder
	// (below the first segment first, or alternating).
	//
	// Taken off since the number of placements is chosen by convergence (placements.go)
	// instead of by the history's length: gpt2_generate_fp16's
	// inactive_split_bytes.all.peak under max_split_size_mb:128 (the driver put the
	// default run's own cudaMalloc calls in another address order, which few random
	// orders reach: the 14 placements its length gave missed it, the ones until
	// convergence reach it), and opt125m_score_generate_bs1's reserved_bytes.all.peak,
	// num_device_alloc and segment.all.peak under roundup_power2_divisions:4 (one 2 MiB
	// small-pool segment more in PyTorch's run, from where the driver put the small
	// segments: the 8 placements its length gave never drew it; TestSmallPoolSegmentOrder).
}

// measuredRuns returns what PyTorch measured for key k in every recorded run of prog
// under setting name in reference/misses-2.11: the shipped run, rerun/ (the default
// setting) and repeats/*/.
func measuredRuns(t *testing.T, prog, name, k string) []int64 {
	t.Helper()
	base := prog + "__" + name + ".facts.json"
	var vals []int64
	for _, pat := range []string{base, "rerun/" + base, "repeats/*/" + base} {
		files, err := reference.Glob(reference.Misses211, pat)
		if err != nil {
			continue // no rerun or repeats of this setting
		}
		for _, ff := range files {
			vals = append(vals, readFacts(t, ff).Stats[k])
		}
	}
	return vals
}

// withAddresses returns h with the device allocations (hints) that another run of the
// same program, other, made for each request: the requests must be the same.
func withAddresses(h, other *history) (*history, error) {
	var hints [][]hint
	var reqs []request // only size and oom: the requests of other, in order
	endsInOOM := false
	for _, o := range other.ops {
		if o.kind == opAlloc || o.kind == opOOM {
			hints = append(hints, other.hintsOf(&o))
			reqs = append(reqs, request{size: o.size, oom: o.kind == opOOM})
			endsInOOM = o.kind == opOOM
		}
	}
	c := *h
	c.ops = append([]op(nil), h.ops...)
	c.hints = append([][]hint(nil), h.hints...)
	k := 0
	for i, o := range c.ops {
		if o.kind != opAlloc && o.kind != opOOM {
			continue
		}
		if k >= len(hints) && endsInOOM {
			break // the other run stopped at its OOM; a replay of h stops there too
		}
		if k >= len(hints) || !reqs[k].same(request{size: o.size, oom: o.kind == opOOM}) {
			return nil, fmt.Errorf("request %d (event %d): the other run's requests differ", k, o.event)
		}
		c.ops[i].hints = c.addHints(hints[k])
		k++
	}
	return &c, nil
}

// TestDriverPlacementNotFromCalls: where the driver puts a device allocation is not a
// function of the allocator's calls, which are all a snapshot records: two runs of
// bert_encode_base (default, max_split_size_mb:128) made the same requests and the same
// cudaMalloc calls, yet not every segment lies at the same offset from the first.
func TestDriverPlacementNotFromCalls(t *testing.T) {
	var runs [2][]snapshot.TraceEntry
	for i, name := range []string{"bert_encode_base__default.pickle", "bert_encode_base__max_split_size_mb_128.pickle"} {
		p, err := reference.File(reference.Misses211, name)
		if err != nil {
			t.Fatal(err)
		}
		s, err := snapshot.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		runs[i] = s.Traces[0]
	}
	type call struct {
		request int
		size    int64
		addr    uint64
	}
	calls := func(tr []snapshot.TraceEntry) (reqs []int64, out []call) {
		for _, e := range tr {
			switch e.Action {
			case snapshot.ActionAlloc:
				reqs = append(reqs, e.Size)
			case snapshot.ActionSegmentAlloc, snapshot.ActionSegmentFree:
				out = append(out, call{len(reqs), e.Size, e.Addr})
			}
		}
		return reqs, out
	}
	ra, ca := calls(runs[0])
	rb, cb := calls(runs[1])
	if !slices.Equal(ra, rb) || len(ca) != len(cb) || len(ca) == 0 {
		t.Fatalf("the two runs made different requests (%d, %d) or device calls (%d, %d)", len(ra), len(rb), len(ca), len(cb))
	}
	moved := 0
	for i := range ca {
		if ca[i].request != cb[i].request || ca[i].size != cb[i].size {
			t.Fatalf("device call %d: request %d, %d bytes vs request %d, %d bytes", i, ca[i].request, ca[i].size, cb[i].request, cb[i].size)
		}
		oa, ob := int64(ca[i].addr-ca[0].addr), int64(cb[i].addr-cb[0].addr)
		if oa != ob {
			moved++
			t.Logf("request %d, %d MiB segment: %+d MiB from the first segment in the default run, %+d MiB under max_split_size_mb:128",
				ca[i].request, ca[i].size>>20, oa>>20, ob>>20)
		}
	}
	t.Logf("%d requests, %d device calls, the same in both runs; %d placed elsewhere", len(ra), len(ca), moved)
	if moved == 0 {
		t.Error("every segment at the same offset: the placement could be a function of the calls")
	}
}

// withSomeAddresses is withAddresses for part of the requests: with same, only those
// for which the default run h made the same device calls (as many, of the same sizes)
// as other did; without, only the others (where the replay has to guess). The rest
// keep h's own.
func withSomeAddresses(h, other *history, same bool) (*history, error) {
	var hints [][]hint
	for _, o := range other.ops {
		if o.kind == opAlloc || o.kind == opOOM {
			hints = append(hints, other.hintsOf(&o))
		}
	}
	c := *h
	c.ops = append([]op(nil), h.ops...)
	c.hints = append([][]hint(nil), h.hints...)
	k := 0
	for i, o := range c.ops {
		if o.kind != opAlloc && o.kind != opOOM {
			continue
		}
		if k >= len(hints) {
			return nil, fmt.Errorf("request %d (event %d): the other run made fewer requests", k, o.event)
		}
		mine := h.hintsOf(&o)
		sameCalls := len(mine) == len(hints[k])
		for j := 0; sameCalls && j < len(mine); j++ {
			sameCalls = mine[j].size == hints[k][j].size
		}
		if sameCalls == same {
			c.ops[i].hints = c.addHints(hints[k])
		}
		k++
	}
	return &c, nil
}

// TestSameCallsPlacedElsewhere: in some of outsideRange's runs the driver put device
// allocations the default run also made — the same request, the same cudaMalloc
// sizes — at other addresses, and that alone makes the difference: with only those
// requests' addresses moved into the default snapshot every figure is exact, and with
// only the others' (the allocations the replay guesses, which the address range
// varies) it is not. So an address range that moves only guessed allocations cannot
// reach these figures; the range's placements that permute the recorded allocations
// (deviceMemory.swapped) do (TestAddressDependentMisses).
func TestSameCallsPlacedElsewhere(t *testing.T) {
	for _, c := range []struct{ prog, setting string }{
		{"gpt2_generate_12l", "max_split_size_mb_128"},
		{"opt_generate_125m", "max_split_size_mb_64__garbage_collection_threshold_0p6"},
		{"gpt2_generate_fp16", "max_split_size_mb_128"},
		{"gpt2_generate_fp16", "max_split_size_mb_64__garbage_collection_threshold_0p6"},
	} {
		what := c.prog + " under " + c.setting
		hD, hS := missesHistory(t, c.prog+"__default"), missesHistory(t, c.prog+"__"+c.setting)
		f, st := missesFacts(t, c.prog+"__"+c.setting)
		for _, same := range []bool{true, false} {
			moved, err := withSomeAddresses(hD, hS, same)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			r, err := replayTimed(moved, st, Options{TotalMemory: f.TotalMemory, NoAddressRange: true})
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			note := " (addresses of the same device calls moved in)"
			if !same {
				note = " (addresses of the other device calls moved in)"
			}
			logRow(t, c.prog, c.setting, note, *r, f)
			differ := slices.ContainsFunc(acceptanceKeys, func(k string) bool { return r.Stats[k] != f.Stats[k] })
			if same && differ {
				t.Errorf("%s%s: not exact", what, note)
			}
			if !same && !differ {
				t.Errorf("%s%s: exact, so the guessed allocations alone explain it: take it off this test", what, note)
			}
		}
	}
}

// TestDriverPlacementsAmongCandidates: the places the address range chooses from
// (deviceMemory.candidates) take in every place the driver chose, in
// gpt2_generate_large's run under max_split_size_mb:64 with GC, for the device
// allocations its default run did not make, given that run's own segments before each
// (its cudaMalloc and cudaFree calls, replayed in order). The other shipped runs are
// logged, not held to it: device memory the snapshot does not show (cuBLAS and cuDNN
// workspaces, kernel modules; experiments/driver-va) also takes address space, which a
// list built from the snapshot's own segments cannot follow.
func TestDriverPlacementsAmongCandidates(t *testing.T) {
	others, err := reference.GlobPickles(reference.Misses211, "*__*.pickle")
	if err != nil {
		t.Fatal(err)
	}
	checked := false
	for _, path := range others {
		name := filepath.Base(reference.TrimPickle(path))
		prog, setting, _ := strings.Cut(name, "__")
		if setting == "default" {
			continue
		}
		def := referenceSnapshot(t, reference.Misses211, prog+"__default.pickle")
		other, err := snapshot.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		c, err := placementsAmongCandidates(def.Traces[0], other.Traces[0])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Logf("%s: %d of %d device allocations the default run did not make placed among the candidates", name, c.in, c.total)
		if name == "gpt2_generate_large__max_split_size_mb_64__garbage_collection_threshold_0p6" {
			checked = true
			if c.total == 0 || c.in != c.total {
				t.Errorf("%s: %d of %d among the candidates; not: %v", name, c.in, c.total, c.out)
			}
		}
	}
	if !checked {
		t.Error("gpt2_generate_large's capped run not shipped")
	}
}

// addedCalls counts, of the device allocations a run made that its default run did not
// make for the same request (the calls a setting adds, whose addresses a replay guesses),
// those whose address is among the candidates before it (in; out names the others) and
// those the driver model's own rule places at it (model).
type addedCalls struct {
	total, in, model int
	out              []string
}

// add counts c's calls in a too (not their out).
func (a *addedCalls) add(c addedCalls) {
	a.total, a.in, a.model = a.total+c.total, a.in+c.in, a.model+c.model
}

// placementsAmongCandidates replays other's cudaMalloc and cudaFree calls on a
// simulated device at their recorded addresses and counts the calls other adds to def
// (the same program's default run): addedCalls.
func placementsAmongCandidates(def, other []snapshot.TraceEntry) (addedCalls, error) {
	var c addedCalls
	made := map[int]map[int64]int{} // request → sizes of the device allocations before it
	var spans []liveSpan
	req := 0
	for _, e := range def {
		switch e.Action {
		case snapshot.ActionAlloc:
			req++
		case snapshot.ActionSegmentAlloc:
			if made[req] == nil {
				made[req] = map[int64]int{}
			}
			made[req][e.Size]++
			spans = append(spans, liveSpan{addr: e.Addr, size: uint64(e.Size)})
		}
	}
	m := newDeviceMemory(H200Memory)
	m.recordedSpans = mergeSpans(spans) // as a replay of def has them
	req = 0
	for i, e := range other {
		switch e.Action {
		case snapshot.ActionAlloc:
			req++
		case snapshot.ActionSegmentAlloc:
			added := made[req][e.Size] == 0
			if !added {
				made[req][e.Size]--
			} else {
				c.total++
				m.step(nil)
				if m.clone().place(uint64(e.Size), false) == e.Addr {
					c.model++
				}
				cands, _ := m.candidates(uint64(e.Size))
				if slices.Contains(cands, e.Addr) {
					c.in++
				} else {
					c.out = append(c.out, fmt.Sprintf("request %d: %d MiB", req, e.Size>>20))
				}
			}
			m.step([]hint{{addr: e.Addr, size: e.Size}})
			if a, err := m.Malloc(uint64(e.Size)); err != nil || a != e.Addr {
				return c, fmt.Errorf("entry %d: segment at %#x placed at %#x: %v", i, e.Addr, a, err)
			}
			m.lastGuessed = added // a replay of def guesses the calls other adds
		case snapshot.ActionSegmentFree:
			if err := m.Free(e.Addr); err != nil {
				return c, fmt.Errorf("entry %d: %w", i, err)
			}
		}
	}
	return c, nil
}

// TestAddressPlacementKinds: of the address range's placements, those that move only
// the guessed device allocations (even seeds) reach PyTorch's num_device_free for
// gpt2_generate_large under max_split_size_mb:64 with GC more often than those that
// also move recorded ones (odd seeds), the reason the range takes both kinds; the log
// says how often each did.
func TestAddressPlacementKinds(t *testing.T) {
	const prog, setting, key, n = "gpt2_generate_large", "max_split_size_mb_64__garbage_collection_threshold_0p6", "num_device_free", 100
	h := missesHistory(t, prog+"__default")
	f, st := missesFacts(t, prog+"__"+setting)
	var hits [2]int // by seed parity: 0 only guessed ones moved, 1 recorded ones too
	for seed := int64(1); seed <= 2*n; seed++ {
		r, err := replay(h, st, Options{TotalMemory: f.TotalMemory, placement: seed}, CompleteAsRecorded)
		if err != nil {
			t.Fatal(err)
		}
		if r.Stats[key] == f.Stats[key] {
			hits[seed%2]++
		}
	}
	t.Logf("%s under %s: %s = %d (PyTorch's) in %d of %d placements moving only the guessed device allocations, in %d of %d also moving recorded ones",
		prog, setting, key, f.Stats[key], hits[0], n, hits[1], n)
	if hits[0] <= hits[1] {
		t.Errorf("placements moving only the guessed allocations reach PyTorch's figure %d times, those moving recorded ones too %d times", hits[0], hits[1])
	}
}

// withSwappedSegments returns h with the device allocations of size that the recorded
// run made at addresses a and b swapped (every hint at a moved to b, and b's to a),
// everything else as recorded.
func withSwappedSegments(h *history, size int64, a, b uint64) *history {
	c := *h
	c.hints = make([][]hint, len(h.hints))
	for i, hs := range h.hints {
		c.hints[i] = slices.Clone(hs)
		for j, x := range c.hints[i] {
			if x.mapped || x.size != size {
				continue
			}
			switch x.addr {
			case a:
				c.hints[i][j].addr = b
			case b:
				c.hints[i][j].addr = a
			}
		}
	}
	return &c
}

// TestSmallPoolSegmentOrder is issue 20's held-back case (a) — a decoder's generate
// replayed under max_split_size_mb:128 with one 2 MiB segment more than PyTorch made
// (cudaMalloc 49 vs 48, reserved + 2 MiB) — on a shipped decoder program: with nothing
// moved but two of its small-pool segments (requests of 1 MiB or less, in 2 MiB
// segments) swapped in the default snapshot, the small pool needs one segment more. The
// allocator picks among free small blocks of equal size by address (PyTorch's
// BlockComparatorSize: stream, size, then pointer), so where the driver put the 2 MiB
// segments, relative to each other, decides which blocks are reused and how the pool
// fragments. max_split_size_mb changes nothing in the small pool (it bounds the large
// pool's splitting; small blocks are never oversize), so under every swap the small
// pool's figures are the same under the default setting as under max_split_size_mb:128:
// a run under that setting needs one 2 MiB segment more or less than the default run only
// where the driver ordered the small segments differently — as it may, since the large
// segments before them differ. The replay's address range under max_split_size_mb:128,
// which permutes recorded segments of a size (deviceMemory.swapped), holds that figure.
func TestSmallPoolSegmentOrder(t *testing.T) {
	const prog, small = "gpt2_generate_12l", 2 << 20
	s := referenceSnapshot(t, reference.Misses211, prog+"__default.pickle")
	h, err := prepare(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	fD, def := missesFacts(t, prog+"__default")
	fM, ms := missesFacts(t, prog+"__max_split_size_mb_128")
	replay := func(h *history, st Setting, f facts) *Run {
		t.Helper()
		r, err := replayTimed(h, st, Options{TotalMemory: f.TotalMemory, NoAddressRange: true})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	base := replay(h, ms, fM)
	// as recorded, the counts are PyTorch's (its fragmentation peak lies in its range:
	// TestAddressDependentMisses)
	for _, k := range []string{"num_device_alloc", "segment.all.peak", "reserved_bytes.all.peak"} {
		if base.Stats[k] != fM.Stats[k] {
			t.Errorf("%s under max_split_size_mb:128: %s = %d, PyTorch measured %d", prog, k, base.Stats[k], fM.Stats[k])
		}
	}
	addrs := h.recordedAddresses()[small]
	if len(addrs) < 4 {
		t.Fatalf("%d small-pool segments in %s's default run, want several", len(addrs), prog)
	}
	smallKeys := []string{"segment.small_pool.peak", "reserved_bytes.small_pool.peak", "num_device_alloc",
		"allocated_bytes.small_pool.peak", "inactive_split_bytes.small_pool.peak"}
	oneMore := 0
	for i := range addrs {
		for j := i + 1; j < len(addrs); j++ {
			sw := withSwappedSegments(h, small, addrs[i], addrs[j])
			rM, rD := replay(sw, ms, fM), replay(sw, def, fD)
			for _, k := range smallKeys {
				if rM.Stats[k] != rD.Stats[k] {
					t.Errorf("small-pool segments %d and %d swapped: %s = %d under max_split_size_mb:128, %d under the default setting",
						i, j, k, rM.Stats[k], rD.Stats[k])
				}
			}
			d := func(k string) int64 { return rM.Stats[k] - base.Stats[k] }
			if d("num_device_alloc") == 0 {
				continue
			}
			t.Logf("small-pool segments %d and %d (of %d, by address) swapped: under max_split_size_mb:128 num_device_alloc %+d, segment.all.peak %+d, reserved_bytes.all.peak %+d MiB, segment.small_pool.peak %+d, segment.large_pool.peak %+d",
				i, j, len(addrs), d("num_device_alloc"), d("segment.all.peak"), d("reserved_bytes.all.peak")>>20,
				d("segment.small_pool.peak"), d("segment.large_pool.peak"))
			if d("num_device_alloc") == 1 && d("segment.all.peak") == 1 && d("reserved_bytes.all.peak") == small &&
				d("segment.small_pool.peak") == 1 && d("segment.large_pool.peak") == 0 {
				oneMore++
			}
		}
	}
	if oneMore == 0 {
		t.Fatalf("no swap of two of %s's %d small-pool segments gives one 2 MiB segment more under max_split_size_mb:128", prog, len(addrs))
	}
	res, err := Replay(s, []Setting{ms}, Options{TotalMemory: fM.TotalMemory})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Runs[0]
	for k, want := range map[string]int64{
		"num_device_alloc":        base.Stats["num_device_alloc"] + 1,
		"segment.all.peak":        base.Stats["segment.all.peak"] + 1,
		"reserved_bytes.all.peak": base.Stats["reserved_bytes.all.peak"] + small,
	} {
		if lr, ok := r.AddressRange[k]; !ok || want < lr[0] || want > lr[1] {
			t.Errorf("%s under max_split_size_mb:128: %s address range %v (present %v) does not hold %d, one 2 MiB segment more", prog, k, lr, ok, want)
		}
	}
	t.Logf("%d of %d swaps of two small-pool segments give one 2 MiB segment more under max_split_size_mb:128 (and the same small pool under the default setting); the address range holds it: num_device_alloc %v, reserved_bytes.all.peak %v",
		oneMore, len(addrs)*(len(addrs)-1)/2, r.AddressRange["num_device_alloc"], r.AddressRange["reserved_bytes.all.peak"])
}

// TestSmallPoolSegmentOrderRecorded is case (a) in PyTorch's own runs:
// opt125m_score_generate_bs1 under roundup_power2_divisions:4, recorded five times (the
// shipped run and repeats/1-4 of reference/misses-2.11), made the same requests each
// time, yet the shipped run's small pool took one 2 MiB segment more than the other
// four (num_device_alloc and segment.all.peak + 1, reserved + 2 MiB, the large pool's
// figures equal), and the small segments lie in another order (each one's offset from
// the first). The default snapshot replayed with either run's own device addresses
// gives that run's figures, and replayed as it is gives the four repeats'. Some of the
// address range's placements give the shipped run's: the range, replayed until it
// converges, holds them (the 8 placements this history's length gave it did not;
// outsideRange).
func TestSmallPoolSegmentOrderRecorded(t *testing.T) {
	const prog, setting, small = "opt125m_score_generate_bs1", "roundup_power2_divisions_4", 2 << 20
	name := prog + "__" + setting
	read := func(rel string) (*snapshot.Snapshot, *history) {
		t.Helper()
		s := referenceSnapshot(t, reference.Misses211, rel)
		h, err := prepare(s, 0)
		if err != nil {
			t.Fatal(err)
		}
		return s, h
	}
	sD, hD := read(prog + "__default.pickle")
	sA, hA := read(name + ".pickle")
	sB, hB := read("repeats/1/" + name + ".pickle")
	ffA, err := reference.File(reference.Misses211, name+".facts.json")
	if err != nil {
		t.Fatal(err)
	}
	fA := readFacts(t, ffA)
	reps, err := reference.Glob(reference.Misses211, "repeats/*/"+name+".facts.json")
	if err != nil || len(reps) < 2 {
		t.Fatalf("repeats of %s: %d (%v), want several", name, len(reps), err)
	}
	fB := readFacts(t, reps[0])
	for _, ff := range reps[1:] {
		f := readFacts(t, ff)
		for _, k := range acceptanceKeys {
			if f.Stats[k] != fB.Stats[k] {
				t.Errorf("%s: %s = %d, in %s %d: the repeats differ", ff, k, f.Stats[k], reps[0], fB.Stats[k])
			}
		}
	}
	for k, d := range map[string]int64{
		"num_device_alloc": 1, "segment.all.peak": 1, "reserved_bytes.all.peak": small,
		"segment.small_pool.peak": 1, "reserved_bytes.small_pool.peak": small,
		"segment.large_pool.peak": 0, "reserved_bytes.large_pool.peak": 0, "allocated_bytes.all.peak": 0,
	} {
		if got := fA.Stats[k] - fB.Stats[k]; got != d {
			t.Errorf("%s: the shipped run's minus the repeats' = %d, want %d", k, got, d)
		}
	}
	requests := func(s *snapshot.Snapshot) (sizes []int64, offsets []int64) {
		var first uint64
		for _, e := range s.Traces[0] {
			switch {
			case e.Action == snapshot.ActionAlloc:
				sizes = append(sizes, e.Size)
			case e.Action == snapshot.ActionSegmentAlloc && e.Size == small:
				if first == 0 {
					first = e.Addr
				}
				offsets = append(offsets, int64(e.Addr-first)/small)
			}
		}
		return sizes, offsets
	}
	reqA, offA := requests(sA)
	reqB, offB := requests(sB)
	if !slices.Equal(reqA, reqB) {
		t.Fatalf("the two runs made different requests (%d, %d)", len(reqA), len(reqB))
	}
	t.Logf("%d requests, the same in both runs; small-pool segments' offsets from the first, in 2 MiB: %v in the shipped run, %v in repeat 1", len(reqA), offA, offB)
	st := fA.setting(t)
	for _, c := range []struct {
		what  string
		other *history
		f     facts
	}{{"the shipped run", hA, fA}, {"repeat 1", hB, fB}} {
		moved, err := withAddresses(hD, c.other)
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		r, err := replayTimed(moved, st, Options{TotalMemory: c.f.TotalMemory, NoAddressRange: true})
		if err != nil {
			t.Fatal(err)
		}
		check(t, name+" with "+c.what+"'s device addresses", *r, c.f, acceptanceKeys)
		logRow(t, prog, setting, " ("+c.what+"'s addresses)", *r, c.f)
	}
	res, err := Replay(sD, []Setting{st}, Options{TotalMemory: fB.TotalMemory})
	if err != nil {
		t.Fatal(err)
	}
	check(t, name+" as the default snapshot has it, against the repeats", res.Runs[0], fB, acceptanceKeys)
	logRow(t, prog, setting, " (against repeat 1)", res.Runs[0], fB)
	// The range's placements can reach the shipped run's figures, though few do. The
	// seeds and the permuting ones are placementOptions' (but for its two fixed orders).
	const seeds = 100
	reached := 0
	for seed := range seeds {
		o := Options{TotalMemory: fA.TotalMemory, NoAddressRange: true, placement: int64(seed) + 1}
		o.permute = o.placement%4 == 0
		x, err := replay(hD, st, o, o.Completion)
		if err != nil {
			t.Fatal(err)
		}
		if x.Stats["num_device_alloc"] == fA.Stats["num_device_alloc"] && x.Stats["segment.small_pool.peak"] == fA.Stats["segment.small_pool.peak"] {
			reached++
		}
	}
	t.Logf("%d of %d seeded placements give the shipped run's num_device_alloc %d and %d small-pool segments; the address range replays %d",
		reached, seeds, fA.Stats["num_device_alloc"], fA.Stats["segment.small_pool.peak"], res.Runs[0].AddressPlacements-1)
	if reached == 0 {
		t.Errorf("no placement of %d gives the shipped run's figures: the range's model cannot reach them", seeds)
	}
}
