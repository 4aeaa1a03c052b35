package model_test

import (
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/model"
)

func TestModeStringParse(t *testing.T) {
	tests := []struct {
		mode model.Mode
		name string
	}{
		{model.Baseline, "baseline"},
		{model.Optimised, "optimised"},
		{model.Chapter, "chapter"},
		{model.InPlace, "in-place"},
		{model.Views | model.KVCache, "views+kv-cache"},
		{model.InPlace | model.Views | model.LastLogits, "in-place+views+last-logits"},
		{model.PooledScores, "pooled-scores"},
		{model.Chapter | model.PooledScores, "chapter+pooled-scores"},
		{model.Optimised | model.PooledScores, "optimised+pooled-scores"},
		{model.Views | model.PooledScores, "views+pooled-scores"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.mode.String(); got != tt.name {
				t.Errorf("String() = %q, want %q", got, tt.name)
			}
			back, err := model.ParseMode(tt.name)
			if err != nil || back != tt.mode {
				t.Errorf("ParseMode(%q) = %v, %v; want %v", tt.name, back, err, tt.mode)
			}
		})
	}
	if m, err := model.ParseMode("in-place+views+kv-cache"); err != nil || m != model.Chapter {
		t.Errorf("ParseMode of the chapter's three techniques = %v, %v; want chapter", m, err)
	}
	if model.Optimised != model.Chapter|model.LastLogits {
		t.Errorf("optimised is %v, want the chapter's techniques and last-logits", model.Optimised)
	}
	if m, err := model.ParseMode("in-place+views+kv-cache+pooled-scores"); err != nil || m != model.Chapter|model.PooledScores {
		t.Errorf("ParseMode of the chapter's three and pooled scores = %v, %v", m, err)
	}
	if model.Chapter&model.PooledScores != 0 || model.Optimised&model.PooledScores != 0 {
		t.Errorf("chapter and optimised must keep their recorded meaning, without pooled-scores")
	}
	if _, err := model.ParseMode("in-place+fast"); err == nil || !strings.Contains(err.Error(), `"in-place+fast"`) {
		t.Errorf("ParseMode of an unknown part: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	good, _ := model.SizeByName("tiny")
	tests := []struct {
		name string
		edit func(*model.Config)
		want string
	}{
		{"zero vocab", func(c *model.Config) { c.Vocab = 0 }, "Vocab = 0"},
		{"negative layers", func(c *model.Config) { c.Layers = -1 }, "Layers = -1"},
		{"heads do not divide dim", func(c *model.Config) { c.Heads = 3 }, "not a multiple of Heads = 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good.Config
			tt.edit(&c)
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	if err := good.Config.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := model.SizeByName("huge"); err == nil || !strings.Contains(err.Error(), "tiny") {
		t.Errorf("SizeByName(huge) = %v, want the list of sizes", err)
	}
}

func TestWorkloadMake(t *testing.T) {
	w := model.Workload{Requests: 20, PromptMin: 3, PromptMax: 9, DecodeMin: 1, DecodeMax: 4, Seed: 7}
	a, err := w.Make(50)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := w.Make(50)
	lens := map[int]bool{}
	for i, r := range a {
		if len(r.Prompt) < 3 || len(r.Prompt) > 9 || r.Decode < 1 || r.Decode > 4 {
			t.Errorf("request %d: prompt %d, decode %d outside the ranges", i, len(r.Prompt), r.Decode)
		}
		if !slices.Equal(r.Prompt, b[i].Prompt) || r.Decode != b[i].Decode {
			t.Errorf("request %d differs between two Makes of one workload", i)
		}
		for _, id := range r.Prompt {
			if id < 0 || id >= 50 {
				t.Errorf("token %d outside the vocabulary", id)
			}
		}
		lens[len(r.Prompt)] = true
	}
	if len(lens) < 3 {
		t.Errorf("20 requests have only %d distinct prompt lengths: not variable-length", len(lens))
	}
	for _, bad := range []model.Workload{
		{Requests: 0, PromptMin: 1, PromptMax: 1, DecodeMin: 1, DecodeMax: 1},
		{Requests: 1, PromptMin: 5, PromptMax: 4, DecodeMin: 1, DecodeMax: 1},
		{Requests: 1, PromptMin: 1, PromptMax: 1, DecodeMin: 0, DecodeMax: 1},
	} {
		if _, err := bad.Make(10); err == nil || !strings.HasPrefix(err.Error(), "model: ") {
			t.Errorf("Make(%+v) = %v, want a model: error", bad, err)
		}
	}
}

func TestGenerateRejects(t *testing.T) {
	l := newLab(t)
	sz, _ := model.SizeByName("tiny")
	m, err := model.New(l, sz.Config)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Release()
	before := l.MemoryAllocated()
	e, err := m.NewEngine(model.Optimised, model.EngineOptions{MaxLen: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Release()
	tests := []struct {
		name string
		req  model.Request
		want string
	}{
		{"empty prompt", model.Request{Decode: 2}, "0-token prompt"},
		{"no decode", model.Request{Prompt: []int64{1}}, "0 tokens to generate"},
		{"too long", model.Request{Prompt: make([]int64, 8), Decode: 4}, "11 positions"},
		{"token outside vocab", model.Request{Prompt: []int64{1, 64}, Decode: 1}, "prompt token 1 is 64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := e.Generate(tt.req); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Generate = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	if _, err := m.NewEngine(model.Mode(0x80), model.EngineOptions{}); err == nil {
		t.Error("NewEngine accepted an unknown mode")
	}
	if _, err := m.NewEngine(model.Baseline, model.EngineOptions{MaxLen: sz.Config.MaxLen + 1}); err == nil {
		t.Error("NewEngine accepted MaxLen beyond the model's")
	}
	if got := l.MemoryAllocated(); got != before {
		t.Errorf("failed Generates left memory: %d allocated, %d before", got, before)
	}
}
