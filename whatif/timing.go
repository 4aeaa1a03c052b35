package whatif

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"memlab.dev/memlab/snapshot"
)

// schedule is one GPU timing for a replay: for each deferred free (by block id), the
// allocations after its free that pass before it is due (math.MaxInt: never, but for a
// synchronisation the replay makes); for each held free (op.held), the allocations
// after its recorded point that pass before the program makes it (never: held to the
// end; negative: that many allocations before it, down to history.earliest). A free is
// due at the first allocation that follows more than its delay allocations after it. A
// nil schedule completes each free where the snapshot did.
type schedule []int

// never is a schedule's delay for a free that completes only at a synchronisation.
const never = math.MaxInt

// timingBudget bounds the work of a timing range: the extra replays of one setting
// replay at most this many trace entries together (but at least minSchedules replays),
// so that a long history pays for a few timings and a short one gets many.
const timingBudget = 2_000_000

// minSchedules and maxSchedules bound the number of extra replays of a timing range.
const (
	minSchedules = 2
	maxSchedules = 128
)

// replay runs one device's history under one setting, completing the frees that
// waited for other streams by policy c.
func replay(h *history, st Setting, opts Options, c Completion) (*Run, error) {
	switch c {
	case CompleteEarliest:
		return replaySchedule(h, st, opts, h.earliestSchedule())
	case CompleteLatest:
		return replaySchedule(h, st, opts, h.latestSchedule())
	}
	return replaySchedule(h, st, opts, nil)
}

// replayTimings is replayTimed without the address range.
func replayTimings(h *history, st Setting, opts Options) (*Run, error) {
	r, err := replay(h, st, opts, opts.Completion)
	if err != nil || h.deferred+h.held == 0 {
		return r, err
	}
	r.CrossStreamFrees, r.HeldFrees, r.EarlierHeldFrees = h.deferred, h.held, len(h.earliest)
	if opts.NoTimingRange {
		return r, nil
	}
	n := timingBudget / max(h.events, 1)
	n = min(max(n, minSchedules), maxSchedules)
	runs := []*Run{r}
	if opts.Completion != CompleteAsRecorded {
		o, err := replaySchedule(h, st, opts, nil)
		if err != nil {
			return nil, fmt.Errorf("completing cross-stream frees as recorded: %w", err)
		}
		runs = append(runs, o)
	}
	for _, sc := range h.schedules(n) {
		o, err := replaySchedule(h, st, opts, sc.delays)
		if err != nil {
			return nil, fmt.Errorf("completing cross-stream frees %s: %w", sc.what, err)
		}
		runs = append(runs, o)
	}
	r.TimingRange = timingRange(runs...)
	r.TimingSchedules = len(runs)
	for _, o := range runs[1:] {
		if o.NewOOMs > 0 {
			r.RangeRanOut = true
			r.TimingsRanOut++
		}
	}
	return r, nil
}

// timingRange returns the keys of runs' Stats whose values differ, each with its lowest
// and highest value; nil when none differs.
func timingRange(runs ...*Run) map[string][2]int64 {
	var out map[string][2]int64
	for k, v := range runs[0].Stats {
		lo, hi := v, v
		for _, r := range runs[1:] {
			lo, hi = min(lo, r.Stats[k]), max(hi, r.Stats[k])
		}
		if lo != hi {
			if out == nil {
				out = map[string][2]int64{}
			}
			out[k] = [2]int64{lo, hi}
		}
	}
	return out
}

// deferredFree is what a schedule needs of one free that waited for other streams, or
// of one the program may make later (a held free: op.held).
type deferredFree struct {
	id      int32
	ordinal int32 // its block's place among the blocks the history made (history.ordinal)
	mallocs int   // allocation requests before it
	lag     int   // allocations between it and its recorded completion (−1: never completed)
	latest  int   // the longest delay a timing may give it (never: unbounded); see boundDelays
	held    bool  // a free of one of DDP's gradient buckets (op.held)
	// earliest is the lowest delay a timing may give it: 0, or for a held free of
	// DDP's first buckets made after their rebuild, negative (history.earliest)
	earliest int
}

