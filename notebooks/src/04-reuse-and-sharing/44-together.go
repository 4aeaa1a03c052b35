package nb04

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"memlab.dev/memlab/device/sim"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
	"memlab.dev/memlab/model"
	"memlab.dev/memlab/pool"
	"memlab.dev/memlab/tensor"
)

/*md
## 4.4 All together: a small transformer (综合应用)

The chapter's case is a transformer serving online inference, inputs of variable length,
with its three techniques:

> 教材原文：「视图机制：把(batch, seq_len, hidden)的输入通过view()变成(batch * seq_len, hidden)，避免数据拷贝。 - in-place操作：LayerNorm和激活函数用in-place版本，减少中间张量。 - 显存池化：KV Cache和注意力分数矩阵用池化管理，避免频繁分配。」
>
> *Chapter 4:* "Views: turn the (batch, seq_len, hidden) input into (batch * seq_len,
> hidden) with view(), avoiding a copy. In-place operations: use the in-place versions of
> LayerNorm and the activation functions, to cut intermediate tensors. Memory pooling:
> manage the KV cache and the attention-score matrices with pools, to avoid frequent
> allocation."

Below is the forward pass of the transformer in package [`model`](../../model/model.go) —
token and position embeddings, blocks of layernorm → causal attention with a KV cache →
residual → layernorm → GELU MLP → residual, a final layernorm, logits tied to the
embedding — written out for a batch. Each technique is a field of `Tricks`, and each is
one visible change in the code: **`View`** in `flatten` (the chapter's `(batch, seq,
hidden)` → `(batch·seq, hidden)`, a copy without it) and in `copyOf` (the head split
and merge, which a naive port wraps in `.contiguous()`); **`InPlace`** in `add`, `scale`
and the GELU of `mlp`; **`Pool`** in `cache`, where the keys and values go into an arena
preallocated for the longest sequence and taken from a `TensorPool`, instead of growing
with `torch.cat`. In PyTorch the block reads:

```python
def attention(h, cache, pos, mask):            # h: (batch·seq, hidden)
    q, k, v = (ln1(h) @ w_qkv).split(D, dim=1)
    q = q.view(B, S, H, hd).transpose(1, 2)    # views; a naive port: .contiguous() before and after
    K, V = cache.append(k, v, pos)             # Pool: copy into the arena; else torch.cat([K, k], 2)
    scores = q @ K.transpose(2, 3)
    scores *= hd ** -0.5                       # InPlace; else scores = scores * hd ** -0.5
    scores += mask                             # InPlace; else scores = scores + mask
    o = scores.softmax(-1) @ V
    o = o.transpose(1, 2).reshape(B * S, D)    # a copy in every mode: not viewable
    h += o @ w_o                               # InPlace; else h = h + o @ w_o
    return h

x = (wte[ids] + wpe[pos:pos + S]).view(B * S, D)   # View; else a copy, then the view
```

The model package runs this same code in its modes (`model.Baseline`, `InPlace`,
`Views`, `KVCache`, `Chapter`): a test (`TestForwardMirrorsModel`) runs both at batch 1
and checks that every forward pass peaks at the same byte, with the same allocator calls
(one a pass more here without `View`: the model has no batch dimension to flatten). The
cells are declarations; the experiments follow them.
*/

/*md:zh-CN
## 4.4 三者协同：一个小型 Transformer (all together)

教材的案例是一个做在线推理的 Transformer，输入长度可变，三招是：

> 教材原文：「视图机制：把(batch, seq_len, hidden)的输入通过view()变成(batch * seq_len, hidden)，避免数据拷贝。 - in-place操作：LayerNorm和激活函数用in-place版本，减少中间张量。 - 显存池化：KV Cache和注意力分数矩阵用池化管理，避免频繁分配。」

下面是 [`model`](../../model/model.go) 包里那个 Transformer 的前向传播（词嵌入和位置嵌入；若干个块，每块依次是 layernorm → 带 KV 缓存的因果注意力 → 残差 → layernorm → GELU MLP → 残差；最后一个 layernorm；输出 logits 与嵌入共享权重），按批 (batch) 写了出来。每一招是 `Tricks` 的一个字段，每一招都是代码里看得见的一处改动：**`View`** 在 `flatten` 里（教材说的 `(batch, seq, hidden)` → `(batch·seq, hidden)`，不开就是一次拷贝）和 `copyOf` 里（拆开与合并注意力头，朴素移植会在前后套上 `.contiguous()`）；**`InPlace`** 在 `add`、`scale` 和 `mlp` 的 GELU 里；**`Pool`** 在 `cache` 里：键和值写进一个按最长序列预分配、取自 `TensorPool` 的显存区，而不是用 `torch.cat` 一步步拼长。用 PyTorch 写，这个块是：

```python
def attention(h, cache, pos, mask):            # h: (batch·seq, hidden)
    q, k, v = (ln1(h) @ w_qkv).split(D, dim=1)
    q = q.view(B, S, H, hd).transpose(1, 2)    # 视图；朴素移植：前后各一次 .contiguous()
    K, V = cache.append(k, v, pos)             # Pool：拷进显存区；否则 torch.cat([K, k], 2)
    scores = q @ K.transpose(2, 3)
    scores *= hd ** -0.5                       # InPlace；否则 scores = scores * hd ** -0.5
    scores += mask                             # InPlace；否则 scores = scores + mask
    o = scores.softmax(-1) @ V
    o = o.transpose(1, 2).reshape(B * S, D)    # 每种模式都要拷贝：无法用视图表示
    h += o @ w_o                               # InPlace；否则 h = h + o @ w_o
    return h

x = (wte[ids] + wpe[pos:pos + S]).view(B * S, D)   # View；否则先拷贝，再取视图
```

`model` 包的各个模式（`model.Baseline`、`InPlace`、`Views`、`KVCache`、`Chapter`）跑的就是这同一段代码：一个测试（`TestForwardMirrorsModel`）在 batch 为 1 时把两者并排运行，检查每一次前向传播的峰值分毫不差、分配器调用次数相同（不开 `View` 时这里每次前向传播多一次调用：模型本身没有 batch 维度可展平）。下面这些单元格都是声明；实验在它们后面。
*/

