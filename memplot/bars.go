package memplot

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"memlab.dev/memlab/lang"
)

// Bars draws a grouped bar chart: for each group (an x-axis label) one bar per
// series, side by side, in [Palette] colours. Values are drawn as given; yLabel
// names their unit ("peak MiB", "µs per token").
func Bars(title, yLabel string, groups []string, series ...BarSeries) (*Figure, error) {
	if len(groups) == 0 {
		return nil, errors.New("memplot: Bars: no groups")
	}
	if len(series) == 0 {
		return nil, errors.New("memplot: Bars: no series")
	}
	for _, s := range series {
		if len(s.Values) != len(groups) {
			return nil, fmt.Errorf("memplot: Bars: series %q has %d values for %d groups", s.Name, len(s.Values), len(groups))
		}
	}
	f := newFigure(title)
	f.Y.Label.Text = lang.Text(yLabel)
	f.Y.Min = 0
	f.Add(&plotter.Grid{Horizontal: draw.LineStyle{Color: color.Gray{Y: 0xdd}, Width: vg.Points(0.5)}})
	w := barWidth(len(groups), len(series))
	for i, s := range series {
		b, err := plotter.NewBarChart(plotter.Values(s.Values), w)
		if err != nil {
			return nil, fmt.Errorf("memplot: Bars: series %q: %w", s.Name, err)
		}
		b.Color = Palette[i%len(Palette)]
		b.LineStyle.Width = 0
		b.Offset = vg.Length(float64(i)-float64(len(series)-1)/2) * w
		f.Add(b)
		if len(series) > 1 {
			f.AddKey(s.Name, b)
		}
	}
	groups = trAll(groups) // the edition's words
	f.NominalX(groups...)
	f.X.Min, f.X.Max = -0.5, float64(len(groups))-0.5
	// Headroom, so that the tallest bar does not touch the frame.
	top := 0.0
	for _, s := range series {
		for _, v := range s.Values {
			top = max(top, v)
		}
	}
	if top > 0 {
		f.Y.Max = top * 1.1
	}
	f.Add(&nearZero{series: series, width: w, top: top})
	labelGroups(f, groups)
	return f, nil
}

// nearZero writes the value above each bar too short to see (under 2 % of
// the tallest), so that a zero reads as measured, not as missing.
type nearZero struct {
	series []BarSeries
	width  vg.Length
	top    float64
}

func (z *nearZero) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	style := draw.TextStyle{Color: color.Gray{Y: 0x33}, Font: p.X.Tick.Label.Font, XAlign: draw.XCenter, YAlign: draw.YBottom}
	style.Font.Size = MinFontSize
	style.Handler = p.X.Tick.Label.Handler
	for i, s := range z.series {
		offset := vg.Length(float64(i)-float64(len(z.series)-1)/2) * z.width
		for g, v := range s.Values {
			if z.top > 0 && v >= 0.02*z.top {
				continue
			}
			c.FillText(style, vg.Point{X: trX(float64(g)) + offset, Y: trY(v) + vg.Points(2)}, strconv.FormatFloat(v, 'g', 3, 64))
		}
	}
}

// labelGroups writes the group labels upwards, as LabelX does, when the
// longest is wider than a group's space.
func labelGroups(f *Figure, groups []string) {
	longest := 0
	for _, g := range groups {
		longest = max(longest, len([]rune(g)))
	}
	if vg.Length(longest)*vg.Points(6.5) > (f.Width-vg.Inch)/vg.Length(len(groups)) { // about 6.5 pt a character at the tick font size
		f.LabelX(groups...)
	}
}

// trAll is labels in the current edition's words (tr).
func trAll(labels []string) []string {
	out := make([]string, len(labels))
	for i, l := range labels {
		out[i] = tr(l)
	}
	return out
}

// barWidth fits the bars of all series of one group into about 70 % of the
// space a group gets at the default width.
func barWidth(groups, series int) vg.Length {
	space := (DefaultWidth - vg.Inch) / vg.Length(groups)
	w := space * 0.7 / vg.Length(series)
	return min(w, 0.6*vg.Inch)
}

