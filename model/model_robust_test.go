package model_test

import (
	"math"
	"testing"

	"memlab.dev/memlab/internal/robusttest"
	"memlab.dev/memlab/model"
)

var noPanic = robusttest.NoPanic
var wantErr = robusttest.WantErr

func TestRobustBadConfigs(t *testing.T) {
	l := newLab(t)
	good := model.Config{Vocab: 16, Dim: 8, Heads: 2, Layers: 1, Hidden: 16, MaxLen: 8, Seed: 1}
	tests := []struct {
		name string
		edit func(*model.Config)
		want string
	}{
		{"zero vocab", func(c *model.Config) { c.Vocab = 0 }, "Vocab"},
		{"negative dim", func(c *model.Config) { c.Dim = -8 }, "Dim"},
		{"zero heads", func(c *model.Config) { c.Heads = 0 }, "Heads"},
		{"heads not dividing dim", func(c *model.Config) { c.Heads = 3 }, "multiple"},
		{"zero layers", func(c *model.Config) { c.Layers = 0 }, "Layers"},
		{"negative hidden", func(c *model.Config) { c.Hidden = -1 }, "Hidden"},
		{"zero max len", func(c *model.Config) { c.MaxLen = 0 }, "MaxLen"},
		{"overflowing vocab", func(c *model.Config) { c.Vocab = 1 << 60 }, "overflow"},
		{"too large for the device", func(c *model.Config) { c.Vocab = 1 << 30 }, "out of memory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := good
			tt.edit(&cfg)
			noPanic(t, "New", func() {
				m, err := model.New(l, cfg)
				if err == nil {
					m.Release()
				}
				wantErr(t, "New", err, tt.want)
			})
			if got := l.MemoryAllocated(); got != 0 {
				t.Errorf("a failed New left %d bytes allocated", got)
			}
		})
	}
	noPanic(t, "New(nil device)", func() {
		_, err := model.New(nil, good)
		wantErr(t, "New(nil device)", err, "nil device")
	})
}

func TestRobustBadRequests(t *testing.T) {
	l := newLab(t)
	cfg := model.Config{Vocab: 16, Dim: 8, Heads: 2, Layers: 1, Hidden: 16, MaxLen: 8, Seed: 1}
	m, err := model.New(l, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Release()
	for _, bad := range []model.EngineOptions{{MaxLen: -1}, {MaxLen: 9}} {
		if _, err := m.NewEngine(model.Baseline, bad); err == nil {
			t.Errorf("NewEngine(%+v) succeeded", bad)
		}
	}
	if _, err := m.NewEngine(model.Mode(0x80), model.EngineOptions{}); err == nil {
		t.Error("NewEngine of an unknown mode succeeded")
	}
	for _, mode := range []model.Mode{model.Baseline, model.Optimised} {
		e, err := m.NewEngine(mode, model.EngineOptions{})
		if err != nil {
			t.Fatal(err)
		}
		weights := l.MemoryAllocated()
		reqs := []struct {
			name string
			req  model.Request
			want string
		}{
			{"empty prompt", model.Request{Decode: 2}, "prompt"},
			{"nothing to decode", model.Request{Prompt: []int64{1}}, "generate"},
			{"negative decode", model.Request{Prompt: []int64{1}, Decode: -3}, "-3"},
			{"too long", model.Request{Prompt: []int64{1, 2, 3, 4, 5}, Decode: 5}, "at most 8"},
			{"decode overflowing the length", model.Request{Prompt: []int64{1, 2}, Decode: math.MaxInt}, "at most 8"},
			{"token past the vocabulary", model.Request{Prompt: []int64{1, 16}, Decode: 1}, "vocabulary"},
			{"negative token", model.Request{Prompt: []int64{-1}, Decode: 1}, "vocabulary"},
		}
		for _, r := range reqs {
			noPanic(t, r.name, func() {
				g, err := e.Generate(r.req)
				wantErr(t, mode.String()+" "+r.name, err, r.want)
				if len(g.Tokens) != 0 {
					t.Errorf("%s %s: %d tokens generated before the error", mode, r.name, len(g.Tokens))
				}
			})
			if got := l.MemoryAllocated(); got != weights {
				t.Errorf("%s %s: allocated %d -> %d", mode, r.name, weights, got)
			}
		}
		if err := e.Release(); err != nil {
			t.Fatal(err)
		}
	}
	noPanic(t, "ParseMode", func() {
		for _, s := range []string{"", "+", "views+", "VIEWS", "in-place+nope"} {
			if _, err := model.ParseMode(s); err == nil {
				t.Errorf("ParseMode(%q) succeeded", s)
			}
		}
		if _, err := model.SizeByName(""); err == nil {
			t.Error(`SizeByName("") succeeded`)
		}
	})
}

func TestRobustBadWorkloads(t *testing.T) {
	good := model.Workload{Requests: 2, PromptMin: 1, PromptMax: 4, DecodeMin: 1, DecodeMax: 4, Seed: 1}
	tests := []struct {
		name  string
		edit  func(*model.Workload)
		vocab int
		want  string
	}{
		{"no requests", func(w *model.Workload) { w.Requests = 0 }, 16, "Requests"},
		{"min above max", func(w *model.Workload) { w.PromptMin = 5 }, 16, "prompt"},
		{"zero decode", func(w *model.Workload) { w.DecodeMin, w.DecodeMax = 0, 0 }, 16, "decode"},
		{"zero vocab", func(*model.Workload) {}, 0, "vocab"},
		{"huge request count", func(w *model.Workload) { w.Requests = 1 << 62 }, 16, "too large"},
		{"huge prompts", func(w *model.Workload) { w.PromptMax = math.MaxInt }, 16, "too large"},
		{"decode overflowing MaxLen", func(w *model.Workload) { w.DecodeMax = math.MaxInt }, 16, "too large"},
	}
	for _, tt := range tests {
		w := good
		tt.edit(&w)
		noPanic(t, tt.name, func() {
			_, err := w.Make(tt.vocab)
			wantErr(t, tt.name, err, tt.want)
		})
	}
}
