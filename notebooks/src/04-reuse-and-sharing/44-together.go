package nb04

import (
	"fmt"
	"math"
	"slices"

	"memlab.dev/memlab/experiments/ch4"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/model"
	"memlab.dev/memlab/tensor"
)

/*md
## 4.4 All together: a small transformer (综合应用)

Package [`model`](../model/model.go) is a decoder-only transformer (token and position
embeddings, blocks of layernorm → causal attention with a KV cache → residual → layernorm
→ GELU MLP → residual, a final layernorm, logits tied to the embedding). Its **baseline**
is a straightforward port: every op out of place, `.contiguous()` around the head split,
the KV cache grown with `torch.cat`, logits for every prompt position. Each technique is a
`model.Mode` bit: `InPlace` (scale, mask, GELU, residual adds), `Views` (no head-split
copies), `KVCache` (a cache preallocated for the longest request, its arena from a
`TensorPool` shared by the requests), `PooledScores` (attention scores and softmax in
pooled buffers, below). **`model.Chapter` is exactly the chapter's three together**, its
pool the KV-cache arenas; `chapter+pooled-scores` adds the score buffers. `LastLogits`
(the output projection for the sampled position only) is memlab's own extra, not the
chapter's; `Optimised` is `Chapter` and `LastLogits`. Every mode gives the same logits.
First one request, mode by mode:
*/

//nb:cell
func oneRequestByMode() {
	size := memlab.Must(model.SizeByName("small"))
	req := memlab.Must(size.Workload.Make(size.Config.Vocab))[0]
	tab := memlab.NewTable("mode", "weights", "peak above the weights", "allocator calls", "tokens")
	tab.Caption = fmt.Sprintf("one request: %d prompt tokens, %d generated", len(req.Prompt), req.Decode)
	for _, mode := range []model.Mode{model.Baseline, model.InPlace, model.Views, model.KVCache, model.Chapter, model.Optimised} {
		l := memlab.MustOpen()
		m := memlab.Must(model.New(l, size.Config))
		e := memlab.Must(m.NewEngine(mode, model.EngineOptions{MaxLen: size.Workload.MaxLen()}))
		weights, calls := l.MemoryAllocated(), allocCalls(l)
		l.ResetPeakMemoryStats()
		g := memlab.Must(e.Generate(req))
		tab.Row(mode, memlab.FormatBytes(weights), memlab.FormatBytes(l.MaxMemoryAllocated()-weights), allocCalls(l)-calls, fmt.Sprint(g.Tokens[:6], "…"))
		memlab.Check(e.Release())
		memlab.Check(m.Release())
		memlab.Check(l.Close())
	}
	tab.Show()
}

/*md
**Try it:** take request `[3]` (a short prompt) instead of `[0]`: now the baseline's peak
is below the optimised one's — the preallocated cache is sized for the longest request
whatever the request, and a short prompt's full logits are small.

### The whole workload

8 requests with prompts of 16–64 tokens and 8–32 generated tokens, each mode on a device
of its own, the modes taking turns request by request. The run is
[`ch4.Inference`](../experiments/ch4/inference.go): the cell above, for every request,
with CUDA-event timing on a GPU. The notes under the table are printed from it.
*/

//nb:cell plot
func inferenceSmall() {
	r := memlab.Must(ch4.Inference(ch4.Setup{}, "small"))
	r.Table().Show()
	fmt.Print(r.Findings())
	memlab.Show(r.Plot())
	memlab.Show(r.PlotCurves())
}

