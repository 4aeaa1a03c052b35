package whatif

import (
	"fmt"
	"strings"
	"testing"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/reference"
)

// TestSweepOneRowPerResult: a sweep lists each result once, under the setting with
// the fewest options set, the others with the same figures in its Alike; together
// they are every setting tried (none runs out of memory without a cap), and each
// setting in an Alike, replayed on its own, gives its row's figures.
func TestSweepOneRowPerResult(t *testing.T) {
	s := workload(t, "gpt2_train")
	base := Setting{Conf: allocator.DefaultConfig()}
	sw, err := Sweep(s, base, Options{})
	if err != nil {
		t.Fatal(err)
	}
	runs := sw.Runs
	if len(sw.Stopped) > 0 || sw.Tried != len(SweepSettings(base)) {
		t.Errorf("%d of %d settings stopped; want every one of the %d to run through (no cap, no OOM)", len(sw.Stopped), sw.Tried, len(SweepSettings(base)))
	}
	kept := 0
	var defaults *Run
	for i := range runs {
		r := &runs[i]
		kept += 1 + len(r.Alike)
		for _, o := range runs[:i] {
			if sameFigures([]Run{o}, []Run{*r}) {
				t.Errorf("%s and %s: two rows with the same figures", o.Setting.Label(), r.Setting.Label())
			}
		}
		for _, a := range r.Alike {
			if optionsSet(a) < optionsSet(r.Setting) {
				t.Errorf("%s stands for %s, which sets fewer options", r.Setting.Label(), a.Label())
			}
		}
		if r.Setting.Label() == "default" {
			defaults = r
		}
	}
	if tried := len(SweepSettings(base)); kept != tried || len(runs) >= tried {
		t.Errorf("%d rows standing for %d settings, want fewer rows than the %d settings tried, standing for all of them", len(runs), kept, tried)
	}
	if defaults == nil || len(defaults.Alike) == 0 {
		t.Fatalf("no defaults' row with settings alike: %v", defaults)
	}
	var names []string
	for _, a := range defaults.Alike {
		names = append(names, a.Label())
	}
	// No block of this program reaches 512 MiB: a larger limit changes nothing.
	if got := strings.Join(names, ", "); got != "max_split_size_mb:512, max_split_size_mb:1024" {
		t.Errorf("the defaults' row stands for %s, want max_split_size_mb:512 and :1024", got)
	}
	res, err := Replay(s, defaults.Alike, Options{NoAddressRange: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Runs {
		if !sameFigures([]Run{*defaults}, []Run{r}) {
			t.Errorf("%s replayed on its own: reserved %d, cudaMalloc %d; the defaults' row %d, %d", r.Setting.Label(), r.MaxReserved, r.DeviceAllocs, defaults.MaxReserved, defaults.DeviceAllocs)
		}
	}
}

// TestAlikeNote: settings alike that are the row's with every combination of some
// options' values are said by those options; any others are listed.
func TestAlikeNote(t *testing.T) {
	parse := func(confs ...string) []Setting {
		out, err := ParseSettings(confs...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	row := parse("expandable_segments:True")[0]
	for _, c := range []struct {
		alike []string
		want  string
	}{
		{[]string{"expandable_segments:True,max_split_size_mb:512", "expandable_segments:True,max_split_size_mb:1024"},
			"whatever its max_split_size_mb (none, 512 or 1024)"},
		{[]string{"expandable_segments:True,garbage_collection_threshold:0.6", "expandable_segments:True,max_split_size_mb:64",
			"expandable_segments:True,max_split_size_mb:64,garbage_collection_threshold:0.6"},
			"whatever its max_split_size_mb (none or 64) and garbage_collection_threshold (none or 0.6)"},
		// not every combination: listed
		{[]string{"expandable_segments:True,garbage_collection_threshold:0.6", "expandable_segments:True,max_split_size_mb:64"},
			"under gc 0.6 + expandable and max_split 64 + expandable"},
	} {
		if got := alikeNote(row, parse(c.alike...)); got != c.want {
			t.Errorf("%v: %q, want %q", c.alike, got, c.want)
		}
	}
}

// TestSweepOfAnOOMSnapshot: a sweep of a program that ran out of memory and went on
// (oom_split_batch_serve_fp16 halves a batch that raised torch.OutOfMemoryError) ranks
// the settings that run through — its own, failing the recorded run's 19 requests and
// no other — and names the others: those that serve a request the recorded run failed
// and those that run out where it did not, each as its own replay finds it.
func TestSweepOfAnOOMSnapshot(t *testing.T) {
	s := referenceSnapshot(t, reference.Programs211, "oom_split_batch_serve_fp16__default.pickle")
	base := Setting{Conf: allocator.DefaultConfig()}
	sw, err := Sweep(s, base, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sw.Runs) != 1 || sw.Runs[0].Setting.Label() != "default" || sw.Runs[0].OOMs != 19 || sw.Runs[0].NewOOMs != 0 || sw.Runs[0].RunsOut() {
		t.Fatalf("ranked %d runs, the first %+v; want the default alone, with the recorded run's 19 OOMs and no new one", len(sw.Runs), sw.Runs[0])
	}
	if len(sw.Runs)+len(sw.Stopped) != sw.Tried || sw.Tried != len(SweepSettings(base)) {
		t.Errorf("%d ranked + %d stopped of %d tried", len(sw.Runs), len(sw.Stopped), sw.Tried)
	}
	var stopped []Setting
	served := map[bool]int{}
	for _, st := range sw.Stopped {
		stopped = append(stopped, st.Setting)
		served[st.Served]++
	}
	if served[true] != 57 || served[false] != 2 {
		t.Errorf("%d settings serve a failed request, %d run out anew; want 57 and 2", served[true], served[false])
	}
	res, err := Replay(s, stopped, Options{NoAddressRange: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res.Runs {
		st := sw.Stopped[i]
		if r.Stopped != st.Event || r.Served() != st.Served || st.Served == (r.NewOOMs > 0) {
			t.Errorf("%s: the sweep says stopped at %d (served %v); replayed alone it stops at %d, served %v, %d new OOMs",
				st.Setting.Label(), st.Event, st.Served, r.Stopped, r.Served(), r.NewOOMs)
		}
	}
	notes := stopNotes(sw.Stopped, sw.settings)
	want := []string{
		"57 settings (every one tried but default, roundup 8 and roundup 16) serve the request the recorded run failed at event 2193: the replay stops there",
		"2 settings (roundup 8 and roundup 16) run out of memory at event 4810, where the recorded run did not",
	}
	if len(notes) != len(want) {
		t.Fatalf("notes %q; want %d", notes, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(notes[i], w) {
			t.Errorf("note %q; want it to start %q", notes[i], w)
		}
	}
	checked, err := SweepAdvice(s, sw, base, 2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := checked.Advice
	if len(checked.Runs) != 3 || a == nil || a.Best != nil || len(a.Serves) != 2 || a.ServesAt != 2193 {
		t.Fatalf("advice over %d runs: %+v; want none for sure, naming the 2 settings with the fewest options that serve the request at event 2193", len(checked.Runs), a)
	}
}

// TestSweepNamesWhatRunsOut: under a cap, the settings that run out of memory are
// named by where they stopped, not dropped from the count in silence.
func TestSweepNamesWhatRunsOut(t *testing.T) {
	s := workload(t, "gpt2_train")
	base := Setting{Conf: allocator.DefaultConfig(), Fraction: 0.04}
	sw, err := Sweep(s, base, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, through := sw.Entries()
	if through+len(sw.Stopped) != sw.Tried || len(sw.Stopped) == 0 {
		t.Fatalf("%d settings ranked, %d stopped, of %d tried; want some stopped, all accounted for", through, len(sw.Stopped), sw.Tried)
	}
	for _, st := range sw.Stopped {
		if st.Served || st.Setting.Fraction != base.Fraction {
			t.Errorf("%+v: want a new OOM under the base's cap", st)
		}
	}
	notes := stopNotes(sw.Stopped, sw.settings)
	if len(notes) != 1 || !strings.Contains(notes[0], fmt.Sprintf("%d settings (", len(sw.Stopped))) || !strings.Contains(notes[0], "run out of memory at event 3935, where the recorded run did not") {
		t.Errorf("notes %q", notes)
	}
	// with a cap so small that nothing runs through, the error says so
	base.Fraction = 0.01
	if _, err := Sweep(s, base, Options{}); err == nil || !strings.Contains(err.Error(), "every setting runs out of memory under this cap") {
		t.Errorf("a 1 %% cap: %v", err)
	}
}

// TestMinCapOfAnOOMSnapshot: of a program that ran out of memory and went on, the
// smallest cap is the one without an OOM the recorded run did not have: under it the
// replay still fails the recorded run's 19 requests, and 2 MiB below it the model or
// a placement fails another. A setting that serves a failed request has no such cap.
func TestMinCapOfAnOOMSnapshot(t *testing.T) {
	s := referenceSnapshot(t, reference.Programs211, "oom_split_batch_serve_fp16__default.pickle")
	sts := settings(t, "", "expandable_segments:True")
	cs, err := MinCapRange(s, sts[0], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if cs.RecordedOOMs != 19 || cs.Cap < cs.ModelCap {
		t.Fatalf("%+v: want the recorded run's 19 OOMs kept, a cap at least the model's", cs)
	}
	at := func(c int64) Run {
		t.Helper()
		x := sts[0]
		x.Cap = c
		res, err := Replay(s, []Setting{x}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return res.Runs[0]
	}
	if r := at(cs.Cap); r.RunsOut() || r.Stopped >= 0 || r.OOMs != 19 {
		t.Errorf("at the cap %d: new OOMs %d (in a range: %v), stopped at %d, %d OOMs; want none new, the 19 recorded", cs.Cap, r.NewOOMs, r.RangeRanOut, r.Stopped, r.OOMs)
	}
	if r := at(cs.Cap - 2<<20); !r.RunsOut() {
		t.Errorf("2 MiB below the cap %d: no new OOM in the model nor any placement", cs.Cap)
	}
	if _, err := MinCap(s, sts[1], Options{}); err == nil || !strings.Contains(err.Error(), "serves the request the recorded run failed at event 2193") {
		t.Errorf("expandable: %v; want an error naming the request it serves", err)
	}
}
