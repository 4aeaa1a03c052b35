package memplot

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"os"
	"strings"
	"testing"
)

// blankRows is how many rows at the bottom of img are blank (white): text
// clipped at the bottom edge leaves none.
func blankRows(img image.Image) int {
	b := img.Bounds()
	for n := 0; n < b.Dy(); n++ {
		y := b.Max.Y - 1 - n
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bl, _ := img.At(x, y).RGBA(); r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				return n
			}
		}
	}
	return b.Dy()
}

func TestLabelXLayout(t *testing.T) {
	steps := func(labels ...string) *Figure {
		t.Helper()
		samples := make([]Sample, len(labels))
		for i := range samples {
			samples[i] = Sample{X: float64(i), Allocated: int64(i) * mib, Reserved: int64(i) * mib, DriverUsed: -1}
		}
		f, err := MemoryCurve("labels", Timeline{Discrete: true, Samples: samples})
		if err != nil {
			t.Fatal(err)
		}
		f.LabelX(labels...)
		return f
	}
	for _, tc := range []struct {
		name   string
		labels []string
		upward bool
	}{
		{"few short", []string{"start", "x = empty(256 MiB)", "del x", "empty_cache()"}, false},
		{"many long", []string{"start", "a0 = empty(1024 MiB)", "a1 = empty(1024 MiB)", "a2 = empty(1024 MiB)", "del a0", "del a1",
			"b = empty(2048 MiB) WWWWWWWW", "del a2", "c = empty(512 MiB)", "del b", "del c", "empty_cache()"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := steps(tc.labels...)
			h0 := f.Height
			data, err := f.PNG()
			if err != nil {
				t.Fatal(err)
			}
			if got := f.X.Tick.Label.Rotation != 0; got != tc.upward {
				t.Errorf("labels upward: %v, want %v", got, tc.upward)
			}
			if f.X.Tick.Label.Font.Size != TickFontSize {
				t.Errorf("label size %v, want the tick font's %v", f.X.Tick.Label.Font.Size, TickFontSize)
			}
			if tc.upward && f.X.Tick.Label.Rotation != math.Pi/2 {
				t.Errorf("rotation %v", f.X.Tick.Label.Rotation)
			}
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if n := blankRows(img); n < 4 {
				t.Errorf("the labels touch the image's bottom edge (clipped): %d blank rows", n)
			}
			// Drawing again neither grows the figure nor changes the picture.
			again, err := f.PNG()
			if err != nil {
				t.Fatal(err)
			}
			if f.Height != h0 || !bytes.Equal(again, data) {
				t.Errorf("a second drawing differs: height %v then %v", h0, f.Height)
			}
			if dir := os.Getenv("MEMPLOT_LABELX_OUT"); dir != "" { // to look at them
				if err := os.WriteFile(dir+"/"+tc.name+".png", data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestTexts(t *testing.T) {
	f, err := Bars("peaks", "MiB", []string{"a", "b"}, BarSeries{Name: "first", Values: []float64{1, 2}}, BarSeries{Name: "second", Values: []float64{3, 4}})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(f.Texts(), "|")
	for _, want := range []string{"peaks", "MiB", "first", "second", "a", "b"} {
		if !strings.Contains("|"+got+"|", "|"+want+"|") {
			t.Errorf("Texts() = %q, want %q among them", got, want)
		}
	}
}