// Tricks are the chapter's three techniques; each is one change to the
// forward pass below.
//
//nb:decl
type Tricks struct {
	View    bool // (batch, seq, hidden) → (batch·seq, hidden) and the head split as views, not copies
	InPlace bool // the scale, the mask, GELU and the residual adds in place
	Pool    bool // the KV cache in a preallocated arena from a TensorPool, not grown by torch.cat
}

// String names the tricks that are on: "baseline", "view", "in-place+pool", …
func (t Tricks) String() string {
	var on []string
	for _, f := range []struct {
		on   bool
		name string
	}{{t.View, "view"}, {t.InPlace, "in-place"}, {t.Pool, "pool"}} {
		if f.on {
			on = append(on, f.name)
		}
	}
	if len(on) == 0 {
		return "baseline"
	}
	return strings.Join(on, "+")
}

// fwd is one batch's generation: the model's weights, the tricks, and the KV
// cache kept between forward passes.
type fwd struct {
	w     model.Weights
	t     Tricks
	K, V  []*tensor.Tensor // per layer [B, H, L, hd], grown by Cat (without Pool)
	arena *tensor.Tensor   // with Pool: [2·layers, B, H, maxLen, hd], from the pool
	scope *tensor.Scope    // if set, the pass's tensors join it (encode's, for an out-of-memory error)
}

// flatten turns x (batch, seq, hidden) into (batch·seq, hidden): technique 1.
func (f *fwd) flatten(x *tensor.Tensor) *tensor.Tensor {
	s := x.Shape()
	if !f.t.View {
		c := memlab.Must(x.Clone()) // the copy the chapter warns of: "显存直接翻倍"
		memlab.Check(x.Release())
		x = c
	}
	y := memlab.Must(x.View(s[0]*s[1], s[2])) // x.view(-1, hidden): metadata only
	memlab.Check(x.Release())
	return y
}

// add is h + x, and scale h·alpha: in place with InPlace (technique 2).
func (f *fwd) add(h, x *tensor.Tensor) *tensor.Tensor {
	if f.t.InPlace {
		memlab.Check(h.Add_(x)) // h += x
		return h
	}
	y := memlab.Must(h.Add(x)) // y = h + x, then del h
	memlab.Check(h.Release())
	return y
}

func (f *fwd) scale(h *tensor.Tensor, alpha float64) *tensor.Tensor {
	if f.t.InPlace {
		memlab.Check(h.Scale_(alpha)) // h *= alpha
		return h
	}
	y := memlab.Must(h.Scale(alpha))
	memlab.Check(h.Release())
	return y
}

// then releases x and returns y, what Python's y = op(x); del x does.
func then(x, y *tensor.Tensor) *tensor.Tensor {
	memlab.Check(x.Release())
	return y
}

// copyOf is x.contiguous() as a naive port writes it; with View, x itself.
func (f *fwd) copyOf(x *tensor.Tensor) *tensor.Tensor {
	if f.t.View {
		return x
	}
	return then(x, memlab.Must(x.Contiguous()))
}

// heads is part i (0 q, 1 k, 2 v) of qkv [B·S, 3D] as [B, H, S, hd]: views,
// or copied before and after the transpose (technique 1).
//
//nb:decl
func (f *fwd) heads(qkv *tensor.Tensor, i, B, S int) *tensor.Tensor {
	c := f.w.Config
	x := f.copyOf(memlab.Must(qkv.Narrow(1, i*c.Dim, c.Dim)))
	x = then(x, memlab.Must(x.View(B, S, c.Heads, c.HeadDim())))
	x = then(x, memlab.Must(x.Transpose(1, 2)))
	return f.copyOf(x)
}

// slot is the arena's keys (kv 0) or values (kv 1) of layer l at positions
// [from, from+n): a view [B, H, n, hd].
func (f *fwd) slot(l, kv, from, n int) *tensor.Tensor {
	a := memlab.Must(f.arena.Select(0, 2*l+kv))
	return then(a, memlab.Must(a.Narrow(2, from, n)))
}