/*md
The curves give each mode's peak during every forward pass, pass by pass (the same passes
in every mode): the spikes are prompts, the flat stretches decoding. The baseline's peak
is a prompt's forward pass, where it computes logits for every prompt position — which
is why `last-logits`, memlab's extra, moves the peak and in-place alone does not: in-place
does not touch the tensors alive at that moment. `views` keeps the fused QKV projection
alive through the K/V views kept as the cache (a view keeps its base's storage, exercise
11), and `kv-cache` is sized for the longest request: the chapter's three together
therefore do not lower this peak. The chapter's 20–30 % can hold only where the peak is
made of what those techniques remove; this model's is not.

**Try it:** `ch4.Inference(ch4.Setup{}, "small", model.Optimised&^model.InPlace, model.Optimised)`
— the first mode is the reference: in-place, which saved nothing alone, lowers the peak
once last-logits has moved it.

### Pooled attention-score buffers

The chapter names attention scores as a buffer to pool: every decoding step computes
`scores = q @ k.T` of a new length. In PyTorch a pooled buffer is written with the `out=`
form, `torch.matmul(q, k_t, out=buf[..., :n])`; memlab's is
`tensor.MatmulInto(out, q, kt)` (and `tensor.SoftmaxInto` for the probabilities), with
PyTorch's dtype and overlap checks. One layer's heads over 96 steps, first allocating the
scores, then writing them into a view of one buffer sized for the longest sequence
(`[heads, 1, maxLen]`, of which step `n` uses the first `n` columns):
*/

//nb:cell
func attentionScores() {
	l := memlab.MustOpen()
	defer l.Close()
	const heads, headDim, maxLen = 4, 32, 96
	q := memlab.Must(tensor.Randn(l, 1, tensor.Float32, heads, 1, headDim))
	K := memlab.Must(tensor.Randn(l, 2, tensor.Float32, heads, maxLen, headDim)) // a preallocated cache
	buf := memlab.Must(tensor.Empty(l, tensor.Float32, heads, 1, maxLen))        // the pooled buffer
	for _, way := range []string{"allocated by Matmul", "written by MatmulInto into the buffer"} {
		calls, mallocs, addrs := allocCalls(l), l.MemoryStats()["num_device_alloc"], map[tensor.Ptr]bool{}
		for n := 1; n <= maxLen; n++ {
			k := memlab.Must(K.Narrow(1, 0, n))        // the first n positions, a view
			kt := memlab.Must(k.Transpose(1, 2))       // k.T, a view
			scores := memlab.Must(buf.Narrow(2, 0, n)) // buf[..., :n], a view of the buffer
			if way == "allocated by Matmul" {
				memlab.Check(scores.Release())
				scores = memlab.Must(q.Matmul(kt)) // [heads, 1, n]: allocated
			} else {
				memlab.Check(tensor.MatmulInto(scores, q, kt))
			}
			addrs[scores.DataPtr()] = true
			memlab.Check(tensor.ReleaseAll(scores, kt, k))
		}
		memlab.Measured("scores %s: %d steps, %d allocator calls, %d cudaMalloc, %d distinct addresses",
			way, maxLen, allocCalls(l)-calls, l.MemoryStats()["num_device_alloc"]-mallocs, len(addrs))
	}
	memlab.Check(tensor.ReleaseAll(buf, K, q))
}

/*md
Without the buffer the caching allocator is already a pool for the scores — one allocator call a step, served from cached blocks at a handful of
addresses, no `cudaMalloc`; the `out=` form saves that call too. In the model,
`model.PooledScores` takes two such buffers (scores and softmax) from a `TensorPool` for
every layer of every pass and puts them back; the scale and the mask are applied in the
scores' buffer. Measured on one request, beside the modes it joins:
*/

