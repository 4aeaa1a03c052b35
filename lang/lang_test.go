package lang

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]string{"": English, "en": English, "zh": Chinese, "zh-CN": Chinese, "zh_cn": Chinese, " ZH-CN ": Chinese} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := Parse("fr"); err == nil || !strings.Contains(err.Error(), `"fr"`) {
		t.Errorf("Parse(fr) = %v, want an error naming it", err)
	}
}

func TestSameVerbs(t *testing.T) {
	ok := [][2]string{
		{"%s free of %s", "%[2]s 中 %[1]s 空闲"},
		{"%d calls, %.1f %%", "%d 次调用，%.1f %%"},
		{"%-8s|%5d", "%-8s｜%5d"},
		{"no verbs", "没有"},
	}
	for _, p := range ok {
		if err := SameVerbs(p[0], p[1]); err != nil {
			t.Errorf("SameVerbs(%q, %q) = %v", p[0], p[1], err)
		}
	}
	bad := [][2]string{
		{"%s and %s", "%s"},
		{"%s and %d", "%d 和 %s"},
		{"%s", "%[2]s"},
		{"%s", "%[x]s"},
		{"%s", "%"},
	}
	for _, p := range bad {
		if err := SameVerbs(p[0], p[1]); err == nil {
			t.Errorf("SameVerbs(%q, %q) = nil, want an error", p[0], p[1])
		}
	}
}

func TestParseCatalogErrors(t *testing.T) {
	for name, text := range map[string]string{
		"en without zh": "en: a\n\nen: b\nzh: 乙\n",
		"zh without en": "zh: 甲\n",
		"two en":        "en: a\nen: b\nzh: 乙\n",
		"stray line":    "hello\n",
		"verbs differ":  "en: %s of %d\nzh: %d 的 %s\n",
		"duplicate":     "en: a\nzh: 甲\n\nen: a\nzh: 甲\n",
		"last en no zh": "en: a",
	} {
		if err := parseCatalog("x.txt", text, map[string]string{}); err == nil {
			t.Errorf("%s: parseCatalog accepted %q", name, text)
		}
	}
}

func TestLoadAndText(t *testing.T) {
	fsys := fstest.MapFS{
		"zh-CN/a.txt": {Data: []byte("# comment\nen: %s free of %s\nzh: %[2]s 中 %[1]s 空闲\n\nen: done\nzh: 完成\n")},
		"zh-CN/b.txt": {Data: []byte("en: hello\nzh: 你好\n")},
	}
	cats, err := load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if got := cats[Chinese]["hello"]; got != "你好" {
		t.Errorf("hello → %q", got)
	}
	if len(cats[Chinese]) != 3 {
		t.Errorf("catalog has %d entries, want 3", len(cats[Chinese]))
	}
}

func TestEmbeddedCatalog(t *testing.T) {
	cats, err := load(catalogFiles)
	if err != nil {
		t.Fatal(err)
	}
	for en, zh := range cats[Chinese] {
		if got := TextIn(Chinese, en); got != zh {
			t.Errorf("TextIn(zh-CN, %q) = %q, want %q", en, got, zh)
		}
	}
	if got := TextIn(Chinese, "a sentence no catalog has"); got != "a sentence no catalog has" {
		t.Errorf("an untranslated sentence came back as %q", got)
	}
}

func TestCurrent(t *testing.T) {
	t.Setenv("MEMLAB_LANG", "zh-CN")
	if Current() != Chinese {
		t.Errorf("Current() = %q with MEMLAB_LANG=zh-CN", Current())
	}
	t.Setenv("MEMLAB_LANG", "")
	if Current() != English {
		t.Errorf("Current() = %q with MEMLAB_LANG unset", Current())
	}
}

func TestOnMiss(t *testing.T) {
	var got []string
	OnMiss(func(edition, en string) { got = append(got, edition+"|"+en) })
	defer OnMiss(nil)
	TextIn(Chinese, "a sentence no catalog has")
	TextIn(English, "English never misses")
	for en := range Catalog(Chinese) {
		TextIn(Chinese, en) // a hit is no miss
		break
	}
	if want := []string{"zh-CN|a sentence no catalog has"}; strings.Join(got, ";") != strings.Join(want, ";") {
		t.Errorf("misses %q, want %q", got, want)
	}
	if prev := OnMiss(nil); prev == nil {
		t.Error("OnMiss(nil) returned no previous hook")
	}
	TextIn(Chinese, "another sentence no catalog has")
	if len(got) != 1 {
		t.Errorf("a removed hook still saw %q", got[1:])
	}
}

func TestLabelIn(t *testing.T) {
	cat := Catalog(Chinese)
	var word string
	for _, w := range []string{"default", "baseline", "views"} {
		if _, ok := cat[w]; !ok {
			t.Fatalf("the catalog lacks %q, which the test needs", w)
		}
	}
	word = cat["default"]
	for in, want := range map[string]string{
		"default":                     word,
		"views + baseline":            cat["views"] + " + " + cat["baseline"],
		"views+baseline":              cat["views"] + "+" + cat["baseline"],
		"default cap=5.43 GiB":        word + " cap=5.43 GiB",
		"default fraction=0.5":        word + " fraction=0.5",
		"not a label the catalog has": "not a label the catalog has",
		"default and more":            "default and more", // no settings after the label
		"default ":                    "default ",
	} {
		if got := LabelIn(Chinese, in); got != want {
			t.Errorf("LabelIn(zh-CN, %q) = %q, want %q", in, got, want)
		}
		if got := LabelIn(English, in); got != in {
			t.Errorf("LabelIn(en, %q) = %q", in, got)
		}
	}
}

// TestList: a list as each edition writes it, joined by "and" or "or".
func TestList(t *testing.T) {
	for _, c := range []struct {
		edition string
		or      bool
		items   []string
		want    string
	}{
		{English, false, nil, ""},
		{English, false, []string{"a"}, "a"},
		{English, false, []string{"a", "b"}, "a and b"},
		{English, false, []string{"a", "b", "c"}, "a, b and c"},
		{English, true, []string{"none", "512", "1024"}, "none, 512 or 1024"},
		{Chinese, false, []string{"a", "b", "c"}, "a、b 和 c"},
		{Chinese, true, []string{"a", "b"}, "a 或 b"},
	} {
		got := List(c.edition, c.items)
		if c.or {
			got = ListOr(c.edition, c.items)
		}
		if got != c.want {
			t.Errorf("%s (or %v) %q: %q, want %q", c.edition, c.or, c.items, got, c.want)
		}
	}
}
