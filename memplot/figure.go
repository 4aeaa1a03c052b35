package memplot

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/janpfeifer/gonb/gonbui"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
	"gonum.org/v1/plot/vg/vgimg"

	"memlab.dev/memlab/lang"
)

// Default figure size: wide enough for a notebook cell, small enough for a page.
const (
	DefaultWidth  = 8 * vg.Inch
	DefaultHeight = 3.5 * vg.Inch
)

// DirEnv names the environment variable that sets where [Figure.Show] writes
// files outside a notebook. Unset, it writes to "plots" in the working directory.
const DirEnv = "MEMLAB_PLOT_DIR"

// Figure is a plot with the size it is meant to be drawn at, a key drawn to
// the right of the plot (so it never hides data), and a file name (without
// extension) for when it is written to disk.
type Figure struct {
	*plot.Plot
	Width, Height vg.Length

	key     plot.Legend // drawn outside the data area, to the right
	keySize int
	keyText []string // the key's entries, as drawn (Texts)
	keyCJK  bool     // a key entry or tick label has Chinese characters
	// Name is the base file name Show uses outside a notebook; constructors
	// derive it from the title.
	Name string
	// DPI is the resolution of raster images (PNG, JPEG, TIFF) in dots per inch;
	// 0 is gonum/plot's 96. A file meant to be read on its own (memlab whatif
	// --plot) is sharper at 192.
	DPI int

	xLabels []string  // LabelX's labels, laid out at drawing (layoutX)
	xExtra  vg.Length // the height layoutX added for upward labels
}

func newFigure(title string) *Figure {
	p := plot.New()
	p.Title.Text = lang.Text(title) // the edition's words; Name stays the English slug
	p.Title.Padding = vg.Points(6)
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.X.Tick.Marker = roundTicks
	p.Y.Tick.Marker = roundTicks
	key := plot.NewLegend()
	key.Top, key.Left = true, true
	key.TextStyle.Font.Size = KeyFontSize
	p.X.Tick.Label.Font.Size = TickFontSize
	p.Y.Tick.Label.Font.Size = TickFontSize
	p.X.Label.TextStyle.Font.Size = TickFontSize
	p.Y.Label.TextStyle.Font.Size = TickFontSize
	key.ThumbnailWidth = vg.Points(18)
	f := &Figure{Plot: p, Width: DefaultWidth, Height: DefaultHeight, key: key, Name: slug(title)}
	f.fitFaces()
	return f
}

var nonWord = regexp.MustCompile(`[^\p{L}\p{N}]+`)

// slug turns a title into a file name: lower case, words (in any script, so
// that Chinese titles keep theirs) joined by dashes.
func slug(title string) string {
	s := strings.Trim(nonWord.ReplaceAllString(strings.ToLower(title), "-"), "-")
	if s == "" {
		return "figure"
	}
	return s
}

// Encode renders f in the given format ("png", "svg", "pdf", …).
func (f *Figure) Encode(format string) ([]byte, error) {
	if f == nil || f.Plot == nil {
		return nil, errors.New("memplot: nil figure")
	}
	if f.Width <= 0 || f.Height <= 0 {
		return nil, fmt.Errorf("memplot: figure %q has size %v×%v; both must be positive", f.Name, f.Width, f.Height)
	}
	f.fitFaces()
	f.layoutX()
	var w vg.CanvasWriterTo
	var err error
	if raster, ok := rasters[strings.ToLower(format)]; ok && f.DPI > 0 {
		w = raster(vgimg.NewWith(vgimg.UseWH(f.Width, f.Height), vgimg.UseDPI(f.DPI)))
	} else if w, err = draw.NewFormattedCanvas(f.Width, f.Height, format); err != nil {
		return nil, fmt.Errorf("memplot: rendering %q as %s: %w", f.Name, format, err)
	}
	f.draw(draw.New(w))
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("memplot: rendering %q as %s: %w", f.Name, format, err)
	}
	return buf.Bytes(), nil
}

// rasters are the raster formats Encode renders at Figure.DPI.
var rasters = map[string]func(c *vgimg.Canvas) vg.CanvasWriterTo{
	"png":  func(c *vgimg.Canvas) vg.CanvasWriterTo { return vgimg.PngCanvas{Canvas: c} },
	"jpg":  func(c *vgimg.Canvas) vg.CanvasWriterTo { return vgimg.JpegCanvas{Canvas: c} },
	"jpeg": func(c *vgimg.Canvas) vg.CanvasWriterTo { return vgimg.JpegCanvas{Canvas: c} },
	"tif":  func(c *vgimg.Canvas) vg.CanvasWriterTo { return vgimg.TiffCanvas{Canvas: c} },
	"tiff": func(c *vgimg.Canvas) vg.CanvasWriterTo { return vgimg.TiffCanvas{Canvas: c} },
}

