package ch4

import (
	"fmt"

	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
)

// plotter is a result that prints and draws itself.
type plotter interface {
	fmt.Stringer
	Plot() (*memplot.Figure, error)
}

// report turns a result into a memlab.Report with its figure and any extra
// ones.
func report(r plotter, err error, extra ...func() (*memplot.Figure, error)) (memlab.Report, error) {
	if err != nil {
		return memlab.Report{}, err
	}
	rep := memlab.Report{Text: r.String()}
	for _, f := range append([]func() (*memplot.Figure, error){r.Plot}, extra...) {
		fig, err := f()
		if err != nil {
			return rep, err
		}
		rep.Figures = append(rep.Figures, fig)
	}
	return rep, nil
}

// text is a result that only prints.
func text(r fmt.Stringer, err error) (memlab.Report, error) {
	if err != nil {
		return memlab.Report{}, err
	}
	return memlab.Report{Text: r.String()}, nil
}

// Experiments lists chapter 4's experiments at the sizes the notebook uses,
// for `memlab lab`.
func Experiments() []memlab.Experiment {
	return []memlab.Experiment{
		{Chapter: "4", Section: "4.1", Name: "relu vs relu_ peak memory", Run: func(dev string) (memlab.Report, error) {
			return report(ReluPeak(Setup{dev}, 1024, 1024))
		}},
		{Chapter: "4", Section: "4.1", Name: "in-place op on a tensor two branches read", Run: func(dev string) (memlab.Report, error) {
			return text(SharedBranch(Setup{dev}))
		}},
		{Chapter: "4", Section: "4.1", Name: "saved-tensor version error", Run: func(dev string) (memlab.Report, error) {
			return text(SavedTensorError(Setup{dev}))
		}},
		{Chapter: "4", Section: "4.2", Name: "which view operations copy", Run: func(dev string) (memlab.Report, error) {
			return report(ViewCopies(Setup{dev}, 1024))
		}},
		{Chapter: "4", Section: "4.3", Name: "TensorPool vs fresh allocation", Run: func(dev string) (memlab.Report, error) {
			return report(PoolLatency(Setup{dev}, []int{256, 1024}, 200))
		}},
		{Chapter: "4", Section: "4.3", Name: "KV cache: cat, preallocated, paged", Run: func(dev string) (memlab.Report, error) {
			r, err := KVStrategies(Setup{dev}, DefaultKVWorkload)
			return report(r, err,
				func() (*memplot.Figure, error) { return r.PlotSegments("torch.cat") },
				func() (*memplot.Figure, error) { return r.PlotSegments("paged") })
		}},
		{Chapter: "4", Section: "4.4", Name: "transformer inference, baseline vs optimised", Run: func(dev string) (memlab.Report, error) {
			r, err := Inference(Setup{dev}, "small")
			return report(r, err, r.PlotLatency, r.PlotCurves)
		}},
	}
}

func init() {
	if err := memlab.Register(Experiments()...); err != nil {
		panic(err) // the list above is fixed: an error is a bug in it
	}
}
