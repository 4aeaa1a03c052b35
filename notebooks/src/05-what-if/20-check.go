package nb05

/*md
## 2 Is the prediction right? Check it against PyTorch

The same program was also run on the H200 under each of four other settings, and PyTorch's
own figures for every run are in `*.facts.json` beside the snapshots. The cell below
replays the *default* snapshot under each run's setting (with the run's cap, if it had
one) and compares eight figures with what PyTorch measured in that other run: the peaks,
device allocations and frees, retries, OOMs, the segment peak and the fragmentation peak.
*/

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/snapshot"
	"memlab.dev/memlab/whatif"
)

// facts is what PyTorch measured in one recorded run (a *.facts.json file).
//
//nb:decl
type facts struct {
	Conf        string           `json:"conf"`
	Frac        *float64         `json:"frac"`
	TotalMemory int64            `json:"total_memory"`
	Stats       map[string]int64 `json:"memory_stats"`
}

// readFacts reads the figures PyTorch measured in a shipped run, e.g. "gpt2_train__default".
//
//nb:decl
func readFacts(run string) facts {
	var f facts
	path := memlab.Must(reference.File(reference.Workloads211, run+".facts.json"))
	memlab.Check(json.Unmarshal(memlab.Must(os.ReadFile(path)), &f))
	return f
}

// predict replays s under the setting (and cap) of the recorded run f.
//
//nb:decl
func predict(s *snapshot.Snapshot, f facts) whatif.Run {
	st := whatif.Setting{Conf: memlab.Must(allocator.ParseConfig(f.Conf))}
	if f.Frac != nil {
		st.Fraction = *f.Frac
	}
	return memlab.Must(whatif.Replay(s, []whatif.Setting{st}, whatif.Options{TotalMemory: f.TotalMemory})).Runs[0]
}

// figures are the memory_stats keys a prediction is compared on.
//
//nb:decl
var figures = []string{"allocated_bytes.all.peak", "reserved_bytes.all.peak", "num_device_alloc", "num_device_free",
	"num_alloc_retries", "num_ooms", "segment.all.peak", "inactive_split_bytes.all.peak"}

// figure formats the value of memory_stats key k: a size for byte counts.
//
//nb:decl
func figure(k string, v int64) string {
	if strings.Contains(k, "bytes") {
		return memlab.FormatBytes(v)
	}
	return fmt.Sprint(v)
}

// recorded are the settings each shipped program was recorded under (file-name tags).
//
//nb:decl
var recorded = []string{"default", "expandable_segments_True", "max_split_size_mb_128",
	"max_split_size_mb_64__garbage_collection_threshold_0p6", "roundup_power2_divisions_4"}

//nb:cell plot
func checkAgainstPyTorch() {
	s := load("gpt2_train__default.pickle")
	tab := memlab.NewTable("recorded under", "peak reserved: replay", "PyTorch", "cudaMalloc: replay", "PyTorch", "figures equal")
	pred, torch := memplot.BarSeries{Name: "replay of the default snapshot"}, memplot.BarSeries{Name: "PyTorch, measured"}
	var names []string
	equal := 0
	for _, tag := range recorded {
		f := readFacts("gpt2_train__" + tag)
		r, n := predict(s, f), 0
		for _, k := range figures {
			n += map[bool]int{true: 1}[r.Stats[k] == f.Stats[k]]
		}
		equal += n
		tab.Row(r.Setting.ShortLabel(), memlab.FormatBytes(r.MaxReserved), memlab.FormatBytes(f.Stats["reserved_bytes.all.peak"]),
			r.DeviceAllocs, f.Stats["num_device_alloc"], fmt.Sprintf("%d of %d", n, len(figures)))
		names = append(names, r.Setting.ShortLabel())
		pred.Values = append(pred.Values, float64(r.MaxReserved)/(1<<20))
		torch.Values = append(torch.Values, float64(f.Stats["reserved_bytes.all.peak"])/(1<<20))
	}
	tab.Show()
	memlab.Measured("%d of %d figures of the GPT-2 replays equal what PyTorch measured under those settings", equal, len(figures)*len(recorded))
	memlab.Show(memplot.Bars("GPT-2: peak reserved, predicted from the default snapshot vs measured", "MiB", names, pred, torch))
}

/*md
The prediction is not fitted to these files: the replay re-runs PyTorch's policy (the
same rules, in memlab's `allocator` package) on the default run's requests, and the
recorded runs of the other settings are only read here to compare. Where the policy makes
a device allocation that the default run did not, the replay must guess the address the
driver returns; that matters only when free blocks of equal size compete (`Run.Guessed`
counts such allocations).

**Try it:** replace `"gpt2_train__"` by `"resnet_multiscale_train__"` (and the snapshot
by `resnet_multiscale_train__default.pickle`): ResNet-50 trained on images of several
sizes, the same five settings, and again every figure equal.
*/
