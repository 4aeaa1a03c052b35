package nbtest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestEnglishWords(t *testing.T) {
	for in, want := range map[string][]string{
		"实测：free 79.35 GiB of 80.00 GiB":          {"free"},
		"每个 epoch 的峰值":                            {"epoch"},
		"x.t().view(-1): tensor: view: view size": nil, // allowed and kept words
		"5 个 token，位于块 [0]":                       nil,
		"个token":                                  nil, // part of a word, as Python's \w reads it
		"max_memory_allocated() 现在是 2.00 MiB":     nil, // an identifier
		"--size /tmp/path":                        nil, // a flag, a path
		"(direction unknown)":                     {"direction", "unknown"},
		"true, false; cuda":                       nil,
	} {
		got := EnglishWords(in, []string{"token", "view"})
		if !slices.Equal(got, want) {
			t.Errorf("EnglishWords(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestKeptTerms(t *testing.T) {
	terms, err := KeptTerms("../../notebooks/GLOSSARY.md")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(terms, "view") {
		t.Errorf("the glossary's kept terms %q lack view", terms)
	}
	for _, w := range []string{"token", "epoch", "batch", "autograd", "stride", "logits", "dtype"} {
		if slices.Contains(terms, w) {
			t.Errorf("the glossary keeps %q in English; the Chinese edition renders it in Chinese", w)
		}
	}
	none := filepath.Join(t.TempDir(), "g.md")
	if err := os.WriteFile(none, []byte("# 术语表\n\n| a | b |\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := KeptTerms(none); err == nil {
		t.Error("a glossary without the section gave no error")
	}
	if _, err := KeptTerms(filepath.Join(t.TempDir(), "missing.md")); err == nil {
		t.Error("a missing glossary gave no error")
	}
}