// cache appends k and v [B, H, S, hd] to layer l's cache and returns all the
// keys and values so far: copied into the pooled arena, or grown with
// torch.cat (technique 3).
func (f *fwd) cache(l int, k, v *tensor.Tensor, pos int) (K, V *tensor.Tensor) {
	if f.t.Pool { // cache[:, :, pos:pos+S] = k, then a view of positions [0, pos+S)
		S := k.Shape()[2]
		for i, x := range []*tensor.Tensor{k, v} {
			dst := f.slot(l, i, pos, S)
			memlab.Check(dst.CopyFrom(x))
			memlab.Check(tensor.ReleaseAll(dst, x))
		}
		return f.slot(l, 0, 0, pos+S), f.slot(l, 1, 0, pos+S)
	}
	if f.K[l] == nil {
		f.K[l], f.V[l] = k, v
	} else { // K = torch.cat([K, k], dim=2): a new tensor every step
		f.K[l] = then(f.K[l], memlab.Must(tensor.Cat([]*tensor.Tensor{f.K[l], k}, 2)))
		memlab.Check(k.Release())
		f.V[l] = then(f.V[l], memlab.Must(tensor.Cat([]*tensor.Tensor{f.V[l], v}, 2)))
		memlab.Check(v.Release())
	}
	return f.K[l], f.V[l]
}

// attention is h + Wo·attn(layernorm(h)) for h [B·S, D].
func (f *fwd) attention(l int, h, mask *tensor.Tensor, B, S, pos int) *tensor.Tensor {
	w, c := f.w.Blocks[l], f.w.Config
	a := memlab.Must(h.LayerNorm(w.LN1G, w.LN1B, model.Eps))
	qkv := then(a, memlab.Must(a.Matmul(w.Wqkv))) // [B·S, 3D]
	q, k, v := f.heads(qkv, 0, B, S), f.heads(qkv, 1, B, S), f.heads(qkv, 2, B, S)
	memlab.Check(qkv.Release())
	K, V := f.cache(l, k, v, pos)
	Kt := memlab.Must(K.Transpose(2, 3))
	scores := memlab.Must(q.Matmul(Kt)) // [B, H, S, L]
	memlab.Check(tensor.ReleaseAll(q, Kt))
	scores = f.scale(scores, 1/math.Sqrt(float64(c.HeadDim())))
	if mask != nil {
		scores = f.add(scores, mask)
	}
	probs := then(scores, memlab.Must(scores.Softmax(-1)))
	o := then(probs, memlab.Must(probs.Matmul(V))) // [B, H, S, hd]
	if f.t.Pool {
		memlab.Check(tensor.ReleaseAll(K, V)) // views of the arena
	}
	x := f.copyOf(then(o, memlab.Must(o.Transpose(1, 2)))) // [B, S, H, hd]
	merged := then(x, memlab.Must(x.Reshape(B*S, c.Dim)))  // copies: not viewable
	proj := then(merged, memlab.Must(merged.Matmul(w.Wo)))
	return then(proj, f.add(h, proj))
}

// mlp is h + W2·gelu(W1·layernorm(h)).
func (f *fwd) mlp(l int, h *tensor.Tensor) *tensor.Tensor {
	w := f.w.Blocks[l]
	a := memlab.Must(h.LayerNorm(w.LN2G, w.LN2B, model.Eps))
	u := then(a, memlab.Must(a.Matmul(w.W1))) // [B·S, Hidden]
	if f.t.InPlace {
		memlab.Check(u.Gelu_()) // technique 2
	} else {
		u = then(u, memlab.Must(u.Gelu()))
	}
	d := then(u, memlab.Must(u.Matmul(w.W2)))
	return then(d, f.add(h, d))
}

// embed is the token and position embeddings of ids [B][S] at positions
// pos…, flattened to [B·S, D].
//
//nb:decl
func (f *fwd) embed(dev tensor.Device, ids [][]int64, pos int) *tensor.Tensor {
	B, S := len(ids), len(ids[0])
	idx := memlab.Must(tensor.FromInt64(dev, slices.Concat(ids...), B, S))
	if f.scope != nil {
		f.scope.Track(idx, nil) // what is computed from idx joins the scope too
	}
	h := memlab.Must(tensor.Embedding(f.w.Wte, idx)) // [B, S, D]
	pe := memlab.Must(f.w.Wpe.Narrow(0, pos, S))     // a view of the position table
	h = f.add(h, pe)
	memlab.Check(tensor.ReleaseAll(idx, pe))
	return f.flatten(h)
}

// forward runs ids [B][S] at positions pos… and returns each sequence's next
// token (greedy). The weights are on dev.
func (f *fwd) forward(dev tensor.Device, ids [][]int64, pos int) []int64 {
	B, S, w := len(ids), len(ids[0]), f.w
	h := f.embed(dev, ids, pos) // [B·S, D]
	var mask *tensor.Tensor
	if S > 1 {
		mask = causalMask(dev, S, pos)
	}
	for l := range w.Blocks {
		h = f.mlp(l, f.attention(l, h, mask, B, S, pos))
	}
	memlab.Check(tensor.ReleaseLive(mask))
	return f.logits(h, B, S)
}

// causalMask is the [S, pos+S] additive mask that lets the token at position
// pos+i see keys 0 … pos+i.
func causalMask(dev tensor.Device, S, pos int) *tensor.Tensor {
	L := pos + S
	data := make([]float32, S*L)
	for i := range S {
		for j := pos + i + 1; j < L; j++ {
			data[i*L+j] = float32(math.Inf(-1))
		}
	}
	return memlab.Must(tensor.FromFloat32(dev, data, S, L))
}

