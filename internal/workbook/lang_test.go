package workbook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"memlab.dev/memlab/lang"
)

func TestInEdition(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.zh-CN.md", "# 01 · 行优先步长\n")
	write("HINTS.zh-CN.md", "## 提示 1\n甲\n## 提示 2\n乙\n")
	ex := Exercise{Number: 1, Slug: "01-strides", Title: "Row-major strides", Dir: dir, Hints: []string{"a", "b"}}
	zh, err := InEdition(ex, lang.Chinese)
	if err != nil {
		t.Fatal(err)
	}
	if zh.Title != "行优先步长" || strings.Join(zh.Hints, ",") != "甲,乙" {
		t.Errorf("Chinese edition: title %q, hints %q", zh.Title, zh.Hints)
	}
	if en, err := InEdition(ex, lang.English); err != nil || en.Title != ex.Title || en.Hints[0] != "a" {
		t.Errorf("English edition: %+v, %v", en, err)
	}
	ex.Hints = []string{"a"}
	if _, err := InEdition(ex, lang.Chinese); err == nil || !strings.Contains(err.Error(), "2 hints") {
		t.Errorf("two Chinese hints for one English: error %v, want one naming the counts", err)
	}
}

// TestEveryExerciseInBothEditions checks the course's exercises: each has a
// README.zh-CN.md with a title and a HINTS.zh-CN.md with as many hints as
// HINTS.md.
func TestEveryExerciseInBothEditions(t *testing.T) {
	root, err := filepath.Abs("../../exercises")
	if err != nil {
		t.Fatal(err)
	}
	exs, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(exs) != 19 {
		t.Errorf("%d exercises, want 19", len(exs))
	}
	for _, ex := range exs {
		for _, f := range []string{"README" + ChineseSuffix, "HINTS" + ChineseSuffix} {
			if _, err := os.Stat(filepath.Join(ex.Dir, f)); err != nil {
				t.Errorf("exercise %s has no %s", ex.Slug, f)
			}
		}
		zh, err := InEdition(ex, lang.Chinese)
		if err != nil {
			t.Error(err)
			continue
		}
		if zh.Title == ex.Title || !strings.ContainsFunc(zh.Title, func(r rune) bool { return r >= 0x4e00 && r <= 0x9fff }) {
			t.Errorf("exercise %s: Chinese title %q", ex.Slug, zh.Title)
		}
	}
}