//nb:cell
func pooledScoresByMode() {
	size := memlab.Must(model.SizeByName("small"))
	req := memlab.Must(size.Workload.Make(size.Config.Vocab))[0]
	tab := memlab.NewTable("mode", "peak above the weights", "allocator calls", "score-pool hits / misses")
	logits, peak := map[model.Mode][]float32{}, map[model.Mode]int64{}
	for _, mode := range []model.Mode{model.Baseline, model.PooledScores, model.Chapter, model.Chapter | model.PooledScores} {
		l := memlab.MustOpen()
		m := memlab.Must(model.New(l, size.Config))
		e := memlab.Must(m.NewEngine(mode, model.EngineOptions{MaxLen: size.Workload.MaxLen()}))
		weights, calls := l.MemoryAllocated(), allocCalls(l)
		l.ResetPeakMemoryStats()
		logits[mode] = memlab.Must(e.Generate(req)).LastLogits
		st := e.ScorePoolStats()
		peak[mode] = l.MaxMemoryAllocated() - weights
		tab.Row(mode, memlab.FormatBytes(peak[mode]), allocCalls(l)-calls, fmt.Sprintf("%d / %d", st.Hits, st.Misses))
		memlab.Check(e.Release())
		memlab.Check(m.Release())
		memlab.Check(l.Close())
	}
	tab.Show()
	memlab.Measured("pooled scores' last logits equal the unpooled ones exactly: %v, %v; the pooled chapter's peak is %s higher, its two buffers are %s",
		slices.Equal(logits[model.Baseline], logits[model.PooledScores]), slices.Equal(logits[model.Chapter], logits[model.Chapter|model.PooledScores]),
		memlab.FormatBytes(peak[model.Chapter|model.PooledScores]-peak[model.Chapter]), memlab.FormatBytes(int64(2*4*size.Config.Heads*size.Workload.MaxLen()*size.Workload.MaxLen())))
}

/*md
Two buffers serve every layer of every pass (two misses, the rest hits), and the
allocator calls fall. The peak rises, by the two buffers: they are sized for the longest
request and stay in the pool, so they sit under the peak of the logits, which the scores
never made. Pooling pays where the scores make the peak, and there only when the longest
request is near the typical one. **So `chapter` stays the three techniques with the KV-cache arenas as its pool**
(also what "chapter" means in the H200 recordings, made before this mode), and
`chapter+pooled-scores` is reported beside it, in the tables of `memlab ch4` and below.

**Try it:** in the first cell, give `q` 256 positions, as in a prompt's pass
(`tensor.Randn(l, 1, tensor.Float32, heads, 256, headDim)`), `maxLen` 512 and the buffer
`[heads, 256, maxLen]`: the
allocated scores grow to 2 MiB, past the small pool's 1 MiB limit — expect one
`cudaMalloc` for the allocating loop and still one allocator call a step, and none
for the pooled one. In the second, add `model.LastLogits` to the pooled chapter mode:
once the logits no longer make the peak, see whether the buffers do.

### In-place LayerNorm

The chapter asks for layer normalisation in place. **PyTorch has no in-place layer norm**
(there is `F.layer_norm`, no `layer_norm_`), and memlab's `LayerNorm` allocates its result
too. Emulating it — computing `ln(h)` and copying it over `h` — allocates the result all
the same, and in this pre-LN transformer `h` is the residual stream, which the residual
add reads after the sublayer:
*/

// maxDiff is the largest elementwise difference between a and b.
//
//nb:decl
func maxDiff(a, b *tensor.Tensor) float64 {
	x, y := memlab.Must(a.Float32s()), memlab.Must(b.Float32s())
	d := 0.0
	for i := range x {
		d = math.Max(d, math.Abs(float64(x[i]-y[i])))
	}
	return d
}

//nb:cell
func inPlaceLayerNorm() {
	l := memlab.MustOpen()
	defer l.Close()
	g, b := memlab.Must(tensor.Full(l, tensor.Float32, 1, 128)), memlab.Must(tensor.Full(l, tensor.Float32, 0, 128))
	w := memlab.Must(tensor.Randn(l, 2, tensor.Float32, 128, 128)) // a sublayer
	memlab.Check(w.Scale_(0.02))
	h := memlab.Must(tensor.Randn(l, 1, tensor.Float32, 64, 128)) // the residual stream, 64 tokens
	h2 := memlab.Must(h.Clone())                                  // the same stream, for the second version

	base := l.MemoryAllocated()
	a := memlab.Must(h.LayerNorm(g, b, 1e-5)) // h += ln(h) @ w, as the model does
	d := memlab.Must(a.Matmul(w))
	memlab.Check(a.Release())
	memlab.Check(h.Add_(d))
	outPeak := l.MaxMemoryAllocated() - base
	memlab.Check(d.Release())

	l.ResetPeakMemoryStats()
	a = memlab.Must(h2.LayerNorm(g, b, 1e-5)) // "in place": ln(h), copied over h
	memlab.Check(h2.CopyFrom(a))
	memlab.Check(a.Release())
	d = memlab.Must(h2.Matmul(w))
	memlab.Check(h2.Add_(d)) // the residual add now reads ln(h), not h
	inPeak := l.MaxMemoryAllocated() - base
	memlab.Measured("out of place: %s above the inputs at the peak; \"in place\": %s, and the output differs by up to %.3g",
		memlab.FormatBytes(outPeak), memlab.FormatBytes(inPeak), maxDiff(h, h2))
	memlab.Check(tensor.ReleaseAll(d, h2, h, w, b, g))
}