// logits applies the final layernorm and the tied output projection to every
// position, as a port returning the whole [B, S, Vocab] does, and picks each
// sequence's next token from its last position.
func (f *fwd) logits(h *tensor.Tensor, B, S int) []int64 {
	hf := then(h, memlab.Must(h.LayerNorm(f.w.LnfG, f.w.LnfB, model.Eps)))
	wt := memlab.Must(f.w.Wte.T())
	lg := memlab.Must(hf.Matmul(wt)) // [B·S, Vocab]
	memlab.Check(tensor.ReleaseAll(hf, wt))
	V := f.w.Config.Vocab
	lv := memlab.Must(lg.View(B, S, V))
	last := then(lv, memlab.Must(lv.Select(1, S-1))) // [B, Vocab]: each sequence's last position
	x := memlab.Must(last.Float32s())
	memlab.Check(tensor.ReleaseAll(last, lg))
	next := make([]int64, B)
	for b := range next {
		for i, v := range x[b*V : (b+1)*V] {
			if v > x[b*V+int(next[b])] {
				next[b] = int64(i)
			}
		}
	}
	return next
}

// generate runs the prompts [B][S] with tricks t and decode-1 more tokens
// after them, the arena from arenas with Pool, and returns the peak in each
// forward pass (max_memory_allocated) and the tokens generated.
func generate(l *memlab.Lab, w model.Weights, t Tricks, arenas *pool.TensorPool, prompts [][]int64, decode int) (peaks []int64, tokens [][]int64) {
	f := &fwd{w: w, t: t, K: make([]*tensor.Tensor, len(w.Blocks)), V: make([]*tensor.Tensor, len(w.Blocks))}
	if t.Pool {
		f.arena = memlab.Must(arenas.Get())
		defer func() { memlab.Check(arenas.Put(f.arena)) }()
	}
	ids, pos := prompts, 0
	for range decode {
		l.ResetPeakMemoryStats()
		next := f.forward(l, ids, pos)
		peaks, tokens = append(peaks, l.MaxMemoryAllocated()), append(tokens, next)
		pos += len(ids[0])
		ids = make([][]int64, len(next))
		for b, tok := range next {
			ids[b] = []int64{tok}
		}
	}
	memlab.Check(tensor.ReleaseLive(append(f.K, f.V...)...))
	return peaks, tokens
}

// batchRun is what runBatch measured: the peak above the weights in each
// forward pass and over all of them, the allocator calls and cudaMallocs.
//
//nb:decl
type batchRun struct {
	Tricks         Tricks
	Passes         []int64
	Peak           int64
	Calls, Mallocs int64
	Tokens         [][]int64
}

// runBatch opens a lab, loads the small model and generates decode tokens
// for batch prompts of seq tokens each with tricks t.
func runBatch(t Tricks, batch, seq, decode int) batchRun {
	l := memlab.MustOpen()
	defer l.Close()
	cfg := memlab.Must(model.SizeByName("small")).Config
	m := memlab.Must(model.New(l, cfg))
	defer m.Release()
	arenas := memlab.Must(pool.NewTensorPool(l, tensor.Float32, []int{2 * cfg.Layers, batch, cfg.Heads, seq + decode, cfg.HeadDim()}, 0))
	defer arenas.Release()
	reqs := memlab.Must(model.Workload{Requests: batch, PromptMin: seq, PromptMax: seq, DecodeMin: 1, DecodeMax: 1, Seed: 1}.Make(cfg.Vocab))
	prompts := make([][]int64, batch)
	for i, r := range reqs {
		prompts[i] = r.Prompt
	}
	weights, stats := l.MemoryAllocated(), l.MemoryStats()
	r := batchRun{Tricks: t}
	peaks, tokens := generate(l, m.Weights(), t, arenas, prompts, decode)
	for _, p := range peaks {
		r.Passes = append(r.Passes, p-weights)
		r.Peak = max(r.Peak, p-weights)
	}
	r.Calls = allocCalls(l) - stats["allocation.all.allocated"]
	r.Mallocs = l.MemoryStats()["num_device_alloc"] - stats["num_device_alloc"]
	r.Tokens = tokens
	return r
}

// curve is r's peaks per pass as a plot series.
func (r batchRun) curve() memplot.Series {
	s := memplot.Series{Name: r.Tricks.String()}
	for i, p := range r.Passes {
		s.X, s.Y = append(s.X, float64(i)), append(s.Y, p)
	}
	return s
}

/*md
### Flip one technique

Each run below generates 16 tokens for a batch of 4 prompts of 48 tokens (the small
model, a fresh lab), and the curve is `max_memory_allocated` above the weights in each
forward pass: the first pass is the prompts, the others one token each. `tricks` is yours
to change.

```python
tricks = dict(view=False, in_place=False, pool=False)     # flip one, run again
for t in (dict(view=False, in_place=False, pool=False), tricks):
    torch.cuda.reset_peak_memory_stats()
    generate(model, prompts, 16, **t)                     # the forward pass above
    print(torch.cuda.max_memory_allocated() - weights)
```
*/

