package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// renderingsHeading opens the glossary's section of one rendering per term:
// a table of 译法 | English term | 不用的译法 (the rejected renderings, comma
// separated).
const renderingsHeading = "\n## 一词一译 · One rendering per term"

// rendering is one glossary term's Chinese rendering and the renderings the
// Chinese texts no longer use.
type rendering struct {
	term     string
	rejected []string
}

// renderings reads the glossary's section of one rendering per term.
func renderings(t *testing.T) []rendering {
	t.Helper()
	data, err := os.ReadFile("../../notebooks/GLOSSARY.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), renderingsHeading)
	if !ok {
		t.Fatalf("GLOSSARY.md has no section %q", strings.TrimSpace(renderingsHeading))
	}
	section, _, _ = strings.Cut(section, "\n## ") // up to the next section
	var out []rendering
	header := false
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := splitRow(line)
		switch {
		case !header:
			if strings.Join(cells, "|") != "译法|English term|不用的译法" {
				t.Fatalf("one-rendering table header %q", cells)
			}
			header = true
		case strings.Trim(line, "|-") == "":
		default:
			if len(cells) != 3 || cells[0] == "" || cells[1] == "" || cells[2] == "" {
				t.Errorf("row %q: want three non-empty cells", line)
				continue
			}
			r := rendering{term: cells[0]}
			for _, v := range strings.Split(cells[2], ",") {
				v = strings.TrimSpace(v)
				if v == "" || strings.Contains(cells[0], v) {
					t.Errorf("row %q: rejected rendering %q is empty or part of the term", line, v)
					continue
				}
				r.rejected = append(r.rejected, v)
			}
			out = append(out, r)
		}
	}
	return out
}

// chineseTexts lists the files, relative to the repository root, whose Chinese
// the one-rendering rule covers: the notebooks' sources (their zh-CN blocks),
// the lang catalog, the exercises (statements, hints, stubs and tests), the
// instructor guide, the Chinese README and the glossary itself.
func chineseTexts(t *testing.T) []string {
	t.Helper()
	root := "../.."
	var files []string
	for _, pattern := range []string{"notebooks/src/*/*.go", "lang/zh-CN/*.txt", "docs/instructor/zh-CN.md", "README.zh-CN.md", "notebooks/GLOSSARY.md"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil || len(m) == 0 {
			t.Fatalf("no file matches %s (%v)", pattern, err)
		}
		files = append(files, m...)
	}
	err := filepath.WalkDir(filepath.Join(root, "exercises"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".md") || strings.HasSuffix(path, ".go")) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		files[i], _ = filepath.Rel(root, f)
	}
	return files
}

// TestOneRendering fails when a Chinese text uses a rendering the glossary
// rejects: each term is translated one way everywhere.
func TestOneRendering(t *testing.T) {
	rs := renderings(t)
	if len(rs) < 8 {
		t.Fatalf("the glossary lists %d terms with one rendering, want the split, inactive split, driver-used, segment map, lab, arena and tape ones at least", len(rs))
	}
	for _, f := range chineseTexts(t) {
		data, err := os.ReadFile(filepath.Join("../..", f))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if f == filepath.Join("notebooks", "GLOSSARY.md") {
			text, _, _ = strings.Cut(text, renderingsHeading) // the table that lists them
		}
		for n, line := range strings.Split(text, "\n") {
			for _, r := range rs {
				for _, v := range r.rejected {
					if strings.Contains(line, v) {
						t.Errorf("%s:%d: %q: the glossary renders it %q", f, n+1, v, r.term)
					}
				}
			}
		}
	}
}

// TestOneRenderingCatches checks the rule on a sentence that breaks it.
func TestOneRenderingCatches(t *testing.T) {
	found := false
	for _, r := range renderings(t) {
		for _, v := range r.rejected {
			if strings.Contains("这里出现了一个非活跃拆分块。", v) {
				found = true
			}
		}
	}
	if !found {
		t.Error("the rejected renderings do not catch 非活跃拆分块")
	}
}
