package whatif

import (
	"maps"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/snapshot"
)

// workload reads a default snapshot of reference/workloads-2.11.
func workload(t *testing.T, prog string) *snapshot.Snapshot {
	t.Helper()
	return referenceSnapshot(t, reference.Workloads211, prog+"__default.pickle")
}

// TestAddressRangeSameOnAnyCores: the placements tried, and so the range, do not
// depend on how many processors replay them, and the range converges.
func TestAddressRangeSameOnAnyCores(t *testing.T) {
	s := workload(t, "gpt2_train")
	settings, err := ParseSettings("max_split_size_mb:128")
	if err != nil {
		t.Fatal(err)
	}
	var runs []Run
	for _, procs := range []int{1, 3} {
		old := runtime.GOMAXPROCS(procs)
		res, err := Replay(s, settings, Options{})
		runtime.GOMAXPROCS(old)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, res.Runs[0])
	}
	a, b := runs[0], runs[1]
	if !a.AddressConverged || a.AddressPlacements < 1+minPlacements || a.AddressRange == nil {
		t.Errorf("converged %v over %d placements, range %v: want a range converged over at least %d", a.AddressConverged, a.AddressPlacements, a.AddressRange, 1+minPlacements)
	}
	if a.AddressPlacements != b.AddressPlacements || !maps.Equal(a.AddressRange, b.AddressRange) {
		t.Errorf("one processor: %d placements, range %v; three: %d, %v", a.AddressPlacements, a.AddressRange, b.AddressPlacements, b.AddressRange)
	}
}

// TestRangeBudget: a range the time budget stops before it converges says so, and
// is over the placements that were replayed.
func TestRangeBudget(t *testing.T) {
	res, err := Replay(addressTrace(), nil, Options{RangeBudget: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Runs[0]
	if r.AddressConverged || !r.AddressBudgetSpent || r.AddressPlacements < 2 || r.AddressPlacements > 1+runtime.GOMAXPROCS(0) {
		t.Errorf("converged %v, budget spent %v, %d placements: want one batch (at most %d), not converged, budget spent",
			r.AddressConverged, r.AddressBudgetSpent, r.AddressPlacements, 1+runtime.GOMAXPROCS(0))
	}
	var out strings.Builder
	if err := res.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "not converged: the time budget") {
		t.Errorf("the table does not say the range did not converge:\n%s", out.String())
	}
}

// TestUnrangedSaysWhy: a run whose figures depend on placement but whose range was
// not computed says so, in the table and the JSON.
func TestUnrangedSaysWhy(t *testing.T) {
	res, err := Replay(addressTrace(), nil, Options{NoAddressRange: true})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Runs[0]
	if r.AddressRange != nil || r.AddressUnranged == "" {
		t.Fatalf("range %v, unranged %q: want no range and a reason", r.AddressRange, r.AddressUnranged)
	}
	var tab, js strings.Builder
	if err := res.WriteTable(&tab); err != nil {
		t.Fatal(err)
	}
	if err := res.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tab.String(), "unranged: ") || !strings.Contains(js.String(), `"address_unranged"`) {
		t.Errorf("table or JSON does not say the figures are unranged:\n%s\n%s", tab.String(), js.String())
	}
}

// TestCapThatNeverEngages: a cap that refuses nothing and runs no collection gives
// exactly the figures of no cap, ranges included — under the snapshot's own
// configuration no range at all, under another the uncapped row's.
func TestCapThatNeverEngages(t *testing.T) {
	s := workload(t, "gpt2_train")
	for _, conf := range []string{"", "max_split_size_mb:128"} {
		settings, err := ParseSettings(conf, conf)
		if err != nil {
			t.Fatal(err)
		}
		settings[1].Cap = 64 << 30
		res, err := Replay(s, settings, Options{})
		if err != nil {
			t.Fatal(err)
		}
		free, capped := res.Runs[0], res.Runs[1]
		if capped.Allowed != 64<<30 || capped.Limits.CapRefusals != 0 {
			t.Fatalf("%q: allowed %d, %d refusals: want a cap of 64 GiB that refuses nothing", conf, capped.Allowed, capped.Limits.CapRefusals)
		}
		if !maps.Equal(free.Stats, capped.Stats) || !maps.Equal(free.AddressRange, capped.AddressRange) ||
			free.AddressPlacements != capped.AddressPlacements || !maps.Equal(free.TimingRange, capped.TimingRange) {
			t.Errorf("%q: capped figures %v range %v over %d placements; uncapped %v range %v over %d", conf,
				capped.Stats["reserved_bytes.all.peak"], capped.AddressRange, capped.AddressPlacements,
				free.Stats["reserved_bytes.all.peak"], free.AddressRange, free.AddressPlacements)
		}
		if conf == "" && capped.AddressRange != nil {
			t.Errorf("the snapshot's own setting under a cap that never engaged has an address range %v", capped.AddressRange)
		}
	}
}

