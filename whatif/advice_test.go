package whatif

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/snapshot"
)

// adviceRun is a run for the advice's tests: peak reserved figure, its address
// range (none when lo == hi == figure), cudaMalloc calls and an OOM.
func adviceRun(st Setting, figure, lo, hi, allocs int64, oom bool) Run {
	r := Run{Setting: st, MaxReserved: figure, DeviceAllocs: allocs, Stopped: -1}
	if lo != figure || hi != figure {
		r.AddressRange = map[string][2]int64{"reserved_bytes.all.peak": {lo, hi}}
		r.AddressPlacements = 8
	}
	if oom {
		r.FirstOOM = &OOM{Message: "CUDA out of memory."}
		r.OOMs = 1
	}
	return r
}

// TestAdviseJudgesOnTheHighEnd: the advised setting is the one whose peak reserved
// has the lowest high end below the recorded run's figure, not the lowest figure; a
// setting that runs out of memory is never advised; the saving carries its range.
func TestAdviseJudgesOnTheHighEnd(t *testing.T) {
	st := settings(t, "", "expandable_segments:True", "max_split_size_mb:128", "roundup_power2_divisions:4")
	const mib = 1 << 20
	r := &Result{Runs: []Run{
		adviceRun(st[0], 1000*mib, 1000*mib, 1000*mib, 20, false),
		adviceRun(st[1], 800*mib, 780*mib, 990*mib, 25, false),  // advised: high end 990 < 1000
		adviceRun(st[2], 700*mib, 690*mib, 1100*mib, 18, false), // lowest figure, but its range reaches above
		adviceRun(st[3], 500*mib, 500*mib, 500*mib, 10, true),   // lowest, but runs out
	}}
	own := st[0]
	r.Advise(&own)
	a := r.Advice
	if a == nil || a.Best == nil {
		t.Fatalf("advice %+v: want one", a)
	}
	if a.Best.Label() != st[1].Label() || !a.Recorded {
		t.Errorf("advised %s (baseline recorded: %v), want %s against the recorded run", a.Best.Label(), a.Recorded, st[1].Label())
	}
	if want := [3]int64{200 * mib, 10 * mib, 220 * mib}; a.Saves != want {
		t.Errorf("saves %v, want %v", a.Saves, want)
	}
	if a.SavesPercent != 20 || a.DeviceAllocs[0] != 25 || a.BaselineDeviceAllocs[0] != 20 {
		t.Errorf("saves %.1f %%, cudaMalloc %v against %v; want 20 %%, 25 against 20", a.SavesPercent, a.DeviceAllocs, a.BaselineDeviceAllocs)
	}
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"default (recorded run)", "advice: expandable lowers peak reserved most without an OOM",
		"saving 200.00 MiB {10.00 MiB, 220.00 MiB} (20.0 %)",
		"it costs 25 mappings of pages (the cudaMalloc column) against 20 cudaMalloc calls under default, and 0 retries (default: 0)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Advice struct {
			Conf     *string  `json:"conf"`
			Saves    [3]int64 `json:"saves_bytes"`
			Recorded bool     `json:"baseline_is_recorded_run"`
			Text     string   `json:"text"`
		} `json:"advice"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Advice.Conf == nil || *got.Advice.Conf != "expandable_segments:True" || got.Advice.Saves != a.Saves ||
		!got.Advice.Recorded || got.Advice.Text != a.String() {
		t.Errorf("JSON advice %+v", got.Advice)
	}

	// what the cudaMalloc column counts under each: the expandable row maps pages
	for _, c := range []struct {
		best, baseline int
		want           string
	}{
		{2, 0, "it costs 18 cudaMalloc calls (default: 20) and 0 retries (default: 0)"},
		{1, 2, "it costs 25 mappings of pages (the cudaMalloc column) against 18 cudaMalloc calls under max_split 128, and"},
		{2, 1, "it costs 18 cudaMalloc calls against 25 mappings of pages (the cudaMalloc column) under expandable, and"},
		{1, 1, "it costs 25 mappings of pages (expandable: 25) and"},
	} {
		best, base := r.Runs[c.best].Setting, r.Runs[c.baseline].Setting
		n, m := r.Runs[c.best].DeviceAllocs, r.Runs[c.baseline].DeviceAllocs
		costs := Advice{Best: &best, Baseline: base, DeviceAllocs: [3]int64{n, n, n}, BaselineDeviceAllocs: [3]int64{m, m, m}}
		if got := costs.String(); !strings.Contains(got, c.want) {
			t.Errorf("advice for %s against %s: %q, want %q in it", best.Label(), base.Label(), got, c.want)
		}
	}

	if strings.Contains(a.String(), "timing range") {
		t.Errorf("advice %q speaks of a timing range, and no run has one", a)
	}
	// a timing range widens the advised setting's span: its {low, high} says so, as
	// the table prints it "[low, high]"
	r.Runs[1].TimingRange = map[string][2]int64{"reserved_bytes.all.peak": {770 * mib, 995 * mib}}
	r.Advise(&own)
	if a := r.Advice.String(); !strings.Contains(a, "800.00 MiB {770.00 MiB, 995.00 MiB}") ||
		!strings.Contains(a, "a {low, high} here spans a figure's timing range ([low, high] in the table) as well as its address range") {
		t.Errorf("advice %q: want the span over both ranges, and the note that it takes in a timing range", a)
	}
	b.Reset()
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var timed struct {
		Advice struct {
			SpansTimingRange bool `json:"spans_timing_range"`
		} `json:"advice"`
	}
	if err := json.Unmarshal(b.Bytes(), &timed); err != nil || !timed.Advice.SpansTimingRange {
		t.Errorf("JSON advice: spans_timing_range %v (%v), want true", timed.Advice.SpansTimingRange, err)
	}

	// nothing lower for sure: keep the recorded run
	r.Runs[1] = adviceRun(st[1], 800*mib, 780*mib, 1000*mib, 25, false)
	r.Advise(&own)
	if r.Advice.Best != nil || !strings.HasPrefix(r.Advice.String(), "advice: keep default (the recorded run)") {
		t.Errorf("advice %q: want to keep the recorded run", r.Advice)
	}
	// the recorded setting runs out: the lowest among those that do not
	r.Runs[0] = adviceRun(st[0], 1000*mib, 1000*mib, 1000*mib, 20, true)
	r.Advise(&own)
	if r.Advice.Best == nil || r.Advice.Best.Label() != st[1].Label() || !r.Advice.BaselineOOM {
		t.Errorf("advice %q: want expandable, the recorded setting running out", r.Advice)
	}
	// a recorded setting that runs out prints no span: its timing range says nothing
	r.Runs[0].TimingRange = map[string][2]int64{"reserved_bytes.all.peak": {990 * mib, 1010 * mib}}
	r.Advise(&own)
	if r.Advice.Timed || strings.Contains(r.Advice.String(), "timing range") {
		t.Errorf("advice %q: the recorded setting runs out, and only its figures have a timing range", r.Advice)
	}
	r.Runs[0].TimingRange = nil
	// one setting: no advice
	one := &Result{Runs: r.Runs[:1]}
	one.Advise(&own)
	if one.Advice != nil {
		t.Errorf("one setting advised %q", one.Advice)
	}
}

// TestAdviceRecordedPrograms: on shipped programs recorded under every setting, the
// advised setting is the one whose peak reserved PyTorch measured lowest, and the
// saving PyTorch measured lies inside the advice's range.
func TestAdviceRecordedPrograms(t *testing.T) {
	confs := []string{"", "expandable_segments:True", "max_split_size_mb:128", "roundup_power2_divisions:4"}
	tags := []string{"default", "expandable_segments_True", "max_split_size_mb_128", "roundup_power2_divisions_4"}
	for _, prog := range []string{"bert_encode", "multistream_branches"} {
		t.Run(prog, func(t *testing.T) {
			path, err := reference.Pickle(reference.Workloads211, prog+"__default.pickle")
			if err != nil {
				t.Fatal(err)
			}
			res, err := File(path, settings(t, confs...), Options{})
			if err != nil {
				t.Fatal(err)
			}
			own := settings(t, "")[0]
			res.Advise(&own)
			a := res.Advice
			measured := make([]int64, len(tags))
			lowest := 0
			for i, tag := range tags {
				p, err := reference.File(reference.Workloads211, prog+"__"+tag+".facts.json")
				if err != nil {
					t.Fatal(err)
				}
				measured[i] = readFacts(t, p).MaxReserved
				if measured[i] < measured[lowest] {
					lowest = i
				}
			}
			if a == nil || a.Best == nil || a.Best.Conf.String() != confs[lowest] {
				t.Fatalf("advice %v: want %q, the setting PyTorch measured lowest", a, confs[lowest])
			}
			if saved := measured[0] - measured[lowest]; saved < a.Saves[1] || saved > a.Saves[2] {
				t.Errorf("PyTorch saved %d bytes, outside the advice's {%d, %d}", saved, a.Saves[1], a.Saves[2])
			}
			t.Log(a)
		})
	}
}

// TestExpandableNote: PyTorch's OOM text advises expandable_segments:True; beside a
// run that already uses it memlab adds its own line, and only there.
func TestExpandableNote(t *testing.T) {
	st := settings(t, "", "expandable_segments:True")
	msg := "CUDA out of memory. Tried to allocate 2.00 MiB. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation."
	r := &Result{Runs: []Run{
		{Setting: st[0], Stopped: 7, FirstOOM: &OOM{Message: msg}},
		{Setting: st[1], Stopped: 7, FirstOOM: &OOM{Message: msg}},
	}}
	if r.Runs[0].ExpandableNote() != "" || r.Runs[1].ExpandableNote() == "" {
		t.Fatalf("notes %q, %q: want one beside the expandable run only", r.Runs[0].ExpandableNote(), r.Runs[1].ExpandableNote())
	}
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "memlab: this run already uses expandable_segments:True"); n != 1 || strings.Count(b.String(), msg) != 2 {
		t.Errorf("memlab's line %d times, PyTorch's text %d times; want 1 and 2:\n%s", n, strings.Count(b.String(), msg), b.String())
	}
}

// TestRanksWorstByHighEnd: the worst rank of a setting is the one whose peak
// reserved reaches highest in its range, not the highest figure; the summary names
// every rank's file and lists the files of ranks that run out.
func TestRanksWorstByHighEnd(t *testing.T) {
	st := settings(t, "", "expandable_segments:True")
	const mib = 1 << 20
	rank := func(path string, runs ...Run) Rank {
		own := st[0]
		return Rank{Path: path, Result: &Result{Runs: runs}, Own: &own}
	}
	rs := Ranks{
		rank("r0.pickle", adviceRun(st[0], 1000*mib, 1000*mib, 1000*mib, 10, false), adviceRun(st[1], 600*mib, 600*mib, 600*mib, 9, false)),
		rank("r1.pickle", adviceRun(st[0], 900*mib, 880*mib, 1100*mib, 10, false), adviceRun(st[1], 500*mib, 500*mib, 500*mib, 9, true)),
	}
	w := rs.Worst()
	if len(w) != 2 || w[0].Rank != 1 || w[0].Reserved[2] != 1100*mib {
		t.Fatalf("worst %+v: want rank 1 under default (its range reaches 1100 MiB)", w)
	}
	if w[1].Rank != 0 || len(w[1].OOMFiles) != 1 || w[1].OOMFiles[0] != "r1.pickle" {
		t.Errorf("expandable: worst rank %d, OOM files %v; want rank 0, [r1.pickle]", w[1].Rank, w[1].OOMFiles)
	}
	var b bytes.Buffer
	if err := rs.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"rank 0: r0.pickle", "rank 1: r1.pickle", "expandable: out of memory on 1 of 2 ranks: r1.pickle",
		"advice: keep default (the recorded run)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	// without the OOM, expandable saves on the worst rank
	rs[1].Result.Runs[1] = adviceRun(st[1], 500*mib, 500*mib, 500*mib, 9, false)
	a := rs.Advice()
	if a == nil || a.Best == nil || a.Best.Label() != st[1].Label() || a.Rank != 0 || a.BaselineReserved[0] != 900*mib {
		t.Errorf("advice %+v: want expandable on rank 0 against rank 1's 900 MiB", a)
	}
}

// TestAdviceAndTableShareTheBaseline: with the recorded setting both capped and not
// among the rows, the advice and the table compare with the uncapped one, the
// recorded run, whichever comes first.
func TestAdviceAndTableShareTheBaseline(t *testing.T) {
	st := settings(t, "", "", "expandable_segments:True")
	st[0].Fraction = 0.5
	const mib = 1 << 20
	r := &Result{Runs: []Run{
		adviceRun(st[0], 900*mib, 900*mib, 900*mib, 20, false),
		adviceRun(st[1], 1000*mib, 1000*mib, 1000*mib, 20, false),
		adviceRun(st[2], 800*mib, 800*mib, 800*mib, 25, false),
	}}
	own := settings(t, "")[0]
	r.Advise(&own)
	if a := r.Advice; a == nil || !a.Recorded || a.Baseline.Label() != "default" || a.BaselineReserved[0] != 1000*mib {
		t.Fatalf("advice %+v: want the uncapped default, the recorded run, as its baseline", a)
	}
	if b := r.baseline(r.Runs[2]); b == nil || b.Setting.Label() != "default" {
		t.Errorf("the table's baseline %v: want the uncapped default, as the advice's", b)
	}
}

// TestAdvicePractitionerPrograms: for every program of reference/programs-2.11, the
// advice over the settings it was recorded under without a cap (the snapshot's
// default first) names a setting PyTorch measured to reserve less than the default,
// and the saving PyTorch measured lies inside the advice's range. How often the
// advised setting is the one PyTorch measured lowest is logged: within the ranges
// another may be as low (BENCHMARKS.md quotes the line).
func TestAdvicePractitionerPrograms(t *testing.T) {
	// each program's default snapshot, and its uncapped settings with what PyTorch
	// measured under them, the default first (the advice's baseline)
	type recorded struct {
		s        *snapshot.Snapshot
		sts      []Setting
		measured []int64
		total    int64
	}
	byProg := map[string]*recorded{}
	programCases(t, func(prog, ff string, s *snapshot.Snapshot, f facts) {
		if f.Frac != nil {
			return // a capped run: its cap is not a setting to advise
		}
		p := byProg[prog]
		if p == nil {
			p = &recorded{s: s, total: f.TotalMemory}
			byProg[prog] = p
		}
		st := f.setting(t)
		if st.Conf.String() == "" {
			p.sts = append([]Setting{st}, p.sts...)
			p.measured = append([]int64{f.MaxReserved}, p.measured...)
		} else {
			p.sts = append(p.sts, st)
			p.measured = append(p.measured, f.MaxReserved)
		}
	})
	programs, advised, lowest, kept, keptLowest, open := 0, 0, 0, 0, 0, 0
	picks := map[string]int{}
	for _, prog := range slices.Sorted(maps.Keys(byProg)) {
		sts, measured := byProg[prog].sts, byProg[prog].measured
		if len(sts) < 2 || sts[0].Conf.String() != "" {
			t.Fatalf("%s: %d uncapped settings recorded, the default first: %v", prog, len(sts), sts)
		}
		res, err := Replay(byProg[prog].s, sts, Options{TotalMemory: byProg[prog].total})
		if err != nil {
			t.Fatalf("%s: %v", prog, err)
		}
		own := sts[0]
		res.Advise(&own)
		a := res.Advice
		if a == nil || !a.Recorded {
			t.Fatalf("%s: advice %v, want one against the recorded run", prog, a)
		}
		programs++
		low := 0
		for i := range measured {
			if measured[i] < measured[low] {
				low = i
			}
		}
		if a.Best == nil && len(a.Serves) > 0 {
			open++
			t.Logf("%s: no advice for sure: %s serve the request the recorded run failed at event %d (PyTorch's runs under them served it and went on: TestPredictsPractitionerPrograms)", prog, strings.Join(a.Serves, ", "), a.ServesAt)
			continue
		}
		if a.Best == nil {
			kept++
			if measured[low] == measured[0] {
				keptLowest++
			}
			t.Logf("%s: keep the default; PyTorch measured %s lowest (%d against %d bytes)", prog, sts[low].Label(), measured[low], measured[0])
			continue
		}
		advised++
		picks[a.Best.Label()]++
		best := slices.IndexFunc(sts, func(st Setting) bool { return st.Label() == a.Best.Label() })
		if saved := measured[0] - measured[best]; saved <= 0 || saved < a.Saves[1] || saved > a.Saves[2] {
			t.Errorf("%s: advised %s; PyTorch measured it save %d bytes, the advice {%d, %d}", prog, a.Best.Label(), saved, a.Saves[1], a.Saves[2])
		}
		if best == low || measured[best] == measured[low] {
			lowest++
		} else {
			t.Logf("%s: advised %s (PyTorch: %d bytes); PyTorch measured %s lower (%d)", prog, a.Best.Label(), measured[best], sts[low].Label(), measured[low])
		}
	}
	var by []string
	for _, l := range slices.Sorted(maps.Keys(picks)) {
		by = append(by, fmt.Sprintf("%s %d", l, picks[l]))
	}
	line := fmt.Sprintf("advice on the practitioners' programs: %d programs; %d advised a setting (%s), each saving in PyTorch's measurement, inside the advice's range; %d of them the setting PyTorch measured lowest; %d kept the default, %d of them where PyTorch measured the default lowest",
		programs, advised, strings.Join(by, ", "), lowest, kept, keptLowest)
	if open > 0 {
		line += fmt.Sprintf("; %d left open: the recorded run ran out of memory, and the settings that serve the request it failed stop there", open)
	}
	t.Log(line)
	quotedInBenchmarks(t, "the advice's line", line)
	// the READMEs say how many programs the advice was checked on
	root, err := reference.Root()
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		"README.md":       fmt.Sprintf("On the %d practitioners' programs of `reference/programs-2.11/`", programs),
		"README.zh-CN.md": fmt.Sprintf("在 `reference/programs-2.11/` 的 %d 个程序上", programs),
	} {
		doc, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(doc), want) {
			t.Errorf("%s does not say %q: update the advice's paragraph", file, want)
		}
	}
}
