package whatif

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/snapshot"
)

// facts is the part of a workload's facts.json the acceptance compares.
type facts struct {
	Conf        string           `json:"conf"`
	Frac        *float64         `json:"frac"`
	TotalMemory int64            `json:"total_memory"`
	Device      string           `json:"device"`
	MaxAlloc    int64            `json:"max_memory_allocated"`
	MaxReserved int64            `json:"max_memory_reserved"`
	Stats       map[string]int64 `json:"memory_stats"`
	OOM         *string          `json:"oom"`
}

// setting is the allocator setting the recorded run ran under: its conf and, for the
// capped setting, its memory fraction.
func (f facts) setting(t *testing.T) Setting {
	t.Helper()
	cfg, err := allocator.ParseConfig(f.Conf)
	if err != nil {
		t.Fatalf("conf %q: %v", f.Conf, err)
	}
	st := Setting{Conf: cfg}
	if f.Frac != nil {
		st.Fraction = *f.Frac
	}
	return st
}

// referenceSnapshot reads the snapshot name (P__S.pickle, or its .gz) of a folder of
// reference/ and fails t when it is missing or unreadable.
func referenceSnapshot(t *testing.T, folder, name string) *snapshot.Snapshot {
	t.Helper()
	p, err := reference.Pickle(folder, name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// replayLike replays s under the setting of the recorded run f on a device of its size
// and returns the run (what names it in a failure).
func replayLike(t *testing.T, what string, s *snapshot.Snapshot, f facts) Run {
	t.Helper()
	res, err := Replay(s, []Setting{f.setting(t)}, Options{TotalMemory: f.TotalMemory})
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return res.Runs[0]
}

func readFacts(t *testing.T, path string) facts {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f facts
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f
}

// acceptanceKeys are the memory_stats keys a prediction must equal exactly.
var acceptanceKeys = []string{
	"allocated_bytes.all.peak", "reserved_bytes.all.peak", "num_device_alloc", "num_device_free",
	"num_alloc_retries", "num_ooms", "segment.all.peak", "inactive_split_bytes.all.peak",
}

// TestPredictsRecordedSettings is the acceptance: every program's default snapshot,
// replayed under every setting it was also recorded under, gives exactly what PyTorch
// measured in that run. A program without cross-stream frees must be exact, with no
// timing range. With them (record_stream: when they complete is GPU timing, which the
// default snapshot holds only for its own run), every figure the replay does not flag
// as timing-dependent must be exact, every flagged one must lie inside its reported
// range, and the range must be narrow (at most rangeWidth of the figure); and when the
// GPU let those frees complete at other points in that run than in the default one,
// the prediction with the other run's timing moved into the default snapshot must be
// exact in every figure. A figure flagged as depending on where the driver placed
// device allocations the default run did not make (Run.AddressRange) is held to its
// address range the same way.
func TestPredictsRecordedSettings(t *testing.T) {
	files, err := reference.GlobPickles(reference.Workloads211, "*__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no workload snapshots")
	}
	var c tally
	widest, widestAt := 0.0, "none"
	for _, def := range files {
		prog := strings.TrimSuffix(filepath.Base(reference.TrimPickle(def)), "__default")
		s, err := snapshot.ReadFile(def)
		if err != nil {
			t.Fatal(err)
		}
		factFiles, err := reference.Glob(reference.Workloads211, prog+"__*.facts.json")
		if err != nil {
			t.Fatal(err)
		}
		for _, ff := range factFiles {
			r, f := checkPair(t, s, prog, ff, "")
			c.add(prog+" under "+settingName(prog, ff), r, f)
			for _, k := range acceptanceKeys {
				if la, placed := r.AddressRange[k]; placed && la[1] > 0 {
					if wd := float64(la[1]-la[0]) / float64(la[1]); wd > widest {
						widest, widestAt = wd, fmt.Sprintf("%s under %s, %s", prog, strings.TrimSuffix(strings.TrimPrefix(filepath.Base(ff), prog+"__"), ".facts.json"), k)
					}
				}
			}
		}
	}
	summary := c.String()
	t.Log(summary)
	t.Logf("widest address range: %.2f of its top (%s)", widest, widestAt)
	c.widths.log(t, "recorded settings", recordedWide)
	quotedInBenchmarks(t, "the acceptance's summary line", summary)
	if c.checked < 5*len(files) || len(files) < 9 {
		t.Fatalf("checked %d program × setting pairs of %d programs, want 5 settings of each of the 9 shipped", c.checked, len(files))
	}
}

// TestPredictsModernPrograms is the acceptance for the programs of issue 20
// (reference/modern-2.11/: torch.compile training, reduce-overhead inference with CUDA
// graph trees, hand-captured graphs sharing a pool, a MemPool KV cache, FSDP2 on one
// rank): each default snapshot, replayed with its allocations routed to the pools the
// replay infers (PyTorch 2.11's trace entries carry no pool id), under every setting
// the program was also recorded under, against what PyTorch measured, as
// [TestPredictsRecordedSettings] does. BENCHMARKS.md quotes the count.
func TestPredictsModernPrograms(t *testing.T) {
	files, err := reference.GlobPickles(reference.Modern211, "*__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	var c tally
	pooled := map[string]bool{}
	for _, def := range files {
		prog := strings.TrimSuffix(filepath.Base(reference.TrimPickle(def)), "__default")
		s, err := snapshot.ReadFile(def)
		if err != nil {
			t.Fatal(err)
		}
		factFiles, err := reference.Glob(reference.Modern211, prog+"__*.facts.json")
		if err != nil {
			t.Fatal(err)
		}
		for _, ff := range factFiles {
			r, f := checkPair(t, s, prog, ff, "")
			c.add(prog+" under "+settingName(prog, ff), r, f)
		}
		res, err := Replay(s, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		pooled[prog] = len(res.Pools) > 0
	}
	// The programs with private pools are replayed with them, and say so.
	for _, prog := range []string{"compile_reduce_overhead_infer", "graph_shared_pool", "mempool_kv_cache"} {
		if !pooled[prog] {
			t.Errorf("%s: the replay found no private pool", prog)
		}
	}
	summary := "modern programs: " + c.String()
	t.Log(summary)
	c.widths.log(t, "modern programs", nil)
	quotedInBenchmarks(t, "the modern programs' summary line", summary)
	if c.checked < 25 || len(files) < 5 {
		t.Fatalf("checked %d program × setting pairs of %d programs, want 5 settings of each of the 5 shipped", c.checked, len(files))
	}
}

// quotedInBenchmarks fails t unless BENCHMARKS.md quotes line, a summary the test
// printed, on a line of its own: the file must say what the test measures now.
func quotedInBenchmarks(t *testing.T, what, line string) {
	t.Helper()
	root, err := reference.Root()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "\n"+line+"\n") {
		t.Errorf("BENCHMARKS.md does not quote %s %q: update its what-if section", what, line)
	}
}

// checkPair replays the default snapshot s of program prog under the setting of the
// recorded run ff (its facts file, beside its pickle) and checks the acceptance: every
// figure not flagged as timing-dependent exact, every flagged one inside its narrow
// range, and, when the GPU completed the cross-stream frees at other points in that run,
// every figure exact with that run's completion points moved into s, or inside its
// address range at that timing (checkTiming). It returns the
// replay with s's own timing and the run's facts.
func checkPair(t *testing.T, s *snapshot.Snapshot, prog, ff, note string) (Run, facts) {
	t.Helper()
	name := settingName(prog, ff)
	f := readFacts(t, ff)
	st := f.setting(t)
	res, err := Replay(s, []Setting{st}, Options{TotalMemory: f.TotalMemory})
	if err != nil {
		t.Fatalf("%s: %v", prog, err)
	}
	r := res.Runs[0]
	what := prog + " under " + name + note
	exact := slices.DeleteFunc(slices.Clone(acceptanceKeys), func(k string) bool {
		_, timed := r.TimingRange[k]
		_, placed := r.AddressRange[k]
		_, after := r.AfterOOMRange[k]
		return timed || placed || after
	})
	check(t, what, r, f, exact)
	checkRange(t, what, "timing", r.TimingRange, r, f, nil)
	checkRange(t, what, "address", r.AddressRange, r, f, nil)
	checkRange(t, what, "after-OOM", r.AfterOOMRange, r, f, nil)
	for k, lr := range r.AfterOOMRange { // every figure it covers, beyond the acceptance's
		if w, ok := f.Stats[k]; !ok || w < lr[0] || w > lr[1] {
			t.Errorf("%s: %s: PyTorch measured %d, outside the after-OOM range <%d, %d>", what, k, w, lr[0], lr[1])
		}
	}
	logRow(t, prog, name+note, "", r, f)
	logPlacements(t, what, r)
	checkTiming(t, prog, name+note, s, ff, r, f)
	return r, f
}

// checkTiming holds run r, the replay of program prog's default snapshot s under the
// setting of the recorded run ff (name: that setting), to that run's cross-stream frees.
// Where the run's snapshot holds none, r must flag no figure as depending on GPU timing.
// Where the GPU completed them at other points in that run, the replay with those
// completion points moved into s must be exact in every figure, or, for one that depends
// on where the driver put device memory, lie inside its address range at that timing;
// that moved snapshot is returned (nil where the run completed them where s did). A run
// may hold another number of them than s: a free whose completion is its next entry
// looks like one made at once. Where that run's program made other requests than s
// (sameRequests), its own snapshot stands for s moved to its timing.
func checkTiming(t *testing.T, prog, name string, s *snapshot.Snapshot, ff string, r Run, f facts) *snapshot.Snapshot {
	t.Helper()
	what := prog + " under " + name
	own := snapshotBeside(t, ff)
	timing := completions(own.Traces[0])
	if len(timing) == 0 && (r.CrossStreamFrees != 0 || r.TimingDependent()) {
		t.Errorf("%s: no cross-stream frees in the snapshot, but %d counted, timing range %v", what, r.CrossStreamFrees, r.TimingRange)
	}
	moved, other := retimed(s, own)
	if moved == nil {
		return nil
	}
	if other != "" {
		what += " (its own snapshot: " + other + ")"
	}
	res, err := Replay(moved, []Setting{f.setting(t)}, Options{TotalMemory: f.TotalMemory})
	if err != nil {
		t.Fatalf("%s with that run's timing: %v", what, err)
	}
	rt := res.Runs[0]
	exact := slices.DeleteFunc(slices.Clone(acceptanceKeys), func(k string) bool {
		_, placed := rt.AddressRange[k]
		return placed
	})
	check(t, what+" with that run's cross-stream timing", rt, f, exact)
	checkRange(t, what+" with that run's cross-stream timing", "address", rt.AddressRange, rt, f, programsWide)
	logRow(t, prog, name, " (its timing)", rt, f)
	return moved
}

// bucketFrees maps each of DDP's gradient buckets (ddpBucket) that default trace tr
// frees, by its allocation's place among the alloc entries, to the allocations made
// before its free; of trace other (whose entries may carry no frames), the same
// blocks' frees. Where they differ, the run of other let go of a bucket at another point
// (op.held).
func bucketFrees(tr, other []snapshot.TraceEntry) (def, run map[int]int) {
	buckets := map[int]bool{}
	frees := func(tr []snapshot.TraceEntry, pick func(e *snapshot.TraceEntry, n int) bool) map[int]int {
		ord := map[uint64]int{}
		out := map[int]int{}
		allocs := 0
		for i := range tr {
			e := &tr[i]
			switch e.Action {
			case snapshot.ActionAlloc:
				if pick(e, allocs) {
					ord[e.Addr] = allocs
				}
				allocs++
			case snapshot.ActionFreeRequested:
				if n, ok := ord[e.Addr]; ok {
					out[n] = allocs
					delete(ord, e.Addr)
				}
			}
		}
		return out
	}
	def = frees(tr, func(e *snapshot.TraceEntry, n int) bool {
		buckets[n] = ddpBucket(e.Frames) != notBucket
		return buckets[n]
	})
	run = frees(other, func(_ *snapshot.TraceEntry, n int) bool { return buckets[n] })
	return def, run
}

// retimed is the default snapshot s moved to the timing of another run of the same
// program, whose snapshot is own: movedTo(s, own's completions), or own itself where
// its program made other requests than s (other: the first difference, sameRequests),
// since no completion points can then be moved into s.
func retimed(s, own *snapshot.Snapshot) (moved *snapshot.Snapshot, other string) {
	if other = sameRequests(s, own); other != "" {
		return own, other
	}
	return movedTo(s, completions(own.Traces[0])), ""
}

// movedTo returns the default snapshot s with its cross-stream completions moved to
// another run's (timing: completions of that run's trace; withTiming), or nil where that
// run completed them where s did.
func movedTo(s *snapshot.Snapshot, timing map[int]int) *snapshot.Snapshot {
	if maps.Equal(timing, completions(s.Traces[0])) {
		return nil
	}
	moved := *s
	moved.Traces = [][]snapshot.TraceEntry{withTiming(s.Traces[0], timing)}
	return &moved
}

// logPlacements logs how many placements an address range took until it stopped
// widening (BENCHMARKS.md's convergence table).
func logPlacements(t *testing.T, what string, r Run) {
	t.Helper()
	if r.AddressPlacements > 0 {
		t.Logf("placements: %s: %d, converged %v, %d keys ranged", what, r.AddressPlacements, r.AddressConverged, len(r.AddressRange))
	}
}

// settingName is the setting part of a recorded run's facts file name.
func settingName(prog, ff string) string {
	return strings.TrimSuffix(strings.TrimPrefix(filepath.Base(ff), prog+"__"), ".facts.json")
}

// tally counts the figures of replayed program × setting pairs against
// PyTorch's: equal, inside a GPU-timing range, inside a driver-address range,
// inside an after-OOM range (checkPair fails any other); and, of those inside a
// range, how many lie inside a range wider than informative allows.
type tally struct {
	checked, exact, inRange, inAddr, afterOOM, wide int
	// departed counts the figures of pairs whose program took another path after an
	// OOM, where the replay stopped (addDeparted): not compared.
	departed int
	widths   rangeWidths
}

// addDeparted counts a pair whose program took another path after an OOM, where its
// replay stopped (departure): its figures are of that other path, not compared.
func (c *tally) addDeparted() {
	c.checked++
	c.departed += len(acceptanceKeys)
}

// add counts run r's acceptance figures against the recorded facts f.
func (c *tally) add(what string, r Run, f facts) {
	c.checked++
	c.widths.add(what, "timing", r.TimingRange)
	c.widths.add(what, "address", r.AddressRange)
	for _, k := range acceptanceKeys {
		lr, timed := r.TimingRange[k]
		la, placed := r.AddressRange[k]
		lo, after := r.AfterOOMRange[k]
		var in [2]int64
		switch w := f.Stats[k]; {
		case r.Stats[k] == w:
			c.exact++
			continue
		case timed && lr[0] <= w && w <= lr[1]:
			c.inRange++
			in = lr
		case placed && la[0] <= w && w <= la[1]:
			c.inAddr++
			in = la
		case after && lo[0] <= w && w <= lo[1]:
			c.afterOOM++
			continue // a bound from the allocator's rules, not a spread of outcomes
		default:
			continue
		}
		if wd, limit := width(in), informative(k); wd > limit {
			c.wide++
		}
	}
}

// String is the summary line BENCHMARKS.md quotes.
func (c tally) String() string {
	n := c.checked * len(acceptanceKeys)
	s := fmt.Sprintf("%d programs × settings, %d figures: %d equal to PyTorch's; %d others depend on GPU timing and lie inside their range; %d others depend on driver addresses and lie inside their range; %d others depend on what the program did after its OOM and lie inside their range; %d of the timing and address ones inside a range wider than informative",
		c.checked, n, c.exact, c.inRange, c.inAddr, c.afterOOM, c.wide)
	if c.departed > 0 {
		s += fmt.Sprintf("; %d others are of runs whose program took another path after an OOM, at the request where the replay stops, and are not compared", c.departed)
	}
	return s
}

// isCount reports whether memory_stats key k is a count (not bytes).
func isCount(k string) bool { return strings.HasPrefix(k, "num_") || strings.HasPrefix(k, "segment.") }

// informative is the widest a range of acceptance key k may be and still inform a
// choice (issue 28): 40 % of its top for the fragmentation peak, 5 % for the other
// peaks, 10 % for counts.
func informative(k string) float64 {
	switch {
	case k == "inactive_split_bytes.all.peak":
		return 0.40
	case isCount(k):
		return 0.10
	}
	return 0.05
}

// width is a range's width as a fraction of its top (0 for a range at 0).
func width(lr [2]int64) float64 {
	if lr[1] <= 0 {
		return 0
	}
	return float64(lr[1]-lr[0]) / float64(lr[1])
}

// rangeWidths collects the timing and address ranges of acceptance keys, each against
// informative, for the log: how many, and which are wider.
type rangeWidths struct {
	n      int
	wider  []string  // each wider range, as logged
	ids    []string  // each wider range as "what: key kind"
	widths []float64 // each wider range's width, as a fraction of its top
}

func (w *rangeWidths) add(what, kind string, rg map[string][2]int64) {
	for _, k := range acceptanceKeys {
		lr, ok := rg[k]
		if !ok {
			continue
		}
		w.n++
		if wd, limit := width(lr), informative(k); wd > limit {
			w.wider = append(w.wider, fmt.Sprintf("%s: %s %s range [%d, %d] is %.1f %% of its top (informative: ≤ %.0f %%)", what, k, kind, lr[0], lr[1], 100*wd, 100*limit))
			w.ids = append(w.ids, fmt.Sprintf("%s: %s %s", what, k, kind))
			w.widths = append(w.widths, wd)
		}
	}
}

// log prints the count and every wider range, and fails t for each wider range that
// known (the ranges the model still leaves wider than informative, by "program under
// setting: key kind" and the width it had, in %) does not list, or lists narrower, and
// for each listed range no longer wider than informative: a range that widens fails,
// and one that narrows must come off the list.
func (w *rangeWidths) log(t *testing.T, what string, known map[string]float64) {
	t.Helper()
	t.Logf("%s: %d timing and address ranges of acceptance figures; %d within the informative widths (peaks ≤ 5 %%, counts ≤ 10 %%, fragmentation peak ≤ 40 %% of the top), %d wider:",
		what, w.n, w.n-len(w.wider), len(w.wider))
	seen := map[string]bool{}
	for i, l := range w.wider {
		t.Logf("  wider: %s", l)
		id := w.ids[i]
		seen[id] = true
		switch pc, ok := known[id]; {
		case !ok:
			t.Errorf("%s: %s, wider than informative and not among the known wide ranges", what, l)
		case 100*w.widths[i] > pc+0.05:
			t.Errorf("%s: %s, wider than the %.1f %% it had", what, l, pc)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(known)) {
		if !seen[id] {
			t.Errorf("%s: the known wide range %q is no longer wider than informative: take it off the list", what, id)
		}
	}
}

// recordedWide are the ranges of reference/workloads-2.11 still wider than
// informative (rangeWidths.log), with their width in % of the top. The timing ones are
// the spread PyTorch itself shows (TestRepeatedRuns: runs of multistream_branches under
// the capped setting measure several device-free counts, with and without a retry);
// the address ones are over placements of guessed device allocations.
var recordedWide = map[string]float64{
	"gpt2_train under max_split_size_mb_64__garbage_collection_threshold_0p6: num_device_free address":            12.5,
	"multistream_branches under max_split_size_mb_64__garbage_collection_threshold_0p6: num_device_free timing":   27.3,
	"multistream_branches under max_split_size_mb_64__garbage_collection_threshold_0p6: num_alloc_retries timing": 100,
	"phases_empty_cache under roundup_power2_divisions_4: inactive_split_bytes.all.peak address":                  42.6,
	"prefetch_side_stream under max_split_size_mb_128: reserved_bytes.all.peak address":                           11.8,
	"prefetch_side_stream under roundup_power2_divisions_4: reserved_bytes.all.peak address":                      11.7,
}

// missesWide are the ranges of reference/misses-2.11 still wider than informative, as
// recordedWide lists those of workloads-2.11: all over placements of guessed device
// allocations (the programs have one stream).
var missesWide = map[string]float64{
	"gpt2_generate_fp16 under max_split_size_mb_128: inactive_split_bytes.all.peak address":                                  40.2,
	"gpt2_generate_fp16 under max_split_size_mb_64__garbage_collection_threshold_0p6: num_device_free address":               66.7,
	"gpt2_generate_fp16 under max_split_size_mb_64__garbage_collection_threshold_0p6: segment.all.peak address":              12.5,
	"gpt2_generate_fp16 under max_split_size_mb_64__garbage_collection_threshold_0p6: inactive_split_bytes.all.peak address": 40.2,
	"vit_train_bf16 under max_split_size_mb_64__garbage_collection_threshold_0p6: num_device_free address":                   25.0,
	"vit_train_bf16 under roundup_power2_divisions_4: inactive_split_bytes.all.peak address":                                 48.5,
}

// rangeWidth bounds a timing or address range of an acceptance key: hi − lo at most
// this fraction of hi (or slack(k), for small counts), so that a range that took in
// every outcome fails. The informative widths the issue asks for (informative) are
// narrower; ranges wider than those are listed, not failed (rangeWidths).
const rangeWidth = 0.5

// slack is the width a range of key k may have whatever its top: 4 for a count (a
// count of 2 to 6 device frees is a spread of outcomes, not every outcome), 2 bytes
// otherwise.
func slack(k string) float64 {
	if isCount(k) {
		return 4
	}
	return 2
}

// checkRange checks that every acceptance figure the replay flags (its timing, its
// address or its after-OOM range, rg, named by kind) lies inside its range, and that
// a timing or address range is narrow. An after-OOM range is not held to rangeWidth:
// it is not the spread of outcomes tried but a bound from the allocator's rules, whose
// top TestAfterOOMRangeIsReachedAndNeverExceeded shows reached. Nor is a range that
// listed (a folder's wide ranges, keyed "WHAT: KEY KIND"; nil for none) names: the
// list holds it to the width it gives (rangeWidths.log).
func checkRange(t *testing.T, what, kind string, rg map[string][2]int64, r Run, f facts, listed map[string]float64) {
	t.Helper()
	for _, k := range acceptanceKeys {
		lr, ok := rg[k]
		if !ok {
			continue
		}
		lo, hi := lr[0], lr[1]
		_, held := listed[what+": "+k+" "+kind]
		if lo > hi || kind != "after-OOM" && !held && float64(hi-lo) > max(rangeWidth*float64(hi), slack(k)) {
			t.Errorf("%s: %s: %s range [%d, %d] is wider than %g of its top", what, k, kind, lo, hi, rangeWidth)
		}
		if w, ok := f.Stats[k]; !ok || w < lo || w > hi {
			t.Errorf("%s: %s: PyTorch measured %d, outside the %s range [%d, %d]", what, k, w, kind, lo, hi)
		}
		if v := r.Stats[k]; v < lo || v > hi {
			t.Errorf("%s: %s: the prediction %d is outside its own %s range [%d, %d]", what, k, v, kind, lo, hi)
		}
	}
}

// logRow logs one markdown table row: the prediction's figures, each followed by "="
// when it equals PyTorch's or by PyTorch's figure in brackets when not.
func logRow(t *testing.T, prog, setting, note string, r Run, f facts) {
	t.Helper()
	row := fmt.Sprintf("| %s | %s%s |", prog, setting, note)
	for _, k := range acceptanceKeys {
		got, w := r.Stats[k], f.Stats[k]
		rg := ""
		if lr, ok := r.TimingRange[k]; ok {
			rg = fmt.Sprintf(" [%d, %d]", lr[0], lr[1])
		}
		if la, ok := r.AddressRange[k]; ok {
			rg += fmt.Sprintf(" {%d, %d}", la[0], la[1])
		}
		if lo, ok := r.AfterOOMRange[k]; ok {
			rg += fmt.Sprintf(" <%d, %d>", lo[0], lo[1])
		}
		if got == w {
			row += fmt.Sprintf(" %d =%s |", got, rg)
		} else {
			row += fmt.Sprintf(" %d%s (PyTorch %d) |", got, rg, w)
		}
	}
	t.Log(row)
}

func check(t *testing.T, what string, r Run, f facts, keys []string) {
	t.Helper()
	for _, k := range keys {
		if got, w := r.Stats[k], f.Stats[k]; got != w {
			t.Errorf("%s: %s = %d, PyTorch measured %d (guessed addresses %d)", what, k, got, w, r.Guessed)
		}
	}
	// the peaks PyTorch reports beside memory_stats are the same two figures
	if slices.Contains(keys, "allocated_bytes.all.peak") && r.MaxAllocated != f.MaxAlloc {
		t.Errorf("%s: peak allocated %d, PyTorch max_memory_allocated %d", what, r.MaxAllocated, f.MaxAlloc)
	}
	if slices.Contains(keys, "reserved_bytes.all.peak") && r.MaxReserved != f.MaxReserved {
		t.Errorf("%s: peak reserved %d, PyTorch max_memory_reserved %d", what, r.MaxReserved, f.MaxReserved)
	}
	if (r.FirstOOM != nil) != f.ranOut() {
		t.Errorf("%s: OOM %v, PyTorch %v (%d OOMs)", what, r.FirstOOM != nil, f.OOM, f.Stats["num_ooms"])
	}
}

// ranOut reports whether the recorded run ran out of device memory: it ended with an
// OOM (f.OOM) or, a program that catches them, counted some.
func (f facts) ranOut() bool { return f.OOM != nil || f.Stats["num_ooms"] > 0 }

// completions returns, for each free that waited for other streams (its free_completed
// is not the next entry), by the ordinal of its allocation, the number of requests
// (alloc and free_requested entries) before its completion, shifted left by 20 bits,
// with the rank of the completion in the low bits; -1 when it never completed.
// The request sequence is the same in every run of a program, so these say when the
// GPU let each cross-stream free complete in that run.
func completions(tr []snapshot.TraceEntry) map[int]int {
	ord := map[uint64]int{}
	out := map[int]int{}
	allocs, requests := 0, 0
	inRelease := false
	seq := 0
	for i, e := range tr {
		switch e.Action {
		case snapshot.ActionAlloc:
			ord[e.Addr] = allocs
			allocs++
			requests++
		case snapshot.ActionFreeRequested:
			requests++
			if completesLater(tr, i) {
				out[ord[e.Addr]] = -1
			}
		case snapshot.ActionFreeCompleted:
			if n, ok := ord[e.Addr]; ok {
				if _, deferred := out[n]; deferred {
					// Completions after a segment_free and before the next request come
					// from the synchronisation of the allocator's own retry path: the
					// replay synchronises by itself, in this order, if it takes that path.
					at := requests
					if inRelease {
						at++
					}
					seq++
					out[n] = at<<20 | seq
				}
			}
		}
		switch e.Action {
		case snapshot.ActionSegmentFree, snapshot.ActionSegmentUnmap:
			inRelease = true
		case snapshot.ActionAlloc, snapshot.ActionOOM, snapshot.ActionFreeRequested:
			inRelease = false
		}
	}
	return out
}

// withTiming returns the trace tr with its cross-stream completions moved to where
// another run of the same program completed them (completions of that run): a free tr
// deferred that the other run completed at once completes at once, and one tr made at
// once that the other run deferred completes where that run completed it. Blocks are
// renamed by allocation ordinal (a block pending longer must not meet a later one that
// the recorded run put at its address); segment entries keep their addresses.
func withTiming(tr []snapshot.TraceEntry, when map[int]int) []snapshot.TraceEntry {
	const renamed = 1 << 62
	own := completions(tr)
	ord := map[uint64]int{}
	streamOf := map[int]uint64{} // allocation ordinal → its stream
	sizeOf := map[int]int64{}    // allocation ordinal → its request
	allocs, requests := 0, 0
	var out []snapshot.TraceEntry
	flush := func() {
		var due []int
		for n, r := range when {
			if r >= 0 && r>>20 == requests {
				due = append(due, n)
			}
		}
		slices.SortFunc(due, func(x, y int) int { return cmp.Compare(when[x], when[y]) })
		for _, n := range due {
			out = append(out, snapshot.TraceEntry{Action: snapshot.ActionFreeCompleted, Addr: renamed + uint64(n), Size: sizeOf[n], Stream: streamOf[n]})
		}
	}
	for _, e := range tr {
		switch e.Action {
		case snapshot.ActionAlloc:
			flush()
			ord[e.Addr] = allocs
			streamOf[allocs] = e.Stream
			sizeOf[allocs] = e.Size
			allocs++
			requests++
		case snapshot.ActionFreeRequested:
			flush()
			requests++
		case snapshot.ActionFreeCompleted:
			if n, ok := ord[e.Addr]; ok {
				// moved: a completion the recorded run deferred (withTiming adds that
				// run's), or one it made at once that the other run deferred
				_, deferred := own[n]
				_, there := when[n]
				if deferred || there {
					continue
				}
			}
		}
		if n, ok := ord[e.Addr]; ok && (e.Action == snapshot.ActionAlloc || e.Action == snapshot.ActionFreeRequested || e.Action == snapshot.ActionFreeCompleted) {
			e.Addr = renamed + uint64(n)
		}
		out = append(out, e)
		if e.Action == snapshot.ActionFreeRequested && e.Addr >= renamed {
			n := int(e.Addr - renamed)
			if _, deferred := own[n]; deferred {
				if _, there := when[n]; !there {
					// that run completed it at once, before its next request
					out = append(out, snapshot.TraceEntry{Action: snapshot.ActionFreeCompleted, Addr: e.Addr, Size: e.Size, Stream: e.Stream})
				}
			}
		}
	}
	flush()
	return out
}

// snapshotBeside reads the snapshot recorded with the facts file ff (pickleBeside).
func snapshotBeside(t *testing.T, ff string) *snapshot.Snapshot {
	t.Helper()
	path, err := pickleBeside(ff)
	if err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// pickleBeside returns the snapshot recorded with the facts file ff (a path under the
// repository's reference/): P__S.pickle or P__S.pickle.gz beside it.
func pickleBeside(ff string) (string, error) {
	root, err := reference.Root()
	if err != nil {
		return "", err
	}
	folder, err := filepath.Rel(filepath.Join(root, "reference"), filepath.Dir(ff))
	if err != nil {
		return "", err
	}
	return reference.Pickle(folder, strings.TrimSuffix(filepath.Base(ff), ".facts.json")+".pickle")
}

// TestWithTiming: moving another run's completion points into a trace completes at once a
// free that run completed at once (though this trace deferred it), and completes a free
// this trace made at once where that run completed it.
func TestWithTiming(t *testing.T) {
	e := func(a snapshot.Action, addr uint64) snapshot.TraceEntry {
		return snapshot.TraceEntry{Action: a, Addr: addr, Size: 512, Stream: 1}
	}
	tr := []snapshot.TraceEntry{
		e(snapshot.ActionAlloc, 0x1000),         // A
		e(snapshot.ActionAlloc, 0x2000),         // B
		e(snapshot.ActionFreeRequested, 0x1000), // A, deferred here
		e(snapshot.ActionFreeRequested, 0x2000), // B, at once here
		e(snapshot.ActionFreeCompleted, 0x2000),
		e(snapshot.ActionAlloc, 0x3000), // C
		e(snapshot.ActionFreeCompleted, 0x1000),
		e(snapshot.ActionAlloc, 0x4000), // D
	}
	if got := completions(tr); len(got) != 1 || got[0] != 5<<20|1 {
		t.Fatalf("completions: %v, want A's alone, after 5 requests", got)
	}
	// the other run: A at once, B deferred until after 5 requests (before D)
	out := withTiming(tr, map[int]int{1: 5<<20 | 1})
	const r = 1 << 62
	want := []snapshot.TraceEntry{
		e(snapshot.ActionAlloc, r+0), e(snapshot.ActionAlloc, r+1),
		e(snapshot.ActionFreeRequested, r+0), e(snapshot.ActionFreeCompleted, r+0),
		e(snapshot.ActionFreeRequested, r+1),
		e(snapshot.ActionAlloc, r+2),
		e(snapshot.ActionFreeCompleted, r+1),
		e(snapshot.ActionAlloc, r+3),
	}
	if len(out) != len(want) {
		t.Fatalf("withTiming: %d entries, want %d: %+v", len(out), len(want), out)
	}
	for i := range want {
		if out[i].Action != want[i].Action || out[i].Addr != want[i].Addr {
			t.Errorf("entry %d: %s %#x, want %s %#x", i, out[i].Action, out[i].Addr, want[i].Action, want[i].Addr)
		}
	}
}