// Fragmentation draws the fragmentation gauge: for each [Gauge], total free
// bytes beside the largest free block. When request > 0 a dashed line marks
// the request size, so a request that fails with free memory to spare shows
// as a total bar above the line and a largest-block bar below it.
func Fragmentation(title string, request int64, gauges ...Gauge) (*Figure, error) {
	if len(gauges) == 0 {
		return nil, errors.New("memplot: Fragmentation: no gauges")
	}
	largest := request
	groups := make([]string, len(gauges))
	for i, g := range gauges {
		if g.LargestFree < 0 || g.TotalFree < g.LargestFree {
			return nil, fmt.Errorf("memplot: Fragmentation: gauge %q has largest free %d and total free %d; need 0 ≤ largest ≤ total", g.Label, g.LargestFree, g.TotalFree)
		}
		groups[i] = g.Label
		largest = max64(largest, g.TotalFree)
	}
	u := UnitFor(largest)
	total := BarSeries{Name: tr("total free")}
	block := BarSeries{Name: tr("largest free block")}
	for _, g := range gauges {
		total.Values = append(total.Values, u.Of(g.TotalFree))
		block.Values = append(block.Values, u.Of(g.LargestFree))
	}
	f, err := Bars(title, fmt.Sprintf(tr("free %s"), u.Name), groups, total, block)
	if err != nil {
		return nil, err
	}
	if request > 0 {
		if err := f.HLine(u.Of(request), fmt.Sprintf(tr("request %s"), u.Format(request))); err != nil {
			return nil, fmt.Errorf("memplot: Fragmentation: %w", err)
		}
	}
	return f, nil
}

// HLine draws a dashed red horizontal line across the plot at y (in the y
// axis' units), such as the size of a request over bars of free memory, and
// names it in the key.
func (f *Figure) HLine(y float64, label string) error {
	if f == nil || f.Plot == nil {
		return errors.New("memplot: HLine on a nil figure")
	}
	if math.IsNaN(y) || math.IsInf(y, 0) {
		return fmt.Errorf("memplot: HLine at %v", y)
	}
	l, err := plotter.NewLine(plotter.XYs{{X: f.X.Min, Y: y}, {X: f.X.Max, Y: y}})
	if err != nil {
		return fmt.Errorf("memplot: HLine: %w", err)
	}
	l.Color = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	l.Width = vg.Points(1.2)
	l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	f.Add(l)
	f.Y.Max = max(f.Y.Max, y*1.1)
	f.AddKey(label, l)
	return nil
}

// FragmentationCurve draws the fragmentation gauge over a run: total free
// bytes in the cache and the largest free block, as staircases. The gap
// between them is memory that no single large request can use.
func FragmentationCurve(title, xLabel string, samples []FragSample) (*Figure, error) {
	if len(samples) == 0 {
		return nil, errors.New("memplot: FragmentationCurve: no samples")
	}
	total := Series{Name: tr("total free"), Step: true}
	block := Series{Name: tr("largest free block"), Step: true}
	labels := make([]string, 0, len(samples))
	for i, s := range samples {
		if s.LargestFree < 0 || s.TotalFree < s.LargestFree {
			return nil, fmt.Errorf("memplot: FragmentationCurve: sample %d has largest free %d and total free %d; need 0 ≤ largest ≤ total", i, s.LargestFree, s.TotalFree)
		}
		total.X, total.Y = append(total.X, s.X), append(total.Y, s.TotalFree)
		block.X, block.Y = append(block.X, s.X), append(block.Y, s.LargestFree)
		if s.Label != "" {
			labels = append(labels, s.Label)
		}
	}
	if len(labels) == len(samples) {
		// Labelled samples are drawn one per step.
		for i := range samples {
			total.X[i], block.X[i] = float64(i), float64(i)
		}
	}
	f, err := Lines(title, xLabel, total, block)
	if err != nil {
		return nil, err
	}
	if len(labels) == len(samples) {
		f.LabelX(labels...)
	}
	return f, nil
}