// deferredFrees lists the history's deferred and held frees in order, each with the
// latest delay the recording allows it (boundDelays; never where it allows any, and
// for a held free: held to the end) and the earliest (0, or history.earliest's).
func (h *history) deferredFrees() []deferredFree {
	var out []deferredFree
	m, k := 0, 0 // k: the next of h.earliest, in the order of their ops
	for _, o := range h.ops {
		switch {
		case o.kind == opAlloc || o.kind == opOOM:
			m++
		case o.kind == opFree && o.deferred:
			latest, ok := h.latest[o.id]
			if !ok {
				latest = never
			}
			out = append(out, deferredFree{id: o.id, ordinal: h.ordinal[o.id], mallocs: m, lag: int(o.lag), latest: latest})
		case o.kind == opFree && o.held:
			// let go of at once in the recording; at the latest, at the end
			f := deferredFree{id: o.id, ordinal: h.ordinal[o.id], mallocs: m, lag: 0, latest: never, held: true}
			if k < len(h.earliest) && h.earliest[k].id == o.id {
				f.earliest = h.earliest[k].delay
				k++
			}
			out = append(out, f)
		}
	}
	return out
}

// waitFactor and waitSlackUS bound how much longer than in the recorded run a
// cross-stream free may wait for the GPU in another: waitFactor times as long, plus
// waitSlackUS microseconds (boundDelays).
const (
	waitFactor  = 4
	waitSlackUS = 500
)

// boundDelays sets h.latest, for each deferred free the recording timed, from the
// recorded run's clock (time_us). Under another setting only the allocator's
// decisions change, not the kernels the GPU runs: a free the recorded run saw
// complete w microseconds after it was requested waited for GPU work that took about
// that long. Runs of the same program differ in GPU timing
// (reference/workloads-2.11/repeats/, TestRepeatedRuns), so the bound is loose: the
// free is due, at the latest, at the first allocation the recorded run made more than
// waitFactor·w + waitSlackUS after the free (and never before its recorded
// completion). Counting the allocations by the recorded clock keeps what the clock
// pins: a free that completed at once while allocations were slow (each making a
// segment) stays prompt, one that completed late while they came fast may come much
// later. A free that never completed in the recording, or that a synchronisation
// completed, or whose entries carry no time stamps, stays unbounded. The earliest
// delay stays 0: the GPU may always have been faster.
func boundDelays(h *history, trace []snapshot.TraceEntry) {
	if h.deferred == 0 {
		return
	}
	n := 0
	for _, o := range h.ops {
		if o.kind == opAlloc || o.kind == opOOM {
			n++
		}
	}
	done := map[int32]int64{}   // deferred free id → its completion's time
	upto := make([]int64, 0, n) // by allocation request: the latest time stamp up to it
	top := int64(0)
	for _, o := range h.ops {
		switch o.kind {
		case opAlloc, opOOM:
			top = max(top, trace[o.event].TimeUS)
			upto = append(upto, top)
		case opComplete:
			done[o.id] = trace[o.event].TimeUS
		}
	}
	m := 0
	for _, o := range h.ops {
		switch {
		case o.kind == opAlloc || o.kind == opOOM:
			m++
		case o.kind == opFree && o.deferred && o.lag >= 0:
			t0, tc := trace[o.event].TimeUS, done[o.id]
			if t0 <= 0 || tc < t0 {
				continue
			}
			limit := t0 + waitFactor*(tc-t0) + waitSlackUS
			d, _ := slices.BinarySearch(upto[m:], limit+1)
			if h.latest == nil {
				h.latest = map[int32]int{}
			}
			h.latest[o.id] = max(d, int(o.lag))
		}
	}
}

// blank returns a schedule with room for every block id.
func (h *history) blank() schedule { return make(schedule, h.ids) }

// uniform is the schedule that gives every deferred free the same delay.
func (h *history) uniform(d int) schedule {
	sc := h.blank()
	for _, f := range h.deferredFrees() {
		sc[f.id] = d
	}
	return sc
}

// earliestSchedule is the schedule that completes every deferred free at the next
// allocation and makes every held free at the earliest point the history allows it
// (history.earliest; else where the snapshot did).
func (h *history) earliestSchedule() schedule {
	sc := h.blank()
	for _, f := range h.deferredFrees() {
		sc[f.id] = f.earliest
	}
	return sc
}

// latestSchedule is the schedule that gives every deferred free the latest delay the
// recording allows it (a held free: held to the end).
func (h *history) latestSchedule() schedule {
	sc := h.blank()
	for _, f := range h.deferredFrees() {
		sc[f.id] = f.latest
	}
	return sc
}

// namedSchedule is a schedule and what it stands for, for error messages.
type namedSchedule struct {
	what   string
	delays schedule
}

