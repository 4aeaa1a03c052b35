package memplot

import (
	"errors"
	"fmt"
	"image/color"
	"reflect"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"memlab.dev/memlab/lang"
)

// Colours of the three memory quantities, used on every memlab plot.
var (
	AllocatedColor  = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff} // blue
	ReservedColor   = color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff} // orange
	DriverUsedColor = color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff} // grey
	MarkColor       = color.RGBA{R: 0x99, G: 0x99, B: 0x99, A: 0xff}
)

// MemoryCurve draws allocated, reserved and (when known) driver-used bytes of
// tl as step lines, with each mark a dashed vertical line labelled at the top.
// Reserved ≥ allocated always; the gap is the allocator's cache, and the gap
// between driver-used and reserved is the CUDA context and other processes.
func MemoryCurve(title string, tl Timeline) (*Figure, error) {
	if len(tl.Samples) == 0 {
		return nil, errors.New("memplot: MemoryCurve: the timeline has no samples")
	}
	var largest int64
	driverKnown := true
	for i, s := range tl.Samples {
		if i > 0 && s.X < tl.Samples[i-1].X {
			return nil, fmt.Errorf("memplot: MemoryCurve: sample %d has X %g before sample %d's %g", i, s.X, i-1, tl.Samples[i-1].X)
		}
		largest = max64(largest, s.Allocated, s.Reserved, s.DriverUsed)
		if s.DriverUsed < 0 {
			driverKnown = false
		}
	}
	u := UnitFor(largest)
	f := newFigure(title)
	f.X.Label.Text = lang.Text(tl.XLabel)
	if f.X.Label.Text == "" {
		f.X.Label.Text = tr("event")
	}
	f.Y.Label.Text = u.Name
	f.Y.Min = 0

	series := []struct {
		name string
		clr  color.Color
		val  func(Sample) int64
		dash []vg.Length
		w    vg.Length
	}{
		{tr("driver-used"), DriverUsedColor, func(s Sample) int64 { return s.DriverUsed }, []vg.Length{vg.Points(4), vg.Points(2)}, 1.5},
		{tr("reserved"), ReservedColor, func(s Sample) int64 { return s.Reserved }, nil, 3},
		{tr("allocated"), AllocatedColor, func(s Sample) int64 { return s.Allocated }, nil, 1.5},
	}
	if !driverKnown {
		series = series[1:]
	}
	for _, sr := range series {
		xs := make([]float64, len(tl.Samples))
		ys := make([]float64, len(tl.Samples))
		for i, s := range tl.Samples {
			xs[i], ys[i] = s.X, u.Of(sr.val(s))
		}
		xys := plotter.XYs{}
		for i := range xs {
			xys = append(xys, plotter.XY{X: xs[i], Y: ys[i]})
		}
		if tl.Discrete {
			xys = centredSteps(xs, ys)
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("memplot: MemoryCurve: %w", err)
		}
		if !tl.Discrete {
			l.StepStyle = plotter.PostStep
		}
		l.Color = sr.clr
		l.Width = vg.Points(float64(sr.w))
		l.Dashes = sr.dash
		f.Add(l)
		f.AddKey(sr.name, l)
	}
	top := u.Of(largest) * 1.08
	if top == 0 {
		top = 1
	}
	f.Y.Max = top
	if err := addMarks(f.Plot, tl.Marks, top); err != nil {
		return nil, err
	}
	f.Add(plotter.NewGrid())
	if len(tl.Labels) > 0 {
		f.LabelX(tl.Labels...)
	}
	return f, nil
}

// Timeliner is a recording that is a memory timeline: a memlab.Recorder
// (over allocator events) or memlab.Steps (one point a step, labelled).
type Timeliner interface {
	Timeline() Timeline
}

// Curve draws a recording's memory curve — allocated, reserved and
// driver-used — as [MemoryCurve] does: memlab.Show(memplot.Curve("…", steps)).
func Curve(title string, of Timeliner) (*Figure, error) {
	if isNilTimeliner(of) {
		return nil, errors.New("memplot: Curve: nothing to draw (a nil recording)")
	}
	return MemoryCurve(title, of.Timeline())
}

// AllocatorCurve is [Curve] without the driver's count, for a recording whose
// allocator numbers are small beside the CUDA context.
func AllocatorCurve(title string, of Timeliner) (*Figure, error) {
	if isNilTimeliner(of) {
		return nil, errors.New("memplot: AllocatorCurve: nothing to draw (a nil recording)")
	}
	tl := of.Timeline()
	tl.Samples = slices.Clone(tl.Samples)
	for i := range tl.Samples {
		tl.Samples[i].DriverUsed = -1
	}
	return MemoryCurve(title, tl)
}

