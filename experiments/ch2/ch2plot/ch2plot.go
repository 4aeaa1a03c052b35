// Package ch2plot draws notebook 02's figures of package ch2's experiments.
// It is a package of its own so that ch2, which cells and their declarations
// use throughout the notebook, links no plotting library: only the cells that
// draw import this one (GoNB drops the imports a cell does not use).
package ch2plot

import (
	"fmt"

	"memlab.dev/memlab/experiments/ch2"
	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
)

// Tape draws 2.1's saved-tensors figure: memory_allocated after each step
// of the forward pass without a tape (inference) and with one (training),
// the training run's step labels under the x axis.
func Tape(title string, inference, training *memlab.Steps) (*memplot.Figure, error) {
	allocated := func(s memlab.Step) int64 { return s.Allocated }
	fig, err := memplot.Lines(title, "",
		inference.Series("no tape (inference)", allocated), training.Series("tape (training)", allocated))
	if err != nil {
		return nil, fmt.Errorf("ch2plot: Tape: %w", err)
	}
	fig.LabelX(training.Labels()...)
	return fig, nil
}

// Tenants draws the cases of ch2.TwoTenants side by side: what each allocator
// reserved and what the driver counts outside both, in GiB.
func Tenants(title string, runs []ch2.Tenants) (*memplot.Figure, error) {
	cases := make([]string, len(runs))
	bars := []memplot.BarSeries{{Name: "A (greedy) reserved"}, {Name: "B reserved"}, {Name: "outside both allocators (CUDA context)"}}
	for i, r := range runs {
		cases[i] = lang.Text(r.Case)
		for j, v := range []int64{r.A, r.B, r.Outside} {
			bars[j].Values = append(bars[j].Values, float64(v)/(1<<30))
		}
	}
	return memplot.Bars(title, "GiB", cases, bars...)
}

// Remedies draws, per outcome of ch2.Remedies, where the free memory lay
// against the request (ch2.Request, a dashed line).
func Remedies(outs []ch2.Outcome) (*memplot.Figure, error) {
	var names []string
	rel := memplot.BarSeries{Name: "releasable (free segments or pages)"}
	pin := memplot.BarSeries{Name: "pinned in split blocks"}
	room := memplot.BarSeries{Name: "room on the device"}
	for _, o := range outs {
		name := lang.Text(o.Name)
		if o.Err != nil {
			name += " (OOM)"
		}
		names = append(names, name)
		rel.Values = append(rel.Values, float64(o.Releasable)/(1<<20))
		pin.Values = append(pin.Values, float64(o.Pinned)/(1<<20))
		room.Values = append(room.Values, float64(o.Room)/(1<<20))
	}
	f, err := memplot.Bars("2.3 free memory before the 1.5 GiB request, per remedy", "MiB", names, rel, pin, room)
	if err == nil {
		err = f.HLine(ch2.Request/(1<<20), "the request, 1536 MiB")
	}
	return f, err
}
