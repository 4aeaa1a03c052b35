// Package lang is the workbook's language: which edition a notebook cell
// prints in (English or Simplified Chinese) and the catalog of the sentences
// it prints, so that the two editions of a notebook run the same code.
//
// The edition comes from the MEMLAB_LANG environment variable ("en", the
// default, or "zh-CN"); the Chinese edition of every notebook sets it in its
// first cell with GoNB's `%env MEMLAB_LANG=zh-CN`. A sentence is looked up by
// its English text (a fmt format), as gettext does: [Text] returns the
// edition's format, with the same verbs, possibly reordered with explicit
// argument indexes (%[2]s).
//
// The catalog is the files zh-CN/*.txt, embedded in the binary: pairs of lines
//
//	en: the driver reports %s free of %s
//	zh: 驱动报告 %[2]s 中有 %[1]s 空闲
//
// separated by blank lines; lines starting with # are comments.
package lang

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Editions of the workbook.
const (
	English = "en"
	Chinese = "zh-CN"
)

// Editions lists the editions, English first.
var Editions = []string{English, Chinese}

//go:embed zh-CN/*.txt
var catalogFiles embed.FS

var (
	loadOnce sync.Once
	catalogs map[string]map[string]string // edition → English format → edition's format
	loadErr  error
	warnOnce sync.Once
)

// Current is the edition the process prints in: MEMLAB_LANG, with "zh",
// "zh_CN" and "zh-cn" read as zh-CN. An unknown value prints a warning once on
// stderr and falls back to English.
func Current() string {
	v := strings.TrimSpace(os.Getenv("MEMLAB_LANG"))
	ed, err := Parse(v)
	if err != nil {
		warnOnce.Do(func() { fmt.Fprintf(os.Stderr, "memlab: %v; printing in English\n", err) })
		return English
	}
	return ed
}

// Parse names an edition: "" and "en" are English; "zh", "zh-CN", "zh_CN"
// (any case) are Simplified Chinese; anything else is an error.
func Parse(s string) (string, error) {
	switch strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), "_", "-")) {
	case "", "en", "en-us", "en-gb":
		return English, nil
	case "zh", "zh-cn", "zh-hans":
		return Chinese, nil
	}
	return "", fmt.Errorf("lang: MEMLAB_LANG=%q is not an edition (want en or zh-CN)", s)
}

// Text returns the current edition's version of an English format. A
// sentence the catalog lacks is returned as it is, in English.
func Text(en string) string { return TextIn(Current(), en) }

// TextIn returns edition's version of an English format, or en itself when
// the edition is English or the catalog lacks it.
func TextIn(edition, en string) string {
	if edition == English {
		return en
	}
	if t, ok := Catalog(edition)[en]; ok {
		return t
	}
	if h := missHook.Load(); h != nil {
		(*h)(edition, en)
	}
	return en
}

// missHook is the function OnMiss set, nil when none.
var missHook atomic.Pointer[func(edition, en string)]

// OnMiss makes f see every lookup that a non-English edition's catalog lacks
// ([Text], [TextIn]): edition and the English text, returned as it is. Most
// misses are meant (a size, a setting, code passed through as a label); a miss
// with English words in it is memlab's own English printed in another
// edition, which the notebooks' tests look for. A nil f removes the hook.
// OnMiss returns the function it replaces (nil when none).
func OnMiss(f func(edition, en string)) func(edition, en string) {
	var old *func(edition, en string)
	if f == nil {
		old = missHook.Swap(nil)
	} else {
		old = missHook.Swap(&f)
	}
	if old == nil {
		return nil
	}
	return *old
}

// Label is the current edition's version of a label: see [LabelIn].
func Label(s string) string { return LabelIn(Current(), s) }

// LabelIn is edition's version of a label — an outcome, a case's, a mode's or
// a setting's name, a column header, a legend entry: the catalog's
// translation of s; else, for a compound label ("views + kv-cache",
// "chapter+pooled-scores"), each "+"-separated part's; else, for a label
// followed by settings of its own ("default cap=5.43 GiB"), the label's, the
// settings as they are; else s. It is the one rule tables, Measured lines and
// figures translate labels by.
func LabelIn(edition, s string) string {
	if edition == English {
		return s
	}
	if t, ok := Catalog(edition)[s]; ok {
		return t
	}
	if strings.Contains(s, "+") {
		parts := strings.Split(s, "+")
		for i, p := range parts {
			if core := strings.TrimSpace(p); core != "" {
				parts[i] = strings.Replace(p, core, LabelIn(edition, core), 1)
			}
		}
		return strings.Join(parts, "+")
	}
	if head, rest, ok := strings.Cut(s, " "); ok {
		if f := strings.Fields(rest); len(f) == 0 || !strings.Contains(f[0], "=") {
			return TextIn(edition, s)
		}
		if t, ok := Catalog(edition)[head]; ok {
			return t + " " + rest
		}
	}
	return TextIn(edition, s) // the miss, as TextIn reports it
}