/*md:zh-CN
### 一次打开一招

下面每次运行都为一批 4 个、每个 48 token 的提示词生成 16 个 token（small 模型，每次一个新的 lab），曲线是每一次前向传播中 `max_memory_allocated` 超出权重的部分：第一次前向传播处理提示词，其余每次一个 token。`tricks` 由你来改。

```python
tricks = dict(view=False, in_place=False, pool=False)     # 打开一招，再运行
for t in (dict(view=False, in_place=False, pool=False), tricks):
    torch.cuda.reset_peak_memory_stats()
    generate(model, prompts, 16, **t)                     # 上面的前向传播
    print(torch.cuda.max_memory_allocated() - weights)
```
*/

//nb:cell plot
func flipATechnique() {
	tricks := Tricks{View: false, InPlace: false, Pool: false} // flip one to true, run again
	base, yours := runBatch(Tricks{}, 4, 48, 16), runBatch(tricks, 4, 48, 16)
	memlab.Show(memplot.Lines("4.4 a batch of 4 prompts of 48 tokens: peak in each forward pass",
		"forward pass (the prompts, then one per generated token)", base.curve(), yours.curve()))
	memlab.Measured("peak above the weights: baseline %s, %v %s; allocator calls %d → %d; the same tokens: %v",
		memlab.FormatBytes(base.Peak), tricks, memlab.FormatBytes(yours.Peak), base.Calls, yours.Calls, slices.EqualFunc(base.Tokens, yours.Tokens, slices.Equal))
}

/*md
**Try it:** set `InPlace: true`, then only `View`, then only `Pool`. Before each run,
predict: does the peak fall, stay, or rise? and the allocator calls?

<details><summary>答案 / Answer</summary>

`InPlace`: the peak stays where it was and the allocator calls fall — the in-place ops
no longer allocate, but none of them is alive at the peak. `View`: the peak rises and the
calls fall — the head split no longer copies, but `k` and `v`, views kept in the cache,
keep the whole fused `qkv` alive. `Pool`: the peak rises, the calls fall — the arena holds
every position up to the longest from the first pass on. The table below runs all of
them.
</details>
*/

/*md:zh-CN
**动手试试：** 先设 `InPlace: true`，再只开 `View`，再只开 `Pool`。每次运行之前先预测：峰值会下降、不变还是上升？分配器调用次数呢？

<details><summary>答案 / Answer</summary>

`InPlace`：峰值不变，分配器调用减少——原地操作不再分配，但峰值那一刻活着的张量里没有一个是它们产生的。`View`：峰值上升，调用减少——拆开注意力头不再拷贝，但作为视图留在缓存里的 `k` 和 `v` 让整个融合的 `qkv` 一直活着。`Pool`：峰值上升，调用减少——显存区从第一次前向传播起就装下了直到最长长度的所有位置。下面的表格把它们全都跑一遍。
</details>
*/

/*md
### The chapter's table: each technique alone, then the three together

The same batch, five runs: the baseline, each technique alone, the three together — what
the chapter's claim is about:

> 教材原文：「这三步走下来，显存占用通常能降20-30%，而且推理速度还有提升——因为减少了内存分配和拷贝的开销。」
>
> *Chapter 4:* "Follow these three steps and memory use typically falls by 20–30%, and
> inference gets faster too — because there is less allocating and copying."
*/

/*md:zh-CN
### 教材的表格：每招单独用，再三招合用

同一批输入，运行五次：基线、每一招单独使用、三招合用——这正是教材那句话说的：

> 教材原文：「这三步走下来，显存占用通常能降20-30%，而且推理速度还有提升——因为减少了内存分配和拷贝的开销。」
*/

//nb:cell plot
func chapterTechniques() {
	tab := memlab.NewTable("tricks", "peak above the weights", "saved", "allocator calls", "cudaMalloc")
	var runs []batchRun
	for _, t := range []Tricks{{}, {View: true}, {InPlace: true}, {Pool: true}, {View: true, InPlace: true, Pool: true}} {
		r := runBatch(t, 4, 48, 16)
		runs = append(runs, r)
		tab.Row(t, memlab.FormatBytes(r.Peak), fmt.Sprintf("%.1f %%", 100*(1-float64(r.Peak)/float64(runs[0].Peak))), r.Calls, r.Mallocs)
	}
	tab.Show()
	var curves []memplot.Series
	for _, r := range runs {
		curves = append(curves, r.curve())
	}
	memlab.Show(memplot.Lines("4.4 each technique alone and the three together", "forward pass", curves...))
	all3 := runs[len(runs)-1]
	memlab.Measured("the chapter's three together: peak above the weights %s → %s (%+.1f %%; the chapter says 20–30 %% less), allocator calls %d → %d, the same tokens: %v",
		memlab.FormatBytes(runs[0].Peak), memlab.FormatBytes(all3.Peak), 100*(float64(all3.Peak)/float64(runs[0].Peak)-1),
		runs[0].Calls, all3.Calls, slices.EqualFunc(runs[0].Tokens, all3.Tokens, slices.Equal))
}

