package whatif

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/memplot/plotdata"
	"memlab.dev/memlab/snapshot"
)

// Pairs lays out every run's reserved (solid) and allocated (dashed) memory
// over the trace's event index, for one axis, one colour per run named by its
// [Setting.ShortLabel]: memlab.Show(memplot.Compare(title, res)) draws it. A cap
// every run shares is said once, in the title, so that the key stays short.
func (r *Result) Pairs(title string) (plotdata.PairChart, error) {
	if r == nil || len(r.Runs) == 0 {
		return plotdata.PairChart{}, fmt.Errorf("whatif: Pairs: no runs")
	}
	shared := true
	for _, run := range r.Runs {
		shared = shared && run.Setting.Cap == r.Runs[0].Setting.Cap && run.Setting.Fraction == r.Runs[0].Setting.Fraction
	}
	if capOnly := (Setting{Cap: r.Runs[0].Setting.Cap, Fraction: r.Runs[0].Setting.Fraction}); shared && (capOnly.Cap > 0 || capOnly.Fraction > 0 && capOnly.Fraction < 1) {
		title += " (" + strings.TrimPrefix(capOnly.Label(), "default ") + ")"
	} else {
		shared = false
	}
	var pairs []plotdata.Pair
	for _, run := range r.Runs {
		st := run.Setting
		if shared {
			st.Cap, st.Fraction = 0, 0
		}
		name := st.ShortLabel()
		if r.devices() > 1 {
			name = fmt.Sprintf("%s (device %d)", name, run.Device)
		}
		x := make([]float64, len(run.Curve.Event))
		for i, e := range run.Curve.Event {
			x[i] = float64(e)
		}
		pairs = append(pairs, plotdata.Pair{Name: name, X: x, Solid: run.Curve.Reserved, Dashed: run.Curve.Allocated})
	}
	return plotdata.PairChart{Title: title, XLabel: "event", Solid: "reserved", Dashed: "allocated", Pairs: pairs}, nil
}

func (r *Result) devices() int {
	seen := map[int]bool{}
	for _, run := range r.Runs {
		seen[run.Device] = true
	}
	return len(seen)
}

// Columns is the table of runs, one row per run: the setting (its
// [Setting.ShortLabel]), the device when the runs span more than one, the peaks,
// device allocations and frees, retries, OOMs and fragmentation; a figure that
// depends on GPU timing carries its [Run.TimingRange] as "[low, high]", one that
// depends on driver addresses its [Run.AddressRange] as "{low, high}", one that frees
// after a predicted OOM could change its [Run.AfterOOMRange] as "<low, high>". It is
// the one layout of that table: [Result.WriteTable] prints it as text, and a notebook
// shows it as HTML (memlab.TableOf).
func (r *Result) Columns() (header []string, rows [][]string) {
	multi := r.devices() > 1
	header = []string{"setting"}
	if multi {
		header = append(header, "device")
	}
	for _, k := range tableKeys {
		header = append(header, k.column)
	}
	header = append(header, "largest free at peak")
	for _, run := range r.Runs {
		row := []string{run.Setting.ShortLabel()}
		if a := r.Advice; a != nil && a.Recorded && run.Setting.Label() == a.Baseline.Label() {
			row[0] += " (recorded run)"
		}
		if multi {
			row = append(row, fmt.Sprint(run.Device))
		}
		base := r.baseline(run)
		unknown := run.directionUnknown(base)
		cut := run.notComparable()
		cell := func(key string, v int64, format func(...int64) []string) string {
			vals := []int64{v}
			marks := []string{" [%s, %s]", " {%s, %s}", " <%s, %s>"}
			var ranges []string
			for _, rg := range []map[string][2]int64{run.TimingRange, run.AddressRange, run.AfterOOMRange} {
				if lr, ok := rg[key]; ok {
					vals = append(vals, lr[0], lr[1])
					ranges = append(ranges, marks[0])
				} else {
					ranges = append(ranges, "")
				}
				marks = marks[1:]
			}
			f := format(vals...)
			s, k := f[0], 1
			for _, m := range ranges {
				if m != "" {
					s += fmt.Sprintf(m, f[k], f[k+1])
					k += 2
				}
			}
			if slices.Contains(cut, key) {
				s += "†"
			}
			if slices.Contains(unknown, key) {
				s += " " + lang.Text("(direction unknown)")
			}
			return s
		}
		size := func(key string, v int64) string { return cell(key, v, sizesApart) }
		count := func(key string, v int64) string { return cell(key, v, counts) }
		// the keys of tableKeys, in order
		row = append(row, size("allocated_bytes.all.peak", run.MaxAllocated), size("reserved_bytes.all.peak", run.MaxReserved),
			count("num_device_alloc", run.DeviceAllocs), count("num_device_free", run.DeviceFrees),
			count("num_alloc_retries", run.AllocRetries), count("num_ooms", run.OOMs),
			size("inactive_split_bytes.all.peak", run.PeakInactiveSplit), allocator.FormatSize(run.LargestFreeAtPeak))
		rows = append(rows, row)
	}
	return header, rows
}