// schedules returns n timings for the timing range, most telling first: the earliest
// (every free due at the next allocation) and the latest (each at the latest delay the
// recording allows it, boundDelays; none before a synchronisation where it allows
// any); with held frees that may come earlier (history.earliest), those at their
// rebuild and halfway to it, the others at their recorded lag; fixed delays (and, with
// held frees, those delayed 256, 512, … allocations up to the history's length, the
// others at their recorded lag), the recorded lags scaled and capped, mixed per-free
// delays, then random timings in which the frees made between the same two
// allocations (one step of the program) complete together and each step's frees
// complete no earlier than the step's before (one stream's CUDA events complete in
// order), some steps never completing. Every delay is cut to the range the recording
// allows the free. Everything is seeded: the same history gets the same schedules.
func (h *history) schedules(n int) []namedSchedule {
	frees := h.deferredFrees()
	var out []namedSchedule
	add := func(what string, delay func(f deferredFree) int) bool {
		if len(out) >= n {
			return false
		}
		sc := h.blank()
		for _, f := range frees {
			sc[f.id] = max(min(delay(f), f.latest), f.earliest)
		}
		out = append(out, namedSchedule{what, sc})
		return true
	}
	add("at the next allocation", func(deferredFree) int { return 0 })
	add("as late as the recording allows", func(deferredFree) int { return never })
	if len(h.earliest) > 0 {
		// DDP's first buckets let go of at their rebuild, or halfway to it; the
		// other frees at their recorded lag
		for _, part := range []int{1, 2} {
			what := "buckets freed at their rebuild"
			if part == 2 {
				what = "buckets freed halfway to their rebuild"
			}
			add(what, func(f deferredFree) int {
				switch {
				case f.held:
					return f.earliest / part
				case f.lag < 0:
					return never
				}
				return f.lag
			})
		}
	}
	for _, d := range []int{1, 2, 4, 8, 16, 32, 64, 128} {
		add(fmt.Sprintf("%d allocations late", d), func(deferredFree) int { return d })
	}
	if h.held > 0 {
		// a bucket's free later by up to the whole history, cross-stream frees at
		// their recorded lag
		allocs := 0
		for _, o := range h.ops {
			if o.kind == opAlloc || o.kind == opOOM {
				allocs++
			}
		}
		for d := 256; d < allocs; d *= 2 {
			add(fmt.Sprintf("buckets freed %d allocations late", d), func(f deferredFree) int {
				if f.held {
					return d
				}
				if f.lag < 0 {
					return never
				}
				return f.lag
			})
		}
	}
	maxLag := 0
	for _, f := range frees {
		maxLag = max(maxLag, f.lag)
	}
	for _, pc := range []int{50, 75, 90, 110, 125, 150, 200} {
		add(fmt.Sprintf("at %d%% of their recorded lag", pc), func(f deferredFree) int {
			if f.lag < 0 {
				return never
			}
			return (f.lag*pc + 50) / 100
		})
	}
	for _, c := range []int{2, 4, 8} {
		add(fmt.Sprintf("at their recorded lag, at most %d allocations late", c), func(f deferredFree) int {
			if f.lag < 0 {
				return c
			}
			return min(f.lag, c)
		})
	}
	for seed := uint64(1); seed <= 2; seed++ {
		for _, d := range []int{32, 64, 128} {
			add(fmt.Sprintf("each up to %d allocations late (seed %d)", d, seed), func(f deferredFree) int {
				return mixedDelay(seed, f.ordinal, d)
			})
		}
	}
	// random step timings
	var steps [][]deferredFree
	for k, f := range frees {
		if k == 0 || f.mallocs != frees[k-1].mallocs {
			steps = append(steps, nil)
		}
		steps[len(steps)-1] = append(steps[len(steps)-1], f)
	}
	top := max(2*maxLag, 16)
	rng := rand.New(rand.NewPCG(uint64(h.events), uint64(len(frees))))
	for k := 0; len(out) < n; k++ {
		scale := 1 + rng.IntN(top)
		cut := len(steps)
		if rng.IntN(2) == 0 {
			cut = rng.IntN(len(steps) + 1)
		}
		due := make(map[int32]int, len(frees))
		last := 0 // allocation at which the previous step completed
		for i, st := range steps {
			d := never
			if i < cut {
				at := max(st[0].mallocs+1+rng.IntN(scale+1), last)
				d, last = at-st[0].mallocs-1, at
			}
			for _, f := range st {
				due[f.id] = d
			}
		}
		add(fmt.Sprintf("at random step timing %d", k), func(f deferredFree) int { return due[f.id] })
	}
	return out
}

// mixedDelay is the delay of the free of the block made ordinal-th under seed
// (splitmix64 of both), in [0, d].
func mixedDelay(seed uint64, ordinal int32, d int) int {
	z := seed*0x9e3779b97f4a7c15 + uint64(ordinal)*0xbf58476d1ce4e5b9
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return int(z % uint64(d+1))
}
