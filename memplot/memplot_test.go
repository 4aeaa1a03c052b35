package memplot

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/cmpimg"
)

const mib = 1 << 20

// fixtures are the figures the golden images show.
func fixtures() map[string]func() (*Figure, error) {
	return map[string]func() (*Figure, error){
		"curve": func() (*Figure, error) {
			return MemoryCurve("a first memory curve", Timeline{
				Samples: []Sample{
					{X: 0, Allocated: 0, Reserved: 0, DriverUsed: 500 * mib},
					{X: 1, Allocated: 1024 * mib, Reserved: 1024 * mib, DriverUsed: 1524 * mib},
					{X: 2, Allocated: 1536 * mib, Reserved: 1536 * mib, DriverUsed: 2036 * mib},
					{X: 3, Allocated: 512 * mib, Reserved: 1536 * mib, DriverUsed: 2036 * mib},
					{X: 4, Allocated: 512 * mib, Reserved: 512 * mib, DriverUsed: 1012 * mib},
				},
				Marks: []Mark{{X: 1, Label: "forward"}, {X: 3, Label: "backward"}},
			})
		},
		"segments": func() (*Figure, error) {
			return SegmentMap("segments", []Segment{
				{Address: 0x7f0000000000, Pool: "large", Blocks: []Block{{Size: 256 * mib, State: Allocated}, {Size: 768 * mib, State: InactiveSplit}}},
				{Address: 0x7f0040000000, Pool: "large", Blocks: []Block{{Size: 512 * mib, State: Free}}},
				{Address: 0x7f0060000000, Pool: "small", Blocks: []Block{{Size: mib, State: Allocated}, {Size: mib, State: InactiveSplit}}},
			})
		},
		"fragmentation": func() (*Figure, error) {
			return Fragmentation("fragmentation", 768*mib,
				Gauge{Label: "fragmented", LargestFree: 400 * mib, TotalFree: 1200 * mib},
				Gauge{Label: "pre-allocated", LargestFree: 1024 * mib, TotalFree: 1024 * mib})
		},
		"steps": func() (*Figure, error) {
			f, err := MemoryCurve("steps", Timeline{Discrete: true, Samples: []Sample{
				{X: 0, Allocated: 0, Reserved: 0, DriverUsed: -1}, {X: 1, Allocated: 256 * mib, Reserved: 256 * mib, DriverUsed: -1}, {X: 2, Allocated: 0, Reserved: 256 * mib, DriverUsed: -1}, {X: 3, Allocated: 0, Reserved: 0, DriverUsed: -1},
			}})
			if err == nil {
				f.LabelX("start", "x = empty(256 MiB)", "del x", "empty_cache()")
			}
			return f, err
		},
		"fragcurve": func() (*Figure, error) {
			return FragmentationCurve("fragmentation over a run", "", []FragSample{
				{Label: "start"}, {Label: "batches", LargestFree: 496 * mib, TotalFree: 2976 * mib},
				{Label: "empty_cache", LargestFree: 496 * mib, TotalFree: 2976 * mib},
			})
		},
		"bars": func() (*Figure, error) {
			return Bars("peak memory", "MiB", []string{"relu", "relu_"},
				BarSeries{Name: "sim", Values: []float64{64, 32}}, BarSeries{Name: "H200", Values: []float64{66, 34}})
		},
	}
}

