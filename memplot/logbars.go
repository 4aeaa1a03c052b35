package memplot

import (
	"errors"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// BarsLog is [Bars] on a logarithmic value axis, for values that span orders
// of magnitude (a 75 µs cudaMalloc beside a 0.1 µs pool hit). Each bar rises
// from the power of ten below the smallest value (strictly below), and the axis ends at the
// power of ten above the largest, so no bar touches the frame. Every value
// must be positive and finite.
func BarsLog(title, yLabel string, groups []string, series ...BarSeries) (*Figure, error) {
	if len(groups) == 0 {
		return nil, errors.New("memplot: BarsLog: no groups")
	}
	if len(series) == 0 {
		return nil, errors.New("memplot: BarsLog: no series")
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		if len(s.Values) != len(groups) {
			return nil, fmt.Errorf("memplot: BarsLog: series %q has %d values for %d groups", s.Name, len(s.Values), len(groups))
		}
		for i, v := range s.Values {
			if !(v > 0) || math.IsInf(v, 1) {
				return nil, fmt.Errorf("memplot: BarsLog: series %q, group %q: value %g; a log scale needs positive finite values", s.Name, groups[i], v)
			}
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	floor := math.Pow(10, math.Floor(math.Log10(lo)))
	if floor >= lo*0.999 { // a value on a power of ten still gets a bar
		floor /= 10
	}
	ceil := math.Pow(10, math.Ceil(math.Log10(hi)))
	if ceil <= hi*1.2 { // leave room above the tallest bar
		ceil *= 10
	}
	f := newFigure(title)
	f.Y.Label.Text = fmt.Sprintf(tr("%s (log scale)"), yLabel)
	f.Y.Scale = plot.LogScale{}
	f.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	f.Y.Min, f.Y.Max = floor*0.999, ceil // a hair below, so that the floor's tick is drawn
	f.Add(&plotter.Grid{Horizontal: draw.LineStyle{Color: color.Gray{Y: 0xdd}, Width: vg.Points(0.5)}})
	w := barWidth(len(groups), len(series))
	for i, s := range series {
		b := &logBars{values: s.Values, floor: floor, width: w, color: Palette[i%len(Palette)],
			offset: vg.Length(float64(i)-float64(len(series)-1)/2) * w}
		f.Add(b)
		if len(series) > 1 {
			f.AddKey(s.Name, b)
		}
	}
	groups = trAll(groups) // the edition's words
	f.NominalX(groups...)
	f.X.Min, f.X.Max = -0.5, float64(len(groups))-0.5
	labelGroups(f, groups)
	return f, nil
}

// logBars draws one series of BarsLog: a bar per group from floor up to its
// value (gonum's BarChart always starts at zero, which a log axis cannot show).
type logBars struct {
	values        []float64
	floor         float64
	width, offset vg.Length
	color         color.Color
}

// Plot implements plot.Plotter.
func (b *logBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i, v := range b.values {
		x := trX(float64(i)) + b.offset
		y0, y1 := trY(b.floor), trY(v)
		pts := []vg.Point{{X: x - b.width/2, Y: y0}, {X: x + b.width/2, Y: y0}, {X: x + b.width/2, Y: y1}, {X: x - b.width/2, Y: y1}}
		c.FillPolygon(b.color, c.ClipPolygonY(pts))
	}
}

// DataRange implements plot.DataRanger.
func (b *logBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	ymin, ymax = b.floor, b.floor
	for _, v := range b.values {
		ymax = math.Max(ymax, v)
	}
	return 0, float64(len(b.values) - 1), ymin, ymax
}

// Thumbnail implements plot.Thumbnailer, for the key.
func (b *logBars) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Min.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Min.Y}}
	c.FillPolygon(b.color, c.ClipPolygonY(pts))
}
