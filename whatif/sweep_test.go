package whatif

import (
	"strings"
	"testing"

	"memlab.dev/memlab/allocator"
)

// TestSweepOneRowPerResult: a sweep lists each result once, under the setting with
// the fewest options set, the others with the same figures in its Alike; together
// they are every setting tried (none runs out of memory without a cap), and each
// setting in an Alike, replayed on its own, gives its row's figures.
func TestSweepOneRowPerResult(t *testing.T) {
	s := workload(t, "gpt2_train")
	base := Setting{Conf: allocator.DefaultConfig()}
	runs, err := Sweep(s, base, Options{})
	if err != nil {
		t.Fatal(err)
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
