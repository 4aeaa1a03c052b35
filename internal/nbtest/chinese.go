package nbtest

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"

	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/memlab"
)

// allowed are the lowercase words a Chinese output may carry: names of
// PyTorch, CUDA and Go things written as their APIs and settings spell them
// (as the reviewer's count, /work/shared/tools/zh_outputs.py, allows them).
// The words the glossary keeps as the chapters write them come from
// GLOSSARY.md ([KeptTerms]).
var allowed = []string{"true", "false", "nil", "cuda", "pytorch", "memlab", "gonb", "float", "bfloat",
	"uint", "int", "expandable", "segments", "roundup", "garbage", "collection", "threshold", "split",
	"size", "conf", "tensor", "relu", "gelu", "softmax", "matmul", "layernorm", "torch", "python", "jupyter"}

// pytorchLine matches the lines of PyTorch's own reports that memlab prints as
// PyTorch does (memory_summary's rows, its OOM message).
var pytorchLine = regexp.MustCompile(`^\s*\||from (large|small) pool|memory summary|out of memory|Tried to allocate|PYTORCH_CUDA_ALLOC_CONF|If reserved but unallocated|Of the allocated memory`)

// EnglishWords are the English prose words of s: lowercase words of four
// letters or more standing alone, not part of an identifier, a path, a flag
// or a unit (a word right after a letter of any script is part of it), and
// not in keep. It counts as the reviewer's tool does.
func EnglishWords(s string, keep []string) []string {
	var words []string
	r := []rune(s)
	for i := 0; i < len(r); {
		if !isWordRune(r[i]) {
			i++
			continue
		}
		j := i
		for j < len(r) && isWordRune(r[j]) {
			j++
		}
		w := string(r[i:j])
		before, after := ' ', ' '
		if i > 0 {
			before = r[i-1]
		}
		if j < len(r) {
			after = r[j]
		}
		if len(w) >= 4 && strings.Trim(w, "abcdefghijklmnopqrstuvwxyz") == "" &&
			!strings.ContainsRune("./-`'\"=:", before) && !strings.ContainsRune("(./-=", after) &&
			!slices.Contains(allowed, w) && !slices.Contains(keep, w) {
			words = append(words, w)
		}
		i = j
	}
	return words
}

// isWordRune is Python's \w: a letter or digit of any script, or _.
func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// KeptTerms are the English words the glossary (path, notebooks/GLOSSARY.md)
// lets the Chinese edition print: the first column of its section "kept in
// English in the Chinese edition", each word of it.
func KeptTerms(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("nbtest: KeptTerms: %w", err)
	}
	defer f.Close()
	var terms []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "## ") {
			in = strings.Contains(strings.ToLower(l), "kept in english in the chinese edition")
			continue
		}
		if !in || !strings.HasPrefix(l, "| ") || strings.HasPrefix(l, "|---") {
			continue
		}
		col := strings.Trim(strings.Split(l, "|")[1], " `")
		if col == "English" || col == "" {
			continue
		}
		terms = append(terms, strings.Fields(col)...)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("nbtest: KeptTerms: %w", err)
	}
	if len(terms) == 0 {
		return nil, fmt.Errorf("nbtest: KeptTerms: %s has no section \"kept in English in the Chinese edition\"", path)
	}
	return terms, nil
}

// ProseWords are the English prose words of one line of a Chinese output
// ([EnglishWords]), the line read as [ChineseEdition] reads it: none in a
// line of code or a command's stamp, or in PyTorch's memory summary and OOM
// message; a go run command and the simulated device's name left out.
func ProseWords(line string, keep []string) []string {
	if codeLine.MatchString(line) || pytorchLine.MatchString(line) {
		return nil
	}
	return EnglishWords(deviceName.ReplaceAllString(command.ReplaceAllString(line, ""), ""), keep)
}

// codeLine matches what a Chinese output quotes as code, not prose: a line
// that is a comment or a command's stamp ("# 2026-12-01 …: memlab ch4 -size
// small", as the reviewer's count skips them), a go run command, and the
// simulated device's name (sim:0 (memlab simulated GPU (80 GiB)), a name as
// "NVIDIA H200" is).
var (
	codeLine   = regexp.MustCompile(`^\s*(\$|#|//|go:|ok |---|===|PASS|FAIL)`)
	command    = regexp.MustCompile(`go run \S+( [\w./-]+)*`)
	deviceName = regexp.MustCompile(`memlab simulated GPU`)
)

// ChineseEdition runs every cell of cells in order in the Chinese edition
// (MEMLAB_LANG=zh-CN) and fails when it prints or draws English prose of
// memlab's own: a line of output, or a figure's title, axis, key entry or
// group label ([memplot.Figure.Texts]), with an English word ([EnglishWords])
// that is neither one the glossary keeps (glossary: notebooks/GLOSSARY.md,
// [KeptTerms]) nor part of PyTorch's own reports (memory_summary, the OOM
// message). PyTorch's other errors print translated (memlab.PyTorchText): one
// the catalog lacks fails as a catalog miss. A catalog miss (a text the cells pass to
// package lang that lang/zh-CN/*.txt lacks) that shows in the output is named
// as such. It returns the outputs by cell name.
func ChineseEdition(t *testing.T, cells []memlab.Cell, glossary string) map[string]string {
	t.Helper()
	keep, err := KeptTerms(glossary)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("MEMLAB_LANG", lang.Chinese)
	var mu sync.Mutex
	var misses []string
	prev := lang.OnMiss(func(_, en string) {
		mu.Lock()
		defer mu.Unlock()
		if len(EnglishWords(en, keep)) > 0 {
			misses = append(misses, en)
		}
	})
	defer lang.OnMiss(prev)
	out := map[string]string{}
	for _, c := range cells {
		mu.Lock()
		misses = nil
		mu.Unlock()
		res := exec(t, c)
		out[c.Name] = res.Output
		lines := strings.Split(res.Output, "\n")
		for _, f := range res.Figures {
			lines = append(lines, f.Texts()...)
		}
		shown := strings.Join(lines, "\n")
		for _, l := range lines {
			if w := ProseWords(l, keep); len(w) > 0 {
				t.Errorf("cell %s prints English %q in the Chinese edition: %s", c.Name, w, l)
			}
		}
		mu.Lock()
		seen := map[string]bool{}
		for _, m := range misses {
			if !seen[m] && strings.Contains(shown, m) && !deviceName.MatchString(m) {
				t.Errorf("cell %s prints %q, which lang/zh-CN/*.txt does not translate", c.Name, m)
			}
			seen[m] = true
		}
		mu.Unlock()
	}
	return out
}
