// Package ch4plot draws notebook 04's figures of package ch4's experiments:
// the KV cache's strategies (4.3) and the inference workload (4.4). It is a
// package of its own so that ch4, which the notebook's cells and declarations
// use throughout, links no plotting library: only the cells that draw import
// this one (GoNB drops the imports a cell does not use).
package ch4plot

import (
	"fmt"
	"time"

	"memlab.dev/memlab/experiments/ch4"
	"memlab.dev/memlab/lang"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/model"
)

// Inference draws each mode's peak memory above the weights.
func Inference(r ch4.InferenceResult) (*memplot.Figure, error) {
	return bars(r, lang.Text("peak memory above the weights"), "MiB", func(row ch4.InferenceRow) float64 { return float64(row.Working) / ch4.MiB })
}

// Latency draws each mode's median time per generated token.
func Latency(r ch4.InferenceResult) (*memplot.Figure, error) {
	return bars(r, lang.Text("median time per generated token"), lang.Text("µs per token"), func(row ch4.InferenceRow) float64 {
		return float64(row.Token) / float64(time.Microsecond)
	})
}

// bars draws one bar per mode of r.
func bars(r ch4.InferenceResult, what, unit string, value func(ch4.InferenceRow) float64) (*memplot.Figure, error) {
	groups := make([]string, len(r.Rows))
	vals := memplot.BarSeries{Name: what}
	for i, row := range r.Rows {
		groups[i] = row.Mode.String()
		vals.Values = append(vals.Values, value(row))
	}
	return memplot.Bars(fmt.Sprintf(lang.Text("4.4 %s model: %s"), ch4.SizeName(r.Size.Name), what), unit, groups, vals)
}

// InferenceCurves draws the peak memory above the weights during each forward
// pass of the workload for the first mode, the chapter's three techniques
// and everything together (those that ran): every mode makes the same
// passes, so the curves align pass by pass.
func InferenceCurves(r ch4.InferenceResult) (*memplot.Figure, error) {
	rows := []ch4.InferenceRow{r.Rows[0]}
	for _, m := range []model.Mode{model.Chapter, model.Optimised} {
		if row, ok := r.Row(m); ok && m != rows[0].Mode {
			rows = append(rows, row)
		}
	}
	var series []memplot.Series
	for _, row := range rows {
		s := memplot.Series{Name: row.Mode.String(), Y: make([]int64, len(row.StepPeak)), X: make([]float64, len(row.StepPeak))}
		for i, v := range row.StepPeak {
			s.X[i], s.Y[i] = float64(i), v-row.Weights
		}
		series = append(series, s)
	}
	return memplot.Lines(fmt.Sprintf(lang.Text("4.4 %s model: peak above the weights in each forward pass"), ch4.SizeName(r.Size.Name)),
		lang.Text("forward pass, request after request (a prompt, then one per generated token)"), series...)
}

// KV draws the bytes each strategy of r holds for keys and values after each
// step, against the bytes of live keys and values.
func KV(r ch4.KVResult) (*memplot.Figure, error) {
	series := []memplot.Series{{Name: lang.Text("live K/V (useful)"), Y: r.Useful}}
	for _, row := range r.Rows {
		series = append(series, memplot.Series{Name: lang.Text(row.Strategy), Y: row.Held})
	}
	for i := range series {
		series[i].X = make([]float64, len(series[i].Y))
		for j := range series[i].X {
			series[i].X[j] = float64(j)
		}
	}
	return memplot.Lines(lang.Text("4.3 KV cache: bytes held for keys and values"), lang.Text("decoding step"), series...)
}

// KVSegments draws the segment map of the strategy of r whose name starts with
// prefix after the step at which its allocated memory peaked: allocated
// blocks, and the free ones the caching allocator keeps.
func KVSegments(r ch4.KVResult, prefix string) (*memplot.Figure, error) {
	row, ok := r.Row(prefix)
	if !ok {
		return nil, fmt.Errorf("ch4plot: KVSegments: no strategy %q", prefix)
	}
	return memplot.SegmentMap(fmt.Sprintf(lang.Text("4.3 %s: segments at the peak step (%s reserved)"), lang.Label(row.Strategy), fmt.Sprintf("%.2f MiB", float64(row.SegmentsReserved)/ch4.MiB)), row.Segments)
}