/*md
The peak of every run is the prompts' pass, at the moment `logits` computes the
projection for every position, `[batch·seq, vocab]`: none of the three techniques touches
what is alive then. In-place leaves the peak where it was; views raise it (`k` and `v`,
kept as views, keep the fused `qkv` alive: a view keeps its base's storage, exercise 11);
the pool raises it (the arena is sized for the longest sequence from the first pass). The
curves of runs with the same peak coincide. What every technique cuts is allocator calls
— the second half of the chapter's sentence, "less allocating". The chapter's 20–30 % can
only hold where the peak is made of what the techniques remove; the sections below look
for such a place.

**Try it:** in `chapterTechniques`, make the prompts 8 tokens instead of 48
(`runBatch(t, 4, 8, 16)`). Predict: do the three together now lower the peak, or raise
it by a larger or a smaller share than with 48 tokens?

<details><summary>答案 / Answer</summary>

The three together now raise the peak by a larger share than with 48-token prompts: the
prompts' logits shrink with the prompt, the arena (sized for the prompt and the generated
tokens) less. The allocator calls do not change at all: how many operations a pass makes
does not depend on how long the prompt is.
</details>
*/

/*md:zh-CN
每次运行的峰值都出现在处理提示词的那次前向传播里，就在 `logits` 为每个位置计算输出投影、得到 `[batch·seq, vocab]` 的那一刻：三招没有一招碰得到那时活着的张量。原地操作让峰值原地不动；视图让它升高（作为视图留在缓存里的 `k` 和 `v` 让融合的 `qkv` 一直活着：视图会保住基张量的存储，见练习 11）；池化也让它升高（显存区从第一次前向传播起就按最长序列定大小）。峰值相同的几次运行，曲线重合在一起。每一招都确实削减的，是分配器调用——也就是教材那句话的后半句“减少了内存分配”。教材的 20-30% 只有在峰值恰好由这些技术能去掉的东西构成时才可能成立；下面几节去找这样的地方。

**动手试试：** 在 `chapterTechniques` 里把提示词从 48 个 token 改成 8 个（`runBatch(t, 4, 8, 16)`）。先预测：三招合用这回能压低峰值吗？还是会抬高它——抬高的比例比 48 个 token 时更大还是更小？

<details><summary>答案 / Answer</summary>

三招合用这回让峰值升高的比例比 48 个 token 时更大：提示词的 logits 随提示词一起缩小，而显存区（按提示词加生成 token 的长度定大小）缩得少。分配器调用次数则一点没变：一次前向传播做多少个操作，与提示词多长无关。
</details>
*/

/*md
### The 4.1 claim: in-place activations save 12 %

> 教材原文：「我的经验：有一次优化一个BERT推理管线，发现仅仅把几个激活函数改成in-place版本，显存占用就降了12%。别小看这点，对于长序列推理，12%可能就是能不能跑batch size=32和64的区别。」
>
> *Chapter 4:* "From experience: optimising a BERT inference pipeline, I found that just
> switching a few activation functions to their in-place versions cut memory use by 12%.
> Don't underrate it: for long-sequence inference, 12% can be the difference between
> running batch size 32 and 64."

BERT is an encoder: one forward pass over the whole sequence, no KV cache, no logits over
a vocabulary. `encode`, below, runs the block above that way, on `bertLike` (BERT's shape scaled
down to run on the CPU kernels: one block — an encoder's layers run one after another
and keep nothing, so one block has the whole pass's peak). `InPlace` puts GELU, the scale
and the residual adds in place — a superset of the chapter's "a few activation
functions". One run per sequence length at batch 32, each run twice (the bytes of a run
do not vary; the spread is over the lengths):

```python
for seq in (32, 64, 128):
    for in_place in (False, True):
        torch.cuda.reset_peak_memory_stats()
        encoder(torch.zeros(32, seq, dtype=torch.long, device="cuda"), in_place=in_place)
        print(seq, in_place, torch.cuda.max_memory_allocated() - weights)
```
*/

/*md:zh-CN
### 4.1 节的说法：原地激活省下 12%

> 教材原文：「我的经验：有一次优化一个BERT推理管线，发现仅仅把几个激活函数改成in-place版本，显存占用就降了12%。别小看这点，对于长序列推理，12%可能就是能不能跑batch size=32和64的区别。」

BERT 是编码器 (encoder)：对整个序列做一次前向传播，没有 KV 缓存，也不在词表上算 logits。下面的 `encode` 就这样运行上面那个块，用的是 `bertLike`（把 BERT 的形状按比例缩小，好让 CPU 内核跑得动：只有一个块——编码器的各层一层接一层地运行、什么也不保留，所以一个块的峰值就是整次前向传播的峰值）。`InPlace` 让 GELU、缩放和残差相加都原地进行——比教材说的“几个激活函数”还多。batch 为 32，每个序列长度跑一次，每次运行重复两遍（一次运行的字节数不会变；离散范围来自不同的长度）：

```python
for seq in (32, 64, 128):
    for in_place in (False, True):
        torch.cuda.reset_peak_memory_stats()
        encoder(torch.zeros(32, seq, dtype=torch.long, device="cuda"), in_place=in_place)
        print(seq, in_place, torch.cuda.max_memory_allocated() - weights)
```
*/

// bertLike is a BERT-like encoder's sizes, scaled down to run on the
// simulated device's CPU kernels: one block (an encoder's layers run one after
// the other and keep nothing, so one block has the same peak), sequences of
// up to 512 tokens.
//
//nb:decl
var bertLike = model.Config{Vocab: 2048, Dim: 64, Heads: 4, Layers: 1, Hidden: 256, MaxLen: 512, Seed: 1}

