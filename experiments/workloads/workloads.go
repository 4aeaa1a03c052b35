package workloads

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/snapshot"
	"memlab.dev/memlab/whatif"
)

// Load reads a snapshot shipped in reference/workloads-2.11 by its file name
// ("gpt2_train__default.pickle"; it may ship gzipped, as name.gz).
func Load(name string) (*snapshot.Snapshot, error) {
	path, err := reference.Pickle(reference.Workloads211, name)
	if err != nil {
		return nil, fmt.Errorf("workloads: %w", err)
	}
	return snapshot.ReadFile(path)
}

// Run is what PyTorch measured in one recorded run: the run's
// PYTORCH_CUDA_ALLOC_CONF, its set_per_process_memory_fraction (nil: none),
// the device's memory and torch.cuda.memory_stats() at the run's end, as the
// recorder wrote them to the run's .facts.json.
type Run struct {
	Conf        string           `json:"conf"`
	Frac        *float64         `json:"frac"`
	TotalMemory int64            `json:"total_memory"`
	Stats       map[string]int64 `json:"memory_stats"`
}

// ReadRun reads what PyTorch measured in a shipped run, by the run's name
// (its file name without .facts.json: "gpt2_train__default",
// "repeats/3/multistream_branches__max_split_size_mb_128").
func ReadRun(name string) (Run, error) {
	var r Run
	path, err := reference.File(reference.Workloads211, name+".facts.json")
	if err != nil {
		return r, fmt.Errorf("workloads: %w", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return r, fmt.Errorf("workloads: %w", err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("workloads: %s: %w", path, err)
	}
	if len(r.Stats) == 0 {
		return r, fmt.Errorf("workloads: %s: no memory_stats", path)
	}
	return r, nil
}

// Setting is the recorded run's allocator setting: its conf and, if the run
// set one, its memory fraction.
func (r Run) Setting() (whatif.Setting, error) {
	c, err := allocator.ParseConfig(r.Conf)
	if err != nil {
		return whatif.Setting{}, fmt.Errorf("workloads: %w", err)
	}
	st := whatif.Setting{Conf: c}
	if r.Frac != nil {
		st.Fraction = *r.Frac
	}
	return st, nil
}

// Predict replays s under the setting (and cap) of the recorded run r, on a
// device of r's memory: the figures PyTorch would measure if s's program ran
// under that setting.
func Predict(s *snapshot.Snapshot, r Run) (whatif.Run, error) {
	st, err := r.Setting()
	if err != nil {
		return whatif.Run{}, err
	}
	res, err := whatif.Replay(s, []whatif.Setting{st}, whatif.Options{TotalMemory: r.TotalMemory})
	if err != nil {
		return whatif.Run{}, err
	}
	return res.Runs[0], nil
}

// Settings are the tags of the settings every shipped program was recorded
// under, as its files name them ("max_split_size_mb_128" for
// PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128, see [Tag]).
var Settings = []string{"default", "expandable_segments_True", "max_split_size_mb_128",
	"max_split_size_mb_64__garbage_collection_threshold_0p6", "roundup_power2_divisions_4"}

// Tag is the file-name tag of a PYTORCH_CUDA_ALLOC_CONF string in
// reference/workloads-2.11: "default" for "", else the string with ':'
// written '_', ',' '__' and '.' 'p' ("max_split_size_mb:128" →
// "max_split_size_mb_128").
func Tag(conf string) string {
	if conf == "" {
		return "default"
	}
	return strings.NewReplacer(":", "_", ",", "__", ".", "p").Replace(conf)
}

// Figures are the memory_stats keys a prediction is compared on: the peaks,
// device allocations and frees, retries, OOMs, the segment peak and the
// fragmentation peak.
var Figures = []string{"allocated_bytes.all.peak", "reserved_bytes.all.peak", "num_device_alloc", "num_device_free",
	"num_alloc_retries", "num_ooms", "segment.all.peak", "inactive_split_bytes.all.peak"}

// Agree counts the Figures a prediction p got exactly as PyTorch measured
// them in the run r.
func Agree(p whatif.Run, r Run) int {
	n := 0
	for _, k := range Figures {
		if p.Stats[k] == r.Stats[k] {
			n++
		}
	}
	return n
}

// Format prints the value v of memory_stats key k: a size in PyTorch's units
// for byte counts ("5.44 GiB"), the number otherwise.
func Format(k string, v int64) string {
	if strings.Contains(k, "bytes") {
		return memlab.FormatBytes(v)
	}
	return fmt.Sprint(v)
}

// DeferredFrees counts the frees in trace that completed later than they were
// requested (blocks used on another stream, record_stream): a free_completed
// entry that does not follow its own free_requested.
func DeferredFrees(trace []snapshot.TraceEntry) int {
	n := 0
	for i, e := range trace {
		if e.Action == snapshot.ActionFreeCompleted &&
			(i == 0 || trace[i-1].Action != snapshot.ActionFreeRequested || trace[i-1].Addr != e.Addr) {
			n++
		}
	}
	return n
}

// Repeats reads what PyTorch measured in the repeated runs of a program under
// one setting (reference/workloads-2.11/repeats/N/, N = 1, 2, …: the same
// program and setting run again, one fresh process after another), by program
// and setting tag ("multistream_branches", "default"), in run order.
func Repeats(program, tag string) ([]Run, error) {
	var runs []Run
	for n := 1; ; n++ {
		name := fmt.Sprintf("repeats/%d/%s__%s", n, program, tag)
		if _, err := reference.File(reference.Workloads211, name+".facts.json"); err != nil {
			break
		}
		r, err := ReadRun(name)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("workloads: no repeated runs of %s under %s in %s/repeats", program, tag, reference.Workloads211)
	}
	return runs, nil
}

// Values counts the values PyTorch measured for memory_stats key k over runs:
// value → how many of the runs measured it.
func Values(runs []Run, k string) map[int64]int {
	seen := map[int64]int{}
	for _, r := range runs {
		seen[r.Stats[k]]++
	}
	return seen
}
