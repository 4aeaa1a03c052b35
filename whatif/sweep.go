package whatif

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/snapshot"
)

// SweepSettings returns the settings Sweep tries on top of base: max_split_size_mb
// (unlimited, 64, 128, 256, 512, 1024), roundup_power2_divisions (off, 2, 4, 8, 16) and
// expandable_segments (off, on); and, when base carries a cap (Fraction or Cap),
// garbage_collection_threshold (off, 0.6, 0.8). base's cap is kept.
func SweepSettings(base Setting) []Setting {
	gcs := []float64{0}
	if base.Cap > 0 || (base.Fraction > 0 && base.Fraction < 1) {
		gcs = []float64{0, 0.6, 0.8}
	}
	var out []Setting
	for _, ms := range []int64{0, 64, 128, 256, 512, 1024} {
		for _, rp := range []int{0, 2, 4, 8, 16} {
			for _, exp := range []bool{false, true} {
				for _, gc := range gcs {
					c := base.Conf
					c.MaxSplitSize = ms << 20
					for i := range c.RoundupPower2Divisions {
						c.RoundupPower2Divisions[i] = rp
					}
					c.ExpandableSegments = exp
					c.GarbageCollectionThreshold = gc
					out = append(out, Setting{Conf: c, Fraction: base.Fraction, Cap: base.Cap})
				}
			}
		}
	}
	return out
}

// SweepResult is what [Sweep] found.
type SweepResult struct {
	// Runs are the settings whose replays ran through on every device, lowest peak
	// reserved first (summed over devices; ties: fewer cudaMallocs, then the order of
	// SweepSettings), one entry per result (Run.Alike names the settings with the same
	// figures). Under them a recorded run that ran out of memory and went on (it caught
	// torch.OutOfMemoryError) keeps its OOMs: each fails the requests the recorded run
	// failed, and no other.
	Runs []Run
	// Stopped are the settings whose replay stopped before the end of the history on
	// some device, in the order of SweepSettings: what the program did after that
	// point is not what it would have done under them, so they are not ranked.
	Stopped []SweepStop
	// Tried is how many settings were replayed (len(SweepSettings(base))).
	Tried int
	// settings are those settings, in the order of SweepSettings.
	settings []Setting
	// Warnings are the replay's (Result.Warnings): what the snapshot lacks, a card
	// that may be smaller than the one assumed.
	Warnings []string
}

// SweepStop is a setting of a sweep whose replay stopped.
type SweepStop struct {
	Setting Setting
	// Device is the first device whose replay stopped, Event the trace index there
	// (Run.Stopped).
	Device, Event int
	// Served is true when the replay served a request the recorded run failed
	// (Run.Served): the program would have gone on with that memory, which the
	// snapshot does not show; false when it ran out of memory where the recorded run
	// did not (Run.NewOOMs).
	Served bool
}