// encode runs a BERT-like forward pass with tricks t over batch sequences of
// seq tokens on l — the blocks above without a mask, without a cache (each
// layer's keys and values die with it) and without the output projection —
// and returns max_memory_allocated above the weights.
func encode(l *memlab.Lab, t Tricks, batch, seq int) int64 {
	m := memlab.Must(model.New(l, bertLike))
	defer m.Release()
	f := &fwd{w: m.Weights(), t: t, K: make([]*tensor.Tensor, 1), V: make([]*tensor.Tensor, 1), scope: tensor.NewScope()}
	defer f.scope.Release() // after an out-of-memory error, what the pass had made (as Python's unwinding frees it)
	ids := make([][]int64, batch)
	for b := range ids {
		ids[b] = make([]int64, seq) // token 0 everywhere: the bytes do not depend on the tokens
	}
	weights := l.MemoryAllocated()
	l.ResetPeakMemoryStats()
	h := f.embed(l, ids, 0)
	for i := range f.w.Blocks {
		h = f.attention(i, h, nil, batch, seq, 0)
		memlab.Check(tensor.ReleaseAll(f.K[i], f.V[i]))
		h = f.mlp(i, h)
	}
	memlab.Check(h.Release())
	return l.MaxMemoryAllocated() - weights
}

// verdict is "fits", or the operation that ran out of memory and what it
// asked for.
func verdict(err error) string {
	if err == nil {
		return "fits"
	}
	op, _, _ := strings.Cut(strings.TrimPrefix(err.Error(), "tensor: "), ":")
	_, tried, _ := strings.Cut(err.Error(), "Tried to allocate ")
	tried, _, _ = strings.Cut(tried, ". ")
	return fmt.Sprintf("out of memory in %s, asking for %s", op, tried)
}

// onDevice runs encode on a fresh simulated device of the given capacity (no
// CUDA context; 0: the default device) and returns the peak above the
// weights, the peak reserved, and the out-of-memory error if the pass did not
// fit.
func onDevice(capacity int64, t Tricks, batch, seq int) (peak, reserved int64, err error) {
	l := memlab.MustOpen(memlab.SimConfig(sim.Config{Capacity: uint64(capacity), NoContext: capacity > 0}))
	defer l.Close()
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok && memlab.IsOutOfMemory(e) {
				err = e
				return
			}
			panic(r)
		}
	}()
	peak = encode(l, t, batch, seq)
	return peak, l.MaxMemoryReserved(), nil
}

//nb:cell
func inPlaceTwelvePercent() {
	const batch = 32
	tab := memlab.NewTable("sequence", "out of place", "in place", "saved")
	var saved []float64
	repeats := true
	for _, seq := range []int{32, 64, 128} {
		out, _, _ := onDevice(0, Tricks{}, batch, seq)
		in, _, _ := onDevice(0, Tricks{InPlace: true}, batch, seq)
		again, _, _ := onDevice(0, Tricks{InPlace: true}, batch, seq)
		repeats = repeats && again == in
		saved = append(saved, 100*(1-float64(in)/float64(out)))
		tab.Row(seq, memlab.FormatBytes(out), memlab.FormatBytes(in), fmt.Sprintf("%.1f %%", saved[len(saved)-1]))
	}
	tab.Show()
	memlab.Measured("in place saves %.1f %% to %.1f %% of the peak above the weights at batch %d (median %.1f %%; the chapter says 12 %%); a repeated run gives the same bytes: %v",
		slices.Min(saved), slices.Max(saved), batch, saved[1], repeats)
}

/*md
In place saves only at the shortest length. There the peak is the MLP, where GELU's
output sits beside its input — exactly what in place removes. From 64 tokens on, the peak
is the attention: the scores and their softmax, two `[batch, heads, seq, seq]` tensors
alive together. The scale is in place already, and the softmax still writes a new tensor
beside its input (PyTorch's softmax has no in-place form), so in place leaves that peak
alone. The chapter's 12 % is of the order of the shortest run, and none of it remains at
the long sequences its next sentence is about.

**Try it:** set `batch` to 8. Predict: do the percentages change?

<details><summary>答案 / Answer</summary>

No: every tensor alive at the peak has the batch as its first dimension, so the bytes
scale with it and the shares stay the same.
</details>
*/

/*md:zh-CN
原地操作只在最短的长度上省了显存。那时峰值在 MLP 里：GELU 的输出和它的输入同时存在——这正是原地操作去掉的东西。从 64 个 token 起，峰值落在注意力上：分数和它的 softmax，两个 `[batch, heads, seq, seq]` 张量同时活着。缩放本来就已经原地做了，而 softmax 仍要在输入旁边写一个新张量（PyTorch 的 softmax 没有原地版本），所以原地操作碰不到这个峰值。教材的 12% 与最短那次运行的量级相当，而到了它下一句话说的长序列上，一点也不剩。

**动手试试：** 把 `batch` 设为 8。先预测：这些百分比会变吗？

<details><summary>答案 / Answer</summary>

不会：峰值那一刻活着的每个张量，第一维都是 batch，所以字节数随 batch 成比例变化，所占的比例不变。
</details>
*/