// isNilTimeliner says whether of is nil or a nil pointer.
func isNilTimeliner(of Timeliner) bool {
	if of == nil {
		return true
	}
	v := reflect.ValueOf(of)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// addMarks draws each mark as a dashed vertical line from 0 to top with its
// label just below top.
func addMarks(p *plot.Plot, marks []Mark, top float64) error {
	if len(marks) == 0 {
		return nil
	}
	labels := plotter.XYLabels{}
	for _, m := range marks {
		l, err := plotter.NewLine(plotter.XYs{{X: m.X, Y: 0}, {X: m.X, Y: top}})
		if err != nil {
			return fmt.Errorf("memplot: mark %q: %w", m.Label, err)
		}
		l.Color = MarkColor
		l.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		p.Add(l)
		labels.XYs = append(labels.XYs, plotter.XY{X: m.X, Y: top})
		labels.Labels = append(labels.Labels, " "+tr(m.Label))
	}
	lbl, err := plotter.NewLabels(labels)
	if err != nil {
		return fmt.Errorf("memplot: marks: %w", err)
	}
	for i := range lbl.TextStyle {
		lbl.TextStyle[i].Font.Size = vg.Points(8)
		lbl.TextStyle[i].Font.Typeface = p.X.Tick.Label.Font.Typeface
		if needsCJK(labels.Labels[i]) {
			if _, err := cjk(); err == nil {
				lbl.TextStyle[i].Font.Typeface = CJKTypeface
			}
		}
		lbl.TextStyle[i].YAlign = draw.YTop
		lbl.TextStyle[i].Color = color.Gray{Y: 0x55}
	}
	p.Add(lbl)
	return nil
}

// LabelledLines is [Lines] over steps 0, 1, … whose x ticks are labels
// (the ops of an experiment, say).
func LabelledLines(title string, labels []string, series ...Series) (*Figure, error) {
	f, err := Lines(title, "", series...)
	if err == nil {
		f.LabelX(labels...)
	}
	return f, err
}

// Lines draws several byte series against a shared x axis, for comparing the
// same quantity across variants (baseline and optimised allocated bytes, say).
func Lines(title, xLabel string, series ...Series) (*Figure, error) {
	if len(series) == 0 {
		return nil, errors.New("memplot: Lines: no series")
	}
	var largest int64
	for _, s := range series {
		if len(s.X) != len(s.Y) {
			return nil, fmt.Errorf("memplot: Lines: series %q has %d x values and %d y values", s.Name, len(s.X), len(s.Y))
		}
		if len(s.X) == 0 {
			return nil, fmt.Errorf("memplot: Lines: series %q is empty", s.Name)
		}
		largest = max64(largest, s.Y...)
	}
	u := UnitFor(largest)
	f := newFigure(title)
	f.X.Label.Text = lang.Text(xLabel)
	f.Y.Label.Text = u.Name
	f.Y.Min = 0
	for i, s := range series {
		ys := make([]float64, len(s.Y))
		xys := make(plotter.XYs, len(s.X))
		for j := range s.X {
			ys[j] = u.Of(s.Y[j])
			xys[j] = plotter.XY{X: s.X[j], Y: ys[j]}
		}
		if s.Step {
			xys = centredSteps(s.X, ys)
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("memplot: Lines: series %q: %w", s.Name, err)
		}
		l.Color = Palette[i%len(Palette)]
		// Lines that coincide stay distinguishable: the first is wide and
		// solid, each later one narrower and dashed, drawn on top.
		l.Width = vg.Points(max(1.5, 3.5-float64(i)))
		l.Dashes = lineDashes[i%len(lineDashes)]
		f.Add(l)
		f.AddKey(keyName(series[:i], s), l)
	}
	f.Y.Max = u.Of(largest) * 1.08
	f.Add(plotter.NewGrid())
	return f, nil
}

// keyName is s's legend entry in the edition's words: its name, and "(same
// as NAME)" when s has the points of an earlier series, so that a legend
// says that one curve hides another.
func keyName(earlier []Series, s Series) string {
	for _, e := range earlier {
		if slices.Equal(e.X, s.X) && slices.Equal(e.Y, s.Y) && e.Step == s.Step {
			return fmt.Sprintf(tr("%s (same as %s)"), tr(s.Name), tr(e.Name))
		}
	}
	return tr(s.Name)
}

// lineDashes are the dash patterns of the series of [Lines], in order.
var lineDashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(2), vg.Points(2), vg.Points(2)}}

// Palette colours the series of [Lines] and [Bars] in order.
var Palette = []color.Color{
	AllocatedColor,
	ReservedColor,
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
}

// centredSteps turns points into a staircase: each y drawn flat from halfway
// to the previous x to halfway to the next (one unit wide at the ends, or
// the only gap's width).
func centredSteps(xs, ys []float64) plotter.XYs {
	var out plotter.XYs
	for i := range xs {
		left, right := 0.5, 0.5
		if i > 0 {
			left = (xs[i] - xs[i-1]) / 2
		} else if len(xs) > 1 {
			left = (xs[1] - xs[0]) / 2
		}
		if i < len(xs)-1 {
			right = (xs[i+1] - xs[i]) / 2
		} else if len(xs) > 1 {
			right = (xs[i] - xs[i-1]) / 2
		}
		out = append(out, plotter.XY{X: xs[i] - left, Y: ys[i]}, plotter.XY{X: xs[i] + right, Y: ys[i]})
	}
	return out
}