// AddKey adds an entry to the figure's key, which is drawn to the right of
// the data area so that it never hides data. (The embedded Plot's Legend is
// still drawn inside the data area, as gonum/plot does.)
func (f *Figure) AddKey(name string, thumbs ...plot.Thumbnailer) {
	name = tr(name)
	f.key.Add(name, thumbs...)
	f.keyText = append(f.keyText, name)
	f.keyCJK = f.keyCJK || needsCJK(name)
	f.keySize++
}

// plotArea is the part of c the plot (without the key) is drawn in, and the
// key column's width (0 without a key).
func (f *Figure) plotArea(c draw.Canvas) (draw.Canvas, vg.Length) {
	if len(f.xLabels) > 0 {
		c = draw.Crop(c, 0, 0, labelMargin, 0) // LabelX's descenders off the edge
	}
	if f.keySize == 0 {
		return c, 0
	}
	kw := f.key.Rectangle(c).Size().X + 2*keyPad
	return draw.Crop(c, 0, -kw, 0, 0), kw
}

const keyPad = vg.Length(8)

// draw draws the plot with the key in a column at the right.
func (f *Figure) draw(c draw.Canvas) {
	pc, kw := f.plotArea(c)
	f.Plot.Draw(pc)
	if kw == 0 {
		return
	}
	pad := keyPad
	kc := c
	kc.Min.X = c.Max.X - kw + pad
	if f.Title.Text != "" {
		kc.Max.Y -= f.Title.TextStyle.Rectangle(f.Title.Text).Size().Y + f.Title.Padding
	}
	f.key.Draw(kc)
}

// DataBox says where f's data area lies in its image, for drawing over the
// image (a cursor): X maps a data x to a share of the image's width from its
// left edge; Top and Bottom are the data area's top and bottom edges as shares
// of the image's height from its top edge.
type DataBox struct {
	Top, Bottom float64
	x           func(float64) vg.Length
	width       vg.Length
}

// X is the horizontal position of data x, as a share of the image's width.
func (b DataBox) X(x float64) float64 { return float64(b.x(x)) / float64(b.width) }

// DataBox lays f out at its size, as Encode draws it, and says where its data
// area is.
func (f *Figure) DataBox() (DataBox, error) {
	if f == nil || f.Plot == nil {
		return DataBox{}, errors.New("memplot: nil figure")
	}
	if f.Width <= 0 || f.Height <= 0 {
		return DataBox{}, fmt.Errorf("memplot: figure %q has size %v×%v; both must be positive", f.Name, f.Width, f.Height)
	}
	f.fitFaces()
	f.layoutX()
	c := draw.Canvas{Canvas: &recorder.Canvas{}, Rectangle: vg.Rectangle{Max: vg.Point{X: f.Width, Y: f.Height}}}
	pc, _ := f.plotArea(c)
	dc := f.Plot.DataCanvas(pc)
	trX, _ := f.Plot.Transforms(&dc)
	h := float64(f.Height)
	return DataBox{
		Top: (h - float64(dc.Max.Y)) / h, Bottom: (h - float64(dc.Min.Y)) / h,
		x: trX, width: f.Width,
	}, nil
}

// LabelX replaces the x axis' ticks with one label at each of 0, 1, 2, …, at
// the tick font size. The labels are laid out when the figure is drawn, at its
// size: side by side when each fits its place, else written upwards with the
// figure made taller to hold the longest, so that none is clipped or overlaps
// its neighbour.
func (f *Figure) LabelX(labels ...string) {
	labels = slices.Clone(labels)
	ticks := make([]plot.Tick, len(labels))
	for i, l := range labels {
		l = tr(l) // the edition's words: a step's, a group's or a mode's name
		labels[i] = l
		ticks[i] = plot.Tick{Value: float64(i), Label: l}
		f.keyCJK = f.keyCJK || needsCJK(l)
	}
	f.X.Tick.Marker = plot.ConstantTicks(ticks)
	f.X.Tick.Label.Font.Size = TickFontSize
	f.X.Label.Text = ""
	f.X.Min = min(f.X.Min, -0.5)
	f.X.Max = max(f.X.Max, float64(len(labels))-0.5)
	f.xLabels = labels
	f.layoutX()
}

