package whatif

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/reference"
)

// facts is the part of a workload's facts.json the acceptance compares.
type facts struct {
	Conf        string           `json:"conf"`
	Frac        *float64         `json:"frac"`
	TotalMemory int64            `json:"total_memory"`
	MaxAlloc    int64            `json:"max_memory_allocated"`
	MaxReserved int64            `json:"max_memory_reserved"`
	Stats       map[string]int64 `json:"memory_stats"`
	OOM         *string          `json:"oom"`
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
// measured in that run.
func TestPredictsRecordedSettings(t *testing.T) {
	files, err := reference.Glob(reference.Workloads211, "*__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no workload snapshots")
	}
	for _, def := range files {
		prog := strings.TrimSuffix(filepath.Base(def), "__default.pickle")
		factFiles, err := reference.Glob(reference.Workloads211, prog+"__*.facts.json")
		if err != nil {
			t.Fatal(err)
		}
		var settings []Setting
		var want []facts
		var names []string
		for _, ff := range factFiles {
			f := readFacts(t, ff)
			cfg, err := allocator.ParseConfig(f.Conf)
			if err != nil {
				t.Fatalf("%s: conf %q: %v", ff, f.Conf, err)
			}
			st := Setting{Conf: cfg}
			if f.Frac != nil {
				st.Fraction = *f.Frac
			}
			settings = append(settings, st)
			want = append(want, f)
			names = append(names, strings.TrimSuffix(strings.TrimPrefix(filepath.Base(ff), prog+"__"), ".facts.json"))
		}
		res, err := File(def, settings, Options{TotalMemory: want[0].TotalMemory})
		if err != nil {
			t.Fatalf("%s: %v", prog, err)
		}
		for i, r := range res.Runs {
			for _, k := range acceptanceKeys {
				if got, w := r.Stats[k], want[i].Stats[k]; got != w {
					t.Errorf("%s under %s: %s = %d, PyTorch measured %d (guessed addresses %d)", prog, names[i], k, got, w, r.Guessed)
				}
			}
			if r.MaxAllocated != want[i].MaxAlloc || r.MaxReserved != want[i].MaxReserved {
				t.Errorf("%s under %s: peaks %d/%d, PyTorch %d/%d", prog, names[i], r.MaxAllocated, r.MaxReserved, want[i].MaxAlloc, want[i].MaxReserved)
			}
			if (r.FirstOOM != nil) != (want[i].OOM != nil) {
				t.Errorf("%s under %s: OOM %v, PyTorch %v", prog, names[i], r.FirstOOM, want[i].OOM)
			}
		}
	}
}