// counts formats counts.
func counts(vals ...int64) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = fmt.Sprint(v)
	}
	return out
}

// sizesApart formats byte counts as allocator.FormatSize does, in the unit of the
// largest, with the fewest decimals (two at least, six at most) at which sizes that
// differ print differently: a range of 3.3125 and 3.3135 GiB prints as
// {3.312 GiB, 3.313 GiB}, not as {3.31 GiB, 3.31 GiB}.
func sizesApart(vals ...int64) []string {
	var top int64
	for _, v := range vals {
		top = max(top, v)
	}
	out := make([]string, len(vals))
	for d := 2; d <= 6; d++ {
		apart := true
		for i, v := range vals {
			out[i] = sizeIn(v, top, d)
			for j := range i {
				if vals[j] != v && out[j] == out[i] {
					apart = false
				}
			}
		}
		if apart {
			break
		}
	}
	return out
}

// sizeIn formats n in the unit allocator.FormatSize gives top, with d decimals.
func sizeIn(n, top int64, d int) string {
	u := uint64(top)
	switch {
	case n == 0 || u <= 1024:
		return fmt.Sprintf("%d bytes", n)
	case u <= 1<<20:
		return fmt.Sprintf("%.*f KiB", d, float64(n)/(1<<10))
	case u <= 1<<30:
		return fmt.Sprintf("%.*f MiB", d, float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.*f GiB", d, float64(n)/(1<<30))
}

// writeMarks explains the marks the table's figures carry: "(direction unknown)" and
// "†" (not comparable: up to where the replay stopped).
func (r *Result) writeMarks(w io.Writer) {
	if r.hasMark(func(run *Run) bool { return len(run.directionUnknown(r.baseline(*run))) > 0 }) {
		fmt.Fprintf(w, "\n(direction unknown) beside a figure: its address range spans the recorded setting's figure, so whether this setting raises or lowers it is not known\n")
	}
	if r.hasMark(func(run *Run) bool { return !run.Served() && len(run.notComparable()) > 0 }) {
		fmt.Fprintf(w, "\n† beside a figure: up to the predicted OOM, where the replay stops; what the program did after it is not in the snapshot, so the figure is not comparable with a run that went on\n")
	}
	if r.hasMark(func(run *Run) bool { return run.Served() }) {
		fmt.Fprintf(w, "\n† beside a figure of a run that serves a request your run failed: up to that request, where the replay stops; what the program would have done next is not in the snapshot (it holds what the program did after its OOM), so the figure is not comparable with a run that went on\n")
	}
}

// ownUncapped reports whether run is under the snapshot's own setting, without a cap.
func (r *Result) ownUncapped(run Run) bool {
	return r.own != nil && run.Setting.Cap == 0 && run.Setting.Fraction == 0 && run.Setting.Label() == r.own.Label()
}

// baseline returns the run the others are compared with: the run of the same device
// under the snapshot's own setting (Replay notes it; else the defaults), as
// [baselineOf] picks it, the rule the advice follows too. Nil when there is none, or
// when run is it.
func (r *Result) baseline(run Run) *Run {
	want := Setting{}
	if r.own != nil {
		want = *r.own
	}
	var same []*Run
	var sts []Setting
	for i := range r.Runs {
		if r.Runs[i].Device == run.Device {
			same = append(same, &r.Runs[i])
			sts = append(sts, r.Runs[i].Setting)
		}
	}
	k := baselineOf(sts, want)
	if k < 0 || same[k].Setting.Label() == run.Setting.Label() {
		return nil
	}
	return same[k]
}

// baselineOf returns the index in sts of the setting the others are compared with:
// own's configuration without a cap; else, when every row of it is capped (--fraction,
// --cap), the first under a cap; -1 when own's configuration is not among them.
func baselineOf(sts []Setting, own Setting) int {
	k := -1
	for i, st := range sts {
		if st.Conf.String() != own.Conf.String() {
			continue
		}
		if st.Label() == own.Label() {
			return i
		}
		if k < 0 {
			k = i
		}
	}
	return k
}

// directionUnknown lists the table's keys whose address range spans the baseline's
// figure: the driver's placement alone can put this setting's figure on either side
// of the recorded setting's, so whether the setting raises or lowers it is not known.
// (A timing range is not compared: both rows are replayed under the same timings.)
func (r *Run) directionUnknown(base *Run) []string {
	if base == nil {
		return nil
	}
	var out []string
	for _, k := range tableKeys {
		lr, ok := r.AddressRange[k.key]
		if b, known := base.Stats[k.key]; ok && known && lr[0] <= b && b <= lr[1] {
			out = append(out, k.key)
		}
	}
	return out
}

// notComparable lists, for a replay that stopped at a predicted OOM, the table's keys
// whose figures are only up to the OOM: what the program did after it is not in the
// snapshot, so they cannot be compared with a run that went on. The OOM count, and
// the figures that carry an after-OOM range, are not listed.
func (r *Run) notComparable() []string {
	if r.Stopped < 0 || r.FirstOOM == nil && !r.Served() {
		return nil
	}
	var out []string
	for _, k := range tableKeys {
		if _, ok := r.AfterOOMRange[k.key]; !ok && (k.key != "num_ooms" || r.Served()) {
			out = append(out, k.key)
		}
	}
	return out
}

// alikeNote says which settings gave the same figures as st (all of one cap, as a
// sweep's are): "whatever its max_split_size_mb (none, 64 or 128)" when they are st
// with every combination of values of the options they vary (a limit no block reached,
// a collection that never ran), else "under" their short labels.
func alikeNote(st Setting, alike []Setting) string {
	type option struct {
		name string
		of   func(Setting) string
	}
	options := []option{
		{"max_split_size_mb", func(s Setting) string { return optionValue(float64(s.Conf.MaxSplitSize >> 20)) }},
		{"roundup_power2_divisions", func(s Setting) string { return optionValue(float64(s.Conf.RoundupPower2Divisions[0])) }},
		{"expandable_segments", func(s Setting) string { return strconv.FormatBool(s.Conf.ExpandableSegments) }},
		{"garbage_collection_threshold", func(s Setting) string { return optionValue(s.Conf.GarbageCollectionThreshold) }},
	}
	group := append([]Setting{st}, alike...)
	combos := map[string]bool{}
	product := 1
	var varied []string
	for _, s := range group {
		combos[s.Conf.String()] = true
	}
	for _, o := range options {
		var values []string
		for _, s := range group {
			if v := o.of(s); !slices.Contains(values, v) {
				values = append(values, v)
			}
		}
		if len(values) > 1 {
			product *= len(values)
			varied = append(varied, fmt.Sprintf("%s (%s)", o.name, lang.ListOr(lang.English, values)))
		}
	}
	if len(combos) == len(group) && product == len(group) && len(varied) > 0 {
		return "whatever its " + joinAnd(varied)
	}
	var names []string
	for _, a := range alike {
		names = append(names, shortener.Replace(a.Conf.String()))
	}
	return "under " + joinAnd(names)
}

// optionValue is an option's value for alikeNote: "none" for 0 (not set).
func optionValue(v float64) string {
	if v == 0 {
		return "none"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// tableKeys are the memory_stats keys whose figures [Result.Columns] shows, with
// the column names.
var tableKeys = []struct{ key, column string }{
	{"allocated_bytes.all.peak", "peak allocated"}, {"reserved_bytes.all.peak", "peak reserved"},
	{"num_device_alloc", "cudaMalloc"}, {"num_device_free", "cudaFree"},
	{"num_alloc_retries", "retries"}, {"num_ooms", "OOMs"},
	{"inactive_split_bytes.all.peak", "peak inactive split"},
}

// verbS is the "s" of "depends" for one subject, "" for several.
func verbS(subjects int) string {
	if subjects == 1 {
		return "s"
	}
	return ""
}

// MappedNoPlacement says why a setting with expandable segments carries no address
// range: the table's note and memlab whatif --min-cap both give it.
const MappedNoPlacement = "expandable segments map pages into address ranges reserved up front, so no figure depends on where the driver places device memory"

// writeAddressNotes explains the {low, high} address ranges once for each device,
// then says, setting by setting, whose device allocations they move and how many
// placements were tried; then the settings that map pages (no range to compute) and
// those left unranged, each group with its reason.
func (r *Result) writeAddressNotes(w io.Writer) {
	var placed noteLines[int]         // by device: "setting: what was placed"
	unranged := map[string][]string{} // reason → runs
	var reasons, mapped []string
	for _, run := range r.Runs {
		var line string
		switch {
		case run.AddressDependent() && run.Guessed > 0:
			line = fmt.Sprintf("%d device allocations your run did not make, and some it made, over %d placements (%s)", run.Guessed, run.AddressPlacements, run.convergenceNote())
		case run.AddressDependent():
			line = fmt.Sprintf("only device allocations your run made, which under another setting the driver can place elsewhere or in another order, over %d placements (%s)", run.AddressPlacements, run.convergenceNote())
		case run.AddressUnranged != "":
			if _, seen := unranged[run.AddressUnranged]; !seen {
				reasons = append(reasons, run.AddressUnranged)
			}
			unranged[run.AddressUnranged] = append(unranged[run.AddressUnranged], fmt.Sprintf("%s (device %d)", run.Setting.ShortLabel(), run.Device))
		case !run.placeable && run.Guessed > 0:
			mapped = append(mapped, fmt.Sprintf("%s (device %d)", run.Setting.ShortLabel(), run.Device))
		case run.AddressPlacements > 0:
			line = fmt.Sprintf("no figure changed over %d placements (%s)", run.AddressPlacements, run.convergenceNote())
		}
		if line != "" {
			placed.add(run.Device, run.Setting.ShortLabel()+": "+line)
		}
	}
	placed.write(w, func(d int) string {
		return fmt.Sprintf("Driver addresses, device %d: where the driver puts a device allocation your run did not make is not in the snapshot, and under another setting it can put those your run made elsewhere. A {low, high} beside a figure is its range over placements of them, tried until new ones stop widening it or the time runs out (--range-time); the figure itself is with the driver model's places for the first and your run's addresses for the second:", d)
	})
	if len(mapped) > 0 {
		one := len(mapped) == 1
		fmt.Fprintf(w, "\n%s: %s, and no address range is computed. %s make%s no cudaMalloc call (%s cudaMalloc and cudaFree columns count the mappings and unmappings of pages, as PyTorch's num_device_alloc and num_device_free do)\n",
			joinAnd(mapped), MappedNoPlacement, map[bool]string{true: "It", false: "They"}[one], verbS(len(mapped)), map[bool]string{true: "its", false: "their"}[one])
	}
	for _, why := range reasons {
		fmt.Fprintf(w, "\nunranged: the figures of %s may depend on where the driver places device allocations, but carry no address range: %s\n",
			joinAnd(unranged[why]), why)
	}
}

// writeTimingNotes explains the [low, high] timing ranges once for the runs of a
// device that share them (the same cross-stream frees, the same number of timings
// tried), then names, setting by setting, the table's figures that carry one.
func (r *Result) writeTimingNotes(w io.Writer) {
	type timing struct{ device, frees, held, earlier, schedules int }
	var timed noteLines[timing] // "setting: figures"
	for i := range r.Runs {
		run := &r.Runs[i]
		if shown := run.shownRanges(); len(shown) > 0 {
			timed.add(timing{run.Device, run.CrossStreamFrees, run.HeldFrees, run.EarlierHeldFrees, run.TimingSchedules}, run.Setting.ShortLabel()+": "+strings.Join(shown, ", "))
		}
	}
	timed.write(w, func(k timing) string { return timingHeader(k.device, k.frees, k.held, k.earlier, k.schedules) })
}

// timingHeader explains the timing ranges of a device whose history has frees
// cross-stream frees and held frees of DDP's gradient buckets (earlier of them also made
// at the buckets' rebuild), tried over schedules timings.
func timingHeader(device, frees, held, earlier, schedules int) string {
	title := "GPU timing"
	var what, earliest, latest []string
	if frees > 0 {
		what = append(what, fmt.Sprintf("%s (record_stream) complete when the GPU has done the work of the other streams that used them", plural(frees, "cross-stream free", "cross-stream frees")))
		earliest = append(earliest, "the next allocation, for a cross-stream free")
		latest = append(latest, "its recorded wait stretched, or the next synchronisation for one it did not time")
	}
	if held > 0 {
		if frees == 0 {
			title = "Timing of frees"
		}
		what = append(what, fmt.Sprintf("%s of DDP's gradient buckets come when the last holder of each lets go, which PyTorch's runs of one DDP program did at the buckets' rebuild or only during the next backward", plural(held, "free", "frees")))
		if earlier > 0 {
			earliest = append(earliest, fmt.Sprintf("where your run made it, for a bucket's free, or the buckets' rebuild for the %s your run made after it", plural(earlier, "free", "frees")))
		} else {
			earliest = append(earliest, "where your run made it, for a bucket's free")
		}
		latest = append(latest, "the end, for a bucket's")
	}
	return fmt.Sprintf("%s, device %d: %s, at points no snapshot fixes. A [low, high] beside a figure is its range over %d timings of them, from the earliest point (%s) to the latest the recording allows (%s); the figure itself is with the snapshot's timing. The figures that depend on it:",
		title, device, strings.Join(what, "; "), schedules, strings.Join(earliest, "; "), strings.Join(latest, "; "))
}

// noteLines gathers a note's lines by what explains them (key), keys in the order
// first met, so that write prints each explanation once, its lines indented under it.
type noteLines[K comparable] struct {
	keys  []K
	lines map[K][]string
}

// add puts line under key k.
func (n *noteLines[K]) add(k K, line string) {
	if n.lines == nil {
		n.lines = map[K][]string{}
	}
	if _, seen := n.lines[k]; !seen {
		n.keys = append(n.keys, k)
	}
	n.lines[k] = append(n.lines[k], line)
}

// write prints, for each key, a blank line, header(key) and the key's lines.
func (n *noteLines[K]) write(w io.Writer, header func(K) string) {
	for _, k := range n.keys {
		fmt.Fprintf(w, "\n%s\n", header(k))
		for _, line := range n.lines[k] {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
}

// shownRanges names the table's columns whose figure carries a timing range.
func (r *Run) shownRanges() []string {
	var out []string
	for _, k := range tableKeys {
		if _, ok := r.TimingRange[k.key]; ok {
			out = append(out, k.column)
		}
	}
	return out
}

// WriteTable prints [Result.Columns] as text (the setting left-aligned, figures
// right-aligned), then each setting's full PYTORCH_CUDA_ALLOC_CONF, the first OOM's
// message (and frames) and the warnings.
func (r *Result) WriteTable(w io.Writer) error {
	header, rows := r.Columns()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	// Numbers align right; the setting column is padded so that it reads left-aligned.
	width := 0
	for _, row := range append([][]string{header}, rows...) {
		width = max(width, len(row[0]))
	}
	for _, row := range append([][]string{header}, rows...) {
		fmt.Fprintf(tw, "%-*s\t%s\t\n", width, row[0], strings.Join(row[1:], "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	sep := "\n"
	for _, run := range r.Runs {
		if short := run.Setting.ShortLabel(); short != run.Setting.Label() {
			fmt.Fprintf(w, "%s%s: PYTORCH_CUDA_ALLOC_CONF=%s\n", sep, short, run.Setting.Conf.String())
			sep = ""
		}
	}
	sep = "\n"
	for _, run := range r.Runs {
		if len(run.Alike) > 0 && run.Device == r.Runs[0].Device {
			fmt.Fprintf(w, "%s%s: the same figures %s (one row: the setting with the fewest options)\n", sep, run.Setting.ShortLabel(), alikeNote(run.Setting, run.Alike))
			sep = ""
		}
	}
	for _, n := range stopNotes(r.Stopped, r.swept) {
		fmt.Fprintf(w, "\n%s\n", n)
	}
	for _, run := range r.Runs {
		notes := run.LimitNotes(r.About)
		if n := run.AvoidedOOMNote(r.ownUncapped(run)); n != "" {
			notes = append(notes, n)
		}
		if n := run.RunsOutNote(); n != "" {
			notes = append(notes, n)
		}
		if len(notes) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s, device %d:\n", run.Setting.ShortLabel(), run.Device)
		for _, n := range notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
	r.writeTimingNotes(w)
	r.writeAddressNotes(w)
	r.writeMarks(w)
	for _, run := range r.Runs {
		if o := run.FirstOOM; o != nil {
			fmt.Fprintf(w, "\n%s, device %d: first OOM at event %d (%d bytes on stream %#x):\n  %s\n", run.Setting.Label(), run.Device, o.Event, o.Size, o.Stream, o.Message)
			if run.Stopped == o.Event {
				fmt.Fprintf(w, "  the replay stops there, as the program would have (torch.OutOfMemoryError); the figures are up to that allocation\n")
			}
			for _, f := range o.Frames {
				line := fmt.Sprint(f.Line)
				if f.Line == snapshot.UnknownLine {
					line = "?"
				}
				fmt.Fprintf(w, "    %s:%s %s\n", f.Filename, line, f.Name)
			}
			if n := run.afterOOMNote(); n != "" {
				fmt.Fprintf(w, "  %s\n", n)
			}
			if n := run.ExpandableNote(); n != "" {
				fmt.Fprintf(w, "  %s\n", n)
			}
		}
	}
	for _, n := range r.Pools {
		fmt.Fprintf(w, "\n%s\n", n)
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "\nwarning: %s\n", warn)
	}
	if r.Advice != nil {
		fmt.Fprintf(w, "\n%s\n", r.Advice)
	}
	_, err := fmt.Fprintln(w)
	return err
}

// hasMark reports whether some run satisfies f.
func (r *Result) hasMark(f func(*Run) bool) bool {
	for i := range r.Runs {
		if f(&r.Runs[i]) {
			return true
		}
	}
	return false
}

// convergenceNote says whether an address range converged.
func (r *Run) convergenceNote() string {
	switch {
	case r.AddressConverged:
		return fmt.Sprintf("converged: the last %d widened no figure's range", placementWindow)
	case r.AddressBudgetSpent:
		return "not converged: the time budget (--range-time, Options.RangeBudget) ran out first; the range may be narrower than the driver's"
	}
	return fmt.Sprintf("not converged after %d placements, the most tried", maxPlacements)
}

type jsonFrame struct {
	Filename string `json:"filename"`
	Line     int    `json:"line"`
	Name     string `json:"name"`
}

type jsonOOM struct {
	Message string      `json:"message"`
	Event   int         `json:"event"`
	Size    int64       `json:"size"`
	Stream  uint64      `json:"stream"`
	Frames  []jsonFrame `json:"frames"`
}

type jsonRun struct {
	Conf              string              `json:"conf"`
	Fraction          *float64            `json:"fraction"`
	Cap               *int64              `json:"cap"`
	Device            int                 `json:"device"`
	MaxAllocated      int64               `json:"max_memory_allocated"`
	MaxReserved       int64               `json:"max_memory_reserved"`
	LargestFreeAtPeak int64               `json:"largest_free_at_peak"`
	GuessedAddresses  int                 `json:"guessed_addresses"`
	Stats             map[string]int64    `json:"memory_stats"`
	OOM               *jsonOOM            `json:"oom"`
	CrossStreamFrees  int                 `json:"cross_stream_frees,omitempty"`
	HeldFrees         int                 `json:"held_frees,omitempty"`
	EarlierHeldFrees  int                 `json:"earlier_held_frees,omitempty"`
	TimingRange       map[string][2]int64 `json:"timing_range,omitempty"`
	TimingSchedules   int                 `json:"timing_schedules,omitempty"`
	AddressRange      map[string][2]int64 `json:"address_range,omitempty"`
	AddressPlacements int                 `json:"address_placements,omitempty"`
	AddressConverged  *bool               `json:"address_converged,omitempty"`
	AddressUnranged   string              `json:"address_unranged,omitempty"`
	DirectionUnknown  []string            `json:"direction_unknown,omitempty"`
	NotComparable     []string            `json:"not_comparable_after_oom,omitempty"`
	AfterOOMRange     map[string][2]int64 `json:"after_oom_range,omitempty"`
	StoppedAt         *int                `json:"stopped_at_event"`
	NewOOMs           int64               `json:"new_ooms"`
	PlacementsRanOut  int                 `json:"placements_ran_out"`
	TimingsRanOut     int                 `json:"timings_ran_out"`
	Avoided           []int               `json:"avoided_recorded_ooms,omitempty"`
	Served            bool                `json:"stopped_at_served_oom,omitempty"`
	Allowed           int64               `json:"allowed,omitempty"`
	CapRefusals       int64               `json:"cap_refusals"`
	GCPasses          int64               `json:"gc_passes"`
	GCReleased        int64               `json:"gc_released_segments"`
	HalvedWorkspaces  int                 `json:"halved_workspaces,omitempty"`
	Notes             []string            `json:"notes,omitempty"`
	Alike             []string            `json:"same_figures_as,omitempty"`
}

// WriteJSON writes {"runs": [{"conf", "fraction", "max_memory_allocated",
// "max_memory_reserved", "memory_stats", "oom": null | {"message", "event", "frames"},
// …}], "warnings": […]}: every memory_stats key under torch.cuda.memory_stats()'s
// names, "fraction" and "cap" null when not capped. A run whose history has frees that
// waited for other streams also has "cross_stream_frees": N, one whose history frees
// DDP's gradient buckets "held_frees": N (Run.HeldFrees; "earlier_held_frees": of
// them, those the range also makes at the buckets' rebuild), and, when some figure
// depends on their timing, "timing_range": {memory_stats key: [low, high]} (see
// Run.TimingRange) and "timing_schedules", over how many timings; they are absent
// otherwise. "stopped_at_event" is the trace index of the failed allocation that ended
// the replay (Run.Stopped), null when it ran to the end; "new_ooms" counts the
// out-of-memory errors at requests the recorded run served (Run.NewOOMs: the
// memory_stats "num_ooms" also counts the recorded run's own); "placements_ran_out" and
// "timings_ran_out" count the placements and timings of the ranges, the replay's own
// not among them, that had one (Run.PlacementsRanOut), and where the outcomes differ a
// note says so (Run.RunsOutNote). A figure that depends on where the driver
// placed device allocations (those the recorded run did not make, or under another
// setting than the snapshot's those it made) is in "address_range"
// (Run.AddressRange), with "address_placements" and "address_converged" (whether the
// range stopped widening before its placements ended), or, when no range was computed
// for it, "address_unranged" says why; "direction_unknown" lists the keys whose address
// range spans the recorded setting's figure, "not_comparable_after_oom" those that are
// only up to a predicted OOM (the table marks them "(direction unknown)" and "†");
// one that frees after a predicted OOM
// could change is in "after_oom_range" (Run.AfterOOMRange), and "notes" says why.
// A sweep's ranking lists the settings whose replay stopped, which it does not rank,
// in "stopped_settings" (Result.Stopped): each with "conf", "fraction", "cap",
// "device", "stopped_at_event" and "stopped_at_served_oom".
// "allowed" is the cap in bytes (absent without one), "cap_refusals", "gc_passes" and
// "gc_released_segments" count what the cap and garbage_collection_threshold did
// (Run.Limits), "halved_workspaces" how many cuDNN benchmark workspaces did not fit
// and were asked for at half (Run.HalvedWorkspaces), and "notes" say when the limits
// never engaged and what the halving means (Run.LimitNotes). "about" is Result.About, "pools" Result.Pools. A
// frame's line is -1 where PyTorch wrote 2^64 − 1 (unknown, snapshot.UnknownLine).
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(r.jsonResult())
}

type jsonResult struct {
	Runs     []jsonRun   `json:"runs"`
	Warnings []string    `json:"warnings"`
	Events   int         `json:"events"`
	About    *About      `json:"about,omitempty"`
	Pools    []string    `json:"pools,omitempty"`
	Advice   *jsonAdvice `json:"advice,omitempty"`
	Stopped  []jsonStop  `json:"stopped_settings,omitempty"`
}

// jsonCap is s's cap as the JSON writes it: "fraction" (below 1) and "cap" (bytes),
// each nil when not set.
func (s Setting) jsonCap() (fraction *float64, capBytes *int64) {
	if f := s.Fraction; f > 0 && f < 1 {
		fraction = &f
	}
	if c := s.Cap; c > 0 {
		capBytes = &c
	}
	return fraction, capBytes
}

// jsonStop is a sweep's setting whose replay stopped (SweepStop).
type jsonStop struct {
	Conf      string   `json:"conf"`
	Fraction  *float64 `json:"fraction"`
	Cap       *int64   `json:"cap"`
	Device    int      `json:"device"`
	StoppedAt int      `json:"stopped_at_event"`
	Served    bool     `json:"stopped_at_served_oom"`
}

// jsonResult is what WriteJSON writes.
func (r *Result) jsonResult() jsonResult {
	out := jsonResult{Runs: []jsonRun{}, Warnings: r.Warnings, Events: r.Events, Pools: r.Pools, Advice: r.Advice.json(false)}
	if r.About.TotalMemory > 0 {
		ab := r.About
		out.About = &ab
	}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	for _, st := range r.Stopped {
		j := jsonStop{Conf: st.Setting.Conf.String(), Device: st.Device, StoppedAt: st.Event, Served: st.Served}
		j.Fraction, j.Cap = st.Setting.jsonCap()
		out.Stopped = append(out.Stopped, j)
	}
	for _, run := range r.Runs {
		j := jsonRun{Conf: run.Setting.Conf.String(), Device: run.Device, MaxAllocated: run.MaxAllocated,
			MaxReserved: run.MaxReserved, LargestFreeAtPeak: run.LargestFreeAtPeak, GuessedAddresses: run.Guessed, Stats: run.Stats,
			CrossStreamFrees: run.CrossStreamFrees, HeldFrees: run.HeldFrees, EarlierHeldFrees: run.EarlierHeldFrees, TimingRange: run.TimingRange, TimingSchedules: run.TimingSchedules,
			Allowed: run.Allowed, CapRefusals: run.Limits.CapRefusals, GCPasses: run.Limits.GCPasses, GCReleased: run.Limits.GCReleased,
			HalvedWorkspaces: run.HalvedWorkspaces,
			Notes:            run.LimitNotes(r.About),
			AddressRange:     run.AddressRange, AddressPlacements: run.AddressPlacements, AfterOOMRange: run.AfterOOMRange}
		for _, a := range run.Alike {
			j.Alike = append(j.Alike, a.Conf.String())
		}
		if n := run.afterOOMNote(); n != "" {
			j.Notes = append(j.Notes, n)
		}
		if n := run.ExpandableNote(); n != "" {
			j.Notes = append(j.Notes, n)
		}
		if n := run.AvoidedOOMNote(r.ownUncapped(run)); n != "" {
			j.Notes = append(j.Notes, n)
		}
		if n := run.RunsOutNote(); n != "" {
			j.Notes = append(j.Notes, n)
		}
		j.Avoided, j.Served, j.NewOOMs = run.Avoided, run.Served(), run.NewOOMs
		j.PlacementsRanOut, j.TimingsRanOut = run.PlacementsRanOut, run.TimingsRanOut
		if run.AddressPlacements > 0 {
			conv := run.AddressConverged
			j.AddressConverged = &conv
		}
		j.AddressUnranged = run.AddressUnranged
		j.DirectionUnknown = run.directionUnknown(r.baseline(run))
		j.NotComparable = run.notComparable()
		if run.Stopped >= 0 {
			at := run.Stopped
			j.StoppedAt = &at
		}
		j.Fraction, j.Cap = run.Setting.jsonCap()
		if o := run.FirstOOM; o != nil {
			j.OOM = &jsonOOM{Message: o.Message, Event: o.Event, Size: o.Size, Stream: o.Stream, Frames: []jsonFrame{}}
			for _, f := range o.Frames {
				j.OOM.Frames = append(j.OOM.Frames, jsonFrame{f.Filename, f.Line, f.Name})
			}
		}
		out.Runs = append(out.Runs, j)
	}
	return out
}
