package model_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/model"
	"memlab.dev/memlab/pool"
	"memlab.dev/memlab/tensor"
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

// TestPooledAttentionBatched runs PooledAttention on queries with a batch
// dimension, [B, H, n, hd], as a notebook's forward pass gives them: the
// result is the unpooled softmax(q Kᵀ/√hd) V bit for bit, the two buffers go
// back to the pool, and scores too large for a buffer or keys of another
// rank are a clear error.
func TestPooledAttentionBatched(t *testing.T) {
	l := newLab(t)
	const B, H, n, L, hd = 2, 3, 4, 5, 8
	rand := func(seed uint64, shape ...int) *tensor.Tensor {
		x, err := tensor.Randn(l, seed, tensor.Float32, shape...)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	q, K, V := rand(1, B, H, n, hd), rand(2, B, H, L, hd), rand(3, B, H, L, hd)
	Kt, err := K.Transpose(-2, -1)
	if err != nil {
		t.Fatal(err)
	}
	scores, err := pool.NewTensorPool(l, tensor.Float32, []int{B * H * n * L}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer scores.Release()
	got, err := model.PooledAttention(q, Kt, V, nil, scores)
	if err != nil {
		t.Fatal(err)
	}
	s, err := q.Matmul(Kt)
	if err == nil {
		err = s.Scale_(1 / math.Sqrt(hd))
	}
	var p, want *tensor.Tensor
	if err == nil {
		p, err = s.Softmax(-1)
	}
	if err == nil {
		want, err = p.Matmul(V)
	}
	if err != nil {
		t.Fatal(err)
	}
	g, w := must(t)(got.Float32s()), must(t)(want.Float32s())
	if !slices.Equal(got.Shape(), []int{B, H, n, hd}) || !slices.Equal(g, w) {
		t.Errorf("PooledAttention: shape %v, equal to the unpooled result: %v; want [%d %d %d %d], true", got.Shape(), slices.Equal(g, w), B, H, n, hd)
	}
	if st := scores.Stats(); st.Outstanding != 0 || st.Misses != 2 {
		t.Errorf("score pool after one call: %+v, want two buffers made and put back", st)
	}
	big := rand(4, B, H, n+1, hd)
	if _, err := model.PooledAttention(big, Kt, V, nil, scores); err == nil || !strings.Contains(err.Error(), "do not fit a pooled buffer") {
		t.Errorf("scores larger than a buffer: %v", err)
	}
	if _, err := model.PooledAttention(q, K, V, nil, nil); err == nil || !strings.Contains(err.Error(), "without a pool") {
		t.Errorf("no pool: %v", err)
	}
	q0, err := q.Select(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := model.PooledAttention(q0, Kt, V, nil, scores); err == nil || !strings.Contains(err.Error(), "want [.., n, hd] and [.., hd, L]") {
		t.Errorf("queries and keys of different ranks: %v", err)
	}
	if st := scores.Stats(); st.Outstanding != 0 {
		t.Errorf("score pool after the errors: %+v, want every buffer put back", st)
	}
	if err := tensor.ReleaseAll(q0, q, K, V, Kt, s, p, want, got, big); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T) func([]float32, error) []float32 {
	return func(x []float32, err error) []float32 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
}