/*md
The emulation does lower the peak — the normalised copy no longer overlaps the sublayer's
output — and the answer is wrong: the 4.1 hazard, a tensor two branches read. So memlab
does what PyTorch does: layer norm out of place, into a new tensor that dies as soon as the
sublayer has read it. (A fused kernel could normalise in place where its input is dead
afterwards — in a post-LN block, or before this model's final projection — but not inside
these pre-LN blocks.)

**Try it:** keep the stream's old values for the residual: `keep := memlab.Must(h2.Clone())`
before the `CopyFrom`, then, after `d` is computed, `memlab.Check(h2.CopyFrom(keep))` before
`h2.Add_(d)` (and release `keep`): the output is right again, and the clone costs what the
"in-place" version saved.

### On the GPU

The same comparison recorded on an H200 (`memlab ch4 -device cuda -size small|large
-record …`, files in [`experiments/ch4/recorded`](../experiments/ch4/recorded/README.md)).
Tables and notes are printed from the files, which name their command, date and card.
*/

//nb:cell plot
func recordedH200() {
	runs := memlab.Must(ch4.LoadRecorded())
	for _, size := range []string{"small", "large"} {
		run, ok := runs.Size(size)
		if !ok {
			fmt.Println("no recorded run of the", size, "size")
			continue
		}
		fmt.Println(run.Header())
		if note := run.Note(); note != "" { // modes added since the run was recorded
			fmt.Println(note)
		}
		run.Result.Table().Show()
		fmt.Println(run.Result.Findings())
	}
	if large, ok := runs.Size("large"); ok {
		memlab.Show(large.Result.PlotLatency())
		memlab.Show(large.Result.PlotCurves())
	}
}

/*md
**Try it:** on a machine with an NVIDIA GPU, `go build -o memlab ./cmd/memlab` and run
`./memlab ch4 -device cuda -size small -record mine.json`, then
`ch4.ParseRecording(data)` on the file in a cell: the bytes and counts are the recorded
ones on any card; the times are your card's.

On the GPU the bytes and counts equal the simulated device's to the byte — allocation
decisions do not depend on the device — and the latencies are CUDA-event times. At the
large size the same effects as above decide the peak, and what the techniques save is
allocator calls, `cudaMalloc`s and reserved memory; read the notes above for how much.
None of the course's three figures is a constant: whether in-place, views and a KV-cache
pool lower the peak depends on which tensors are alive at the peak, and a fixed-size cache
trades peak memory for fewer allocations.

## Exercises

In `exercises/` (run one with `cd exercises && go test ./12-tensor-pool`; each folder has
a README and hints):

- 4.1: `14-version-counter` — the version counters behind the saved-tensor error above:
  who shares a counter (views, `.data`, `clone`), and saving and unpacking;
- 4.3: `12-tensor-pool` — write the fixed-shape pool of this chapter;
- 4.3: `13-kv-block-table` — the paged KV cache's block table, with copy-on-write sharing
  between sequences;
- and from chapter 2, `11-views-keep-alive` — a view keeps its base's storage alive, which
  is what raised the `views` peak in 4.4.
*/
