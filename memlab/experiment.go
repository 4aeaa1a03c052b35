package memlab

import (
	"fmt"
	"sort"
	"sync"
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
	Figures []Figure
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

// Cell is one code cell of a notebook written as Go (notebooks/src/NAME): the
// cell's body is Func's body, so the code a learner reads in the notebook is
// the code that `go test` and `memlab lab` run. scripts/mknotebooks lists a
// notebook's cells in its package's cells_gen.go, which registers them.
type Cell struct {
	Notebook string // "02-memory-mechanics"
	Section  string // the "## " heading the cell sits under: "2.1 Tensor storage and views"
	Name     string // the function's name: "storageVsViews"
	Plot     bool   // the cell is tagged "plot": it must show a figure
	Func     func()
}

var (
	cellMu sync.Mutex
	cells  []Cell
)

// RegisterCells adds notebook cells to the list [Cells] returns.
func RegisterCells(cs ...Cell) {
	cellMu.Lock()
	defer cellMu.Unlock()
	cells = append(cells, cs...)
}

// Cells returns the registered cells ordered by notebook, then in the
// notebook's order.
func Cells() []Cell {
	cellMu.Lock()
	defer cellMu.Unlock()
	out := append([]Cell(nil), cells...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Notebook < out[j].Notebook })
	return out
}

// Exec runs the cell outside Jupyter as GoNB would run it: its output goes to
// stdout (and [Output]), the figures it shows to the figure sink (see
// [SetFigureSink]). A panic — how [Must] and [Check] stop a cell — is returned
// as the error, and so is a cell tagged "plot" that showed no figure. figures
// is how many it showed.
func (c Cell) Exec() (figures int, err error) {
	if c.Func == nil {
		return 0, fmt.Errorf("memlab: cell %s/%s has no function", c.Notebook, c.Name)
	}
	sinkMu.Lock()
	inner := sink
	sinkMu.Unlock()
	if inner == nil {
		inner = saveFigure
	}
	prev := SetFigureSink(func(f Figure) error {
		figures++
		return inner(f)
	})
	defer SetFigureSink(prev)
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = fmt.Errorf("memlab: cell %s (%s): %w", c.Name, c.Section, e)
			} else {
				err = fmt.Errorf("memlab: cell %s (%s): panic: %v", c.Name, c.Section, r)
			}
		}
		if err == nil && c.Plot && figures == 0 {
			err = fmt.Errorf("memlab: cell %s (%s) is tagged plot but showed no figure", c.Name, c.Section)
		}
	}()
	c.Func()
	return figures, nil
}