func max64(m int64, vs ...int64) int64 {
	for _, v := range vs {
		if v > m {
			m = v
		}
	}
	return m
}

// Pairs draws two series per variant, for comparing variants that each have
// two curves (reserved and allocated memory under several settings): one
// colour per variant, its first series solid and its second dashed. The key
// has one entry per variant and two grey entries naming what solid and dashed
// mean, so it stays short and legible however many variants there are.
func Pairs(title, xLabel, solid, dashed string, pairs ...Pair) (*Figure, error) {
	if len(pairs) == 0 {
		return nil, errors.New("memplot: Pairs: no pairs")
	}
	var largest int64
	for _, p := range pairs {
		if len(p.X) == 0 {
			return nil, fmt.Errorf("memplot: Pairs: %q is empty", p.Name)
		}
		if len(p.Solid) != len(p.X) || len(p.Dashed) != len(p.X) {
			return nil, fmt.Errorf("memplot: Pairs: %q has %d x values, %d %s and %d %s values",
				p.Name, len(p.X), len(p.Solid), solid, len(p.Dashed), dashed)
		}
		largest = max64(largest, p.Solid...)
		largest = max64(largest, p.Dashed...)
	}
	u := UnitFor(largest)
	f := newFigure(title)
	f.X.Label.Text = lang.Text(xLabel)
	f.Y.Label.Text = u.Name
	f.Y.Min = 0
	f.Height = PairsHeight // many curves over thousands of events: room to read them
	line := func(xs []float64, ys []int64, c color.Color, dashes []vg.Length, width vg.Length) (*plotter.Line, error) {
		xys := make(plotter.XYs, len(xs))
		for j := range xs {
			xys[j] = plotter.XY{X: xs[j], Y: u.Of(ys[j])}
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.Color, l.Dashes, l.Width = c, dashes, width
		return l, nil
	}
	dash := []vg.Length{vg.Points(5), vg.Points(3)}
	for i, p := range pairs {
		c := Palette[i%len(Palette)]
		// Later variants are drawn narrower on top, so coinciding curves stay visible.
		w := vg.Points(max(1.5, 3.5-float64(i)))
		s, err := line(p.X, p.Solid, c, nil, w)
		if err != nil {
			return nil, fmt.Errorf("memplot: Pairs: %q %s: %w", p.Name, solid, err)
		}
		d, err := line(p.X, p.Dashed, c, dash, w)
		if err != nil {
			return nil, fmt.Errorf("memplot: Pairs: %q %s: %w", p.Name, dashed, err)
		}
		f.Add(s, d)
		f.AddKey(p.Name, s)
	}
	grey := color.Gray{Y: 0x60}
	for _, k := range []struct {
		name   string
		dashes []vg.Length
	}{{fmt.Sprintf(tr("%s (solid)"), tr(solid)), nil}, {fmt.Sprintf(tr("%s (dashed)"), tr(dashed)), dash}} {
		l := &plotter.Line{LineStyle: draw.LineStyle{Color: grey, Width: vg.Points(1.5), Dashes: k.dashes}}
		f.AddKey(k.name, l)
	}
	f.Y.Max = u.Of(largest) * 1.08
	f.Add(plotter.NewGrid())
	return f, nil
}

// KeyFontSize is the legend's text in every figure: 11 pt, about 15 px in a
// PNG shown at 100 %.
const KeyFontSize = vg.Length(11)

// PairsHeight is the height of a [Pairs] figure (the what-if plot): taller
// than the default, so that several settings' curves stay apart.
const PairsHeight = 5 * vg.Inch

// TickFontSize is the axes' tick labels and axis labels: 11 pt.
const TickFontSize = vg.Length(11)

// Comparer is a result that lays out several runs as a [PairChart], such as a
// whatif.Result (a replay under several allocator settings).
type Comparer interface {
	Pairs(title string) (PairChart, error)
}

// Compare draws a comparison of runs as [Pairs] does, one colour per run:
// memlab.Show(memplot.Compare("…", res)).
func Compare(title string, of Comparer) (*Figure, error) {
	if of == nil || (reflect.ValueOf(of).Kind() == reflect.Pointer && reflect.ValueOf(of).IsNil()) {
		return nil, errors.New("memplot: Compare: nothing to draw (a nil result)")
	}
	c, err := of.Pairs(title)
	if err != nil {
		return nil, err
	}
	return Pairs(c.Title, c.XLabel, c.Solid, c.Dashed, c.Pairs...)
}
