package model

import (
	"math"
	"testing"

	"memlab.dev/memlab/internal/labtest"
	"memlab.dev/memlab/pool"
	"memlab.dev/memlab/tensor"
)

// TestPrefillMatchesIncremental checks the causal mask and the KV caches: a
// prompt run in one pass must give the same last logits as the same prompt
// fed one token at a time, in every mode. Without the mask the first layer's
// earlier positions would see later ones, and the second layer's keys for
// them would differ.
func TestPrefillMatchesIncremental(t *testing.T) {
	l := labtest.Open(t, "1GiB")
	sz, _ := SizeByName("tiny")
	m, err := New(l, sz.Config)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Release()
	prompt := []int64{3, 14, 15, 9, 26, 5, 35}
	cfg := m.Config()
	newKV := func(mode Mode) *kvState {
		kv := &kvState{k: make([]*tensor.Tensor, cfg.Layers), v: make([]*tensor.Tensor, cfg.Layers)}
		if mode&KVCache != 0 {
			c, err := pool.NewKVCache(l, tensor.Float32, cfg.Layers, cfg.Heads, cfg.MaxLen, cfg.HeadDim())
			if err != nil {
				t.Fatal(err)
			}
			kv.cache = c
		}
		if mode&PooledScores != 0 {
			sp, err := pool.NewTensorPool(l, tensor.Float32, []int{cfg.Heads * cfg.MaxLen * cfg.MaxLen}, 0)
			if err != nil {
				t.Fatal(err)
			}
			kv.scores = sp
		}
		return kv
	}
	done := func(kv *kvState) {
		if err := kv.release(); err != nil {
			t.Fatal(err)
		}
		if kv.cache != nil {
			if err := kv.cache.Release(); err != nil {
				t.Fatal(err)
			}
		}
		if kv.scores != nil {
			if err := kv.scores.Release(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, mode := range Modes {
		t.Run(mode.String(), func(t *testing.T) {
			kv := newKV(mode)
			defer done(kv)
			whole, err := m.forward(mode, prompt, 0, kv)
			if err != nil {
				t.Fatal(err)
			}
			kv1 := newKV(mode)
			defer done(kv1)
			var step []float32
			for pos, id := range prompt {
				if step, err = m.forward(mode, []int64{id}, pos, kv1); err != nil {
					t.Fatal(err)
				}
			}
			for i := range whole {
				if d := math.Abs(float64(whole[i] - step[i])); !(d <= 1e-4) { // NaN fails too
					t.Fatalf("logit %d: prefill %g, token by token %g", i, whole[i], step[i])
				}
			}
			// One more token after each: the caches must hold the same.
			a, err := m.forward(mode, []int64{7}, len(prompt), kv)
			if err != nil {
				t.Fatal(err)
			}
			b, err := m.forward(mode, []int64{7}, len(prompt), kv1)
			if err != nil {
				t.Fatal(err)
			}
			for i := range a {
				if d := math.Abs(float64(a[i] - b[i])); !(d <= 1e-4) {
					t.Fatalf("after the prompt, logit %d differs by %g", i, d)
				}
			}
		})
	}
}

// TestCausalMask checks the mask's pattern for a chunk after cached tokens.
func TestCausalMask(t *testing.T) {
	l := labtest.Open(t, "1GiB")
	mask, err := causalMask(l, 2, 3) // positions 3 and 4, after 3 cached tokens
	if err != nil {
		t.Fatal(err)
	}
	defer mask.Release()
	got, err := mask.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	inf := float32(math.Inf(-1))
	want := []float32{0, 0, 0, 0, inf, 0, 0, 0, 0, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("mask %v, want %v", got, want)
		}
	}
}
