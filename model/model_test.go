package model_test

import (
	"math"
	"testing"

	"memlab.dev/memlab/internal/labtest"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/model"
)

func newLab(t testing.TB) *memlab.Lab { return labtest.Open(t, "4GiB") }

// TestModesAgree runs the same requests in both modes and compares every
// step's logits.
func TestModesAgree(t *testing.T) {
	for _, size := range []string{"tiny", "small"} {
		t.Run(size, func(t *testing.T) {
			sz, err := model.SizeByName(size)
			if err != nil {
				t.Fatal(err)
			}
			if size == "small" && testing.Short() {
				t.Skip("short")
			}
			reqs, err := sz.Workload.Make(sz.Config.Vocab)
			if err != nil {
				t.Fatal(err)
			}
			// Every mode at the tiny size; at the small size (longer prompts,
			// every code path at realistic shapes) the two ends only.
			modes := model.Modes
			if size == "small" {
				modes = []model.Mode{model.Baseline, model.Optimised}
			}
			gens := map[model.Mode][]model.Generation{}
			for _, mode := range modes {
				l := newLab(t)
				m, err := model.New(l, sz.Config)
				if err != nil {
					t.Fatal(err)
				}
				e, err := m.NewEngine(mode, model.EngineOptions{MaxLen: sz.Workload.MaxLen(), KeepLogits: true})
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range reqs {
					g, err := e.Generate(r)
					if err != nil {
						t.Fatalf("%v: %v", mode, err)
					}
					gens[mode] = append(gens[mode], g)
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
			}
			worst := 0.0
			for _, mode := range modes[1:] {
				for i := range reqs {
					b, o := gens[model.Baseline][i], gens[mode][i]
					if len(b.Logits) != len(o.Logits) || len(b.Logits) != reqs[i].Decode {
						t.Fatalf("%v, request %d: %d and %d steps, want %d", mode, i, len(b.Logits), len(o.Logits), reqs[i].Decode)
					}
					for s := range b.Logits {
						for j := range b.Logits[s] {
							worst = math.Max(worst, math.Abs(float64(b.Logits[s][j]-o.Logits[s][j])))
						}
					}
				}
			}
			// The comparison means something only if the logits do: finite and
			// different from one another.
			lg := gens[model.Baseline][0].Logits[0]
			lo, hi := lg[0], lg[0]
			for _, v := range lg {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatalf("logit %v", v)
				}
				lo, hi = min(lo, v), max(hi, v)
			}
			if hi-lo < 1e-3 {
				t.Fatalf("logits all within %g of each other", hi-lo)
			}
			t.Logf("largest logit difference %.3g", worst)
			if !(worst <= 1e-4) { // NaN fails too
				t.Errorf("logits differ by up to %g between modes, want ≤ 1e-4", worst)
			}
		})
	}
}