// List writes items as edition writes a list joined by "and": "a", "a and b",
// "a, b and c"; in Chinese "a 和 b", "a、b 和 c". Items are written as given.
func List(edition string, items []string) string { return list(edition, items, " and ", " 和 ") }

// ListOr is [List] joined by "or": "a, b or c"; in Chinese "a、b 或 c".
func ListOr(edition string, items []string) string { return list(edition, items, " or ", " 或 ") }

func list(edition string, items []string, en, zh string) string {
	sep, last := ", ", en
	if edition == Chinese {
		sep, last = "、", zh
	}
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], sep) + last + items[len(items)-1]
}

// Has reports whether edition's catalog translates en (English always does).
func Has(edition, en string) bool {
	if edition == English {
		return true
	}
	_, ok := Catalog(edition)[en]
	return ok
}

// Catalog is edition's catalog, English format → the edition's; nil for
// English. It panics if the embedded catalog is malformed, which the
// package's tests rule out.
func Catalog(edition string) map[string]string {
	loadOnce.Do(func() { catalogs, loadErr = load(catalogFiles) })
	if loadErr != nil {
		panic(loadErr)
	}
	return catalogs[edition]
}

// load reads every edition's catalog files.
func load(fsys fs.FS) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for _, ed := range Editions[1:] {
		files, err := fs.Glob(fsys, path.Join(ed, "*.txt"))
		if err != nil {
			return nil, err
		}
		sort.Strings(files)
		cat := map[string]string{}
		for _, f := range files {
			b, err := fs.ReadFile(fsys, f)
			if err != nil {
				return nil, err
			}
			if err := parseCatalog(f, string(b), cat); err != nil {
				return nil, err
			}
		}
		out[ed] = cat
	}
	return out, nil
}

// parseCatalog adds the pairs of one catalog file to cat.
func parseCatalog(name, text string, cat map[string]string) error {
	var en string
	haveEn := false
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		line = strings.TrimRight(line, "\r")
		switch {
		case strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#"):
			if haveEn {
				return fmt.Errorf("lang: %s:%d: the en: line above has no zh: line", name, n)
			}
		case strings.HasPrefix(line, "en: "):
			if haveEn {
				return fmt.Errorf("lang: %s:%d: two en: lines in a row", name, n)
			}
			en, haveEn = line[len("en: "):], true
			if _, dup := cat[en]; dup {
				return fmt.Errorf("lang: %s:%d: %q is translated twice", name, n, en)
			}
		case strings.HasPrefix(line, "zh: "):
			if !haveEn {
				return fmt.Errorf("lang: %s:%d: zh: line without an en: line before it", name, n)
			}
			zh := line[len("zh: "):]
			if err := SameVerbs(en, zh); err != nil {
				return fmt.Errorf("lang: %s:%d: %w", name, n, err)
			}
			cat[en], haveEn = zh, false
		default:
			return fmt.Errorf("lang: %s:%d: want a line starting with \"en: \", \"zh: \" or \"#\"", name, n)
		}
	}
	if haveEn {
		return fmt.Errorf("lang: %s: the last en: line has no zh: line", name)
	}
	return nil
}

// SameVerbs reports whether two fmt formats use the same arguments with the
// same verbs (explicit indexes such as %[2]s allowed), so that one can stand
// for the other with the same arguments.
func SameVerbs(a, b string) error {
	va, err := verbs(a)
	if err != nil {
		return fmt.Errorf("%q: %w", a, err)
	}
	vb, err := verbs(b)
	if err != nil {
		return fmt.Errorf("%q: %w", b, err)
	}
	if fmt.Sprint(va) != fmt.Sprint(vb) {
		return fmt.Errorf("%q uses arguments %v, its translation %q uses %v", a, va, b, vb)
	}
	return nil
}

// verbs lists, for each argument a format consumes (by position), the verb
// letter it is printed with.
func verbs(format string) ([]string, error) {
	var used []string
	arg := 0
	set := func(i int, v string) error {
		for len(used) <= i {
			used = append(used, "")
		}
		if used[i] != "" && used[i] != v {
			return fmt.Errorf("argument %d printed as %%%s and %%%s", i+1, used[i], v)
		}
		used[i] = v
		return nil
	}
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		// flags, width, precision, argument index
		for i < len(format) && strings.IndexByte("+-# 0123456789.*[]", format[i]) >= 0 {
			if format[i] == '[' {
				j := strings.IndexByte(format[i:], ']')
				if j < 0 {
					return nil, fmt.Errorf("unclosed argument index")
				}
				var n int
				if _, err := fmt.Sscanf(format[i+1:i+j], "%d", &n); err != nil || n < 1 {
					return nil, fmt.Errorf("bad argument index %q", format[i:i+j+1])
				}
				arg = n - 1
				i += j + 1
				continue
			}
			if format[i] == '*' {
				if err := set(arg, "*"); err != nil {
					return nil, err
				}
				arg++
			}
			i++
		}
		if i >= len(format) {
			return nil, fmt.Errorf("format ends in %%")
		}
		if format[i] == '%' {
			continue
		}
		if err := set(arg, string(format[i])); err != nil {
			return nil, err
		}
		arg++
	}
	return used, nil
}