// Texts are the words f draws, as drawn: its title, its axes' labels, its
// key's entries and the x axis' named ticks (LabelX's, a bar chart's
// groups; numbers aside). The notebooks' tests read them to check that the
// Chinese edition draws no English.
func (f *Figure) Texts() []string {
	out := []string{f.Title.Text, f.X.Label.Text, f.Y.Label.Text}
	out = append(out, f.keyText...)
	if ticks, ok := f.X.Tick.Marker.(plot.ConstantTicks); ok {
		for _, tk := range ticks {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
	}
	return out
}

// labelGap is the least space between two labels side by side, and what is
// left below the longest upward label; labelMargin is the blank strip below
// LabelX's labels.
const (
	labelGap    = vg.Length(8)
	labelMargin = vg.Length(4)
)

// layoutX lays out LabelX's labels at f's current width (see LabelX): side by
// side when the widest fits the space one label has in the data area, else
// upwards, the figure taller by what the upward labels need.
func (f *Figure) layoutX() {
	if len(f.xLabels) == 0 {
		return
	}
	f.Height -= f.xExtra
	f.xExtra = labelMargin
	f.Height += f.xExtra
	lbl := &f.X.Tick.Label
	lbl.Rotation = 0
	lbl.XAlign, lbl.YAlign = draw.XCenter, draw.YTop
	f.X.Tick.Length = vg.Points(4)
	widest := vg.Length(0)
	for _, l := range f.xLabels {
		widest = max(widest, lbl.Width(l))
	}
	c := draw.Canvas{Canvas: &recorder.Canvas{}, Rectangle: vg.Rectangle{Max: vg.Point{X: f.Width, Y: f.Height}}}
	pc, _ := f.plotArea(c)
	dc := f.Plot.DataCanvas(pc)
	place := (dc.Max.X - dc.Min.X) / vg.Length(f.X.Max-f.X.Min) // one unit of x: one label's place
	if widest+labelGap <= place {
		return
	}
	lbl.Rotation = math.Pi / 2
	lbl.XAlign, lbl.YAlign = draw.XRight, draw.YCenter
	f.X.Tick.Length = 0 // no tick marks through the upward labels
	up := widest - lbl.Height("0") + labelGap
	f.xExtra += up
	f.Height += up
}

// MinFontSize is the smallest text memplot draws: 9 pt, 12 px in a PNG at
// 100 % (gonum/plot renders 96 dots per inch), legible in a notebook.
const MinFontSize = vg.Length(9)

// PNG renders f as a PNG image.
func (f *Figure) PNG() ([]byte, error) { return f.Encode("png") }

// Save writes f to path; the extension (.png, .svg, .pdf, .jpg, .tif, .eps)
// picks the format. Missing directories are created.
func (f *Figure) Save(path string) error {
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	if ext == "" {
		return fmt.Errorf("memplot: save %q: the file name needs an extension such as .png or .svg", path)
	}
	data, err := f.Encode(ext)
	if err != nil {
		return err
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("memplot: save %q: %w", path, err)
		}
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("memplot: save %q: %w", path, err)
	}
	return nil
}

// Show displays f inline when running in a GoNB notebook and returns "".
// Elsewhere it writes f as PNG to $MEMLAB_PLOT_DIR (default "plots") under
// f.Name and returns the file's path.
func (f *Figure) Show() (string, error) {
	if gonbui.IsNotebook {
		data, err := f.PNG()
		if err != nil {
			return "", err
		}
		gonbui.DisplayPng(data)
		// The display travels through a pipe; wait until GoNB has it, or a
		// cell that ends right after Show may exit before its plot is shown.
		gonbui.Sync()
		return "", nil
	}
	dir := os.Getenv(DirEnv)
	if dir == "" {
		dir = "plots"
	}
	if f == nil {
		return "", errors.New("memplot: nil figure")
	}
	path := filepath.Join(dir, f.Name+".png")
	if err := f.Save(path); err != nil {
		return "", err
	}
	return path, nil
}

// Must returns f, or panics with err. It is meant for notebook cells, where a
// failed plot should stop the cell: memplot.Must(memplot.Bars(…)).Show().
func Must(f *Figure, err error) *Figure {
	if err != nil {
		panic(err)
	}
	return f
}
