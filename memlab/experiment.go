package memlab

import (
	"fmt"
	"sort"
	"sync"

	"memlab.dev/memlab/memplot"
)

// Experiment is one experiment of a chapter, runnable without a notebook:
// `memlab lab` runs every registered experiment on the device it is given,
// printing each [Report] and saving its figures. Chapter packages (such as
// experiments/ch2) register theirs in an init function.
type Experiment struct {
	Chapter string // "2"
	Section string // "2.3"
	Name    string // "fragmentation remedies"
	// Run runs the experiment on the device spec names ("" for the default
	// choice; see [Device]), opening and closing whatever labs it needs.
	Run func(device string) (Report, error)
}

// Report is what an experiment found: text for a terminal and figures.
type Report struct {
	Text    string
	Figures []*memplot.Figure
}

var (
	expMu       sync.Mutex
	experiments []Experiment
)

// Register adds experiments to the list [Experiments] returns. An experiment
// without a chapter, section, name or Run function is rejected with an error.
func Register(exps ...Experiment) error {
	for _, e := range exps {
		if e.Chapter == "" || e.Section == "" || e.Name == "" || e.Run == nil {
			return fmt.Errorf("memlab: Register: experiment %q (section %q) needs a chapter, section, name and Run", e.Name, e.Section)
		}
	}
	expMu.Lock()
	defer expMu.Unlock()
	experiments = append(experiments, exps...)
	return nil
}

// Experiments returns the registered experiments ordered by chapter, then in
// the order they were registered.
func Experiments() []Experiment {
	expMu.Lock()
	defer expMu.Unlock()
	out := append([]Experiment(nil), experiments...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Chapter < out[j].Chapter })
	return out
}
