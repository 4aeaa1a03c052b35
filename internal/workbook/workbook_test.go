package workbook

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseReadme(t *testing.T) {
	tests := []struct {
		name, text, title, section string
	}{
		{"numbered title and linked section",
			"# 04 · Rounding a request: `round_size`\n\nSection: [Notebook 02, §2.2 The caching allocator](../../notebooks/en/02-memory-mechanics.ipynb)\n\nText.",
			"Rounding a request: `round_size`", "Notebook 02, §2.2 The caching allocator"},
		{"plain section", "# Title\nSection: Notebook 04, §4.1 Views\n", "Title", "Notebook 04, §4.1 Views"},
		{"no section", "# 1 · Strides\n", "Strides", ""},
		{"dot in a title that is not a number", "# Why · it matters\n", "Why · it matters", ""},
		{"first heading wins", "# One\n# Two\nSection: a\nSection: b", "One", "a"},
		{"nothing", "just text", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			title, section := parseReadme(tc.text)
			if title != tc.title || section != tc.section {
				t.Errorf("parseReadme: got title %q section %q, want %q %q", title, section, tc.title, tc.section)
			}
		})
	}
}

func TestParseHints(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"two hints", "# Hints\n\nintro ignored\n\n## Hint 1\n\nFirst.\n\n## Hint 2\n\nSecond,\nover two lines.\n", []string{"First.", "Second,\nover two lines."}},
		{"no headings", "# Hints\njust prose", nil},
		{"empty hint skipped", "## Hint 1\n\n## Hint 2\nreal", []string{"real"}},
		{"code kept", "## Hint 1\n    x := 1\n", []string{"x := 1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseHints(tc.text); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("parseHints: got %q, want %q", got, tc.want)
			}
		})
	}
}

// fakeModule writes a minimal exercises module with the given files (path → text)
// and returns its folder.
func fakeModule(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	files["go.mod"] = "module " + ModulePath + "\n\ngo 1.22\n"
	for p, text := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestFindRoot(t *testing.T) {
	repo := t.TempDir()
	ex := filepath.Join(repo, "exercises")
	deep := filepath.Join(repo, "a", "b")
	other := filepath.Join(repo, "other")
	for _, d := range []string{ex, deep, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ex, "go.mod"), []byte("module "+ModulePath+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, start, dir, want string
		err                    bool
	}{
		{"from the repository root", repo, "", ex, false},
		{"from deep inside", deep, "", ex, false},
		{"from inside the exercises folder", ex, "", ex, false},
		{"explicit dir", "/", ex, ex, false},
		{"explicit dir of another module", repo, other, "", true},
		{"explicit dir without go.mod", repo, deep, "", true},
		{"nowhere near", t.TempDir(), "", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FindRoot(tc.start, tc.dir)
			if tc.err {
				if !errors.Is(err, ErrNotFound) {
					t.Errorf("FindRoot(%s, %q) = %q, %v; want an error wrapping ErrNotFound", tc.start, tc.dir, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("FindRoot(%s, %q) = %q, %v; want %q", tc.start, tc.dir, got, err, tc.want)
			}
		})
	}
}

func TestLoadAndLookup(t *testing.T) {
	root := fakeModule(t, map[string]string{
		"02-second/README.md": "# 02 · Second\nSection: Notebook 04, §4.1 X\n",
		"02-second/HINTS.md":  "## Hint 1\na\n## Hint 2\nb\n",
		"01-first/README.md":  "# 01 · First\n",
		"03-no-readme/x.go":   "package x\n",
		"internal/README.md":  "# not an exercise\n",
		"notes.md":            "# not a folder\n",
	})
	exs, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(exs) != 2 || exs[0].Slug != "01-first" || exs[1].Slug != "02-second" {
		t.Fatalf("Load: got %+v, want 01-first and 02-second in order (folders without README.md and non-exercise folders skipped)", exs)
	}
	want := Exercise{Number: 2, Slug: "02-second", Title: "Second", Section: "Notebook 04, §4.1 X", Dir: filepath.Join(root, "02-second"), Hints: []string{"a", "b"}}
	if !reflect.DeepEqual(exs[1], want) {
		t.Errorf("Load: exercise 2 = %+v, want %+v", exs[1], want)
	}
	if exs[0].Hints != nil {
		t.Errorf("an exercise without HINTS.md has hints %q", exs[0].Hints)
	}
	lookups := []struct {
		arg, want string
		err       bool
	}{
		{"2", "02-second", false},
		{"02", "02-second", false},
		{"02-second", "02-second", false},
		{"first", "01-first", false},
		{"3", "", true},
		{"third", "", true},
		{"-1", "", true},
	}
	for _, l := range lookups {
		ex, err := Lookup(exs, l.arg)
		if (err != nil) != l.err || ex.Slug != l.want {
			t.Errorf("Lookup(%q) = %q, %v; want %q (error: %v)", l.arg, ex.Slug, err, l.want, l.err)
		}
	}
	if _, err := Load(t.TempDir()); !errors.Is(err, ErrNotFound) {
		t.Errorf("Load of an empty folder: got %v, want ErrNotFound", err)
	}
}

func TestProgress(t *testing.T) {
	root := t.TempDir()
	p, err := LoadProgress(root)
	if err != nil || len(p.HintsRevealed) != 0 {
		t.Fatalf("LoadProgress without a file: %+v, %v; want empty progress", p, err)
	}
	ex := Exercise{Slug: "04-round-size", Hints: []string{"one", "two"}}
	for i, want := range []string{"one", "two"} {
		h, n, ok := p.NextHint(ex)
		if !ok || h != want || n != i+1 {
			t.Fatalf("NextHint #%d = %q, %d, %v; want %q, %d, true", i+1, h, n, ok, want, i+1)
		}
	}
	if h, n, ok := p.NextHint(ex); ok || h != "" || n != 0 {
		t.Fatalf("NextHint after the last = %q, %d, %v; want nothing", h, n, ok)
	}
	if err := p.Save(root); err != nil {
		t.Fatal(err)
	}
	back, err := LoadProgress(root)
	if err != nil || back.HintsRevealed["04-round-size"] != 2 {
		t.Fatalf("LoadProgress after Save = %+v, %v; want 2 hints revealed for 04-round-size", back, err)
	}
	if err := os.WriteFile(filepath.Join(root, ProgressFile), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadProgress(root); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("LoadProgress of a corrupt file: %v; want an error saying it is corrupt", err)
	}
	var zero Progress
	if _, _, ok := zero.NextHint(ex); !ok {
		t.Errorf("NextHint on a zero Progress should work")
	}
}
