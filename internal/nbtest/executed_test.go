package nbtest

import (
	"path/filepath"
	"strings"
	"testing"

	"memlab.dev/memlab/internal/nbexec"
)

// TestExecutedChineseSpeaksChinese reads the kept executed copies of the
// Chinese edition (recorded on the H200, notebooks/executed/zh-CN) and fails
// on any English prose word in their outputs, read as ChineseEdition reads
// the simulator's: the GPU's outputs, which the simulator's test does not
// see, carry no English of memlab's own either.
func TestExecutedChineseSpeaksChinese(t *testing.T) {
	keep, err := KeptTerms("../../notebooks/GLOSSARY.md")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("../../notebooks/executed/zh-CN/*.ipynb")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("%d executed copies of the Chinese edition, want the five notebooks'", len(files))
	}
	for _, f := range files {
		nb, err := nbexec.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		for _, c := range nb.Cells {
			out.WriteString(c.OutputText())
		}
		if out.Len() == 0 {
			t.Errorf("%s: no outputs", f)
		}
		for _, l := range strings.Split(out.String(), "\n") {
			if w := ProseWords(l, keep); len(w) > 0 {
				t.Errorf("%s prints English %q: %s", filepath.Base(f), w, l)
			}
		}
	}
	if w := ProseWords("实测：每个 epoch 的 free memory", keep); len(w) != 3 {
		t.Errorf("ProseWords finds %q in a line with three English words", w)
	}
}