// Sweep replays s under every setting of SweepSettings(base) and ranks those whose
// replays ran through (SweepResult.Runs); the others are SweepResult.Stopped. Each
// replay stops at its first new OOM, as the program would have
// (Options.ContinueAfterOOM is ignored). Several devices: the peaks are summed per
// setting. Settings whose replays give the same figures on every device
// (sameFigures) are one entry: the setting among them with the fewest options set
// (ties: the order of SweepSettings), the others in its runs' Run.Alike — a
// max_split_size_mb no block reaches, for one, changes nothing, and a ranking that
// listed each such setting would fill its first rows with one result.
// The runs carry no address ranges (Options.NoAddressRange): with dozens of settings
// their extra replays would cost more than the sweep; a run whose figures depend on
// placement says so (Run.AddressUnranged). An error says so when no setting runs
// through.
func Sweep(s *snapshot.Snapshot, base Setting, opts Options) (*SweepResult, error) {
	settings := SweepSettings(base)
	opts.NoAddressRange = true
	opts.ContinueAfterOOM = false
	opts.unranged = "the sweep ranks settings by the driver model's placement and computes no address ranges (over dozens of settings they would cost more than the sweep); replay the settings you pick (--conf) for their ranges"
	res, err := Replay(s, settings, opts)
	if err != nil {
		return nil, err
	}
	per := len(res.Runs) / len(settings)
	out := &SweepResult{Tried: len(settings), Warnings: res.Warnings, settings: settings}
	type row struct {
		i        int
		reserved int64
		mallocs  int64
	}
	var rows []row
	for i := range settings {
		runs := res.Runs[i*per : (i+1)*per]
		if stop, ok := stopOf(runs); ok {
			out.Stopped = append(out.Stopped, stop)
			continue
		}
		r := row{i: i}
		for _, run := range runs {
			r.reserved += run.MaxReserved
			r.mallocs += run.DeviceAllocs
		}
		rows = append(rows, r)
	}
	sort.SliceStable(rows, func(a, b int) bool {
		if rows[a].reserved != rows[b].reserved {
			return rows[a].reserved < rows[b].reserved
		}
		return rows[a].mallocs < rows[b].mallocs
	})
	groups := map[int][]int{} // a group's first setting in rows' order → its settings
	var firsts []int
	for _, r := range rows {
		runs := res.Runs[r.i*per : (r.i+1)*per]
		found := false
		for _, f := range firsts {
			if sameFigures(res.Runs[f*per:(f+1)*per], runs) {
				groups[f] = append(groups[f], r.i)
				found = true
				break
			}
		}
		if !found {
			firsts = append(firsts, r.i)
			groups[r.i] = []int{r.i}
		}
	}
	for _, f := range firsts {
		g := groups[f]
		rep := g[0]
		for _, i := range g[1:] {
			if optionsSet(settings[i]) < optionsSet(settings[rep]) {
				rep = i
			}
		}
		var alike []Setting
		for _, i := range g {
			if i != rep {
				alike = append(alike, settings[i])
			}
		}
		slices.SortStableFunc(alike, func(a, b Setting) int { return optionsSet(a) - optionsSet(b) })
		for _, r := range res.Runs[rep*per : (rep+1)*per] {
			r.Alike = alike
			out.Runs = append(out.Runs, r)
		}
	}
	if len(out.Runs) == 0 {
		return nil, errors.New("whatif: sweep: " + noneRunsThrough(base, out.Stopped))
	}
	return out, nil
}

// stopOf is where a setting's replays (one per device) stopped: the first device's
// that did; ok is false when every one ran through.
func stopOf(runs []Run) (SweepStop, bool) {
	for _, r := range runs {
		if !r.ranThrough() {
			return SweepStop{Setting: r.Setting, Device: r.Device, Event: r.Stopped, Served: r.Served()}, true
		}
	}
	return SweepStop{}, false
}

// noneRunsThrough is Sweep's error when every setting's replay stopped: under base's
// cap, if it has one, and whether some served a request the recorded run failed.
func noneRunsThrough(base Setting, stops []SweepStop) string {
	served := 0
	for _, st := range stops {
		if st.Served {
			served++
		}
	}
	under := ""
	if base.Cap > 0 || base.Fraction > 0 && base.Fraction < 1 {
		under = " under this cap"
	}
	if served == 0 {
		return "every setting runs out of memory" + under
	}
	return fmt.Sprintf("no setting runs through%s: %d of the %d serve a request the recorded run failed (the snapshot does not show what the program would have done next), the others run out of memory where it did not", under, served, len(stops))
}

// Result is the sweep's ranking for WriteTable and WriteJSON: its first top results
// (top < 1: all), each on every device, with the settings that stopped
// (Result.Stopped) and the replay's warnings; about is the header (Describe).
func (sw *SweepResult) Result(top int, about About) *Result {
	runs := sw.Runs
	if top > 0 && len(runs) > 0 {
		n := 0
		for i, r := range runs {
			if r.Device == runs[0].Device {
				if n == top {
					runs = runs[:i]
					break
				}
				n++
			}
		}
	}
	return &Result{Runs: runs, About: about, Stopped: sw.Stopped, Warnings: sw.Warnings, swept: sw.settings}
}

// Entries is how many different results the ranking has (one per entry of Runs,
// each on every device), and how many settings they stand for (Run.Alike).
func (sw *SweepResult) Entries() (results, settings int) {
	for _, r := range sw.Runs {
		if r.Device == sw.Runs[0].Device {
			results++
			settings += 1 + len(r.Alike)
		}
	}
	return results, settings
}

