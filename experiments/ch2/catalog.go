package ch2

import (
	"errors"
	"fmt"

	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
)

// A result each experiment returns: printable and drawable.
type plottable interface {
	fmt.Stringer
	Plot() (*memplot.Figure, error)
}

func init() {
	if err := memlab.Register(Catalog()...); err != nil {
		panic(err) // a malformed catalogue is a programming error
	}
}

// withLab wraps an experiment on one lab as a memlab.Experiment run.
func withLab(f func(l *memlab.Lab) (plottable, error)) func(string) (memlab.Report, error) {
	return func(spec string) (rep memlab.Report, err error) {
		l, err := memlab.Open(memlab.Device(spec), memlab.NotCurrent())
		if err != nil {
			return rep, err
		}
		defer func() { err = errors.Join(err, l.Close()) }()
		r, err := f(l)
		if err != nil {
			return rep, err
		}
		return report(r)
	}
}

func withSetup(f func(s Setup) (plottable, error)) func(string) (memlab.Report, error) {
	return func(spec string) (memlab.Report, error) {
		r, err := f(Setup{Device: spec})
		if err != nil {
			return memlab.Report{}, err
		}
		return report(r)
	}
}

func report(r plottable, extra ...*memplot.Figure) (memlab.Report, error) {
	f, err := r.Plot()
	if err != nil {
		return memlab.Report{}, err
	}
	return memlab.Report{Text: r.String(), Figures: append([]*memplot.Figure{f}, extra...)}, nil
}

// titledSteps gives Steps a title for plotting.
type titledSteps struct {
	Steps
	title string
}

func (t titledSteps) Plot() (*memplot.Figure, error) { return t.Steps.Plot(t.title) }

// allocatorSteps plots without the driver's count.
type allocatorSteps struct{ titledSteps }

func (t allocatorSteps) Plot() (*memplot.Figure, error) { return t.Steps.PlotAllocator(t.title) }

// remedies makes the remedy list printable and plottable.
type remedies []FragResult

func (r remedies) String() string                 { return RemedyTable(r) }
func (r remedies) Plot() (*memplot.Figure, error) { return PlotRemedies(r) }

// Catalog lists chapter 2's experiments in the notebook's order, as
// memlab.Experiments runnable by `memlab lab`.
func Catalog() []memlab.Experiment {
	e := func(section, name string, run func(string) (memlab.Report, error)) memlab.Experiment {
		return memlab.Experiment{Chapter: "2", Section: section, Name: name, Run: run}
	}
	return []memlab.Experiment{
		e("2.1", "storage vs views", withLab(func(l *memlab.Lab) (plottable, error) { return StorageVsViews(l) })),
		e("2.1", "a slice keeps its base alive", withLab(func(l *memlab.Lab) (plottable, error) {
			s, err := SliceKeepsBase(l)
			return allocatorSteps{titledSteps{s, "2.1 a slice keeps its base alive"}}, err
		})),
		e("2.1", "transpose strides", func(spec string) (rep memlab.Report, err error) {
			l, err := memlab.Open(memlab.Device(spec), memlab.NotCurrent())
			if err != nil {
				return rep, err
			}
			defer func() { err = errors.Join(err, l.Close()) }()
			r, err := TransposeStrides(l)
			return memlab.Report{Text: r.String()}, err
		}),
		e("2.1", "saved tensors", withLab(func(l *memlab.Lab) (plottable, error) { return SavedTensors(l, 6) })),
		e("2.2", "allocated vs reserved vs driver-used", withLab(func(l *memlab.Lab) (plottable, error) {
			s, err := AllocatedVsReserved(l)
			return titledSteps{s, "2.2 allocated, reserved and driver-used memory"}, err
		})),
		e("2.2", "max_split_size_mb", withSetup(func(s Setup) (plottable, error) { return MaxSplitSize(s) })),
		e("2.3", "the chapter's sequence", withSetup(func(s Setup) (plottable, error) { return ChapterSequence(s, "") })),
		e("2.3", "a sequence that fragments", withSetup(func(s Setup) (plottable, error) { return Fragment(s) })),
		e("2.3", "remedies", withSetup(func(s Setup) (plottable, error) {
			r, err := Remedies(s)
			return remedies(r), err
		})),
		e("2.4", "every torch.cuda call", func(spec string) (rep memlab.Report, err error) {
			l, err := memlab.Open(memlab.Device(spec), memlab.NotCurrent())
			if err != nil {
				return rep, err
			}
			defer func() { err = errors.Join(err, l.Close()) }()
			c, err := APITour(l)
			return memlab.Report{Text: CallTable(c) + "\n" + l.MemorySummary()}, err
		}),
		e("2.4", "the leak check", withLab(func(l *memlab.Lab) (plottable, error) { return LeakCheck(l, 8) })),
		e("2.4", "two users share a device", withSetup(func(s Setup) (plottable, error) { return SharedDevice(s) })),
	}
}
