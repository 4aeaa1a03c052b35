package model_test

import (
	"slices"
	"sync"
	"testing"

	"memlab.dev/memlab/model"
)

// TestConcurrentGenerate serves requests from several goroutines on one
// optimised engine (each takes its own KV arena from the engine's pool), a
// pooled-scores engine (each pass takes its score buffers from one pool) and
// a baseline engine sharing the weights, and checks that every request gets
// the tokens it gets alone. Run with -race.
func TestConcurrentGenerate(t *testing.T) {
	l := newLab(t)
	sz, _ := model.SizeByName("tiny")
	w := sz.Workload
	w.Requests = 6
	reqs, err := w.Make(sz.Config.Vocab)
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.New(l, sz.Config)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Release()
	opt, err := m.NewEngine(model.Optimised, model.EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer opt.Release()
	base, err := m.NewEngine(model.Baseline, model.EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer base.Release()
	pooled, err := m.NewEngine(model.Chapter|model.PooledScores, model.EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer pooled.Release()
	want := make([][]int64, len(reqs))
	for i, r := range reqs {
		g, err := opt.Generate(r)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = g.Tokens
	}
	var wg sync.WaitGroup
	for i, r := range reqs {
		for _, e := range []*model.Engine{opt, base, pooled} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				g, err := e.Generate(r)
				if err != nil {
					t.Error(err)
					return
				}
				if !slices.Equal(g.Tokens, want[i]) {
					t.Errorf("%v, request %d: tokens %v, alone %v", e.Mode(), i, g.Tokens, want[i])
				}
			}()
		}
	}
	wg.Wait()
	if st := opt.PoolStats(); st.Outstanding != 0 || st.Misses < 1 || st.Hits+st.Misses != int64(2*len(reqs)) {
		t.Errorf("arena pool after the run: %+v", st)
	}
	if st := pooled.ScorePoolStats(); st.Outstanding != 0 || st.Misses < 2 || st.Hits == 0 {
		t.Errorf("score pool after the run: %+v", st)
	}
}
