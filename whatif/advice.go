package whatif

import (
	"fmt"
	"strings"

	"memlab.dev/memlab/allocator"
)

// Advice is what a what-if over several settings recommends: the setting that lowers
// peak reserved most without an out-of-memory error, against a baseline (the recorded
// run's setting when it is among them), what it saves and what it costs. Every figure
// is judged on the high end of its range ([Run.TimingRange], [Run.AddressRange]): a
// setting is advised only when its highest peak reserved is below the baseline's
// figure (for the recorded run, what PyTorch measured), so that it saves memory
// wherever in its range PyTorch's run under it falls.
type Advice struct {
	// Baseline is the setting the others are compared with: the snapshot's own
	// (Recorded) when it is among them, else the first setting.
	Baseline Setting
	// Recorded says the baseline is the recorded run: the snapshot's own setting
	// without a cap (a cap is not recorded in a snapshot, so a capped row is the
	// recorded setting, not the recorded run).
	Recorded bool
	// BaselineOwn says the baseline's setting is the snapshot's own (capped or not);
	// false when the snapshot's setting is not among those replayed.
	BaselineOwn bool
	// Best is the advised setting; nil when no setting lowers peak reserved for sure
	// without an OOM.
	Best *Setting
	// Device (Result) or Rank (Ranks) is where the figures are taken: the worst
	// device or rank of each setting, by the high end of its peak reserved.
	Device, Rank int
	// Reserved and BaselineReserved are the peaks reserved, each {figure, low, high}.
	Reserved, BaselineReserved [3]int64
	// Saves is BaselineReserved − Reserved: {figure, low, high}, the low end the
	// baseline's lowest less the advised setting's highest (below zero when the
	// baseline's own range reaches below the advised setting's). SavesPercent is the
	// figure as a percentage of the baseline's figure.
	Saves        [3]int64
	SavesPercent float64
	// DeviceAllocs and AllocRetries are the advised setting's cudaMalloc calls and
	// retries, {figure, low, high}; the Baseline… ones the baseline's.
	DeviceAllocs, BaselineDeviceAllocs [3]int64
	AllocRetries, BaselineAllocRetries [3]int64
	// BaselineOOM says the baseline itself ran out of memory: the advised setting then
	// is the one with the lowest peak reserved among those that do not, and Saves is
	// not computed (a replay stopped at an OOM has no comparable peak).
	BaselineOOM bool
	// Unranged names settings whose figures carry no address range (a history too
	// long for the extra placements' budget) although their setting differs from the
	// snapshot's: their high end is their figure, which the note says.
	Unranged []string
	// Serves names settings whose replays served a request the recorded run failed and
	// stopped there (Run.Served): what the program would have done next is not in the
	// snapshot, so they are neither advised nor ruled out; ServesAt is the first such
	// request's trace index.
	Serves   []string
	ServesAt int
	// Timed says a {low, high} of the advice takes in a timing range ([Run.TimingRange],
	// "[low, high]" in the table) besides any address range ("{low, high}"), which the
	// advice's text says.
	Timed bool
}

// adviceCandidate is one setting's figures for the advice: its worst device or rank.
type adviceCandidate struct {
	setting                   Setting
	where                     int // device or rank
	reserved, allocs, retries [3]int64
	oom                       bool
	served                    int // the event a replay stopped at, serving a request the recorded run failed (−1: none)
	unranged                  bool
	timed                     bool // one of its spans takes in a timing range
}

// figureSpan is a run's figure for key with its lowest and highest over the run's ranges:
// {figure, low, high}.
func figureSpan(r *Run, key string, figure int64) [3]int64 {
	out := [3]int64{figure, figure, figure}
	for _, m := range []map[string][2]int64{r.TimingRange, r.AddressRange} {
		if lr, ok := m[key]; ok {
			out[1], out[2] = min(out[1], lr[0]), max(out[2], lr[1])
		}
	}
	return out
}

// candidateOf is run's figures as a adviceCandidate at where.
func candidateOf(r *Run, where int) adviceCandidate {
	timed := false
	for _, k := range []string{"reserved_bytes.all.peak", "num_device_alloc", "num_alloc_retries"} {
		_, ok := r.TimingRange[k]
		timed = timed || ok
	}
	return adviceCandidate{
		timed:    timed,
		setting:  r.Setting,
		where:    where,
		reserved: figureSpan(r, "reserved_bytes.all.peak", r.MaxReserved),
		allocs:   figureSpan(r, "num_device_alloc", r.DeviceAllocs),
		retries:  figureSpan(r, "num_alloc_retries", r.AllocRetries),
		oom:      !r.Served() && (r.FirstOOM != nil || figureSpan(r, "num_ooms", r.OOMs)[2] > 0),
		served:   servedAt(r),
		unranged: r.Guessed > 0 && r.placeable && r.AddressPlacements == 0,
	}
}