/*md
### At the chapter's scale: batch 32 or 64?

The chapter's second sentence, measured: the same encoder at a long sequence (256
tokens), at batch 32 and 64. First each run's memory on an uncapped device; then a
device sized between what the baseline reserves at batch 32 and at 64 — so the baseline
serves 32 and not 64 — and the question: does in-place let 64 run there?

```python
# on a GPU of that size (or torch.cuda.set_per_process_memory_fraction to cap one)
for batch, in_place in ((32, False), (64, False), (64, True)):
    try:
        encoder(torch.zeros(batch, 256, dtype=torch.long, device="cuda"), in_place=in_place)
        print(batch, in_place, "fits")
    except torch.cuda.OutOfMemoryError as e:
        print(batch, in_place, e)
```
*/

/*md:zh-CN
### 按教材的规模：batch 32 还是 64？

实测教材的第二句话：同一个编码器，长序列（256 个 token），batch 分别为 32 和 64。先在不设上限的设备上测每次运行的显存；再取一台容量介于基线在 batch 32 与 batch 64 时所预留显存之间的设备——基线在这台设备上能跑 32、跑不了 64——然后问：原地操作能让 64 在这里跑起来吗？

```python
# 在这么大的一块 GPU 上（或者用 torch.cuda.set_per_process_memory_fraction 给一块 GPU 设上限）
for batch, in_place in ((32, False), (64, False), (64, True)):
    try:
        encoder(torch.zeros(batch, 256, dtype=torch.long, device="cuda"), in_place=in_place)
        print(batch, in_place, "fits")
    except torch.cuda.OutOfMemoryError as e:
        print(batch, in_place, e)
```
*/

//nb:cell
func batch32Or64() {
	const seq = 256
	p32, r32, _ := onDevice(0, Tricks{}, 32, seq)
	p64, r64, _ := onDevice(0, Tricks{}, 64, seq)
	pin, _, _ := onDevice(0, Tricks{InPlace: true}, 64, seq)
	capacity := (r32 + r64) / 2 &^ (2<<20 - 1) // between them, in whole 2 MiB pages
	memlab.Measured("peak above the weights: batch 32 %s, batch 64 %s, batch 64 in place %s (%.1f %% saved); reserved: %s and %s, so the device gets %s",
		memlab.FormatBytes(p32), memlab.FormatBytes(p64), memlab.FormatBytes(pin), 100*(1-float64(pin)/float64(p64)),
		memlab.FormatBytes(r32), memlab.FormatBytes(r64), memlab.FormatBytes(capacity))
	tab := memlab.NewTable("batch", "tricks", fmt.Sprintf("on a device of %s", memlab.FormatBytes(capacity)))
	for _, run := range []struct {
		batch int
		t     Tricks
	}{{32, Tricks{}}, {64, Tricks{}}, {64, Tricks{InPlace: true}}, {64, Tricks{View: true, InPlace: true}}} {
		_, _, err := onDevice(capacity, run.t, run.batch, seq)
		tab.Row(run.batch, run.t, verdict(err))
	}
	tab.Show()
}

/*md
At 256 tokens twice the batch needs twice the scores, and in place saves none of them
(the line above prints it): on the device where the baseline serves 32 and not 64, in
place does not serve 64 either, nor do views on top of it. For 64 to fit where only 32
did, a technique would have to remove about half of the peak — the attention scores
themselves. That is what fused attention does (`F.scaled_dot_product_attention`, which
PyTorch runs with FlashAttention or memory-efficient kernels that never hold the scores):
not one of the chapter's three.

**Try it:** set `seq` to 32, where in place did save a share of the peak. Predict: does
in place now let batch 64 fit on the device the cell picks?

<details><summary>答案 / Answer</summary>

No. The device the cell picks is small there, and batch 64 fails on an allocation the
saving does not touch: a request above 1 MiB gets a 20 MiB segment (notebook 02's rule),
so the run asks for more than the whole device, with in place as without. At small sizes
the allocator's rounding, not the tensors, decides what fits.
</details>
*/

/*md:zh-CN
在 256 个 token 时，batch 翻倍，分数张量也要翻倍，而原地操作一个也省不下（上面那行实测打印了出来）：在基线能跑 32、跑不了 64 的设备上，原地操作也跑不了 64，再加上视图也不行。要想让只能跑 32 的地方跑得下 64，某种技术就得去掉大约一半的峰值——也就是注意力分数本身。这正是融合注意力 (fused attention) 做的事（`F.scaled_dot_product_attention`，PyTorch 用 FlashAttention 或省显存的内核来执行它，根本不保留分数）：它不在教材的三招之列。

**动手试试：** 把 `seq` 设为 32——在这个长度上原地操作确实省下了一部分峰值。先预测：在单元格选出的那台设备上，原地操作这回能让 batch 64 跑下来吗？

<details><summary>答案 / Answer</summary>

不能。这时单元格选出的设备很小，batch 64 失败在一次原地操作根本碰不到的分配上：超过 1 MiB 的请求会拿到一个 20 MiB 的段（笔记本 02 里的规则），于是这次运行要的比整台设备还多，开不开原地操作都一样。在小尺寸上，决定能不能装下的是分配器的取整，而不是张量本身。
</details>
*/
