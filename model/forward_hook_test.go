package model_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/model"
	"memlab.dev/memlab/pool"
	"memlab.dev/memlab/tensor"
)

// fakePass answers every step with logits whose largest entry is token 7,
// and records what the engine gave it.
type fakePass struct {
	steps    []int
	released bool
}

func (p *fakePass) Step(ids []int64, pos int) ([]float32, error) {
	p.steps = append(p.steps, pos)
	x := make([]float32, 16)
	x[7] = 1
	return x, nil
}

func (p *fakePass) Release() error { p.released = true; return nil }

// TestEngineForward checks that an engine runs the Forward it is given: its
// Pass makes every token, gets the KV arena with KVCache (none without) and
// the pool of score buffers with PooledScores (none without), is
// released at the end; a nil Pass leaves the model's own forward pass, and a
// Forward's error is Generate's.
func TestEngineForward(t *testing.T) {
	sz, err := model.SizeByName("tiny")
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := sz.Workload.Make(sz.Config.Vocab)
	if err != nil {
		t.Fatal(err)
	}
	req := reqs[0]
	l := newLab(t)
	m, err := model.New(l, sz.Config)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Release()
	maxLen := sz.Workload.MaxLen()
	generate := func(mode model.Mode, f model.Forward) (model.Generation, error) {
		e, err := m.NewEngine(mode, model.EngineOptions{MaxLen: maxLen, Forward: f})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Release()
		return e.Generate(req)
	}
	for _, mode := range []model.Mode{model.Baseline, model.KVCache, model.PooledScores} {
		p := &fakePass{}
		var arena *tensor.Tensor
		var scores *pool.TensorPool
		g, err := generate(mode, func(w model.Weights, o model.PassOptions) (model.Pass, error) {
			if o.Mode != mode || w.Config != sz.Config {
				t.Errorf("Forward got mode %v and config %+v, want %v and %+v", o.Mode, w.Config, mode, sz.Config)
			}
			arena, scores = o.Arena, o.Scores
			return p, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if want := slices.Repeat([]int64{7}, req.Decode); !slices.Equal(g.Tokens, want) {
			t.Errorf("%v: tokens %v, want the pass's %v", mode, g.Tokens, want)
		}
		if len(p.steps) != req.Decode || p.steps[0] != 0 || p.steps[1] != len(req.Prompt) || !p.released {
			t.Errorf("%v: pass stepped at %v, released %v; want %d steps from 0, then %d…, released", mode, p.steps, p.released, req.Decode, len(req.Prompt))
		}
		wantShape := pool.KVCacheArenaShape(sz.Config.Layers, sz.Config.Heads, maxLen, sz.Config.HeadDim())
		if mode == model.KVCache && (arena == nil || !slices.Equal(arena.Shape(), wantShape)) {
			t.Errorf("KVCache: arena %v, want one of shape %v", arena, wantShape)
		}
		if mode != model.KVCache && arena != nil {
			t.Errorf("%v: arena %v, want none", mode, arena.Shape())
		}
		if (mode == model.PooledScores) != (scores != nil) {
			t.Errorf("%v: score pool %v, want one with PooledScores only", mode, scores)
		}
	}
	own, err := generate(model.Chapter, nil)
	if err != nil {
		t.Fatal(err)
	}
	fallback, err := generate(model.Chapter, func(model.Weights, model.PassOptions) (model.Pass, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(own.Tokens, fallback.Tokens) {
		t.Errorf("a nil Pass: tokens %v, the model's own %v", fallback.Tokens, own.Tokens)
	}
	_, err = generate(model.KVCache, func(model.Weights, model.PassOptions) (model.Pass, error) {
		return nil, errors.New("no such pass")
	})
	if err == nil || !strings.Contains(err.Error(), "model: Generate: no such pass") {
		t.Errorf("a Forward's error: Generate returned %v", err)
	}
}