// TestDirectionAndAfterOOMMarks: a figure whose address range spans the recorded setting's
// figure is marked as of unknown direction, and the figures of a replay that stopped
// at a predicted OOM are marked as not comparable, but for the OOM count and those
// with an after-OOM range.
func TestDirectionAndAfterOOMMarks(t *testing.T) {
	def := Run{Setting: Setting{}, Stats: map[string]int64{"reserved_bytes.all.peak": 100 << 20, "num_device_alloc": 10}, Stopped: -1}
	def.MaxReserved, def.DeviceAllocs = 100<<20, 10
	other := Run{Setting: Setting{Cap: 1 << 30}, Stopped: -1,
		Stats:        map[string]int64{"reserved_bytes.all.peak": 110 << 20, "num_device_alloc": 12},
		AddressRange: map[string][2]int64{"reserved_bytes.all.peak": {90 << 20, 110 << 20}, "num_device_alloc": {11, 12}}}
	other.MaxReserved, other.DeviceAllocs = 110<<20, 12
	oom := Run{Setting: Setting{Cap: 50 << 20}, Stopped: 7, FirstOOM: &OOM{Event: 7}, Stats: map[string]int64{"num_ooms": 1},
		AfterOOMRange: map[string][2]int64{"inactive_split_bytes.all.peak": {0, 2 << 20}}}
	oom.OOMs = 1
	res := &Result{Runs: []Run{def, other, oom}}
	_, rows := res.Columns()
	if got := rows[1][2]; !strings.HasSuffix(got, " (direction unknown)") {
		t.Errorf("peak reserved %q: want it marked of unknown direction (its range spans the default's 100 MiB)", got)
	}
	if got := rows[1][3]; strings.Contains(got, "direction") {
		t.Errorf("cudaMalloc %q: its range {11, 12} lies above the default's 10, the direction is known", got)
	}
	marked := 0
	for k, cell := range rows[2][1:8] {
		if strings.HasSuffix(cell, "†") {
			marked++
		} else if key := tableKeys[k].key; key != "num_ooms" && key != "inactive_split_bytes.all.peak" {
			t.Errorf("%s %q of the replay stopped at its OOM is not marked", key, cell)
		}
	}
	if marked != 5 {
		t.Errorf("%d figures marked after the OOM, want 5: %q", marked, rows[2])
	}
	var tab strings.Builder
	if err := res.WriteTable(&tab); err != nil {
		t.Fatal(err)
	}
	for _, note := range []string{"(direction unknown) beside a figure", "† beside a figure"} {
		if !strings.Contains(tab.String(), note) {
			t.Errorf("the table does not explain %q:\n%s", note, tab.String())
		}
	}
	if slices.Contains(oom.notComparable(), "num_ooms") {
		t.Error("the OOM count is marked not comparable")
	}
}

// TestDirectionUnderACapOnEveryRow: when every row is capped (--fraction), the row of
// the recorded setting under the cap is the baseline, as it is the advice's: a range
// spanning its figure is marked of unknown direction.
func TestDirectionUnderACapOnEveryRow(t *testing.T) {
	def := Run{Setting: Setting{Fraction: 0.5}, Stats: map[string]int64{"reserved_bytes.all.peak": 100 << 20}, Stopped: -1}
	other := Run{Setting: Setting{Fraction: 0.5}, Stopped: -1,
		Stats:        map[string]int64{"reserved_bytes.all.peak": 104 << 20},
		AddressRange: map[string][2]int64{"reserved_bytes.all.peak": {96 << 20, 104 << 20}}}
	other.Setting.Conf.MaxSplitSize = 128 << 20
	res := &Result{Runs: []Run{def, other}}
	if b := res.baseline(other); b == nil || b.Setting.Label() != def.Setting.Label() {
		t.Fatalf("baseline of %q under a cap on every row: %v, want %q", other.Setting.Label(), b, def.Setting.Label())
	}
	if b := res.baseline(def); b != nil {
		t.Errorf("the baseline row has a baseline of its own: %q", b.Setting.Label())
	}
	_, rows := res.Columns()
	if got := rows[1][2]; !strings.HasSuffix(got, " (direction unknown)") {
		t.Errorf("peak reserved %q: want it marked of unknown direction (its range spans the capped default's 100 MiB)", got)
	}
	// With the uncapped row among them, that one stays the baseline.
	free := def
	free.Setting = Setting{}
	res = &Result{Runs: []Run{def, free, other}}
	if b := res.baseline(other); b == nil || b.Setting.Label() != "default" {
		t.Errorf("baseline with an uncapped default among the rows: %v, want the uncapped one", b)
	}
}

