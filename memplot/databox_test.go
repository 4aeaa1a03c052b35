package memplot

import (
	"bytes"
	"image/color"
	"image/png"
	"math"
	"testing"

	"gonum.org/v1/plot/plotter"
)

// DataBox puts a data x where the rendered image draws it: a red vertical
// line at x = 3 is found, in the PNG, at the column DataBox says, and spans
// the rows between its Top and Bottom.
func TestDataBoxLocatesDataInImage(t *testing.T) {
	f, err := MemoryCurve("cursor", Timeline{Samples: []Sample{
		{X: 0, Allocated: 0, Reserved: 0, DriverUsed: -1}, {X: 2, Allocated: 512 * mib, Reserved: 1024 * mib, DriverUsed: -1}, {X: 8, Allocated: 256 * mib, Reserved: 1024 * mib, DriverUsed: -1}, {X: 10, Allocated: 0, Reserved: 512 * mib, DriverUsed: -1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	red := color.RGBA{R: 0xff, A: 0xff}
	l, err := plotter.NewLine(plotter.XYs{{X: 3, Y: 0}, {X: 3, Y: 1024}})
	if err != nil {
		t.Fatal(err)
	}
	l.Color = red
	f.Add(l)
	f.Y.Max = 1024 // the line spans the whole data area
	box, err := f.DataBox()
	if err != nil {
		t.Fatal(err)
	}
	data, err := f.PNG()
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	isRed := func(x, y int) bool {
		r, g, bl, _ := img.At(x, y).RGBA()
		return r > 0xc000 && g < 0x6000 && bl < 0x6000
	}
	mid := b.Min.Y + b.Dy()/2
	var sum, n float64
	for x := b.Min.X; x < b.Max.X; x++ {
		if isRed(x, mid) {
			sum += float64(x) + 0.5
			n++
		}
	}
	if n == 0 {
		t.Fatal("no red line in the middle row of the image")
	}
	if got, want := sum/n, box.X(3)*float64(b.Dx()); math.Abs(got-want) > 1.5 {
		t.Errorf("the line at x = 3 is drawn at column %.1f; DataBox says %.1f", got, want)
	}
	col := int(sum / n)
	top, bottom := -1, -1
	for y := b.Min.Y; y < b.Max.Y; y++ {
		if isRed(col, y) {
			if top < 0 {
				top = y
			}
			bottom = y + 1
		}
	}
	if d := math.Abs(float64(top) - box.Top*float64(b.Dy())); d > 2 {
		t.Errorf("the line's top is row %d; DataBox.Top says %.1f", top, box.Top*float64(b.Dy()))
	}
	if d := math.Abs(float64(bottom) - box.Bottom*float64(b.Dy())); d > 2 {
		t.Errorf("the line's bottom is row %d; DataBox.Bottom says %.1f", bottom, box.Bottom*float64(b.Dy()))
	}
}