// servedAt is the event at which r stopped serving a request the recorded run failed,
// or −1.
func servedAt(r *Run) int {
	if r.Served() {
		return r.Stopped
	}
	return -1
}

// worse keeps, per setting label, the adviceCandidate with the highest high end of peak
// reserved; an OOM anywhere marks the setting.
func worse(into map[string]*adviceCandidate, order *[]string, c adviceCandidate) {
	l := c.setting.Label()
	old, ok := into[l]
	if !ok {
		into[l] = &c
		*order = append(*order, l)
		return
	}
	oom := old.oom || c.oom
	served := old.served
	if served < 0 || c.served >= 0 && c.served < served {
		served = c.served
	}
	if c.reserved[2] > old.reserved[2] {
		*old = c
	}
	old.oom, old.served = oom, served
	old.unranged = old.unranged || c.unranged
}

// advise picks the advice among cands (in the settings' order) against the
// snapshot's own setting own (nil: unknown).
func advise(cands []*adviceCandidate, own *Setting) *Advice {
	if len(cands) < 2 {
		return nil
	}
	base := cands[0]
	a := &Advice{}
	if own != nil {
		sts := make([]Setting, len(cands))
		for i, c := range cands {
			sts[i] = c.setting
		}
		if k := baselineOf(sts, *own); k >= 0 {
			base, a.BaselineOwn = cands[k], true
			a.Recorded = base.setting.Cap == 0 && !(base.setting.Fraction > 0 && base.setting.Fraction < 1)
		}
	}
	a.Baseline = base.setting
	a.BaselineReserved, a.BaselineDeviceAllocs, a.BaselineAllocRetries = base.reserved, base.allocs, base.retries
	a.BaselineOOM = base.oom
	a.Timed = base.timed && !base.oom // a baseline that runs out prints no span
	var best *adviceCandidate
	for _, c := range cands {
		if c == base || c.oom {
			continue
		}
		if c.served >= 0 {
			if len(a.Serves) == 0 || c.served < a.ServesAt {
				a.ServesAt = c.served
			}
			a.Serves = append(a.Serves, c.setting.ShortLabel())
			continue
		}
		if c.unranged {
			a.Unranged = append(a.Unranged, c.setting.ShortLabel())
		}
		if !a.BaselineOOM && c.reserved[2] >= base.reserved[0] {
			continue // not lower for sure
		}
		if best == nil || c.reserved[2] < best.reserved[2] ||
			c.reserved[2] == best.reserved[2] && c.allocs[2] < best.allocs[2] {
			best = c
		}
	}
	if best == nil {
		return a
	}
	st := best.setting
	a.Best, a.Device, a.Rank = &st, best.where, best.where
	a.Reserved, a.DeviceAllocs, a.AllocRetries = best.reserved, best.allocs, best.retries
	a.Timed = a.Timed || best.timed
	if !a.BaselineOOM {
		a.Saves = [3]int64{base.reserved[0] - best.reserved[0], base.reserved[1] - best.reserved[2], base.reserved[2] - best.reserved[1]}
		if base.reserved[0] > 0 {
			a.SavesPercent = 100 * float64(a.Saves[0]) / float64(base.reserved[0])
		}
	}
	return a
}

// Advise sets r.Advice from r's runs when they cover several settings (nil
// otherwise), own being the snapshot's setting ([SnapshotSetting]; nil: unknown).
// Under several devices each setting is judged on its worst device.
func (r *Result) Advise(own *Setting) {
	m := map[string]*adviceCandidate{}
	var order []string
	for i := range r.Runs {
		worse(m, &order, candidateOf(&r.Runs[i], r.Runs[i].Device))
	}
	cands := make([]*adviceCandidate, len(order))
	for i, l := range order {
		cands[i] = m[l]
	}
	r.Advice = advise(cands, own)
}

// Advise is the advice over several ranks ([Advice]): each setting judged on its
// worst rank (the highest high end of peak reserved), an OOM on any rank ruling it
// out; own is the snapshot's setting (nil: unknown). Nil for fewer than two
// settings.
func (rs Ranks) Advise(own *Setting) *Advice {
	m := map[string]*adviceCandidate{}
	var order []string
	for k, r := range rs {
		for i := range r.Result.Runs {
			worse(m, &order, candidateOf(&r.Result.Runs[i], k))
		}
	}
	cands := make([]*adviceCandidate, len(order))
	for i, l := range order {
		cands[i] = m[l]
	}
	return advise(cands, own)
}

// sizeSpan prints {figure, low, high} as "figure {low, high}" (just the figure when
// low and high are the figure), with bytes where the units would hide a difference.
func sizeSpan(v [3]int64) string {
	s := preciseSize(v[0], v[1], v[2])
	if v[1] == v[0] && v[2] == v[0] {
		return s[0]
	}
	return fmt.Sprintf("%s {%s, %s}", s[0], s[1], s[2])
}