// TestGolden compares each figure with testdata/NAME_golden.png; run
// `go test ./memplot -regen` to accept new pictures after a deliberate change.
// gonum/plot rasterises text itself, so the pictures do not depend on the
// machine's fonts; a small tolerance absorbs anti-aliasing differences.
func TestGolden(t *testing.T) {
	for name, mk := range fixtures() {
		t.Run(name, func(t *testing.T) {
			f, err := mk()
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.PNG()
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", name+"_golden.png")
			if *cmpimg.GenerateTestData {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -regen to create it)", err)
			}
			ok, err := cmpimg.EqualApprox("png", got, want, 0.01)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				bad := filepath.Join(t.TempDir(), name+".png")
				_ = os.WriteFile(bad, got, 0o644)
				t.Errorf("%s differs from %s (new image in %s)", name, golden, bad)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name string
		mk   func() (*Figure, error)
		want string
	}{
		{"curve without samples", func() (*Figure, error) { return MemoryCurve("x", Timeline{}) }, "no samples"},
		{"curve going back in x", func() (*Figure, error) {
			return MemoryCurve("x", Timeline{Samples: []Sample{{X: 2}, {X: 1}}})
		}, "sample 1 has X 1 before"},
		{"segment map without segments", func() (*Figure, error) { return SegmentMap("x", nil) }, "no segments"},
		{"segment without blocks", func() (*Figure, error) { return SegmentMap("x", []Segment{{Address: 16}}) }, "has no blocks"},
		{"block of size zero", func() (*Figure, error) {
			return SegmentMap("x", []Segment{{Blocks: []Block{{Size: 0, State: Free}}}})
		}, "block 0 has size 0"},
		{"bars with missing values", func() (*Figure, error) {
			return Bars("x", "MiB", []string{"a", "b"}, BarSeries{Name: "s", Values: []float64{1}})
		}, `series "s" has 1 values for 2 groups`},
		{"bars without series", func() (*Figure, error) { return Bars("x", "MiB", []string{"a"}) }, "no series"},
		{"gauge largest above total", func() (*Figure, error) {
			return Fragmentation("x", 0, Gauge{Label: "g", LargestFree: 10, TotalFree: 5})
		}, "need 0 ≤ largest ≤ total"},
		{"fragmentation curve without samples", func() (*Figure, error) { return FragmentationCurve("x", "", nil) }, "no samples"},
		{"fragmentation sample largest above total", func() (*Figure, error) {
			return FragmentationCurve("x", "", []FragSample{{LargestFree: 2, TotalFree: 1}})
		}, "sample 0 has largest free 2"},
		{"lines of unequal length", func() (*Figure, error) {
			return Lines("x", "step", Series{Name: "s", X: []float64{1, 2}, Y: []int64{1}})
		}, "2 x values and 1 y values"},
		{"pairs without pairs", func() (*Figure, error) { return Pairs("x", "event", "reserved", "allocated") }, "no pairs"},
		{"pair without points", func() (*Figure, error) {
			return Pairs("x", "event", "reserved", "allocated", Pair{Name: "p"})
		}, `"p" is empty`},
		{"pair of unequal length", func() (*Figure, error) {
			return Pairs("x", "event", "reserved", "allocated", Pair{Name: "p", X: []float64{1, 2}, Solid: []int64{1, 2}, Dashed: []int64{1}})
		}, `"p" has 2 x values, 2 reserved and 1 allocated values`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := tt.mk()
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "memplot: ") {
				t.Fatalf("got (%v, %v), want an error containing %q", f, err, tt.want)
			}
		})
	}
}

func TestShowWritesFileOutsideNotebook(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(DirEnv, dir)
	f, err := Bars("Peak Memory: relu vs relu_", "MiB", []string{"a"}, BarSeries{Name: "s", Values: []float64{1}})
	if err != nil {
		t.Fatal(err)
	}
	path, err := f.Show()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "peak-memory-relu-vs-relu.png"); path != want {
		t.Errorf("Show wrote %q, want %q", path, want)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "\x89PNG") {
		t.Errorf("%s is not a PNG file", path)
	}
}

func TestSaveFormats(t *testing.T) {
	f, err := Bars("x", "MiB", []string{"a"}, BarSeries{Name: "s", Values: []float64{1}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tests := []struct {
		file   string
		prefix string
		err    string
	}{
		{"a.png", "\x89PNG", ""},
		{"sub/a.svg", "<?xml", ""},
		{"noext", "", "needs an extension"},
		{"a.bmp", "", "bmp"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join(dir, tt.file)
			err := f.Save(path)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Save(%q) = %v, want error containing %q", tt.file, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(data), tt.prefix) {
				t.Errorf("%s starts with %q, want %q", tt.file, data[:min(len(data), 8)], tt.prefix)
			}
		})
	}
}

func TestUnitFor(t *testing.T) {
	tests := []struct {
		max  int64
		want string
	}{
		{0, "B"}, {4095, "B"}, {4096, "KiB"}, {4 * mib, "MiB"}, {3 << 30, "MiB"}, {4 << 30, "GiB"},
	}
	for _, tt := range tests {
		if got := UnitFor(tt.max).Name; got != tt.want {
			t.Errorf("UnitFor(%d) = %s, want %s", tt.max, got, tt.want)
		}
	}
	if got := MiB.Format(768 * mib); got != "768 MiB" {
		t.Errorf("MiB.Format(768 MiB) = %q", got)
	}
}

func TestNiceTicks(t *testing.T) {
	tests := []struct {
		min, max float64
		labels   []string
	}{
		{0, 2200, []string{"0", "500", "1000", "1500", "2000"}},
		{0, 6.5, []string{"0", "2", "4", "6"}},
		{-0.5, 8.5, []string{"0", "2", "4", "6", "8"}},
		{0, 1, []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
		{3, 3, []string{"3"}},
	}
	for _, tt := range tests {
		var got []string
		for _, tk := range niceTicks(tt.min, tt.max) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if strings.Join(got, " ") != strings.Join(tt.labels, " ") {
			t.Errorf("niceTicks(%g, %g) labels %q, want %q", tt.min, tt.max, got, tt.labels)
		}
	}
}

func TestBarsLog(t *testing.T) {
	f, err := BarsLog("log bars", "µs", []string{"cudaMalloc", "cache hit", "pool hit"},
		BarSeries{Name: "median", Values: []float64{75, 0.3, 0.1}}, BarSeries{Name: "mean", Values: []float64{80, 0.4, 0.1}})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.Y.Min-0.01) > 1e-4 || f.Y.Max != 100 {
		t.Errorf("axis [%g, %g], want [0.01, 100]: the powers of ten around the values", f.Y.Min, f.Y.Max)
	}
	if _, err := f.PNG(); err != nil {
		t.Error(err)
	}
	for _, bad := range []struct {
		name   string
		groups []string
		s      BarSeries
		want   string
	}{
		{"zero", []string{"a"}, BarSeries{Name: "s", Values: []float64{0}}, "positive finite"},
		{"NaN", []string{"a"}, BarSeries{Name: "s", Values: []float64{math.NaN()}}, "positive finite"},
		{"Inf", []string{"a"}, BarSeries{Name: "s", Values: []float64{math.Inf(1)}}, "positive finite"},
		{"mismatch", []string{"a", "b"}, BarSeries{Name: "s", Values: []float64{1}}, "1 values for 2 groups"},
		{"no groups", nil, BarSeries{Name: "s"}, "no groups"},
	} {
		if _, err := BarsLog("x", "y", bad.groups, bad.s); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want an error with %q", bad.name, err, bad.want)
		}
	}
}

