package memplot

import (
	"errors"
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Colours of block states on a segment map.
var (
	AllocatedBlockColor     = AllocatedColor
	InactiveSplitBlockColor = color.RGBA{R: 0xff, G: 0xbb, B: 0x78, A: 0xff} // light orange
	FreeBlockColor          = color.RGBA{R: 0xdd, G: 0xdd, B: 0xdd, A: 0xff} // light grey
)

// blockColor is the colour of blocks in state s.
func blockColor(s BlockState) color.Color {
	switch s {
	case Allocated:
		return AllocatedBlockColor
	case InactiveSplit:
		return InactiveSplitBlockColor
	}
	return FreeBlockColor
}

// MaxSegmentRows is the most segments a segment map draws; the rest are
// counted in the title.
const MaxSegmentRows = 40

// SegmentMap draws each segment as a horizontal bar, in the order given (the
// allocator's snapshot order is address order), its blocks coloured by state.
// All bars share one byte scale, except that a segment too narrow to see
// (under [MinSegmentWidth]) is drawn that wide, its blocks in proportion
// within it, and the axis label says so: a 2 MiB small-pool segment stays
// visible beside a 600 MiB one, and its row label gives its true size.
func SegmentMap(title string, segs []Segment) (*Figure, error) {
	if len(segs) == 0 {
		return nil, errors.New("memplot: SegmentMap: no segments (the allocator holds no memory)")
	}
	var largest int64
	for i, s := range segs {
		if len(s.Blocks) == 0 {
			return nil, fmt.Errorf("memplot: SegmentMap: segment %d (address %#x) has no blocks", i, s.Address)
		}
		for j, b := range s.Blocks {
			if b.Size <= 0 {
				return nil, fmt.Errorf("memplot: SegmentMap: segment %d block %d has size %d", i, j, b.Size)
			}
			if b.State > Free {
				return nil, fmt.Errorf("memplot: SegmentMap: segment %d block %d has unknown state %d", i, j, b.State)
			}
		}
		largest = max64(largest, s.Size())
	}
	shown := segs
	if len(shown) > MaxSegmentRows {
		shown = shown[:MaxSegmentRows]
		title = fmt.Sprintf(tr("%s (first %d of %d segments)"), title, MaxSegmentRows, len(segs))
	}
	u := UnitFor(largest)
	f := newFigure(title)
	f.Height = max(DefaultHeight, vg.Inch+vg.Length(len(shown))*0.3*vg.Inch)
	f.X.Label.Text = fmt.Sprintf(tr("offset in segment (%s)"), u.Name)
	f.X.Min = 0
	names := make([]string, len(shown))
	for i, s := range shown {
		names[len(shown)-1-i] = fmt.Sprintf("%s %s", u.Format(s.Size()), poolLetter(s.Pool))
	}
	f.NominalY(names...)
	sb := &segmentBars{segs: shown, unit: u}
	f.Add(sb)
	if sb.widens(largest) {
		f.X.Label.Text += tr("; segments under 1/60 of the axis drawn wider")
	}
	for _, st := range []BlockState{Allocated, InactiveSplit, Free} {
		f.AddKey(tr(st.String()), swatch{blockColor(st)})
	}
	f.Add(plotter.NewGrid())
	return f, nil
}

func poolLetter(pool string) string {
	switch pool {
	case "large":
		return "L"
	case "small":
		return "S"
	}
	return pool
}

// segmentBars is the plot.Plotter that draws the bars of a segment map.
type segmentBars struct {
	segs []Segment
	unit ByteUnit
}

// MinSegmentWidth is the smallest share of a segment map's axis a segment is
// drawn at: 1/60 (about 10 px of an 8 inch figure).
const MinSegmentWidth = 1.0 / 60

// widens says whether some segment is drawn wider than its size.
func (sb *segmentBars) widens(largest int64) bool {
	for _, s := range sb.segs {
		if float64(s.Size()) < MinSegmentWidth*float64(largest) {
			return true
		}
	}
	return false
}

func (sb *segmentBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	n := len(sb.segs)
	half := 0.32
	var largest int64
	for _, s := range sb.segs {
		largest = max64(largest, s.Size())
	}
	for i, s := range sb.segs {
		row := float64(n - 1 - i)
		y0, y1 := trY(row-half), trY(row+half)
		// scale maps a byte offset in s to the axis: true size, or stretched
		// to the minimum width for a segment too narrow to see.
		scale := 1.0
		if minimum := MinSegmentWidth * float64(largest); float64(s.Size()) < minimum {
			scale = minimum / float64(s.Size())
		}
		at := func(off int64) float64 { return sb.unit.Of(int64(float64(off) * scale)) }
		var off int64
		for _, b := range s.Blocks {
			x0, x1 := trX(at(off)), trX(at(off+b.Size))
			off += b.Size
			rect := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
			c.FillPolygon(blockColor(b.State), c.ClipPolygonXY(rect))
			c.StrokeLines(draw.LineStyle{Color: color.White, Width: vg.Points(0.5)},
				c.ClipLinesXY([]vg.Point{{X: x0, Y: y0}, {X: x0, Y: y1}})...)
		}
		x0, x1 := trX(0), trX(at(off))
		c.StrokeLines(draw.LineStyle{Color: color.Black, Width: vg.Points(0.6)},
			c.ClipLinesXY([]vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}, {X: x0, Y: y0}})...)
	}
}

func (sb *segmentBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	var largest int64
	for _, s := range sb.segs {
		largest = max64(largest, s.Size())
	}
	return 0, sb.unit.Of(largest), -0.5, float64(len(sb.segs)) - 0.5
}

// swatch is a legend thumbnail: a filled square.
type swatch struct{ clr color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{
		{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y},
		{X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y},
	}
	c.FillPolygon(s.clr, c.ClipPolygonY(pts))
}