// preciseSize formats sizes with allocator.FormatSize, or in bytes when two that
// differ would print the same.
func preciseSize(vs ...int64) []string {
	out := make([]string, len(vs))
	seen := map[string]int64{}
	exact := false
	for i, v := range vs {
		out[i] = signedSize(v)
		if w, ok := seen[out[i]]; ok && w != v {
			exact = true
		}
		seen[out[i]] = v
	}
	if exact {
		for i, v := range vs {
			out[i] = fmt.Sprintf("%d bytes", v)
		}
	}
	return out
}

// signedSize is allocator.FormatSize with a minus sign for a size below zero (a
// saving whose range reaches below nothing).
func signedSize(v int64) string {
	if v < 0 {
		return "-" + allocator.FormatSize(-v)
	}
	return allocator.FormatSize(v)
}

// countSpan prints {figure, low, high} as "figure {low, high}" or the figure.
func countSpan(v [3]int64) string {
	if v[1] == v[0] && v[2] == v[0] {
		return fmt.Sprint(v[0])
	}
	return fmt.Sprintf("%d {%d, %d}", v[0], v[1], v[2])
}

// BaselineName is how the advice names its baseline: "default (the recorded run)".
func (a *Advice) BaselineName() string {
	n := a.Baseline.ShortLabel()
	switch {
	case a.Recorded:
		return n + " (the recorded run)"
	case a.BaselineOwn:
		return n + " (the recorded run's setting)"
	}
	return n + " (the first setting; the recorded run's is not among them)"
}

// text is the advice as one paragraph, "advice: …"; where says what the figures
// are of ("" for one device, "on its worst rank" for several ranks).
func (a *Advice) text(where string) string {
	var b strings.Builder
	judged := "judged on the high end of each range"
	if a.Best == nil && a.BaselineOOM && len(a.Serves) > 0 {
		verb, them := "serve", "them"
		if len(a.Serves) == 1 {
			verb, them = "serves", "it"
		}
		fmt.Fprintf(&b, "advice: none for sure: %s runs out of memory; %s %s a request it failed (the first at event %d), and the snapshot does not show what the program would have done next: record the program under %s to see what it does instead",
			a.BaselineName(), strings.Join(a.Serves, ", "), verb, a.ServesAt, them)
	} else if a.Best == nil && a.BaselineOOM {
		fmt.Fprintf(&b, "advice: none: every setting tried runs out of memory, %s among them: allow more memory or allocate less at the peak", a.BaselineName())
	} else if a.Best == nil {
		fmt.Fprintf(&b, "advice: keep %s: no other setting tried lowers peak reserved below its %s for sure without an OOM (%s)",
			a.BaselineName(), sizeSpan(a.BaselineReserved), judged)
	} else if a.BaselineOOM {
		fmt.Fprintf(&b, "advice: %s runs out of memory; %s runs without an OOM%s with the lowest peak reserved, %s (%s); it costs %s %s and %s retries",
			a.BaselineName(), a.Best.ShortLabel(), where, sizeSpan(a.Reserved), judged, countSpan(a.DeviceAllocs), deviceAllocColumn(*a.Best), countSpan(a.AllocRetries))
	} else {
		sv := preciseSize(a.Saves[0], a.Saves[1], a.Saves[2])
		saves := sv[0]
		if a.Saves[1] != a.Saves[0] || a.Saves[2] != a.Saves[0] {
			saves += fmt.Sprintf(" {%s, %s}", sv[1], sv[2])
		}
		fmt.Fprintf(&b, "advice: %s lowers peak reserved most without an OOM%s (%s): %s against %s under %s, saving %s (%.1f %%); ",
			a.Best.ShortLabel(), where, judged, sizeSpan(a.Reserved), sizeSpan(a.BaselineReserved), a.BaselineName(),
			saves, a.SavesPercent)
		if a.Best.Conf.ExpandableSegments != a.Baseline.Conf.ExpandableSegments {
			// one maps pages, the other calls cudaMalloc: name both, and the column
			fmt.Fprintf(&b, "it costs %s %s against %s %s under %s, and %s retries (%s: %s)",
				countSpan(a.DeviceAllocs), deviceAllocColumn(*a.Best), countSpan(a.BaselineDeviceAllocs), deviceAllocColumn(a.Baseline),
				a.Baseline.ShortLabel(), countSpan(a.AllocRetries), a.Baseline.ShortLabel(), countSpan(a.BaselineAllocRetries))
		} else {
			fmt.Fprintf(&b, "it costs %s %s (%s: %s) and %s retries (%s: %s)",
				countSpan(a.DeviceAllocs), deviceAllocNoun(*a.Best), a.Baseline.ShortLabel(), countSpan(a.BaselineDeviceAllocs),
				countSpan(a.AllocRetries), a.Baseline.ShortLabel(), countSpan(a.BaselineAllocRetries))
		}
	}
	if a.Timed {
		b.WriteString("; a {low, high} here spans a figure's timing range ([low, high] in the table) as well as its address range")
	}
	if len(a.Unranged) > 0 {
		fmt.Fprintf(&b, "; %s carr%s no address range (the history is longer than the extra placements' budget): the high end taken is the figure itself",
			strings.Join(a.Unranged, ", "), map[bool]string{true: "ies", false: "y"}[len(a.Unranged) == 1])
	}
	return b.String()
}

