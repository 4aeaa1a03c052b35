package memplot

import (
	_ "embed"
	"fmt"
	"sync"
	"unicode"

	"golang.org/x/image/font/opentype"
	"gonum.org/v1/plot/font"

	"memlab.dev/memlab/lang"
)

// CJKTypeface is the typeface memplot draws Chinese text with: a subset of
// Noto Sans CJK SC Regular (SIL Open Font License 1.1, cjkfont/OFL.txt)
// embedded in the package, made by scripts/cjkfont/mkfont.py. It holds ASCII,
// Latin-1, the punctuation and symbols memlab prints, all of GB2312 and every
// character of the lang catalog, so a machine without system CJK fonts draws
// no boxes. gonum/plot's default (Liberation) fonts have no Chinese glyphs.
const CJKTypeface font.Typeface = "Noto Sans CJK SC"

//go:embed cjkfont/NotoSansCJKsc-memlab.otf
var cjkFontData []byte

var (
	cjkOnce sync.Once
	cjkFont *opentype.Font
	cjkErr  error
)

// cjk parses the embedded font and adds it to gonum/plot's font cache, once.
func cjk() (*opentype.Font, error) {
	cjkOnce.Do(func() {
		cjkFont, cjkErr = opentype.Parse(cjkFontData)
		if cjkErr != nil {
			cjkErr = fmt.Errorf("memplot: the embedded CJK font: %w", cjkErr)
			return
		}
		// One face for every variant gonum/plot's styles name (its default is
		// Liberation's "Serif"), so that a style keeps its variant and only
		// its typeface changes.
		var coll font.Collection
		for _, v := range []font.Variant{"", "Serif", "Sans", "Mono"} {
			coll = append(coll, font.Face{Font: font.Font{Typeface: CJKTypeface, Variant: v}, Face: cjkFont})
		}
		font.DefaultCache.Add(coll)
	})
	return cjkFont, cjkErr
}

// needsCJK reports whether s has a character gonum/plot's Latin fonts lack:
// Han, kana, hangul, CJK punctuation or full-width forms.
func needsCJK(s string) bool {
	for _, r := range s {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) ||
			(r >= 0x3000 && r < 0x3040) || (r >= 0xFF00 && r < 0xFFF0) {
			return true
		}
	}
	return false
}

// useCJK switches every text of f that memplot styles — title, axis labels,
// tick labels and both keys — to the CJK typeface. A figure whose font cannot
// be loaded keeps gonum/plot's fonts (the embedded font is tested to parse).
func (f *Figure) useCJK() {
	if _, err := cjk(); err != nil {
		return
	}
	for _, fnt := range []*font.Font{
		&f.Title.TextStyle.Font,
		&f.X.Label.TextStyle.Font, &f.Y.Label.TextStyle.Font,
		&f.X.Tick.Label.Font, &f.Y.Tick.Label.Font,
		&f.key.TextStyle.Font, &f.Legend.TextStyle.Font,
	} {
		fnt.Typeface = CJKTypeface
	}
}

// fitFaces draws f's texts in the CJK typeface when the edition is Chinese or
// one of them (title, axis labels, key entries) has Chinese characters; the
// English edition keeps gonum/plot's fonts.
func (f *Figure) fitFaces() {
	if f.Title.TextStyle.Font.Typeface == CJKTypeface {
		return
	}
	if lang.Current() == lang.Chinese || f.keyCJK ||
		needsCJK(f.Title.Text) || needsCJK(f.X.Label.Text) || needsCJK(f.Y.Label.Text) {
		f.useCJK()
	}
}

// tr is memplot's own words (legend entries, axis names, tick labels) in the
// current edition: lang's catalog, lang/zh-CN/memplot.txt, by lang's rule
// for labels (a compound "views+kv-cache" part by part).
func tr(en string) string { return lang.Label(en) }
