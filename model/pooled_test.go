package model_test

import (
	"testing"

	"memlab.dev/memlab/model"
)

// TestPooledScoresExact runs the small workload with and without pooled
// attention scores, alone and on top of the chapter's techniques: every
// step's logits must be the same bits (the same kernels run on the same
// values, only into other memory), the two buffers of the pool must serve
// every layer of every pass, and the pass must make fewer allocator calls.
func TestPooledScoresExact(t *testing.T) {
	sz, err := model.SizeByName("small")
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := sz.Workload.Make(sz.Config.Vocab)
	if err != nil {
		t.Fatal(err)
	}
	reqs = reqs[:3]
	type run struct {
		gens  []model.Generation
		calls int64
		stats struct{ hits, misses int64 }
	}
	do := func(mode model.Mode) run {
		l := newLab(t)
		m, err := model.New(l, sz.Config)
		if err != nil {
			t.Fatal(err)
		}
		e, err := m.NewEngine(mode, model.EngineOptions{MaxLen: sz.Workload.MaxLen(), KeepLogits: true})
		if err != nil {
			t.Fatal(err)
		}
		var r run
		c0 := l.MemoryStats()["allocation.all.allocated"]
		for _, req := range reqs {
			g, err := e.Generate(req)
			if err != nil {
				t.Fatalf("%v: %v", mode, err)
			}
			r.gens = append(r.gens, g)
		}
		r.calls = l.MemoryStats()["allocation.all.allocated"] - c0
		st := e.ScorePoolStats()
		r.stats.hits, r.stats.misses = st.Hits, st.Misses
		if st.Outstanding != 0 {
			t.Errorf("%v: %d score buffers not put back", mode, st.Outstanding)
		}
		if err := e.Release(); err != nil {
			t.Fatal(err)
		}
		if err := m.Release(); err != nil {
			t.Fatal(err)
		}
		if got := l.MemoryAllocated(); got != 0 {
			t.Errorf("%v: %d bytes still allocated after releasing everything", mode, got)
		}
		return r
	}
	passes := int64(0)
	for _, req := range reqs {
		passes += int64(req.Decode)
	}
	for _, ref := range []model.Mode{model.Baseline, model.Chapter} {
		mode := ref | model.PooledScores
		t.Run(mode.String(), func(t *testing.T) {
			a, b := do(ref), do(mode)
			for i := range a.gens {
				for s := range a.gens[i].Logits {
					for j, v := range a.gens[i].Logits[s] {
						if w := b.gens[i].Logits[s][j]; w != v {
							t.Fatalf("request %d step %d logit %d: %v %g, %v %g", i, s, j, ref, v, mode, w)
						}
					}
				}
			}
			gets := 2 * int64(sz.Config.Layers) * passes
			if b.stats.misses != 2 || b.stats.hits != gets-2 {
				t.Errorf("score pool: %d hits and %d misses, want %d and 2 (two buffers serving %d layers × %d passes)", b.stats.hits, b.stats.misses, gets-2, sz.Config.Layers, passes)
			}
			if a.stats.hits != 0 || a.stats.misses != 0 {
				t.Errorf("%v used a score pool: %+v", ref, a.stats)
			}
			if b.calls >= a.calls {
				t.Errorf("allocator calls: %v %d, %v %d; want fewer with pooled scores", ref, a.calls, mode, b.calls)
			}
			t.Logf("allocator calls: %v %d, %v %d", ref, a.calls, mode, b.calls)
		})
	}
}