// deviceAllocNoun is what PyTorch's num_device_alloc (the table's cudaMalloc column)
// counts under st: cudaMalloc calls, or under expandable segments, which map pages
// into ranges reserved up front and call no cudaMalloc, the mappings (the table's note
// says so, Result.writeAddressNotes).
func deviceAllocNoun(st Setting) string {
	if st.Conf.ExpandableSegments {
		return "mappings of pages"
	}
	return "cudaMalloc calls"
}

// deviceAllocColumn is deviceAllocNoun saying, for mappings of pages, which column
// counts them.
func deviceAllocColumn(st Setting) string {
	n := deviceAllocNoun(st)
	if st.Conf.ExpandableSegments {
		n += " (the cudaMalloc column)"
	}
	return n
}

// String is the advice as one paragraph, "advice: …".
func (a *Advice) String() string { return a.text("") }

// jsonAdvice is the JSON "advice".
type jsonAdvice struct {
	Conf                 *string  `json:"conf"`
	Fraction             *float64 `json:"fraction"`
	Cap                  *int64   `json:"cap"`
	Where                *int     `json:"device,omitempty"`
	Rank                 *int     `json:"rank,omitempty"`
	Reserved             [3]int64 `json:"max_memory_reserved"`
	SavesBytes           [3]int64 `json:"saves_bytes"`
	SavesPercent         float64  `json:"saves_percent"`
	DeviceAllocs         [3]int64 `json:"num_device_alloc"`
	AllocRetries         [3]int64 `json:"num_alloc_retries"`
	BaselineConf         string   `json:"baseline_conf"`
	BaselineRecorded     bool     `json:"baseline_is_recorded_run"`
	BaselineReserved     [3]int64 `json:"baseline_max_memory_reserved"`
	BaselineDeviceAllocs [3]int64 `json:"baseline_num_device_alloc"`
	BaselineAllocRetries [3]int64 `json:"baseline_num_alloc_retries"`
	BaselineOOM          bool     `json:"baseline_oom"`
	Unranged             []string `json:"unranged,omitempty"`
	Serves               []string `json:"serve_failed_request,omitempty"`
	SpansTimingRange     bool     `json:"spans_timing_range,omitempty"`
	Text                 string   `json:"text"`
}

// json is the advice as JSON: figures as [figure, low, high]; "conf" null when no
// setting is advised. rank says to name the rank rather than the device.
func (a *Advice) json(rank bool) *jsonAdvice {
	if a == nil {
		return nil
	}
	j := &jsonAdvice{BaselineConf: a.Baseline.Conf.String(), BaselineRecorded: a.Recorded,
		BaselineReserved: a.BaselineReserved, BaselineDeviceAllocs: a.BaselineDeviceAllocs,
		BaselineAllocRetries: a.BaselineAllocRetries, BaselineOOM: a.BaselineOOM, Unranged: a.Unranged, Serves: a.Serves,
		SpansTimingRange: a.Timed}
	if rank {
		j.Text = a.text(" on its worst rank")
	} else {
		j.Text = a.String()
	}
	if a.Best == nil {
		return j
	}
	c := a.Best.Conf.String()
	j.Conf = &c
	j.Fraction, j.Cap = a.Best.jsonCap()
	w := a.Device
	if rank {
		j.Rank = &w
	} else {
		j.Where = &w
	}
	j.Reserved, j.SavesBytes, j.SavesPercent = a.Reserved, a.Saves, a.SavesPercent
	j.DeviceAllocs, j.AllocRetries = a.DeviceAllocs, a.AllocRetries
	return j
}

// ExpandableNote is memlab's line beside an OOM message whose PyTorch text advises
// expandable_segments:True for a run that already uses it ("" otherwise): PyTorch's
// words are kept as it prints them, and this says where they do not apply.
func (r *Run) ExpandableNote() string {
	if r.FirstOOM == nil || !r.Setting.Conf.ExpandableSegments ||
		!strings.Contains(r.FirstOOM.Message, "expandable_segments:True") {
		return ""
	}
	return "memlab: this run already uses expandable_segments:True, so PyTorch's suggestion above does not apply here; what is left is to allocate less at the peak or to allow more memory"
}