// TestPairsKey: one key entry per variant plus the two that say what solid and
// dashed mean, in legible text; each variant's two lines share its colour.
func TestPairsKey(t *testing.T) {
	var pairs []Pair
	for i, name := range []string{"default", "expandable", "max_split 128", "roundup 4"} {
		pairs = append(pairs, Pair{Name: name, X: []float64{0, 1, 2}, Solid: []int64{4 << 20, int64(6+i) << 20, 5 << 20}, Dashed: []int64{2 << 20, 3 << 20, 2 << 20}})
	}
	f, err := Pairs("t", "event", "reserved", "allocated", pairs...)
	if err != nil {
		t.Fatal(err)
	}
	if f.keySize != 6 {
		t.Errorf("key has %d entries, want 4 variants + solid + dashed", f.keySize)
	}
	if f.key.TextStyle.Font.Size < KeyFontSize {
		t.Errorf("key text %v, want at least %v", f.key.TextStyle.Font.Size, KeyFontSize)
	}
	if _, err := f.PNG(); err != nil {
		t.Fatal(err)
	}
}

func TestLabelledLines(t *testing.T) {
	if _, err := LabelledLines("t", []string{"a", "b"}, PerStep("s", []int64{1, 2})); err != nil {
		t.Error(err)
	}
	if _, err := LabelledLines("t", nil); err == nil {
		t.Error("no series drew")
	}
}

func TestPerStep(t *testing.T) {
	s := PerStep("leak", []int64{1, 2, 3})
	if !s.Step || len(s.X) != 3 || s.X[0] != 1 || s.X[2] != 3 || s.Y[2] != 3 || s.Name != "leak" {
		t.Errorf("PerStep = %+v", s)
	}
}

// A curve that hides another says so in the legend (issue 18).
func TestCoincidingCurvesSaySo(t *testing.T) {
	a := PerStep("keeps numbers", []int64{0, 0, 0})
	b := PerStep("fixed loop", []int64{0, 0, 0})
	c := PerStep("keeps tensors", []int64{1, 2, 3})
	if got := keyName([]Series{a, c}, b); got != "fixed loop (same as keeps numbers)" {
		t.Errorf("keyName = %q", got)
	}
	if got := keyName([]Series{a}, c); got != "keeps tensors" {
		t.Errorf("distinct curves: keyName = %q", got)
	}
}

// A 2 MiB segment beside a 600 MiB one is drawn wide enough to see, and the
// axis says so; segments of one size are drawn to scale.
func TestSegmentMapWidensSlivers(t *testing.T) {
	seg := func(size int64) Segment {
		return Segment{Pool: "large", Blocks: []Block{{Size: size, State: Allocated}}}
	}
	f, err := SegmentMap("m", []Segment{seg(2 << 20), seg(600 << 20)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.X.Label.Text, "drawn wider") {
		t.Errorf("axis label %q does not say small segments are widened", f.X.Label.Text)
	}
	f, err = SegmentMap("m", []Segment{seg(20 << 20), seg(20 << 20)})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(f.X.Label.Text, "wider") {
		t.Errorf("equal segments: axis label %q", f.X.Label.Text)
	}
}

// TestDPI: a figure's DPI sets the pixels of its raster images (twice the dots
// per inch, twice the pixels each way); 0 keeps gonum/plot's 96.
func TestDPI(t *testing.T) {
	f, err := Pairs("t", "event", "reserved", "allocated", Pair{Name: "a", X: []float64{0, 1}, Solid: []int64{1, 2}, Dashed: []int64{1, 1}})
	if err != nil {
		t.Fatal(err)
	}
	size := func() (int, int) {
		data, err := f.PNG()
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Width, cfg.Height
	}
	w, h := size()
	f.DPI = 192
	w2, h2 := size()
	if w != 768 || h != 480 || w2 != 2*w || h2 != 2*h {
		t.Errorf("96 dpi: %d × %d, 192 dpi: %d × %d; want 768 × 480 and twice that", w, h, w2, h2)
	}
}