// stopNotes says which settings of a sweep stopped, one line per place they stopped:
// those that served a request the recorded run failed, and those that ran out of
// memory where it did not. tried are the settings the sweep tried (a group that is every
// one but a few is said by those few).
func stopNotes(stops []SweepStop, tried []Setting) []string {
	type place struct {
		served        bool
		device, event int
	}
	var order []place
	groups := map[place][]Setting{}
	for _, st := range stops {
		p := place{st.Served, st.Device, st.Event}
		if _, ok := groups[p]; !ok {
			order = append(order, p)
		}
		groups[p] = append(groups[p], st.Setting)
	}
	slices.SortStableFunc(order, func(a, b place) int {
		switch {
		case a.served && !b.served:
			return -1
		case b.served && !a.served:
			return 1
		}
		return a.event - b.event
	})
	devices := map[int]bool{}
	for _, st := range stops {
		devices[st.Device] = true
	}
	var out []string
	for _, p := range order {
		g := groups[p]
		where := fmt.Sprintf("at event %d", p.event)
		if len(devices) > 1 || p.device != 0 {
			where += fmt.Sprintf(" on device %d", p.device)
		}
		subject, them := settingsNamed(g, tried), "them"
		if len(g) == 1 {
			them = "it"
		}
		if p.served {
			out = append(out, fmt.Sprintf("%s serve%s the request the recorded run failed %s: the replay stops there, since what the snapshot holds next is what the program did after that OOM, so the sweep does not rank %s: record the program under %s to see what it does instead",
				subject, verbS(len(g)), where, them, them))
		} else {
			out = append(out, fmt.Sprintf("%s run%s out of memory %s, where the recorded run did not: the replay stops there, as the program would have, so the sweep does not rank %s",
				subject, verbS(len(g)), where, them))
		}
	}
	return out
}

// settingsNamed names the settings g of all (every setting tried): each by its short
// label when they are few, else by the few of all they leave out, else the first few
// (the fewest options first) and how many more.
func settingsNamed(g, all []Setting) string {
	const few = 8
	names := func(sts []Setting) []string {
		sts = slices.Clone(sts)
		slices.SortStableFunc(sts, func(a, b Setting) int { return optionsSet(a) - optionsSet(b) })
		var out []string
		for _, st := range sts {
			out = append(out, st.ShortLabel())
		}
		return out
	}
	if len(g) == 1 {
		return g[0].ShortLabel()
	}
	if len(g) <= few {
		return fmt.Sprintf("%d settings (%s)", len(g), joinAnd(names(g)))
	}
	var rest []Setting
	for _, a := range all {
		if !slices.ContainsFunc(g, func(s Setting) bool { return s.Label() == a.Label() }) {
			rest = append(rest, a)
		}
	}
	if len(rest) > 0 && len(rest) <= few {
		return fmt.Sprintf("%d settings (every one tried but %s)", len(g), joinAnd(names(rest)))
	}
	n := names(g)
	return fmt.Sprintf("%d settings (%s and %d more; the JSON lists every one)", len(g), strings.Join(n[:few-2], ", "), len(g)-(few-2))
}

// sameFigures reports whether two settings' runs (one per device, in the same order)
// give the same figures on every device: the table's (peaks allocated and reserved,
// cudaMalloc and cudaFree calls, retries, OOMs, the fragmentation peak, the largest
// free block at the peak) and the segments' peak.
func sameFigures(a, b []Run) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.MaxAllocated != y.MaxAllocated || x.MaxReserved != y.MaxReserved ||
			x.DeviceAllocs != y.DeviceAllocs || x.DeviceFrees != y.DeviceFrees ||
			x.AllocRetries != y.AllocRetries || x.OOMs != y.OOMs ||
			x.PeakInactiveSplit != y.PeakInactiveSplit || x.LargestFreeAtPeak != y.LargestFreeAtPeak ||
			x.Stats["segment.all.peak"] != y.Stats["segment.all.peak"] {
			return false
		}
	}
	return true
}

// optionsSet counts the options of SweepSettings that st sets away from PyTorch's
// defaults: max_split_size_mb, roundup_power2_divisions, expandable_segments and
// garbage_collection_threshold.
func optionsSet(st Setting) int {
	n := 0
	if st.Conf.MaxSplitSize > 0 {
		n++
	}
	if slices.ContainsFunc(st.Conf.RoundupPower2Divisions[:], func(d int) bool { return d > 0 }) {
		n++
	}
	if st.Conf.ExpandableSegments {
		n++
	}
	if st.Conf.GarbageCollectionThreshold > 0 {
		n++
	}
	return n
}

