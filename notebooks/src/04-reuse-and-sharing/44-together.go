package nb04

import (
	"math"
	"slices"
	"strings"

	"memlab.dev/memlab/experiments/ch4"
	"memlab.dev/memlab/lang"
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
(one a pass more here without `View`: the model has no batch dimension to flatten);
another (`TestEditedForwardChangesPeaks`) checks the same over 4.5's whole workload in
every mode, memlab's extras too. The three cells below are the forward pass; every experiment of 4.4, and the 4.1 in-place
table, runs them — edit them, and what the tables measure changes with your code.
*/

/*md:zh-CN
## 4.4 三者协同：一个小型 Transformer (all together)

教材的案例是一个做在线推理的 Transformer，输入长度可变，三招是：

> 教材原文：「视图机制：把(batch, seq_len, hidden)的输入通过view()变成(batch * seq_len, hidden)，避免数据拷贝。 - in-place操作：LayerNorm和激活函数用in-place版本，减少中间张量。 - 显存池化：KV Cache和注意力分数矩阵用池化管理，避免频繁分配。」

下面是 [`model`](../../model/model.go) 包里那个 Transformer 的前向传播（词嵌入和位置嵌入；若干个块，每块依次是 layernorm → 带 KV 缓存的因果注意力 → 残差 → layernorm → GELU MLP → 残差；最后一个 layernorm；算输出分数 (logits) 的投影与嵌入共享权重），按批 (batch) 写了出来。每一招是 `Tricks` 的一个字段，每一招都是代码里看得见的一处改动：**`View`** 在 `flatten` 里（教材说的 `(batch, seq, hidden)` → `(batch·seq, hidden)`，不开就是一次拷贝）和 `copyOf` 里（拆开与合并注意力头，朴素移植会在前后套上 `.contiguous()`）；**`InPlace`** 在 `add`、`scale` 和 `mlp` 的 GELU 里；**`Pool`** 在 `cache` 里：键和值写进一个按最长序列预分配、取自 `TensorPool` 的显存区，而不是用 `torch.cat` 一步步拼长。用 PyTorch 写，这个块是：

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

`model` 包的各个模式（`model.Baseline`、`InPlace`、`Views`、`KVCache`、`Chapter`）跑的就是这同一段代码：一个测试（`TestForwardMirrorsModel`）在批大小为 1 时把两者并排运行，检查每一次前向传播的峰值分毫不差、分配器调用次数相同（不开 `View` 时这里每次前向传播多一次调用：模型本身没有批维度可展平）；另一个测试（`TestEditedForwardChangesPeaks`）在 4.5 节的整个工作负载上、对每种模式（包括 memlab 自己加的）检查同样的事。下面三个单元格就是前向传播；4.4 节的每个实验，以及 4.1 节的原地操作表格，跑的都是它们——改动它们，表格测到的结果就随你的代码而变。
*/

/*md
#### The forward pass, 1: the tricks, and the three small changes they make

`Tricks` holds the switches; `flatten`, `add`, `scale` and `copyOf` are where `View` and
`InPlace` change the code. `Fused` is not one of the chapter's techniques: it computes
attention without ever holding the whole score matrix (below, for the 12 % question).
*/

/*md:zh-CN
#### 前向传播之一：开关，以及它们带来的三处小改动

`Tricks` 是开关；`flatten`、`add`、`scale` 和 `copyOf` 就是 `View` 与 `InPlace` 改动代码的地方。`Fused` 不是教材的招数：它计算注意力时从不持有完整的分数矩阵（下文回答 12% 的问题时用到）。
*/

// Tricks are the chapter's three techniques, and fused attention; each is
// one change to the forward pass.
//
//nb:decl
type Tricks struct {
	View    bool // (batch, seq, hidden) → (batch·seq, hidden) and the head split as views, not copies
	InPlace bool // the scale, the mask, GELU and the residual adds in place
	Pool    bool // the KV cache in a preallocated arena from a TensorPool, not grown by torch.cat
	Fused   bool // not the chapter's: attention a block of queries at a time, never the whole score matrix
}

// String names the tricks that are on: "baseline", "view", "in-place+pool", …
// (in the workbook's edition)
func (t Tricks) String() string {
	var on []string
	for _, f := range []struct {
		on   bool
		name string
	}{{t.View, "view"}, {t.InPlace, "in-place"}, {t.Pool, "pool"}, {t.Fused, "fused"}} {
		if f.on {
			on = append(on, lang.Text(f.name))
		}
	}
	if len(on) == 0 {
		return lang.Text("baseline")
	}
	return strings.Join(on, "+")
}

// fwd is one batch's forward passes: the weights, the tricks, the KV cache.
type fwd struct {
	w     model.Weights
	t     Tricks
	K, V  []*tensor.Tensor // per layer [B, H, L, hd], grown by Cat (without Pool)
	arena *tensor.Tensor   // with Pool: [2·layers, B, H, maxLen, hd], from the pool
	scope *tensor.Scope    // if set, the pass's tensors join it (encode's, for an out-of-memory error)
	out   []float32        // the last pass's logits of each sequence's last position
	// Two of the model's modes that are not the chapter's (pass sets them):
	last   bool             // model.LastLogits: project each sequence's last position only
	pooled *pool.TensorPool // model.PooledScores: scores and softmax in buffers from this pool
}

// flatten turns x (batch, seq, hidden) into (batch·seq, hidden): technique 1.
func (f *fwd) flatten(x *tensor.Tensor) *tensor.Tensor {
	s := x.Shape()
	if !f.t.View {
		x = then(x, memlab.Must(x.Clone())) // the copy the chapter warns of: "显存直接翻倍"
	}
	return then(x, memlab.Must(x.View(s[0]*s[1], s[2]))) // x.view(-1, hidden): metadata only
}

// add is h + x, and scale h·alpha: in place with InPlace (technique 2).
func (f *fwd) add(h, x *tensor.Tensor) *tensor.Tensor {
	if f.t.InPlace {
		memlab.Check(h.Add_(x)) // h += x
		return h
	}
	return then(h, memlab.Must(h.Add(x))) // y = h + x, then del h
}

func (f *fwd) scale(h *tensor.Tensor, alpha float64) *tensor.Tensor {
	if f.t.InPlace {
		memlab.Check(h.Scale_(alpha)) // h *= alpha
		return h
	}
	return then(h, memlab.Must(h.Scale(alpha)))
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

/*md
#### The forward pass, 2: attention and the MLP

`cache` is technique 3; `attention` computes the scores `[batch, heads, seq, keys]`,
scales and masks them (in place or not), and either keeps them whole (eager, as
`scores.softmax(-1) @ V` does) or, with `Fused`, takes 64 queries of one sequence at a time
— what FlashAttention's kernels do in on-chip memory, here with the block in device
memory (`F.scaled_dot_product_attention` in PyTorch). `mlp` is GELU's layer. `scores`
also serves `model.PooledScores`, memlab's extra of section 4.5: there the scores and their
softmax go into two buffers from the engine's pool (`model.PooledAttention`).
*/

/*md:zh-CN
#### 前向传播之二：注意力和 MLP

`cache` 是第三招；`attention` 算出分数 `[batch, heads, seq, keys]`，缩放并加上掩码（原地或非原地），然后要么整块保留（eager，即 `scores.softmax(-1) @ V` 的做法），要么在 `Fused` 时每次只取一个序列的 64 个查询——FlashAttention 的内核在片上内存里做的正是这件事，这里的分块放在设备显存里（PyTorch 里是 `F.scaled_dot_product_attention`）。`mlp` 是 GELU 所在的那一层。`scores` 还服务于 4.5 节 memlab 自己加的 `model.PooledScores`：那时分数和它的 softmax 写进引擎池子里的两个缓冲区（`model.PooledAttention`）。
*/

// heads is part i (0 q, 1 k, 2 v) of qkv [B·S, 3D] as [B, H, S, hd]: views,
// or copied before and after the transpose (technique 1).
//
//nb:decl
func (f *fwd) heads(qkv *tensor.Tensor, i, B, S int) *tensor.Tensor {
	c := f.w.Config
	x := f.copyOf(memlab.Must(qkv.Narrow(1, i*c.Dim, c.Dim)))
	x = then(x, memlab.Must(x.View(B, S, c.Heads, c.HeadDim())))
	return f.copyOf(then(x, memlab.Must(x.Transpose(1, 2))))
}

// cache appends k and v [B, H, S, hd] to layer l's cache and returns all the
// keys and values so far: copied into the pooled arena, or grown with
// torch.cat (technique 3).
func (f *fwd) cache(l int, k, v *tensor.Tensor, pos int) (K, V *tensor.Tensor) {
	slot := func(kv, from, n int) *tensor.Tensor { // arena[2l+kv, :, :, from:from+n]: a view
		a := memlab.Must(f.arena.Select(0, 2*l+kv))
		return then(a, memlab.Must(a.Narrow(2, from, n)))
	}
	if f.t.Pool { // cache[:, :, pos:pos+S] = k, then a view of positions [0, pos+S)
		S := k.Shape()[2]
		for i, x := range []*tensor.Tensor{k, v} {
			dst := slot(i, pos, S)
			memlab.Check(dst.CopyFrom(x))
			memlab.Check(tensor.ReleaseAll(dst, x))
		}
		return slot(0, 0, pos+S), slot(1, 0, pos+S)
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

// scores is softmax(q·Kᵀ/√hd + mask) @ V for q [.., n, hd], K and V [.., L, hd];
// it releases q.
func (f *fwd) scores(q, K, V, mask *tensor.Tensor) *tensor.Tensor {
	Kt := memlab.Must(K.Transpose(-2, -1))
	if f.pooled != nil { // torch.matmul(q, Kt, out=buf[...]), then softmax into a second buffer
		o := memlab.Must(model.PooledAttention(q, Kt, V, mask, f.pooled))
		memlab.Check(tensor.ReleaseAll(q, Kt))
		return o
	}
	s := memlab.Must(q.Matmul(Kt)) // [.., n, L]: the score matrix
	memlab.Check(tensor.ReleaseAll(q, Kt))
	s = f.scale(s, 1/math.Sqrt(float64(f.w.Config.HeadDim())))
	if mask != nil {
		s = f.add(s, mask)
	}
	p := then(s, memlab.Must(s.Softmax(-1))) // softmax has no in-place form
	return then(p, memlab.Must(p.Matmul(V)))
}

// attention is h + Wo·attn(layernorm(h)) for h [B·S, D].
func (f *fwd) attention(l int, h, mask *tensor.Tensor, B, S, pos int) *tensor.Tensor {
	w, c := f.w.Blocks[l], f.w.Config
	a := memlab.Must(h.LayerNorm(w.LN1G, w.LN1B, model.Eps))
	qkv := then(a, memlab.Must(a.Matmul(w.Wqkv))) // [B·S, 3D]
	q, k, v := f.heads(qkv, 0, B, S), f.heads(qkv, 1, B, S), f.heads(qkv, 2, B, S)
	memlab.Check(qkv.Release())
	K, V := f.cache(l, k, v, pos)
	var o *tensor.Tensor // [B, H, S, hd]
	if !f.t.Fused {
		o = f.scores(q, K, V, mask) // eager: the whole [B, H, S, L] at once
	} else { // fused: 64 queries of one sequence at a time
		o = memlab.Must(tensor.Empty(h.Device(), h.DType(), B, c.Heads, S, c.HeadDim()))
		for b := range B {
			qb, Kb, Vb, ob := memlab.Must(q.Select(0, b)), memlab.Must(K.Select(0, b)), memlab.Must(V.Select(0, b)), memlab.Must(o.Select(0, b))
			for i := 0; i < S; i += 64 {
				n := min(64, S-i)
				qi, oi := memlab.Must(qb.Narrow(1, i, n)), memlab.Must(ob.Narrow(1, i, n))
				var mi *tensor.Tensor
				if mask != nil {
					mi = memlab.Must(mask.Narrow(0, i, n))
				}
				x := f.scores(qi, Kb, Vb, mi)
				memlab.Check(oi.CopyFrom(x))
				memlab.Check(tensor.ReleaseLive(x, mi, oi))
			}
			memlab.Check(tensor.ReleaseAll(qb, Kb, Vb, ob))
		}
		memlab.Check(q.Release())
	}
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

/*md
#### The forward pass, 3: embeddings, the mask, the logits, generation

`forward` runs the blocks for the decoder of 4.4 and returns each sequence's next token;
`logits` projects every position onto the vocabulary, as a port returning the whole
`[batch, seq, vocab]` does (with `last`, set for memlab's extra `model.LastLogits` in 4.5,
only each sequence's last position); `pass` hands these cells to the model package's
engines in every mode; `encode` is the same blocks as BERT runs them (no mask, no
cache, no logits), for the 12 % question.
*/

/*md:zh-CN
#### 前向传播之三：嵌入、掩码、输出分数与生成

`forward` 以 4.4 节解码器的方式运行这些块，返回每个序列的下一个词元 (token)；`logits` 把每个位置都投影到词表上，就像一个返回完整 `[batch, seq, vocab]` 的移植版本那样（开了 `last` 时只投影每个序列的最后一个位置，4.5 节 memlab 自己加的 `model.LastLogits` 用它）；`pass` 把这几个单元格交给 `model` 包的引擎，每种模式都用；`encode` 是 BERT 运行同样这些块的方式（没有掩码、没有缓存、没有输出分数），用来回答 12% 的问题。
*/

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
// token (greedy).
func (f *fwd) forward(dev tensor.Device, ids [][]int64, pos int) []int64 {
	B, S := len(ids), len(ids[0])
	h := f.embed(dev, ids, pos) // [B·S, D]
	var mask *tensor.Tensor
	if S > 1 { // causal: the token at pos+i sees keys 0 … pos+i
		m := make([]float32, S*(pos+S))
		for i := range S {
			for j := pos + i + 1; j < pos+S; j++ {
				m[i*(pos+S)+j] = float32(math.Inf(-1))
			}
		}
		mask = memlab.Must(tensor.FromFloat32(dev, m, S, pos+S))
	}
	for l := range f.w.Blocks {
		h = f.mlp(l, f.attention(l, h, mask, B, S, pos))
	}
	memlab.Check(tensor.ReleaseLive(mask))
	return f.logits(h, B, S)
}

// logits applies the final layernorm and the tied output projection to every
// position (with last, to each sequence's last position only) and picks each
// sequence's next token from its last position.
func (f *fwd) logits(h *tensor.Tensor, B, S int) []int64 {
	if f.last && S > 1 { // h.view(B, S, -1)[:, -1]: a view
		hv := then(h, memlab.Must(h.View(B, S, -1)))
		h, S = then(hv, memlab.Must(hv.Select(1, S-1))), 1
	}
	hf := then(h, memlab.Must(h.LayerNorm(f.w.LnfG, f.w.LnfB, model.Eps))) // [B·S, D]
	wt := memlab.Must(f.w.Wte.T())
	lg := then(hf, memlab.Must(hf.Matmul(wt))) // [B·S, Vocab]: every position
	memlab.Check(wt.Release())
	lv := then(lg, memlab.Must(lg.View(B, S, -1)))
	last := then(lv, memlab.Must(lv.Select(1, S-1))) // [B, Vocab]: each sequence's last position
	x, V := ch4.Values(last), f.w.Config.Vocab
	f.out = x
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

// generate runs the prompts [B][S] with tricks t, and decode-1 more tokens,
// the arena from arenas with Pool; it returns each forward pass's peak
// (max_memory_allocated) and the tokens.
func generate(t Tricks) ch4.Generate {
	return func(l *memlab.Lab, w model.Weights, arenas *pool.TensorPool, prompts [][]int64, decode int) (peaks []int64, tokens [][]int64) {
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
}

// pass is the forward pass above as the model package's engines take it
// (model.Forward), at batch 1: the engines of section 4.5's cells run it in
// every mode, its tricks (InPlace, Views, KVCache) and the model's extras
// (LastLogits, PooledScores with the engine's pool of score buffers).
func pass(w model.Weights, o model.PassOptions) (model.Pass, error) {
	c, mode := w.Config, o.Mode
	f := &fwd{w: w, t: Tricks{View: mode&model.Views != 0, InPlace: mode&model.InPlace != 0, Pool: mode&model.KVCache != 0},
		K: make([]*tensor.Tensor, c.Layers), V: make([]*tensor.Tensor, c.Layers), last: mode&model.LastLogits != 0, pooled: o.Scores}
	if o.Arena != nil { // [layers, 2, H, maxLen, hd] as [2·layers, 1, H, maxLen, hd]: a view
		f.arena = memlab.Must(o.Arena.View(2*c.Layers, 1, c.Heads, -1, c.HeadDim()))
	}
	return f, nil
}

// Step and Release make fwd a model.Pass: one sequence's forward passes.
func (f *fwd) Step(ids []int64, pos int) ([]float32, error) {
	f.forward(f.w.Wte.Device(), [][]int64{ids}, pos)
	return f.out, nil
}

func (f *fwd) Release() error { return tensor.ReleaseLive(append(f.K, append(f.V, f.arena)...)...) }

// encode runs BERT's forward pass with tricks t over batch sequences of seq
// tokens (token 0: the bytes do not depend on the tokens) on l, with the
// model of cfg, and returns max_memory_allocated above the weights.
func encode(l *memlab.Lab, cfg model.Config, t Tricks, batch, seq int) int64 {
	m := memlab.Must(model.New(l, cfg))
	defer m.Release()
	f := &fwd{w: m.Weights(), t: t, K: make([]*tensor.Tensor, cfg.Layers), V: make([]*tensor.Tensor, cfg.Layers), scope: tensor.NewScope()}
	defer f.scope.Release() // after an out-of-memory error, what the pass had made (as Python's unwinding frees it)
	weights := l.MemoryAllocated()
	l.ResetPeakMemoryStats()
	h := f.embed(l, slices.Repeat([][]int64{make([]int64, seq)}, batch), 0)
	for i := range f.w.Blocks {
		h = f.attention(i, h, nil, batch, seq, 0)
		memlab.Check(tensor.ReleaseAll(f.K[i], f.V[i])) // an encoder keeps no cache
		h = f.mlp(i, h)
	}
	memlab.Check(h.Release())
	return l.MaxMemoryAllocated() - weights
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

下面每次运行都为一批 4 个、各长 48 个词元的提示词生成 16 个词元（small 模型，每次一个新的 lab），曲线是每一次前向传播中 `max_memory_allocated` 超出权重的部分：第一次前向传播处理提示词，其余每次处理一个词元。`tricks` 由你来改。

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
	// 4.4 flip one technique
	tricks := Tricks{View: false, InPlace: false, Pool: false} // flip one to true, run again
	base := memlab.Must(ch4.RunBatch("baseline", generate(Tricks{}), 4, 48, 16))
	yours := memlab.Must(ch4.RunBatch(tricks.String(), generate(tricks), 4, 48, 16))
	memlab.Show(memplot.Lines(lang.Text("4.4 a batch of 4 prompts of 48 tokens: peak in each forward pass"),
		lang.Text("forward pass (the prompts, then one per generated token)"), base.Curve(), yours.Curve()))
	memlab.Measured("peak above the weights: baseline %s, %v %s; allocator calls %d → %d; the same tokens: %v",
		memlab.FormatBytes(base.Peak), tricks, memlab.FormatBytes(yours.Peak), base.Calls, yours.Calls, base.SameTokens(yours))
}

/*md
**Try it:** set `InPlace: true`, then only `View`, then only `Pool`. Before each run,
predict: does the peak fall, stay, or rise? and the allocator calls?

<details><summary>Answer</summary>

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

<details><summary>答案</summary>

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
	// 4.4 the chapter's table: each technique alone, then the three together
	var runs []ch4.BatchRun
	for _, t := range []Tricks{{}, {View: true}, {InPlace: true}, {Pool: true}, {View: true, InPlace: true, Pool: true}} {
		runs = append(runs, memlab.Must(ch4.RunBatch(t.String(), generate(t), 4, 48, 16)))
	}
	ch4.BatchTable(runs).Show()
	memlab.Show(memplot.Lines(lang.Text("4.4 each technique alone and the three together"), lang.Text("forward pass"), ch4.Curves(runs)...))
	base, all3 := runs[0], runs[len(runs)-1]
	saved := ch4.Percent(all3.Peak, base.Peak)
	memlab.Judge("the three techniques together cut memory use by 20–30 percent", memlab.HoldsIf(saved >= 20 && saved <= 30),
		"peak above the weights %s → %s (%s), the same tokens: %v", memlab.FormatBytes(base.Peak), memlab.FormatBytes(all3.Peak), ch4.Saved(saved), base.SameTokens(all3))
	memlab.Judge("…because there is less allocating", memlab.HoldsIf(all3.Calls < base.Calls), "allocator calls %d → %d", base.Calls, all3.Calls)
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

**Try it:** in the cell "the chapter's table" (its first comment line), make the prompts 8
tokens instead of 48 (`ch4.RunBatch(t.String(), generate(t), 4, 8, 16)`). Predict: do the three together now lower the peak, or raise
it by a larger or a smaller share than with 48 tokens?

<details><summary>Answer</summary>

The three together now raise the peak by a larger share than with 48-token prompts: the
prompts' logits shrink with the prompt, the arena (sized for the prompt and the generated
tokens) less. The allocator calls do not change at all: how many operations a pass makes
does not depend on how long the prompt is.
</details>

**Try it:** the peak is the logits of every prompt position. In "The forward pass, 3",
make `logits` project only the last position in every run: its first line,
`if f.last && S > 1`, already selects each sequence's last row before the projection (a
view, `h.view(B, S, -1)[:, -1]`), but only for the model's `LastLogits` mode — make it
`if S > 1`. Run the cell "the chapter's table" again. Predict: does the baseline's peak fall, do the tokens
change, and does in-place now save something?

<details><summary>Answer</summary>

The peak falls — the `[batch·seq, vocab]` tensor is gone — and the tokens stay the same
(the same last-position logits). With the logits off the peak, what the techniques
change is what is alive at the new peak, so their row's percentages move: in-place now
removes tensors alive there.
</details>
*/

/*md:zh-CN
每次运行的峰值都出现在处理提示词的那次前向传播里，就在 `logits` 为每个位置计算输出投影、得到 `[batch·seq, vocab]` 的那一刻：三招没有一招碰得到那时活着的张量。原地操作让峰值原地不动；视图让它升高（作为视图留在缓存里的 `k` 和 `v` 让融合的 `qkv` 一直活着：视图会保住基张量的存储，见练习 11）；池化也让它升高（显存区从第一次前向传播起就按最长序列定大小）。峰值相同的几次运行，曲线重合在一起。每一招都确实削减的，是分配器调用——也就是教材那句话的后半句“减少了内存分配”。教材的 20-30% 只有在峰值恰好由这些技术能去掉的东西构成时才可能成立；下面几节去找这样的地方。

**动手试试：** 在“教材的表格”那个单元格（看它的第一行注释）里，把提示词从 48 个词元改成 8 个（`ch4.RunBatch(t.String(), generate(t), 4, 8, 16)`）。先预测：三招合用这回能压低峰值吗？还是会抬高它——抬高的比例比 48 个词元时更大还是更小？

<details><summary>答案</summary>

三招合用这回让峰值升高的比例比 48 个词元时更大：提示词的输出分数随提示词一起缩小，而显存区（按提示词加上生成词元的长度定大小）缩得少。分配器调用次数则一点没变：一次前向传播做多少个操作，与提示词多长无关。
</details>

**动手试试：** 峰值是所有提示词位置的输出分数。在“前向传播之三”里，让 `logits` 在每次运行中都只投影最后一个位置：它的第一行 `if f.last && S > 1` 已经会在投影之前选出每个序列的最后一行（一个视图，`h.view(B, S, -1)[:, -1]`），但只用于模型的 `LastLogits` 模式——把它改成 `if S > 1`。再运行一遍“教材的表格”那个单元格。先预测：基线的峰值会下降吗？生成的词元会变吗？原地操作这回能省下点什么吗？

<details><summary>答案</summary>

峰值下降了——`[batch·seq, vocab]` 那个张量没有了——生成的词元不变（最后一个位置的输出分数还是同样的）。输出分数离开峰值之后，各招改动的是新峰值那一刻活着的张量，所以表里各行的百分比都会变：原地操作这回去掉了在那里活着的张量。
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
a vocabulary. `encode` (in "The forward pass, 3") runs the blocks above that way, at
BERT-base's shapes — hidden 768, 12 heads, MLP 3072 — at 128 and 512 tokens, batch 32
and 64, once with eager attention (the whole score matrix `[batch, 12, seq, seq]`) and
once fused (`F.scaled_dot_product_attention`: never the whole matrix). One layer: an
encoder's layers run one after another and keep nothing, so one layer reaches the whole
pass's peak above the weights (a test checks it against 12). `InPlace` puts GELU, the
scale and the residual adds in place — a superset of the chapter's "a few activation
functions". On the simulator the cell accounts memory without computing values, so these
sizes run in a moment; on a GPU the kernels run.

```python
for attn in ("eager", "sdpa"):                      # BertModel(config, attn_implementation=attn)
    for seq in (128, 512):
        for batch in (32, 64):
            for in_place in (False, True):
                torch.cuda.reset_peak_memory_stats()
                encoder(torch.zeros(batch, seq, dtype=torch.long, device="cuda"), in_place=in_place)
                print(attn, seq, batch, in_place, torch.cuda.max_memory_allocated() - weights)
```

What makes the peak of each run — and so, does in place save 12 % everywhere, somewhere,
or nowhere?
*/

/*md:zh-CN
### 4.1 节的说法：原地激活省下 12%

> 教材原文：「我的经验：有一次优化一个BERT推理管线，发现仅仅把几个激活函数改成in-place版本，显存占用就降了12%。别小看这点，对于长序列推理，12%可能就是能不能跑batch size=32和64的区别。」

BERT 是编码器 (encoder)：对整个序列做一次前向传播，没有 KV 缓存，也不在词表上算输出分数。`encode`（在“前向传播之三”里）就这样运行上面的块，用的是 BERT-base 的形状——隐藏维 768、12 个头、MLP 3072——序列长 128 和 512，批大小 32 和 64；一次用非融合注意力（eager attention，完整的分数矩阵 `[batch, 12, seq, seq]`），一次用融合注意力 (fused attention，即 `F.scaled_dot_product_attention`：从不持有完整矩阵)。只跑一层：编码器的各层一层接一层地运行、什么也不保留，所以一层就达到整次前向传播超出权重的峰值（有测试拿它和 12 层对照）。`InPlace` 让 GELU、缩放和残差相加都原地进行——比教材说的“几个激活函数”还多。在模拟设备上，这个单元格只记账显存、不计算数值，所以这样的规模也一瞬间跑完；在 GPU 上内核照常运行。

```python
for attn in ("eager", "sdpa"):                      # BertModel(config, attn_implementation=attn)
    for seq in (128, 512):
        for batch in (32, 64):
            for in_place in (False, True):
                torch.cuda.reset_peak_memory_stats()
                encoder(torch.zeros(batch, seq, dtype=torch.long, device="cuda"), in_place=in_place)
                print(attn, seq, batch, in_place, torch.cuda.max_memory_allocated() - weights)
```

每次运行的峰值由什么构成？原地操作是处处省下 12%、有的地方省、还是哪里都不省？
*/

//nb:cell
func inPlaceTwelvePercent() {
	// 4.1's 12 %, at BERT-base's shapes: eager and fused attention
	l := memlab.MustOpen()
	defer l.Close()
	ch4.MemoryOnlyNote(l) // the simulator computes no values here: the bytes are a GPU's
	tab := ch4.NewInPlaceTable()
	for _, c := range ch4.BERTCases() { // eager and fused attention, 128 and 512 tokens, batch 32 and 64
		out := encode(l, ch4.BERTBase(1), Tricks{Fused: c.Fused}, c.Batch, c.Seq)
		in := encode(l, ch4.BERTBase(1), Tricks{InPlace: true, Fused: c.Fused}, c.Batch, c.Seq)
		tab.Add(c, out, in)
	}
	tab.Show()
	tab.Judge()
}

/*md
The last column is the score matrix of one sequence against one MLP activation. Where
it is below one (128 tokens, eager), the peak is the MLP, where GELU's output sits beside
its input — exactly what in place removes. At 512 tokens the peak is the attention: the
scores and their softmax, two `[batch, 12, seq, seq]` tensors alive together; the scale
is in place already, and softmax writes a new tensor beside its input (PyTorch's softmax
has no in-place form), so in place leaves that peak alone. Fused attention never holds
the matrix, and the MLP makes the peak at every length: in place saves about the same
share everywhere. What dominates the activations at the peak decides the saving; the
batch does not (every tensor at the peak scales with it). GELU itself has no in-place
form in PyTorch's public API (`F.gelu` has no `inplace=` argument, unlike `F.relu`):
in PyTorch the saving needs a custom or fused kernel.

**Try it:** in the cell "4.1's 12 %" (its first comment line), add a sequence length of
256. Predict: with eager attention, is 256 tokens on the MLP's side or the scores'?

<details><summary>Answer</summary>

At 256 tokens one sequence's scores (12·256·256) equal one MLP activation (256·3072):
the two peaks are of one size, and what in place saves lies between the 128- and the
512-token rows.
</details>
*/

/*md:zh-CN
最后一列是一个序列的分数矩阵与一个 MLP 激活值之比。比值小于 1 时（128 个词元，非融合），峰值在 MLP 里：GELU 的输出和它的输入同时存在——这正是原地操作去掉的东西。到了 512 个词元，峰值落在注意力上：分数和它的 softmax，两个 `[batch, 12, seq, seq]` 张量同时活着；缩放本来已经原地做了，而 softmax 要在输入旁边写一个新张量（PyTorch 的 softmax 没有原地版本），所以原地操作碰不到这个峰值。融合注意力从不持有整个矩阵，于是在每个长度上峰值都由 MLP 构成：原地操作处处省下差不多同样的比例。峰值那一刻主导激活值的是谁，决定了能省多少；批大小不决定（峰值时的每个张量都随它成比例变化）。另外，GELU 在 PyTorch 的公开 API 里根本没有原地版本（`F.gelu` 不像 `F.relu` 那样有 `inplace=` 参数）：在 PyTorch 里要省这一份，得靠自定义或融合的内核。

**动手试试：** 在“4.1's 12 %”那个单元格（看它的第一行注释）里加一个序列长度 256。先预测：用非融合注意力时，256 个词元落在 MLP 一边，还是分数一边？

<details><summary>答案</summary>

在 256 个词元时，一个序列的分数（12·256·256）正好等于一个 MLP 激活值（256·3072）：两个峰一样大，原地操作省下的比例落在 128 和 512 两行之间。
</details>
*/

/*md
### At the chapter's scale: batch 32 or 64?

The chapter's second sentence, measured: the same encoder at 512 tokens, at batch 32 and
64, on a simulated device sized between what the baseline reserves at batch 32 and at 64
— so the baseline serves 32 and not 64 (a simulated device on every machine: the question
needs a device of exactly that size; on a GPU, `set_per_process_memory_fraction` would
cap it). Does in place let 64 run there — and does fused attention?

```python
# on a GPU of that size (or torch.cuda.set_per_process_memory_fraction to cap one)
for batch, in_place in ((32, False), (64, False), (64, True)):
    try:
        encoder(torch.zeros(batch, 512, dtype=torch.long, device="cuda"), in_place=in_place)
        print(batch, in_place, "fits")
    except torch.cuda.OutOfMemoryError as e:
        print(batch, in_place, e)
```
*/

/*md:zh-CN
### 按教材的规模：批大小 32 还是 64？

实测教材的第二句话：同一个编码器，512 个词元，批大小分别为 32 和 64，放在一台模拟设备上，它的容量介于基线在批大小 32 与批大小 64 时所预留的显存之间——基线能跑 32、跑不了 64（每台机器上都用模拟设备：这个问题要的正是恰好这么大的设备；在 GPU 上得用 `set_per_process_memory_fraction` 设上限）。原地操作能让 64 在这里跑起来吗？融合注意力呢？

```python
# 在这么大的一块 GPU 上（或者用 torch.cuda.set_per_process_memory_fraction 给一块 GPU 设上限）
for batch, in_place in ((32, False), (64, False), (64, True)):
    try:
        encoder(torch.zeros(batch, 512, dtype=torch.long, device="cuda"), in_place=in_place)
        print(batch, in_place, "fits")
    except torch.cuda.OutOfMemoryError as e:
        print(batch, in_place, e)
```
*/

//nb:cell
func batch32Or64() {
	// batch 32 or 64 at 512 tokens, on a device that fits the baseline's 32 and not its 64
	bert := func(t Tricks, batch int) func(*memlab.Lab) int64 {
		return func(l *memlab.Lab) int64 { return encode(l, ch4.BERTBase(1), t, batch, 512) }
	}
	tab := ch4.NewFitTable(bert(Tricks{}, 32), bert(Tricks{}, 64)) // a device between their reserved peaks
	tab.Run(32, Tricks{}, bert(Tricks{}, 32))
	for _, t := range []Tricks{{}, {InPlace: true}, {View: true, InPlace: true}, {Fused: true}} {
		tab.Run(64, t, bert(t, 64))
	}
	tab.Show()
	in, base, fused := tab.Fits(64, Tricks{InPlace: true}), tab.Fits(64, Tricks{}), tab.Fits(64, Tricks{Fused: true})
	memlab.Judge("for long sequences, in-place's 12 percent can decide between batch 32 and 64", memlab.HoldsIf(in && !base),
		"batch 64 fits in place: %v, without: %v; with fused attention: %v", in, base, fused)
}

/*md
At 512 tokens twice the batch needs twice the scores, and in place saves none of them:
for 64 to fit where only 32 did, a technique has to remove about half of the peak — the
attention scores themselves. That is what fused attention does (PyTorch runs
`F.scaled_dot_product_attention` with FlashAttention or memory-efficient kernels that
never hold the scores): not one of the chapter's three.

**Try it:** in the cell "batch 32 or 64", make the sequences 128 tokens (both places),
where in place did save a share of the peak. Predict: does in place now let batch 64 fit?

<details><summary>Answer</summary>

No: at 128 tokens in place saves a share of the peak, but batch 64 needs about twice
batch 32's — the device sits halfway between them, and a share of about a tenth does not
bridge a gap of a half.
</details>
*/

/*md:zh-CN
在 512 个词元时，批大小翻倍，分数张量也要翻倍，而原地操作一个也省不下：要想让只能跑 32 的地方跑得下 64，某种技术就得去掉大约一半的峰值——也就是注意力分数本身。这正是融合注意力做的事（PyTorch 用 FlashAttention 或省显存的内核执行 `F.scaled_dot_product_attention`，根本不保留分数）：它不在教材的三招之列。

**动手试试：** 在“batch 32 or 64”那个单元格里把序列改成 128 个词元（两处都改）——在这个长度上原地操作确实省下了一部分峰值。先预测：原地操作这回能让批大小 64 跑下来吗？

<details><summary>答案</summary>

不能：在 128 个词元时原地操作省下了一部分峰值，但批大小 64 需要的大约是批大小 32 的两倍——设备的容量在两者正中间，省下大约十分之一，填不上一半的差距。
</details>
*/
