package memplot

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"
)

// Every constructor with empty, NaN, infinite, negative or mismatched data:
// an error or a figure that renders, never a panic.
func TestRobustPlotsOfOddData(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	type call struct {
		name string
		f    func() (*Figure, error)
	}
	var calls []call
	add := func(name string, f func() (*Figure, error)) { calls = append(calls, call{name, f}) }

	for name, tl := range map[string]Timeline{
		"empty":          {},
		"one sample":     {Samples: []Sample{{X: 0, Allocated: 1, Reserved: 2, DriverUsed: -1}}},
		"NaN x":          {Samples: []Sample{{X: nan, Allocated: 1, Reserved: 2}, {X: 1, Allocated: 2, Reserved: 2}}},
		"Inf x":          {Samples: []Sample{{X: 0}, {X: inf, Allocated: 1 << 62, Reserved: math.MaxInt64}}},
		"negative bytes": {Samples: []Sample{{X: 0, Allocated: -5, Reserved: -1, DriverUsed: math.MinInt64}}},
		"unsorted x":     {Samples: []Sample{{X: 3}, {X: 1}, {X: 2}}, Marks: []Mark{{X: nan, Label: "nan"}, {X: -inf, Label: ""}}},
		"marks only":     {Marks: []Mark{{X: 1, Label: "a"}}},
		"discrete":       {Discrete: true, Samples: []Sample{{X: 0}, {X: 0}}},
	} {
		add("MemoryCurve "+name, func() (*Figure, error) { return MemoryCurve(name, tl) })
	}
	add("Lines none", func() (*Figure, error) { return Lines("t", "x") })
	add("Lines empty series", func() (*Figure, error) { return Lines("t", "x", Series{Name: "a"}) })
	add("Lines mismatched", func() (*Figure, error) {
		return Lines("t", "x", Series{Name: "a", X: []float64{1, 2, 3}, Y: []int64{1}})
	})
	add("Lines NaN", func() (*Figure, error) {
		return Lines("t", "x", Series{Name: "a", X: []float64{nan, inf, -inf}, Y: []int64{1, 2, 3}, Step: true})
	})
	add("Bars none", func() (*Figure, error) { return Bars("t", "y", nil) })
	add("Bars no series", func() (*Figure, error) { return Bars("t", "y", []string{"a"}) })
	add("Bars too few values", func() (*Figure, error) {
		return Bars("t", "y", []string{"a", "b"}, BarSeries{Name: "s", Values: []float64{1}})
	})
	add("Bars NaN and Inf", func() (*Figure, error) {
		return Bars("t", "y", []string{"a", "b", "c"}, BarSeries{Name: "s", Values: []float64{nan, inf, -inf}})
	})
	add("Bars negative", func() (*Figure, error) {
		return Bars("t", "y", []string{"a"}, BarSeries{Name: "s", Values: []float64{-3}})
	})
	add("SegmentMap nil", func() (*Figure, error) { return SegmentMap("t", nil) })
	add("SegmentMap empty segment", func() (*Figure, error) { return SegmentMap("t", []Segment{{Pool: "large"}}) })
	add("SegmentMap negative block", func() (*Figure, error) {
		return SegmentMap("t", []Segment{{Blocks: []Block{{Size: -1 << 20, State: Allocated}}}})
	})
	add("SegmentMap unknown state", func() (*Figure, error) {
		return SegmentMap("t", []Segment{{Blocks: []Block{{Size: 1 << 20, State: BlockState(9)}}}})
	})
	add("SegmentMap many", func() (*Figure, error) {
		segs := make([]Segment, MaxSegmentRows+5)
		for i := range segs {
			segs[i] = Segment{Address: uint64(i) << 21, Pool: "small", Blocks: []Block{{Size: 2 << 20, State: Free}}}
		}
		return SegmentMap("t", segs)
	})
	add("Fragmentation none", func() (*Figure, error) { return Fragmentation("t", 0) })
	add("Fragmentation negative", func() (*Figure, error) {
		return Fragmentation("t", -1, Gauge{Label: "g", LargestFree: -1, TotalFree: -2})
	})
	add("Fragmentation largest above total", func() (*Figure, error) {
		return Fragmentation("t", math.MaxInt64, Gauge{LargestFree: 1 << 40, TotalFree: 1})
	})
	add("FragmentationCurve none", func() (*Figure, error) { return FragmentationCurve("t", "x", nil) })
	add("FragmentationCurve NaN", func() (*Figure, error) {
		return FragmentationCurve("t", "x", []FragSample{{X: nan}, {X: inf, Label: "inf", TotalFree: -1}})
	})

	for _, c := range calls {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s panicked: %v", c.name, r)
				}
			}()
			f, err := c.f()
			if err != nil {
				t.Logf("%s: %v", c.name, err)
				if f != nil {
					t.Errorf("%s: a figure and an error", c.name)
				}
				return
			}
			if f == nil {
				t.Errorf("%s: nil figure and nil error", c.name)
				return
			}
			if _, err := f.PNG(); err != nil {
				t.Logf("%s: PNG: %v", c.name, err)
			}
		}()
	}
}

// A nil *Figure, or one with a nil Plot, reports an error from every method
// that returns one, rather than panicking.
func TestRobustNilFigure(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(DirEnv, dir)
	for name, f := range map[string]*Figure{"nil": nil, "nil plot": {Name: "x"}} {
		calls := map[string]func() error{
			"PNG":    func() error { _, err := f.PNG(); return err },
			"Encode": func() error { _, err := f.Encode("svg"); return err },
			"Save":   func() error { return f.Save(filepath.Join(dir, "x.png")) },
			"Show":   func() error { _, err := f.Show(); return err },
		}
		for m, call := range calls {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s figure: %s panicked: %v", name, m, r)
					}
				}()
				if err := call(); err == nil {
					t.Errorf("%s figure: %s: no error", name, m)
				}
			}()
		}
	}
	// Must panics by contract, with the error.
	func() {
		defer func() {
			if r := recover(); r == nil || fmt.Sprint(r) != "memplot: boom" {
				t.Errorf("Must of an error: recovered %v", r)
			}
		}()
		Must(nil, fmt.Errorf("memplot: boom"))
	}()
	// Bad formats and paths.
	f, err := Bars("t", "y", []string{"a"}, BarSeries{Name: "s", Values: []float64{1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Encode("nope"); err == nil {
		t.Error(`Encode("nope") succeeded`)
	}
	if err := f.Save(filepath.Join(dir, "x.unknown")); err == nil {
		t.Error("Save with an unknown extension succeeded")
	}
	if err := f.Save(filepath.Join(dir, "x")); err == nil {
		t.Error("Save without an extension succeeded")
	}
}
