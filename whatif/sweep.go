package whatif

import (
	"errors"
	"fmt"
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
// The runs carry no address ranges (Options.NoAddressRange): with dozens of settings
// their extra replays would cost more than the sweep.
func Sweep(s *snapshot.Snapshot, base Setting, opts Options) ([]Run, error) {
	settings := SweepSettings(base)
	opts.NoAddressRange = true
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
	var out []Run
	for _, r := range rows {
		if r.ooms == 0 {
			out = append(out, res.Runs[r.i*per:(r.i+1)*per]...)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("whatif: sweep: every setting runs out of memory under this cap")
	}
	return out, nil
}

// MinCap returns the smallest cap on reserved memory, to 2 MiB, under which st (its own
// Fraction or Cap ignored) replays s without an out-of-memory error on any device. It
// searches between the uncapped run's peak allocated and peak reserved by bisection,
// which assumes that a larger cap never fails where a smaller one succeeds (garbage
// collection thresholds are fractions of the cap, so this can fail to hold). Frees that
// waited for other streams complete by opts.Completion; the search makes no timing
// ranges.
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
