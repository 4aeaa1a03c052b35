package nb04

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"memlab.dev/memlab/internal/nbtest"
	"memlab.dev/memlab/lang"
)

// TestPrintedWordsTranslated checks that every sentence and word 04's cells
// and experiments/ch4 pass to lang (lang.Text, ch4.Say, ch4.T) has a zh-CN
// translation, so that the Chinese edition's outputs are Chinese (Measured
// and Judge texts mknotebooks checks).
func TestPrintedWordsTranslated(t *testing.T) {
	files, err := filepath.Glob("[0-9]*.go")
	if err != nil {
		t.Fatal(err)
	}
	ch4, err := filepath.Glob("../../../experiments/ch4/*.go")
	if err != nil {
		t.Fatal(err)
	}
	lit := `"((?:[^"\\]|\\.)*)"`
	one := regexp.MustCompile(`(?:ch4\.Say|lang\.Text|[^\w.]Say)\(\s*` + lit)
	many := regexp.MustCompile(`(?:ch4\.T|[^\w.]T)\(((?:\s*` + lit + `\s*,?)+)\)`)
	str := regexp.MustCompile(lit)
	n := 0
	for _, f := range append(files, ch4...) {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var found []string
		for _, m := range one.FindAllStringSubmatch(string(b), -1) {
			found = append(found, m[1])
		}
		for _, m := range many.FindAllStringSubmatch(string(b), -1) {
			for _, s := range str.FindAllStringSubmatch(m[1], -1) {
				found = append(found, s[1])
			}
		}
		for _, q := range found {
			s, err := strconv.Unquote(`"` + q + `"`)
			if err != nil {
				t.Fatalf("%s: %q: %v", f, q, err)
			}
			n++
			if !lang.Has(lang.Chinese, s) {
				t.Errorf("%s: %q has no zh-CN translation in lang/zh-CN/*.txt", f, s)
			}
		}
	}
	if n < 50 {
		t.Errorf("found %d translated texts, expected the 04 cells' and ch4's many", n)
	}
}

// TestChineseOutputs runs cells of each section in the Chinese edition: their
// tables, verdicts and notes print in Chinese.
func TestChineseOutputs(t *testing.T) {
	t.Setenv("MEMLAB_LANG", "zh-CN")
	for name, want := range map[string][]string{
		"rebindVsAddInPlace":   {`a \+= 1：`, `教材：a = a \+ 1 创建新张量.* → 成立`},
		"viewCopies":           {`(?m)^操作 +已分配 +与 x 共享存储`, `被拒绝（见下）`},
		"maxSplitMerging":      {`(?m)^PYTORCH_CUDA_ALLOC_CONF +段数`, `→ 不成立`},
		"inPlaceTwelvePercent": {`模拟设备：只记账显存`, `(?m)^注意力 +序列长度`, `→ 视情况`},
		"batch32Or64":          {`装得下`, `显存不足`},
	} {
		nbtest.Want(t, nbtest.Run(t, Cells, name), want...)
	}
}
