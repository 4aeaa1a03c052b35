package model_test

import (
	"testing"

	"memlab.dev/memlab/model"
)

// BenchmarkGenerate serves the small size's first request (a prompt and its
// generated tokens) per iteration, in the baseline and optimised modes, on
// the simulated device's CPU kernels.
func BenchmarkGenerate(b *testing.B) {
	sz, err := model.SizeByName("small")
	if err != nil {
		b.Fatal(err)
	}
	reqs, err := sz.Workload.Make(sz.Config.Vocab)
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []model.Mode{model.Baseline, model.Optimised} {
		b.Run(mode.String(), func(b *testing.B) {
			l := newLab(b)
			m, err := model.New(l, sz.Config)
			if err != nil {
				b.Fatal(err)
			}
			defer m.Release()
			e, err := m.NewEngine(mode, model.EngineOptions{MaxLen: sz.Workload.MaxLen()})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Release()
			for b.Loop() {
				if _, err := e.Generate(reqs[0]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(reqs[0].Decode), "tokens/op")
		})
	}
}