// MinCap returns the smallest cap on reserved memory, to 2 MiB, under which st (its own
// Fraction or Cap ignored) replays s without an out-of-memory error on any device (of
// a snapshot whose run ran out of memory and went on, without one the recorded run did
// not have: a cap keeps the recorded ones, [Run.NewOOMs]). It
// searches between the uncapped run's peak allocated and peak reserved by bisection,
// which assumes that a larger cap never fails where a smaller one succeeds (garbage
// collection thresholds are fractions of the cap, so this can fail to hold). Frees that
// waited for other streams complete by opts.Completion; the search makes no timing
// ranges, nor address ranges: the cap is the driver model's placement's, and
// [MinCapRange] finds the one at which no placement tried runs out.
func MinCap(s *snapshot.Snapshot, st Setting, opts Options) (int64, error) {
	st.Fraction, st.Cap = 0, 0
	opts.NoTimingRange = true
	opts.NoAddressRange = true
	free, err := Replay(s, []Setting{st}, opts)
	if err != nil {
		return 0, err
	}
	var lo, hi int64 // lo fails (or is a lower bound), hi succeeds
	for _, r := range free.Runs {
		if err := notThroughError(&r); err != nil {
			return 0, err
		}
		lo = max(lo, r.MaxAllocated)
		hi = max(hi, r.MaxReserved)
	}
	const step = 2 << 20
	lo = lo / step * step
	hi = (hi + step - 1) / step * step
	ok := func(c int64) (bool, error) {
		t := st
		t.Cap = c
		res, err := Replay(s, []Setting{t}, opts)
		if err != nil {
			return false, err
		}
		for _, r := range res.Runs {
			if !r.ranThrough() {
				return false, nil
			}
		}
		return true, nil
	}
	if good, err := ok(lo); err != nil {
		return 0, err
	} else if good {
		return lo, nil
	}
	for hi-lo > step {
		mid := (lo + hi) / 2 / step * step
		if mid <= lo {
			mid = lo + step
		}
		good, err := ok(mid)
		if err != nil {
			return 0, err
		}
		if good {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}

// notThroughError is MinCap's error for an uncapped replay that did not run through
// (nil for one that did): it ran out of memory where the recorded run did not, or
// served a request the recorded run failed (what the program did next under the
// setting is not in the snapshot).
func notThroughError(r *Run) error {
	switch {
	case r.Served():
		return fmt.Errorf("whatif: min-cap: %s serves the request the recorded run failed at event %d, and the snapshot does not show what the program would have done next: no cap can be found from it", r.Setting.Label(), r.Stopped)
	case !r.ranThrough():
		return fmt.Errorf("whatif: min-cap: %s runs out of memory even without a cap", r.Setting.Label())
	}
	return nil
}

// CapSearch is what MinCapRange found for one setting (its JSON keys are those of
// memlab whatif --min-cap --json).
type CapSearch struct {
	// Cap is the smallest cap on reserved memory, to 2 MiB, at which neither the
	// driver model's placement nor any placement of the address range tried, nor any
	// GPU timing of the timing range, runs out of memory on any device.
	Cap int64 `json:"cap"`
	// ModelCap is the smallest at which the model's placement alone does not
	// ([MinCap]); at most Cap.
	ModelCap int64 `json:"model_cap"`
	// RecordedOOMs is how many out-of-memory errors the replay has under every cap
	// from Cap up: the recorded run's own, which the program went on after (0 for a
	// run that did not run out).
	RecordedOOMs int64 `json:"recorded_ooms"`
	// Placements is how many placements were tried at Cap (the model's among them;
	// 1 when the figures there do not depend on placement), the fewest over the
	// devices; Converged whether every device's range there converged.
	Placements int  `json:"placements"`
	Converged  bool `json:"converged"`
	// Timings is how many GPU timings of the cross-stream frees (and of the frees of
	// DDP's gradient buckets) were tried at Cap (Run.TimingSchedules), the fewest
	// over the devices that have such frees, and CrossStreamFrees and HeldFrees how
	// many frees of each kind they time, the most over the devices; all 0 without
	// such frees or with Options.NoTimingRange.
	Timings          int `json:"timings"`
	CrossStreamFrees int `json:"cross_stream_frees"`
	HeldFrees        int `json:"held_frees"`
}

// MinCapRange is [MinCap] over the address range's placements and the timing range's
// GPU timings: the smallest cap at which no placement tried, and no completion timing
// of the frees that waited for other streams, runs out of memory (CapSearch.Cap),
// beside the model's own at the snapshot's timing (CapSearch.ModelCap). It searches
// up from the model's cap by bisection, with the assumption MinCap makes; each step
// replays the placements until their range converges (Options.RangeBudget bounds each
// step's), and the timings a timing range tries (none with opts.NoTimingRange). A
// later timing holds blocks longer: the activation offloading of
// reference/programs-2.11 needs a higher cap with its timings than at the snapshot's
// own (TestMinCapTimings).
func MinCapRange(s *snapshot.Snapshot, st Setting, opts Options) (CapSearch, error) {
	model, err := MinCap(s, st, opts)
	if err != nil {
		return CapSearch{}, err
	}
	st.Fraction, st.Cap = 0, 0
	opts.NoAddressRange = false
	const step = 2 << 20
	total := opts.TotalMemory
	if total <= 0 {
		total = H200Memory
	}
	try := func(c int64) (bool, CapSearch, error) {
		t := st
		t.Cap = c
		res, err := Replay(s, []Setting{t}, opts)
		if err != nil {
			return false, CapSearch{}, err
		}
		cs := CapSearch{Cap: c, ModelCap: model, Placements: math.MaxInt, Converged: true}
		ok := true
		for _, r := range res.Runs {
			cs.RecordedOOMs += r.OOMs - r.NewOOMs
			if !r.ranThrough() || r.RangeRanOut {
				ok = false
			}
			cs.Placements = min(cs.Placements, max(r.AddressPlacements, 1))
			cs.Converged = cs.Converged && (r.AddressConverged || r.AddressPlacements == 0)
			if r.TimingSchedules > 0 {
				if cs.Timings == 0 || r.TimingSchedules < cs.Timings {
					cs.Timings = r.TimingSchedules
				}
				cs.CrossStreamFrees = max(cs.CrossStreamFrees, r.CrossStreamFrees)
				cs.HeldFrees = max(cs.HeldFrees, r.HeldFrees)
			}
		}
		return ok, cs, nil
	}
	ok, found, err := try(model)
	if err != nil || ok {
		return found, err
	}
	// an upper bound: double the distance above the model's cap until no placement
	// runs out
	lo, hi := model, int64(0)
	for d := int64(step); ; d *= 2 {
		hi = min(model+d, total)
		good, cs, err := try(hi)
		if err != nil {
			return CapSearch{}, err
		}
		if good {
			found = cs
			break
		}
		if hi == total {
			return CapSearch{}, fmt.Errorf("whatif: min-cap: under %s some placement of the device allocations runs out of memory even with the whole device", st.Label())
		}
		lo = hi
	}
	for hi-lo > step {
		mid := (lo + hi) / 2 / step * step
		if mid <= lo {
			mid = lo + step
		}
		good, cs, err := try(mid)
		if err != nil {
			return CapSearch{}, err
		}
		if good {
			hi, found = mid, cs
		} else {
			lo = mid
		}
	}
	return found, nil
}

// ParseSettings makes one uncapped Setting per PYTORCH_CUDA_ALLOC_CONF string ("" is
// PyTorch's defaults).
func ParseSettings(confs ...string) ([]Setting, error) {
	var out []Setting
	for _, c := range confs {
		cfg, err := allocator.ParseConfig(c)
		if err != nil {
			return nil, fmt.Errorf("whatif: configuration %q: %w", c, err)
		}
		out = append(out, Setting{Conf: cfg})
	}
	return out, nil
}

// SweepAdvice replays, with their ranges, the first k distinct settings of the sweep's
// ranking (sw.Runs, lowest peak reserved first) beside the snapshot's own setting under
// base's cap, and advises among them ([Result.Advise]): the sweep ranks by the driver
// model's placement alone, so the pick is judged again on the high end of each figure's
// range against the recorded run. When some settings served a request the recorded run
// failed (sw.Stopped), the first k of them (the fewest options first) are replayed
// too, so that the advice names them: the ranked ones then fail what the recorded run
// failed. k < 1 means 3.
func SweepAdvice(s *snapshot.Snapshot, sw *SweepResult, base Setting, k int, opts Options) (*Result, error) {
	if k < 1 {
		k = 3
	}
	own, err := SnapshotSetting(s)
	if err != nil {
		return nil, err
	}
	own.Fraction, own.Cap = base.Fraction, base.Cap
	settings := []Setting{own}
	seen := map[string]bool{own.Label(): true}
	add := func(st Setting, limit int) {
		if len(settings) < limit && !seen[st.Label()] {
			seen[st.Label()] = true
			settings = append(settings, st)
		}
	}
	for _, r := range sw.Runs {
		add(r.Setting, 1+k)
	}
	var served []Setting
	for _, st := range sw.Stopped {
		if st.Served {
			served = append(served, st.Setting)
		}
	}
	slices.SortStableFunc(served, func(a, b Setting) int { return optionsSet(a) - optionsSet(b) })
	limit := len(settings) + k
	for _, st := range served {
		add(st, limit)
	}
	res, err := Replay(s, settings, opts)
	if err != nil {
		return nil, fmt.Errorf("whatif: sweep advice: %w", err)
	}
	res.Advise(&own)
	return res, nil
}
