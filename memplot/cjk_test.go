package memplot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/image/font/sfnt"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"

	"memlab.dev/memlab/lang"
)

// missingGlyphs returns the runes of s the font has no glyph for (control
// characters, which are never drawn, aside).
func missingGlyphs(t *testing.T, f *sfnt.Font, s string) []rune {
	t.Helper()
	var buf sfnt.Buffer
	var missing []rune
	for _, r := range s {
		if unicode.IsControl(r) {
			continue
		}
		g, err := f.GlyphIndex(&buf, r)
		if err != nil {
			t.Fatalf("GlyphIndex(%q): %v", r, err)
		}
		if g == 0 {
			missing = append(missing, r)
		}
	}
	return missing
}

// TestCJKFontCoversCatalog checks that the embedded font draws every
// character of every Chinese sentence in the lang catalog, memplot's own
// labels among them, and common Chinese punctuation: a plot title or legend
// taken from the catalog never shows a box. When it fails, run
// scripts/cjkfont/mkfont.py and commit the font.
func TestCJKFontCoversCatalog(t *testing.T) {
	f, err := cjk()
	if err != nil {
		t.Fatal(err)
	}
	cat := lang.Catalog(lang.Chinese)
	if len(cat) == 0 {
		t.Fatal("the zh-CN catalog is empty")
	}
	for _, en := range []string{"event", "driver-used", "offset in segment (%s)", "inactive split (free, pinned)", "free segment (releasable)", "largest free block"} {
		if !lang.Has(lang.Chinese, en) {
			t.Errorf("memplot label %q has no zh-CN translation in lang/zh-CN/memplot.txt", en)
		}
	}
	bad := map[rune]string{}
	for _, zh := range cat {
		for _, r := range missingGlyphs(t, f, zh) { // the English side is drawn with Liberation
			bad[r] = zh
		}
	}
	for r, zh := range bad {
		t.Errorf("the CJK font has no glyph for %q (U+%04X), used in %q: run scripts/cjkfont/mkfont.py", r, r, zh)
	}
	if m := missingGlyphs(t, f, "，。、；：？！“”‘’（）《》【】—…·×→≤≥≈％０１"); len(m) > 0 {
		t.Errorf("the CJK font lacks common punctuation %q", string(m))
	}
	// Liberation, gonum/plot's default, lacks them: that is why the font ships.
	lib := font.DefaultCache.Lookup(plot.DefaultFont, 10)
	if m := missingGlyphs(t, lib.Face, "显存"); len(m) != 2 {
		t.Errorf("gonum/plot's default font draws %q: the CJK font is not needed", "显存")
	}
}

// texts returns the texts memplot styles in f with the style each is drawn in.
func texts(f *Figure) map[string]font.Font {
	return map[string]font.Font{
		"title":  f.Title.TextStyle.Font,
		"x axis": f.X.Label.TextStyle.Font,
		"y axis": f.Y.Label.TextStyle.Font,
		"ticks":  f.X.Tick.Label.Font,
		"key":    f.key.TextStyle.Font,
	}
}

func TestChineseEditionDrawsCJK(t *testing.T) {
	t.Setenv("MEMLAB_LANG", "zh-CN")
	dir := t.TempDir()
	curve, err := MemoryCurve("前向与反向：显存曲线", Timeline{
		Samples: []Sample{{X: 0, DriverUsed: 512 << 20}, {X: 1, Allocated: 300 << 20, Reserved: 320 << 20, DriverUsed: 832 << 20}},
		Marks:   []Mark{{X: 1, Label: "前向"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	segs, err := SegmentMap("段分布图", []Segment{{Pool: "large", Blocks: []Block{{Size: 8 << 20, State: Allocated}, {Size: 4 << 20, State: InactiveSplit}, {Size: 8 << 20, State: Free}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, fig := range []*Figure{curve, segs} {
		if fig.X.Label.Text == "" || !needsCJK(fig.X.Label.Text+fig.Y.Label.Text) {
			t.Errorf("%s: axis labels %q, %q are not Chinese", fig.Name, fig.X.Label.Text, fig.Y.Label.Text)
		}
		f, err := cjk()
		if err != nil {
			t.Fatal(err)
		}
		for what, fnt := range texts(fig) {
			if fnt.Typeface != CJKTypeface {
				t.Errorf("%s: the %s is drawn in %q, want %q", fig.Name, what, fnt.Typeface, CJKTypeface)
			}
		}
		face := font.DefaultCache.Lookup(fig.Title.TextStyle.Font, 10)
		if face.Face != f {
			t.Errorf("%s: gonum/plot's cache gives another face for %q", fig.Name, CJKTypeface)
		}
		for _, s := range []string{fig.Title.Text, fig.X.Label.Text, fig.Y.Label.Text} {
			if m := missingGlyphs(t, face.Face, s); len(m) > 0 {
				t.Errorf("%s: %q would draw boxes for %q", fig.Name, s, string(m))
			}
		}
		if err := fig.Save(filepath.Join(dir, fig.Name+".png")); err != nil {
			t.Fatal(err)
		}
	}
	if curve.Name != "前向与反向-显存曲线" {
		t.Errorf("a Chinese title's file name is %q, want its words", curve.Name)
	}
	if out := os.Getenv("MEMPLOT_CJK_OUT"); out != "" { // to look at: MEMPLOT_CJK_OUT=/tmp/x go test -run CJK
		for _, fig := range []*Figure{curve, segs} {
			if err := fig.Save(filepath.Join(out, fig.Name+".png")); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestEnglishEditionKeepsLiberation(t *testing.T) {
	t.Setenv("MEMLAB_LANG", "en")
	fig, err := Fragmentation("before the request", 16<<20, Gauge{Label: "fragmented", LargestFree: 4 << 20, TotalFree: 12 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fig.PNG(); err != nil {
		t.Fatal(err)
	}
	for what, fnt := range texts(fig) {
		if fnt.Typeface == CJKTypeface {
			t.Errorf("English edition: the %s is drawn in %q", what, fnt.Typeface)
		}
	}
	if got := fig.Y.Label.Text; !strings.HasPrefix(got, "free ") {
		t.Errorf("English edition: y axis %q, want memplot's English words", got)
	}
	// An English-edition figure given a Chinese title still draws it.
	zh, err := Bars("碎片", "MiB", []string{"a"}, BarSeries{Name: "空闲", Values: []float64{1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zh.Encode("png"); err != nil {
		t.Fatal(err)
	}
	if zh.Title.TextStyle.Font.Typeface != CJKTypeface || zh.key.TextStyle.Font.Typeface != CJKTypeface {
		t.Errorf("English edition, Chinese title and key: drawn in %q and %q, want %q", zh.Title.TextStyle.Font.Typeface, zh.key.TextStyle.Font.Typeface, CJKTypeface)
	}
}
