package whatif

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

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

// Sweep replays s under every setting of SweepSettings(base) and returns the runs that
// did not run out of memory, lowest peak reserved first (ties: fewer cudaMallocs, then
// the order of SweepSettings). Several devices: the peaks are summed per setting.
// Settings whose replays give the same figures on every device (sameFigures) are one
// entry: the setting among them with the fewest options set (ties: the order of
// SweepSettings), the others in its runs' Run.Alike — a max_split_size_mb no block
// reaches, for one, changes nothing, and a ranking that listed each such setting would
// fill its first rows with one result.
// The runs carry no address ranges (Options.NoAddressRange): with dozens of settings
// their extra replays would cost more than the sweep; a run whose figures depend on
// placement says so (Run.AddressUnranged).
func Sweep(s *snapshot.Snapshot, base Setting, opts Options) ([]Run, error) {
	settings := SweepSettings(base)
	opts.NoAddressRange = true
	opts.unranged = "the sweep ranks settings by the driver model's placement and computes no address ranges (over dozens of settings they would cost more than the sweep); replay the settings you pick (--conf) for their ranges"
	res, err := Replay(s, settings, opts)
	if err != nil {
		return nil, err
	}
	per := len(res.Runs) / len(settings)
	type row struct {
		i        int
		reserved int64
		mallocs  int64
		ooms     int64
	}
	rows := make([]row, len(settings))
	for i := range settings {
		rows[i].i = i
		for _, r := range res.Runs[i*per : (i+1)*per] {
			rows[i].reserved += r.MaxReserved
			rows[i].mallocs += r.DeviceAllocs
			rows[i].ooms += r.OOMs
		}
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
		if r.ooms > 0 {
			continue
		}
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
	var out []Run
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
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("whatif: sweep: every setting runs out of memory under this cap")
	}
	return out, nil
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
// Fraction or Cap ignored) replays s without an out-of-memory error on any device. It
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
		if r.OOMs > 0 {
			return 0, fmt.Errorf("whatif: min-cap: %s runs out of memory even without a cap", st.Label())
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
			if r.OOMs > 0 {
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

// CapSearch is what MinCapRange found for one setting.
type CapSearch struct {
	// Cap is the smallest cap on reserved memory, to 2 MiB, at which neither the
	// driver model's placement nor any placement of the address range tried runs
	// out of memory on any device.
	Cap int64
	// ModelCap is the smallest at which the model's placement alone does not
	// ([MinCap]); at most Cap.
	ModelCap int64
	// Placements is how many placements were tried at Cap (the model's among them;
	// 1 when the figures there do not depend on placement), the fewest over the
	// devices; Converged whether every device's range there converged.
	Placements int
	Converged  bool
}

// MinCapRange is [MinCap] over the address range's placements: the smallest cap at
// which no placement tried runs out of memory (CapSearch.Cap), beside the model's
// own (CapSearch.ModelCap). It searches up from the model's cap by bisection, with
// the assumption MinCap makes; each step replays the placements until their range
// converges (Options.RangeBudget bounds each step's). Frees that waited for other
// streams complete by opts.Completion.
func MinCapRange(s *snapshot.Snapshot, st Setting, opts Options) (CapSearch, error) {
	model, err := MinCap(s, st, opts)
	if err != nil {
		return CapSearch{}, err
	}
	st.Fraction, st.Cap = 0, 0
	opts.NoTimingRange = true
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
			if r.OOMs > 0 || r.AddressRange["num_ooms"][1] > 0 {
				ok = false
			}
			cs.Placements = min(cs.Placements, max(r.AddressPlacements, 1))
			cs.Converged = cs.Converged && (r.AddressConverged || r.AddressPlacements == 0)
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

// SweepAdvice replays, with their ranges, the first k distinct settings of ranked
// (the runs [Sweep] returns, lowest peak reserved first) beside the snapshot's own
// setting under base's cap, and advises among them ([Result.Advise]): the sweep ranks
// by the driver model's placement alone, so the pick is judged again on the high end
// of each figure's range against the recorded run. k < 1 means 3.
func SweepAdvice(s *snapshot.Snapshot, ranked []Run, base Setting, k int, opts Options) (*Result, error) {
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
	for i := range ranked {
		if len(settings) > k {
			break
		}
		if l := ranked[i].Setting.Label(); !seen[l] {
			seen[l] = true
			settings = append(settings, ranked[i].Setting)
		}
	}
	res, err := Replay(s, settings, opts)
	if err != nil {
		return nil, fmt.Errorf("whatif: sweep advice: %w", err)
	}
	res.Advise(&own)
	return res, nil
}