// TestMinCapRange: the smallest cap at which no placement tried runs out is at least
// the model's; below it the model or some placement runs out, at it none does.
func TestMinCapRange(t *testing.T) {
	s := workload(t, "gpt2_train")
	sts, err := ParseSettings("max_split_size_mb:128")
	if err != nil {
		t.Fatal(err)
	}
	st := sts[0]
	cs, err := MinCapRange(s, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if cs.Cap < cs.ModelCap || cs.Placements < 2 || !cs.Converged {
		t.Fatalf("%+v: want a cap at least the model's, over converged placements", cs)
	}
	ooms := func(c int64) (int64, int64) {
		t.Helper()
		x := st
		x.Cap = c
		res, err := Replay(s, []Setting{x}, Options{NoTimingRange: true})
		if err != nil {
			t.Fatal(err)
		}
		r := res.Runs[0]
		return r.OOMs, r.AddressRange["num_ooms"][1]
	}
	if m, p := ooms(cs.Cap); m != 0 || p != 0 {
		t.Errorf("at the cap %d: %d OOMs, placements up to %d", cs.Cap, m, p)
	}
	if m, p := ooms(cs.Cap - 2<<20); m == 0 && p == 0 {
		t.Errorf("2 MiB below the cap %d: no OOM in the model nor any placement", cs.Cap)
	}
	t.Logf("model's cap %d, no placement of %d runs out from %d", cs.ModelCap, cs.Placements, cs.Cap)
}

// TestMinCapTimings: where frees wait for copies on another stream, the smallest cap
// holds under every GPU timing tried, not only the snapshot's: the activation
// offloading (hundreds of frees wait for copies to host memory) under expandable
// segments needs more with its timings than at the snapshot's own, and at that cap no
// timing runs out; with Options.NoTimingRange the search tries none.
func TestMinCapTimings(t *testing.T) {
	s := referenceSnapshot(t, reference.Programs211, "async_activation_offload_train_bf16__default.pickle")
	st := settings(t, "expandable_segments:True")[0]
	timed, err := MinCapRange(s, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	own, err := MinCapRange(s, st, Options{NoTimingRange: true})
	if err != nil {
		t.Fatal(err)
	}
	if timed.Timings < minSchedules || timed.CrossStreamFrees == 0 || own.Timings != 0 {
		t.Fatalf("timings tried: %d over %d frees, and %d without timing ranges; want some, then none", timed.Timings, timed.CrossStreamFrees, own.Timings)
	}
	if timed.Cap <= own.Cap || timed.ModelCap != own.ModelCap {
		t.Errorf("cap %d with the timings, %d at the snapshot's (model's %d and %d): want it higher with them, the model's the same", timed.Cap, own.Cap, timed.ModelCap, own.ModelCap)
	}
	x := st
	x.Cap = timed.Cap
	res, err := Replay(s, []Setting{x}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Runs[0]; r.RunsOut() {
		t.Errorf("at the cap %d a replay or a timing runs out (%d OOMs)", timed.Cap, r.OOMs)
	}
	t.Logf("expandable segments: cap %d with %d timings of %d frees, %d at the snapshot's timing", timed.Cap, timed.Timings, timed.CrossStreamFrees, own.Cap)
}

// TestConvergence: a range converges once placementWindow placements in a row widen
// no key's range, and not before minPlacements.
func TestConvergence(t *testing.T) {
	run := func(v int64) *Run { return &Run{Stats: map[string]int64{"k": v}} }
	c := newConvergence(run(10))
	c.add(run(12)) // widens
	for range placementWindow {
		c.add(run(11))
	}
	if c.converged(placementWindow + 1) {
		t.Error("converged before minPlacements")
	}
	if !c.converged(minPlacements) {
		t.Errorf("not converged after %d placements that widened nothing", placementWindow)
	}
	c.add(run(9)) // widens again
	if c.converged(minPlacements + 1) {
		t.Error("converged right after a placement widened the range")
	}
	if got := c.ranges(); got["k"] != [2]int64{9, 12} {
		t.Errorf("range %v, want k: [9, 12]", got)
	}
}

// TestGuessesComeEarly measures the prefix of a replay that its placements of
// guessed device allocations leave alone, and bounds it where it could cost: for
// every shipped practitioner's program under every setting it was recorded under,
// the model's replay of a history of 20,000 requests or more guesses its first device
// allocation within the first 60 % of the requests. Shorter histories are logged,
// not bounded: their whole range takes a fraction of a second (67.6 % at most:
// diffusion_cfg_sample_fp16 under max_split_size_mb:128, recorded 2026-12-04 16:42
// UTC, 4,113 requests, whose whole what-if with its 43 placements takes 0.07 s on
// two cores; 57.6 % r3d_video_train_bf16 under the same setting, 0.07 s with 44
// placements; 43.8 % clip_contrastive_train_fp16; 0.2 % on the 82 MiB GPT-2 training
// snapshot of BENCHMARKS.md). The placements that move or permute recorded
// allocations differ from the first device allocation on: all but one in four of the
// random ones (placementOptions) and the two fixed orders. So replaying that prefix
// once for all placements would save at most a quarter of the prefix's share of them
// (CLIP's whole range, 98 placements of 5,381 requests, takes under a second on two
// cores), and is not done; a model change or a program that lets the first guess come
// later in a long history fails this test, and the saving is then worth measuring
// again (guessesLate lists the cases measured).
func TestGuessesComeEarly(t *testing.T) {
	longest, guessing := 0.0, 0
	programCases(t, func(prog, ff string, s *snapshot.Snapshot, f facts) {
		what := prog + " under " + settingName(prog, ff)
		res, err := Replay(s, []Setting{f.setting(t)}, Options{TotalMemory: f.TotalMemory, NoAddressRange: true, NoTimingRange: true})
		if err != nil {
			t.Fatal(err)
		}
		r := res.Runs[0]
		if r.Guessed == 0 {
			if r.beforeGuess != r.requests {
				t.Errorf("%s: nothing guessed, but a prefix of %d of %d requests", what, r.beforeGuess, r.requests)
			}
			return
		}
		guessing++
		share := float64(r.beforeGuess) / float64(r.requests)
		longest = max(longest, share)
		t.Logf("%s: first guess after %d of %d requests (%.1f %%)", what, r.beforeGuess, r.requests, 100*share)
		if _, measured := guessesLate[what]; !measured && share > 0.6 && r.requests >= 20_000 {
			t.Errorf("%s: the first guessed device allocation after %.1f %% of %d requests: a prefix shared by the placements may now pay", what, 100*share, r.requests)
		}
	})
	if guessing == 0 {
		t.Fatal("no replay guessed a device allocation")
	}
	t.Logf("%d replays that guess; the longest prefix before a guess: %.1f %% of the requests", guessing, 100*longest)
}

// guessesLate are the long histories whose first guessed device allocation comes after
// 60 % of their requests (TestGuessesComeEarly), with the measured cost of their whole
// range, which a prefix shared by the placements could only shorten.
var guessesLate = map[string]string{
	// 87.8 % of 25,313 requests: `memlab whatif` of the default snapshot under this
	// setting, 49 placements, took 0.19 s on the 2-core development machine
	// (2026-12-07 08:41 UTC)
	"deq_fixed_point_train under max_split_size_mb_128": "the whole range in 0.19 s",
	// 70.4 % of 42,293 requests: `memlab whatif` of the default snapshot (with Python
	// stacks) under this setting, 120 placements, took 1.31 s on the 2-core development
	// machine, reading the snapshot included (2026-12-07 14:39 UTC)
	"detr_hungarian_train_bf16 under max_split_size_mb_128": "the whole range in 1.31 s",
}

// TestAfterOOMRangeTakesInEveryPlacement: the after-OOM range of a replay stopped at an
// OOM takes in each placement's figure at its own stop and the most its own frees could
// reach, and a placement that did not run out its final figure; figures without an
// after-OOM range gain none.
func TestAfterOOMRangeTakesInEveryPlacement(t *testing.T) {
	const frag = "inactive_split_bytes.all.peak"
	r := &Run{Stopped: 3, Stats: map[string]int64{frag: 100, "num_device_alloc": 5},
		AfterOOMRange: map[string][2]int64{frag: {100, 150}}}
	widenAfterOOM(r, &Run{Stopped: 2, Stats: map[string]int64{frag: 90}, AfterOOMRange: map[string][2]int64{frag: {90, 170}}})
	if got := r.AfterOOMRange[frag]; got != [2]int64{90, 170} {
		t.Errorf("after an earlier OOM at 90 that frees could take to 170: range %v, want [90 170]", got)
	}
	widenAfterOOM(r, &Run{Stopped: -1, Stats: map[string]int64{frag: 180}})
	if got := r.AfterOOMRange[frag]; got != [2]int64{90, 180} {
		t.Errorf("after a placement that ran to the end at 180: range %v, want [90 180]", got)
	}
	if _, ok := r.AfterOOMRange["num_device_alloc"]; ok || len(r.AfterOOMRange) != 1 {
		t.Errorf("after-OOM ranges %v: want only %s's", r.AfterOOMRange, frag)
	}
}

// TestFixedPlacementsFirst: a range over a replay that guessed starts, after the two
// fixed orders of the recorded allocations, with its three fixed placements (packed
// above, packed below, after the last allocation of the same size), and the random
// placements after them keep the seeds they had before (placement 6 is random seed 3).
func TestFixedPlacementsFirst(t *testing.T) {
	h := &history{} // no setting of its own: every setting is another
	st := Setting{Conf: allocator.DefaultConfig()}
	for seed, want := range map[int]packing{3: packAbove, 4: packBelow, 5: packAfterSameSize} {
		if o := placementOptions(h, st, Options{}, seed, 1); o.pack != want || o.placement != int64(seed) {
			t.Errorf("placement %d: pack %d, seed %d; want pack %d", seed, o.pack, o.placement, want)
		}
	}
	if o := placementOptions(h, st, Options{}, 6, 1); o.pack != noPacking || o.placement != 3 {
		t.Errorf("placement 6: pack %d, seed %d; want random seed 3", o.pack, o.placement)
	}
	if o := placementOptions(h, st, Options{}, 5, 0); o.pack != noPacking {
		t.Errorf("placement 5 of a replay that guessed nothing packs (%d); want none", o.pack)
	}
}

// TestMappedRunsNeedNoAddressRange: a run under expandable segments that only maps
// pages into reserved ranges gets the same figures under every placement, so it
// computes none and, in a sweep, is not listed as unranged; its advice candidate is
// not unranged either. Checked on real snapshots: the placements a range would try
// give exactly the figures of the model's placement.
func TestMappedRunsNeedNoAddressRange(t *testing.T) {
	expandable, err := ParseSettings("expandable_segments:True")
	if err != nil {
		t.Fatal(err)
	}
	st := expandable[0]
	for _, s := range []*snapshot.Snapshot{
		workload(t, "gpt2_train"),
		referenceSnapshot(t, reference.Programs211, "moe_train_bf16__default.pickle"),
	} {
		h, err := prepare(s, 0)
		if err != nil {
			t.Fatal(err)
		}
		r, err := replay(h, st, Options{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if r.Guessed == 0 || r.placeable {
			t.Fatalf("%d guessed reservations, placeable %v: want guessed reservations and no cudaMalloc call", r.Guessed, r.placeable)
		}
		for k := 1; k <= 8; k++ {
			p, err := replay(h, st, placementOptions(h, st, Options{}, k, r.Guessed), 0)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(p.Stats, r.Stats) {
				t.Errorf("placement %d changed a figure of a run that only maps pages", k)
			}
		}
		for _, opts := range []Options{{}, {NoAddressRange: true, unranged: "the sweep's reason"}} {
			res, err := Replay(s, expandable, opts)
			if err != nil {
				t.Fatal(err)
			}
			got := res.Runs[0]
			if got.AddressPlacements != 0 || got.AddressRange != nil || got.AddressUnranged != "" || candidateOf(&got, 0).unranged {
				t.Errorf("no address range wanted: %d placements, range %v, unranged %q, advice unranged %v",
					got.AddressPlacements, got.AddressRange, got.AddressUnranged, candidateOf(&got, 0).unranged)
			}
			var tab strings.Builder
			if err := res.WriteTable(&tab); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(tab.String(), "makes no cudaMalloc call (its cudaMalloc and cudaFree columns count the mappings and unmappings of pages") ||
				!strings.Contains(tab.String(), "so no figure depends on where the driver places device memory") || strings.Contains(tab.String(), "unranged:") {
				t.Errorf("the table does not say why there is no range, or what its cudaMalloc column counts:\n%s", tab.String())
			}
		}
	}
}
