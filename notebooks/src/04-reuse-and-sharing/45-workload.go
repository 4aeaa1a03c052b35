package nb04

import (
	"errors"
	"fmt"
	"slices"

	"memlab.dev/memlab/experiments/ch4"
	"memlab.dev/memlab/experiments/ch4/ch4plot"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/model"
	"memlab.dev/memlab/tensor"
)

/*md
### The model package: the same forward pass, mode by mode

Package `model` runs the forward pass above in its modes, one request at a time, without
a batch dimension: `model.Baseline`, `InPlace`, `Views`, `KVCache` and `model.Chapter`,
the three together, mirror the `Tricks` above. Two more are memlab's own, not the
chapter's: `PooledScores` (attention scores and softmax in pooled buffers, below) and
`LastLogits` (the output projection for the sampled position only); `Optimised` is
`Chapter` and `LastLogits`. Every mode gives the same logits. The engines of this section
run your forward pass: `pass` (in "The forward pass, 3") hands the three cells above to
them as a `model.Forward`, in every mode: `Tricks` for the chapter's three, `last` in
`logits` for `LastLogits`, the engine's pool of score buffers in `scores` for
`PooledScores`. Edit the forward pass and these tables change too.
Without `View` your pass makes one allocator call a pass more than the model's own would:
the `(batch, seq, hidden)` flatten copy. One request, mode by mode — in PyTorch, for one
model and one request:

```python
weights = torch.cuda.memory_allocated()        # the model is loaded
calls = torch.cuda.memory_stats()["allocation.all.allocated"]
torch.cuda.reset_peak_memory_stats()
with torch.inference_mode():
    tokens = model.generate(prompt, max_new_tokens=10)   # e.g. a Hugging Face model
print(torch.cuda.max_memory_allocated() - weights,
      torch.cuda.memory_stats()["allocation.all.allocated"] - calls)
```
*/

/*md:zh-CN
### `model` 包：同一段前向传播，逐个模式

`model` 包用它的各个模式运行上面那段前向传播，一次一个请求，没有批维度：`model.Baseline`、`InPlace`、`Views`、`KVCache` 以及三招合用的 `model.Chapter`，对应上面的 `Tricks`。另外两个是 memlab 自己加的，不是教材的：`PooledScores`（注意力分数和 softmax 写进池化的缓冲区，见下文）和 `LastLogits`（只为要采样的那个位置计算输出投影）；`Optimised` 是 `Chapter` 加 `LastLogits`。所有模式得到的输出分数都完全相同。这一节的引擎跑的是你的前向传播：`pass`（在“前向传播之三”里）把上面三个单元格作为 `model.Forward` 交给引擎，每种模式都用它：教材的三招靠 `Tricks`，`LastLogits` 靠 `logits` 里的 `last`，`PooledScores` 靠 `scores` 里引擎池子的分数缓冲区。改动前向传播，这些表格也随之改变。不开 `View` 时，你的前向传播每次比模型自己的多一次分配器调用：那就是 `(batch, seq, hidden)` 展平时的拷贝。先看一个请求，逐个模式对比——用 PyTorch 对一个模型、一个请求来测是这样：

```python
weights = torch.cuda.memory_allocated()        # 模型已加载
calls = torch.cuda.memory_stats()["allocation.all.allocated"]
torch.cuda.reset_peak_memory_stats()
with torch.inference_mode():
    tokens = model.generate(prompt, max_new_tokens=10)   # 例如一个 Hugging Face 模型
print(torch.cuda.max_memory_allocated() - weights,
      torch.cuda.memory_stats()["allocation.all.allocated"] - calls)
```
*/

//nb:cell
func oneRequestByMode() {
	req := memlab.Must(ch4.FirstRequest("small")) // the small model's workload's first request
	tab := ch4.ModeTable(req)                     // a row per mode; the request in the caption
	for _, mode := range []model.Mode{model.Baseline, model.InPlace, model.Views, model.KVCache, model.Chapter, model.Optimised} {
		l := memlab.MustOpen()
		e := memlab.Must(ch4.NewEngine(l, "small", mode, pass)) // the weights on l, an engine running pass (above) in mode
		weights, calls := l.MemoryAllocated(), ch4.AllocCalls(l)
		l.ResetPeakMemoryStats()
		g := memlab.Must(e.Generate(req))
		tab.Row(mode, memlab.FormatBytes(weights), memlab.FormatBytes(l.MaxMemoryAllocated()-weights), ch4.AllocCalls(l)-calls, fmt.Sprint(g.Tokens[:6], "…"))
		memlab.Check(errors.Join(e.Release(), l.Close()))
	}
	tab.Show()
}

/*md
**Try it:** take request `[3]` (a short prompt) instead of `[0]`. Predict: is the
baseline's peak still above the optimised one's?

<details><summary>Answer</summary>

No, below it: the preallocated cache is sized for the longest request whatever the
request, and a short prompt's full logits are small.
</details>

### The whole workload

8 requests with prompts of 16–64 tokens and 8–32 generated tokens, each mode on a device
of its own, the modes taking turns request by request. The run is
[`ch4.Inference`](../../experiments/ch4/inference.go): the cell above, for every request,
with CUDA-event timing on a GPU. It takes about 15 s on the simulator on a 2-core machine (its CPU kernels compute every
value; a second on a GPU) and prints a line as each request is done in every mode. The first table is what the chapter asks for: the
baseline, each technique alone, the three together; the second, apart, holds memlab's own
extras (pooled scores, last-logits and their combinations), which are not the chapter's.
The notes under the tables are printed from the run, and they hold the chapter's figures
against the measurement — the three techniques together:

> 教材原文：「这三步走下来，显存占用通常能降20-30%，而且推理速度还有提升——因为减少了内存分配和拷贝的开销。」
>
> *Chapter 4:* "Follow these three steps and memory use typically falls by 20–30%, and
> inference gets faster too — because there is less allocating and copying."

and in-place alone, first claimed in 4.1:

> 教材原文：「我的经验：有一次优化一个BERT推理管线，发现仅仅把几个激活函数改成in-place版本，显存占用就降了12%。」
>
> *Chapter 4:* "From experience: optimising a BERT inference pipeline, I found that just
> switching a few activation functions to their in-place versions cut memory use by 12%."

```python
# one process per mode (each with its own caching allocator), the same 8 requests
torch.cuda.reset_peak_memory_stats()
for prompt, n_new in requests:
    generate(model, prompt, n_new)               # baseline, in-place, views, kv-cache, …
peak = torch.cuda.max_memory_allocated() - weights
stats = torch.cuda.memory_stats()                # "allocation.all.allocated", "num_device_alloc"
print(peak, torch.cuda.max_memory_reserved(), stats["allocation.all.allocated"], stats["num_device_alloc"])
```
*/

/*md:zh-CN
**动手试试：** 把请求 `[0]` 换成 `[3]`（一个短提示词）。先预测：基线的峰值还高于 `optimised` 吗？

<details><summary>答案</summary>

不，反而更低：预分配的缓存不管请求长短都按最长请求来定大小，而短提示词的完整输出分数本来就小。
</details>

### 完整的工作负载

8 个请求，提示词长 16–64 个词元，各生成 8–32 个词元；每种模式各用一台自己的设备，各模式按请求轮流执行。这次运行就是 [`ch4.Inference`](../../experiments/ch4/inference.go)：把上面那个单元格对每个请求都做一遍，在 GPU 上用 CUDA 事件计时。在 2 核机器的模拟设备上它要跑大约 15 秒（CPU 内核要算出每一个数值；在 GPU 上一秒左右），每个请求在所有模式下跑完时打印一行。第一张表是教材要的：基线、每招单独用、三招合用；第二张表单独列出 memlab 自己加的（池化的分数、last-logits 以及它们的组合），它们不是教材的内容。表格下方的结论由这次运行打印，并把教材的数字和实测放在一起对照——先是三招合用：

> 教材原文：「这三步走下来，显存占用通常能降20-30%，而且推理速度还有提升——因为减少了内存分配和拷贝的开销。」

再是单独的原地操作，4.1 节已经引过：

> 教材原文：「我的经验：有一次优化一个BERT推理管线，发现仅仅把几个激活函数改成in-place版本，显存占用就降了12%。」

```python
# 每种模式一个进程（各有自己的缓存分配器），同样的 8 个请求
torch.cuda.reset_peak_memory_stats()
for prompt, n_new in requests:
    generate(model, prompt, n_new)               # baseline、in-place、views、kv-cache ……
peak = torch.cuda.max_memory_allocated() - weights
stats = torch.cuda.memory_stats()                # "allocation.all.allocated"、"num_device_alloc"
print(peak, torch.cuda.max_memory_reserved(), stats["allocation.all.allocated"], stats["num_device_alloc"])
```
*/

//nb:cell plot
func inferenceSmall() {
	// 4.4 the whole workload: 10 modes × 8 requests — about 15 s on the simulator on 2 cores (its CPU kernels compute every value), a second on a GPU
	progress := func(done, total int) { ch4.Say("request %d of %d done in every mode", done, total) }
	r := memlab.Must(ch4.Inference(ch4.Setup{Progress: progress, Forward: pass}, "small"))
	r.Table().Show()
	r.ExtrasTable().Show()
	fmt.Print(r.Findings())
	memlab.Show(ch4plot.Inference(r))
	memlab.Show(ch4plot.InferenceCurves(r))
	saved, _ := r.Compare(model.Chapter, model.Baseline, ch4.Working)
	memlab.Judge("the three techniques together cut memory use by 20–30 percent", memlab.HoldsIf(saved >= 20 && saved <= 30),
		"the small model's workload: %.1f %% of the peak above the weights saved", saved)
}

/*md
The curves give each mode's peak during every forward pass, pass by pass (the
same passes in every mode): the spikes are prompts, the flat stretches decoding. The
baseline's peak is a prompt's forward pass, where it computes logits for every prompt
position — which is why `last-logits`, memlab's extra, moves the peak and in-place alone
does not: in-place does not touch the tensors alive at that moment. `views` keeps the
fused QKV projection alive through the K/V views kept as the cache (a view keeps its
base's storage, exercise 11), and `kv-cache` is sized for the longest request: the
chapter's three together therefore do not lower this peak. The chapter's 20–30 % can hold
only where the peak is made of what those techniques remove; this model's is not. What
they do remove, every time, is allocator calls.

**Try it:** run `ch4.Inference(ch4.Setup{Forward: pass}, "small", model.Optimised&^model.InPlace, model.Optimised)`
— the first mode is the reference. Predict: does in-place, which saved nothing alone,
lower the peak now?

<details><summary>Answer</summary>

Yes: once last-logits has taken the logits off the peak, in-place removes tensors alive
at the new one; the notes print the share. (Both modes are memlab's extras, so their
rows are in the second table.)
</details>

### Token latency: one run is not a measurement

The median token times in the notes above come from one run, and on this device the
modes differ by about as much as one run differs from the next. The chapter's 4.3
figure for the KV-cache pool:

> 教材原文：「因为KV Cache的大小在推理过程中是固定的，用池化可以避免每次生成token时都重新分配显存，推理延迟能降5-10%。」
>
> *Chapter 4:* "Because the KV cache's size is fixed during inference, pooling avoids
> reallocating memory for every generated token, and cuts inference latency by 5–10%."

Three **live** runs of the baseline and `kv-cache` on this machine's device (about 9 s on
the simulator on 2 cores, each run printing its line as it ends; a second on a GPU), their
spread, the `cudaMalloc` calls and allocator calls of the last one, and beside them the two
runs **recorded** on an H200 (`memlab ch4 -record`): every line says which it is. The
verdict rests on the live runs on a GPU; on the simulator, whose times are its CPU
kernels', it rests on the recorded large run, and says so. Is the chapter's 5–10 % within
the spread?

```python
speedups = []
for run in range(3):
    base, kv = median_token(generate_all(mode="baseline")), median_token(generate_all(mode="kv-cache"))
    speedups.append(100 * (1 - kv / base))
print(sorted(speedups)[1], min(speedups), max(speedups))
```
*/

/*md:zh-CN
曲线给出每种模式在每一次前向传播中的峰值，一次接一次（各模式的前向传播完全相同）：尖峰是处理提示词，平坦的部分是逐词元解码。基线的峰值出现在某个提示词的前向传播里，此时它要为提示词的每个位置计算输出分数——这就是为什么 memlab 额外加的 `last-logits` 能挪动峰值，而单靠原地操作不能：原地操作碰不到那一刻还活着的张量。`views` 通过作为缓存保留下来的 K/V 视图，让融合的 QKV 投影一直活着（视图会保住基张量的存储，见练习 11）；`kv-cache` 则按最长请求定大小：所以教材的三招合用并不能降低这个峰值。教材的 20-30% 只有在峰值恰好由这些技术能去掉的东西构成时才可能成立；这个模型的峰值不是。它们每一次都确实去掉的，是分配器调用。

**动手试试：** 运行 `ch4.Inference(ch4.Setup{Forward: pass}, "small", model.Optimised&^model.InPlace, model.Optimised)`——第一个模式是参照。先预测：单独使用时什么也没省下的原地操作，这回能压低峰值吗？

<details><summary>答案</summary>

能：last-logits 把输出分数从峰值里拿掉之后，原地操作去掉的正是新峰值那一刻活着的张量；结论里打印了比例。（这两个模式都是 memlab 自己加的，所以它们的行在第二张表里。）
</details>

### 逐词元延迟：跑一次不算测量

上面结论里的词元延迟中位数只来自一次运行；在这台设备上，各模式之间的差别和两次运行之间的差别差不多大。教材 4.3 节给 KV 缓存池的数字是：

> 教材原文：「因为KV Cache的大小在推理过程中是固定的，用池化可以避免每次生成token时都重新分配显存，推理延迟能降5-10%。」

下面在本机的设备上把基线和 `kv-cache` **实时**各跑三次（在 2 核机器的模拟设备上约 9 秒，每跑完一次打印一行；在 GPU 上一秒左右），给出它们的离散程度、最后一次运行的 `cudaMalloc` 次数和分配器调用次数，旁边是在 H200 上**录制**的两次运行（`memlab ch4 -record`）：每一行都标明了是哪一种。在 GPU 上，结论依据实时运行；在模拟设备上，时间是 CPU 内核的时间，结论改依据录制的 large 运行，并且会写明这一点。教材的 5-10% 落在离散范围之内吗？

```python
speedups = []
for run in range(3):
    base, kv = median_token(generate_all(mode="baseline")), median_token(generate_all(mode="kv-cache"))
    speedups.append(100 * (1 - kv / base))
print(sorted(speedups)[1], min(speedups), max(speedups))
```
*/

//nb:cell
func tokenLatencySpread() {
	// 4.3's 5–10 %: three live runs (about 9 s on the simulator on 2 cores, a second on a GPU), then the H200 recording
	faster, r := []float64{}, ch4.InferenceResult{}
	for run := range 3 {
		r = memlab.Must(ch4.Inference(ch4.Setup{Forward: pass}, "small", model.Baseline, model.KVCache))
		v, _ := r.Compare(model.KVCache, model.Baseline, ch4.TokenLatency)
		faster = append(faster, v)
		ch4.Say("live run %d of 3: kv-cache %s", run+1, ch4.Faster(v))
	}
	median := ch4.LiveSpread(r.Device, faster) // and the range
	rec := memlab.Must(ch4.LoadRecorded())
	ch4.SayMallocs(r, rec) // cudaMalloc, allocator calls and token times: live, then recorded on the H200
	source, v := ch4.LatencyEvidence(r.Device, median, rec)
	memlab.Judge("pooling the KV cache cuts inference latency by 5–10 percent", memlab.HoldsIf(v >= 5), "%s: %s", source, ch4.Faster(v))
}

/*md
The live range says how far one run lands from the next: one run's percentage is no
verdict, and on the simulator the live times are the CPU kernels', not a GPU's. The H200
recording holds one run per size (no repeats): read each of its figures as one sample.
The live H200 runs of the small model and the recorded ones need not agree: at this size
a token takes a fraction of a millisecond, and the difference between the modes is of the
order of the spread — which is why the verdict line says which figure it rests on. Where the
speed-up comes from is not `cudaMalloc` — the lines above count them, and they are far
too few to matter beside the allocator calls — but the two things a `torch.cat` cache
does at every token in every layer: two allocator calls (a new keys tensor and a new
values tensor) and a copy of the whole cache so far, where the pooled cache copies the new
token's keys and values only.

**Try it:** run the cell with `model.Chapter` in place of `model.KVCache` (in both
places). Predict before running: more or fewer allocator calls than `kv-cache`, and any
`cudaMalloc`?

<details><summary>Answer</summary>

Fewer allocator calls: in-place and views remove allocations of their own on top of the
cache's; still no `cudaMalloc` on this model. The times move within the same spread.
</details>

### Pooled attention-score buffers

The chapter names attention scores as a buffer to pool:

> 教材原文：「显存池化：KV Cache和注意力分数矩阵用池化管理，避免频繁分配。」
>
> *Chapter 4:* "Memory pooling: manage the KV cache and the attention-score matrices with
> pools, to avoid frequent allocation."

Every decoding step computes `scores = q @ k.T` of a new length. In PyTorch a pooled
buffer is written with the `out=` form, `torch.matmul(q, k_t, out=buf[..., :n])`;
memlab's is `tensor.MatmulInto(out, q, kt)` (and `tensor.SoftmaxInto` for the
probabilities), with PyTorch's dtype and overlap checks. One layer's heads over 96 steps,
first allocating the scores, then writing them into a view of one buffer sized for the
longest sequence (`[heads, 1, maxLen]`, of which step `n` uses the first `n` columns):

```python
q = torch.randn(heads, 1, head_dim, device="cuda")
K = torch.randn(heads, max_len, head_dim, device="cuda")   # a preallocated cache
buf = torch.empty(heads, 1, max_len, device="cuda")        # the pooled buffer
for n in range(1, max_len + 1):
    k_t = K[:, :n].transpose(1, 2)                         # views
    scores = q @ k_t                                       # allocates [heads, 1, n] …
    torch.matmul(q, k_t, out=buf[..., :n])                 # … or writes into the buffer
```
*/

/*md:zh-CN
实时运行的范围说明了一次运行和下一次能差多远：一次运行得出的百分比算不上结论；在模拟设备上，实时的时间是 CPU 内核的时间，而不是 GPU 的。H200 的录制结果每种规模只有一次运行（没有重复）：它的每个数字都只能当作一个样本。small 模型在 H200 上的实时运行和录制运行不一定一致：在这个规模上，一个词元只要零点几毫秒，各模式之间的差别和离散范围同一个量级——所以结论那一行会写明它依据的是哪个数字。提速并不来自 `cudaMalloc`——上面几行数了它们的次数，和分配器调用比起来少得无足轻重——而是来自 `torch.cat` 缓存在每一层、每个词元上都要做的两件事：两次分配器调用（一个新的键张量和一个新的值张量），以及把到目前为止的整个缓存拷贝一遍；池化的缓存只拷贝新词元的键和值。

**动手试试：** 把单元格里的 `model.KVCache` 换成 `model.Chapter`（两处都换）。运行之前先预测：分配器调用比 `kv-cache` 多还是少？会不会有 `cudaMalloc`？

<details><summary>答案</summary>

分配器调用更少：原地操作和视图在缓存之外又去掉了各自的分配；在这个模型上仍然没有 `cudaMalloc`。时间在同样的离散范围内浮动。
</details>

### 池化的注意力分数缓冲区

教材点名要池化注意力分数：

> 教材原文：「显存池化：KV Cache和注意力分数矩阵用池化管理，避免频繁分配。」

每一个解码步都要计算一个新长度的 `scores = q @ k.T`。在 PyTorch 中，写入池化缓冲区用的是 `out=` 形式：`torch.matmul(q, k_t, out=buf[..., :n])`；memlab 中对应的是 `tensor.MatmulInto(out, q, kt)`（概率则用 `tensor.SoftmaxInto`），带有和 PyTorch 一样的数据类型 (dtype) 检查与重叠检查。下面对一层的所有头跑 96 步：先是每步分配分数张量，再是写进一个按最长序列定大小的缓冲区的视图里（`[heads, 1, maxLen]`，第 `n` 步用前 `n` 列）：

```python
q = torch.randn(heads, 1, head_dim, device="cuda")
K = torch.randn(heads, max_len, head_dim, device="cuda")   # 预分配的缓存
buf = torch.empty(heads, 1, max_len, device="cuda")        # 池化的缓冲区
for n in range(1, max_len + 1):
    k_t = K[:, :n].transpose(1, 2)                         # 视图
    scores = q @ k_t                                       # 分配 [heads, 1, n] ……
    torch.matmul(q, k_t, out=buf[..., :n])                 # ……或者写进缓冲区
```
*/

//nb:cell
func attentionScores() {
	// 4.4 scores allocated at each step, or written into one pooled buffer
	l := memlab.MustOpen()
	defer l.Close()
	const heads, headDim, maxLen = 4, 32, 96
	q := memlab.Must(tensor.Randn(l, 1, tensor.Float32, heads, 1, headDim))
	K := memlab.Must(tensor.Randn(l, 2, tensor.Float32, heads, maxLen, headDim)) // a preallocated cache
	buf := memlab.Must(tensor.Empty(l, tensor.Float32, heads, 1, maxLen))        // the pooled buffer
	for _, way := range []string{"allocated by Matmul", "written by MatmulInto into the buffer"} {
		calls, mallocs, addrs := ch4.AllocCalls(l), l.MemoryStats()["num_device_alloc"], map[tensor.Ptr]bool{}
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
		memlab.Measured("scores %s: %d steps, %d allocator calls, %d cudaMalloc, distinct addresses: %d",
			way, maxLen, ch4.AllocCalls(l)-calls, l.MemoryStats()["num_device_alloc"]-mallocs, len(addrs))
	}
	memlab.Check(tensor.ReleaseAll(buf, K, q))
}

/*md
Without the buffer the caching allocator is already a pool for the scores — one allocator
call a step, served from the cache — the block a step frees is the one the next step gets, as the
count of distinct addresses shows — no `cudaMalloc`; the
`out=` form saves that call too. In the model, `model.PooledScores` takes two such buffers
(scores and softmax) from a `TensorPool` for every layer of every pass and puts them back;
the scale and the mask are applied in the scores' buffer. Measured on one request, beside
the modes it joins:

```python
pool = TensorPool((heads, max_len, max_len))     # the chapter's class: scores, then softmax
buf = pool.get()
scores = buf[:, :n, :n]                          # this pass's n positions
torch.matmul(q, k.transpose(-2, -1), out=scores)
pool.put(buf)                                    # back for the next layer
```
*/

/*md:zh-CN
即使没有这个缓冲区，缓存分配器本身已经是分数张量的池子——每步一次分配器调用，由缓存供给——上一步释放的块正是下一步拿到的块，不同地址的计数说明了这一点——不需要 `cudaMalloc`；`out=` 形式则连这一次调用也省了。在模型里，`model.PooledScores` 在每次前向传播的每一层都从一个 `TensorPool` 取出两个这样的缓冲区（分数和 softmax），用完放回；缩放和掩码直接在分数缓冲区里完成。下面在一个请求上测量，与它所加入的模式并列：

```python
pool = TensorPool((heads, max_len, max_len))     # 教材的类：分数和 softmax 各取一个
buf = pool.get()
scores = buf[:, :n, :n]                          # 本次前向传播的 n 个位置
torch.matmul(q, k.transpose(-2, -1), out=scores)
pool.put(buf)                                    # 放回，留给下一层
```
*/

//nb:cell
func pooledScoresByMode() {
	// 4.4 pooled score buffers in the model, mode by mode
	size := memlab.Must(model.SizeByName("small"))
	req := memlab.Must(size.Workload.Make(size.Config.Vocab))[0]
	tab := memlab.NewTable(ch4.T("mode", "peak above the weights", "allocator calls", "score-pool hits / misses")...)
	logits, peak, calls := map[model.Mode][]float32{}, map[model.Mode]int64{}, map[model.Mode]int64{}
	for _, mode := range []model.Mode{model.Baseline, model.PooledScores, model.Chapter, model.Chapter | model.PooledScores} {
		l := memlab.MustOpen()
		m := memlab.Must(model.New(l, size.Config))
		e := memlab.Must(m.NewEngine(mode, model.EngineOptions{MaxLen: size.Workload.MaxLen(), Forward: pass}))
		weights, before := l.MemoryAllocated(), ch4.AllocCalls(l)
		l.ResetPeakMemoryStats()
		logits[mode] = memlab.Must(e.Generate(req)).LastLogits
		st := e.ScorePoolStats()
		peak[mode], calls[mode] = l.MaxMemoryAllocated()-weights, ch4.AllocCalls(l)-before
		tab.Row(mode, memlab.FormatBytes(peak[mode]), calls[mode], fmt.Sprintf("%d / %d", st.Hits, st.Misses))
		memlab.Check(e.Release())
		memlab.Check(m.Release())
		memlab.Check(l.Close())
	}
	tab.Show()
	memlab.Measured("pooled scores' last logits equal the unpooled ones exactly: %v, %v; the pooled chapter's peak is %s higher, its two buffers are %s",
		slices.Equal(logits[model.Baseline], logits[model.PooledScores]), slices.Equal(logits[model.Chapter], logits[model.Chapter|model.PooledScores]),
		memlab.FormatBytes(peak[model.Chapter|model.PooledScores]-peak[model.Chapter]), memlab.FormatBytes(int64(2*4*size.Config.Heads*size.Workload.MaxLen()*size.Workload.MaxLen())))
	memlab.Judge("pooling the attention-score matrices avoids frequent allocation", memlab.HoldsIf(calls[model.PooledScores] < calls[model.Baseline]),
		"allocator calls %d → %d with the score buffers pooled", calls[model.Baseline], calls[model.PooledScores])
}

/*md
Two buffers serve every layer of every pass (two misses, the rest hits), and the
allocator calls fall — that half of the chapter's advice holds. The peak rises, by the two
buffers: they are sized for the longest request and stay in the pool, so they sit under
the peak of the logits, which the scores never made. Pooling pays where the scores make
the peak, and there only when the longest request is near the typical one. **So `chapter`
stays the three techniques with the KV-cache arenas as its pool** (also what "chapter"
means in the H200 recordings, made before this mode), and `chapter+pooled-scores` is
reported beside it, in the tables of `memlab ch4` and below.

**Try it:** in the cell "scores allocated at each step" (its first comment line), give `q` 1024 positions, as in a long prompt's pass
(`tensor.Randn(l, 1, tensor.Float32, heads, 1024, headDim)`), and the buffer
`[heads, 1024, maxLen]`: past 64 columns the allocated scores are larger than 1 MiB, the
small pool's limit. Predict: how many `cudaMalloc` calls does the allocating loop make,
and at how many addresses are its scores served? In the cell "pooled score buffers in the
model", add
`model.Optimised` and `model.Optimised | model.PooledScores` to the modes: once
last-logits has taken the logits off the peak, do the buffers still raise it?

<details><summary>Answer</summary>

No `cudaMalloc` at all: allocating the buffer (larger than 1 MiB) made a 20 MiB segment
of the large pool — the 1–10 MiB rule of notebook 02 — and the large scores are carved
from its free part; the scores are served at two addresses, one in the small pool while
they fit there, one in that segment after. Still one allocator call a step, and none for
the `out=` loop. In the cell "pooled score buffers in the model" the buffers raise the optimised peak by their whole
size as well: they sit in the pool for the whole request, whatever the peak is made of.
</details>

### In-place LayerNorm

The chapter asks for layer normalisation in place:

> 教材原文：「in-place操作：LayerNorm和激活函数用in-place版本，减少中间张量。」
>
> *Chapter 4:* "In-place operations: use the in-place versions of LayerNorm and the
> activation functions, to cut intermediate tensors."

**PyTorch has no in-place layer norm** (there is `F.layer_norm`, no `layer_norm_`), and
memlab's `LayerNorm` allocates its result too. Emulating it — computing `ln(h)` and
copying it over `h` — allocates the result all the same, and in this pre-LN transformer
`h` is the residual stream, which the residual add reads after the sublayer:

```python
ln = torch.nn.LayerNorm(128, device="cuda")
w = torch.randn(128, 128, device="cuda") * 0.02     # a sublayer
h = torch.randn(64, 128, device="cuda")             # the residual stream, 64 tokens
h2 = h.clone()
torch.cuda.reset_peak_memory_stats()
h += ln(h) @ w                                      # as the model does
torch.cuda.reset_peak_memory_stats()
h2.copy_(ln(h2))                                    # "in place": ln(h), copied over h
h2 += h2 @ w                                        # the residual add now reads ln(h), not h
print(torch.cuda.max_memory_allocated(), (h - h2).abs().max().item())
```
*/

/*md:zh-CN
两个缓冲区供应了每次前向传播的每一层（两次未命中，其余全部命中），分配器调用也随之减少——教材建议的这一半成立。峰值却上升了，正好多出这两个缓冲区：它们按最长请求定大小，并且一直留在池子里，于是压在了输出分数造成的峰值之下，而那个峰值本来就不是分数张量造成的。只有在分数张量构成峰值的地方，池化才划算，而且还得最长请求与典型请求相差不大。**所以 `chapter` 仍然是以 KV 缓存显存区为池子的那三招**（这也是 H200 录制结果里“chapter”的含义，那些结果录制于这个模式出现之前），`chapter+pooled-scores` 则在 `memlab ch4` 的表格和下文中与它并列报告。

**动手试试：** 在“scores allocated at each step”那个单元格（看它的第一行注释）里，像处理一个长提示词那样给 `q` 1024 个位置（`tensor.Randn(l, 1, tensor.Float32, heads, 1024, headDim)`），缓冲区设为 `[heads, 1024, maxLen]`：超过 64 列之后，分配出来的分数张量就大于 1 MiB，即小块池的上限。先预测：分配式循环会调用几次 `cudaMalloc`？它的分数张量落在几个地址上？在“pooled score buffers in the model”那个单元格里，给模式列表加上 `model.Optimised` 和 `model.Optimised | model.PooledScores`：等 last-logits 把输出分数从峰值里拿掉之后，缓冲区还会抬高峰值吗？

<details><summary>答案</summary>

一次 `cudaMalloc` 都没有：分配那个缓冲区（大于 1 MiB）时建了一个大块池的 20 MiB 段——笔记本 02 里 1–10 MiB 的规则——大的分数张量就从这个段的空闲部分切出来；分数张量落在两个地址上，装得进小块池时一个，之后在那个段里一个。分配式循环仍然每步一次分配器调用，`out=` 循环一次都没有。在“pooled score buffers in the model”那个单元格里，缓冲区同样把 optimised 的峰值整整抬高了它们自己的大小：不管峰值由什么构成，它们在整个请求期间都待在池子里。
</details>

### 原地 LayerNorm

教材要求层归一化 (layer normalisation) 原地进行：

> 教材原文：「in-place操作：LayerNorm和激活函数用in-place版本，减少中间张量。」

**PyTorch 并没有原地的 layer norm**（只有 `F.layer_norm`，没有 `layer_norm_`），memlab 的 `LayerNorm` 也会为结果分配显存。硬要模拟——先算出 `ln(h)` 再拷贝回 `h`——结果张量照样要分配；而在这个 pre-LN 结构的 Transformer 里，`h` 是残差流，子层算完之后残差相加还要读它：

```python
ln = torch.nn.LayerNorm(128, device="cuda")
w = torch.randn(128, 128, device="cuda") * 0.02     # 一个子层
h = torch.randn(64, 128, device="cuda")             # 残差流，64 个词元
h2 = h.clone()
torch.cuda.reset_peak_memory_stats()
h += ln(h) @ w                                      # 模型里的做法
torch.cuda.reset_peak_memory_stats()
h2.copy_(ln(h2))                                    # “原地”：算出 ln(h) 再拷回 h
h2 += h2 @ w                                        # 残差相加读到的变成了 ln(h)，而不是 h
print(torch.cuda.max_memory_allocated(), (h - h2).abs().max().item())
```
*/

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
		memlab.FormatBytes(outPeak), memlab.FormatBytes(inPeak), ch4.MaxDiff(h, h2))
	memlab.Judge("use the in-place version of LayerNorm", memlab.HoldsIf(ch4.MaxDiff(h, h2) == 0),
		"PyTorch has none; emulated, it saves %s and changes the output by up to %.3g", memlab.FormatBytes(outPeak-inPeak), ch4.MaxDiff(h, h2))
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
`h2.Add_(d)` (and release `keep`). Predict: is the output right again, and where is the
peak?

<details><summary>Answer</summary>

Right again (a difference of 0), and the peak is back at the out-of-place one: the clone
costs what the "in-place" version saved.
</details>

### On the GPU

The same comparison recorded on an H200 (`memlab ch4 -device cuda -size small|large
-record …`, files in [`experiments/ch4/recorded`](../../experiments/ch4/recorded/README.md)).
Tables and notes are printed from the files, which name their command, date and card.
The latency half of the chapter's claims can only be judged here, where the times are
CUDA-event times — the KV-cache sentence of 4.3:

> 教材原文：「因为KV Cache的大小在推理过程中是固定的，用池化可以避免每次生成token时都重新分配显存，推理延迟能降5-10%。」
>
> *Chapter 4:* "Because the KV cache's size is fixed during inference, pooling avoids
> reallocating memory for every generated token, and cuts inference latency by 5–10%."

```python
start = torch.cuda.Event(enable_timing=True)
end = torch.cuda.Event(enable_timing=True)
start.record()
logits = model(next_token, past_key_values=cache)   # one decoding step
end.record()
torch.cuda.synchronize()
step_ms = start.elapsed_time(end)
```
*/

/*md:zh-CN
这种模拟确实压低了峰值——归一化后的副本不再与子层的输出同时存在——但答案错了：正是 4.1 节那个陷阱，一个被两个分支读取的张量。所以 memlab 的做法和 PyTorch 一样：layer norm 非原地执行，写进一个新张量，子层一读完它就释放。（融合内核 (fused kernel) 可以在输入之后不再被使用的地方原地归一化——比如 post-LN 的块里，或者这个模型最后的输出投影之前——但在这些 pre-LN 块内部不行。）

**动手试试：** 为残差保留残差流的旧值：在 `CopyFrom` 之前写 `keep := memlab.Must(h2.Clone())`，算出 `d` 之后、`h2.Add_(d)` 之前写 `memlab.Check(h2.CopyFrom(keep))`（并释放 `keep`）。先预测：输出又对了吗？峰值在哪里？

<details><summary>答案</summary>

又对了（差值为 0），峰值也回到了非原地版本的水平：这次克隆花掉的，恰好是“原地”版本省下的。
</details>

### 在 GPU 上

同样的对比在一块 H200 上录制（`memlab ch4 -device cuda -size small|large -record …`，文件在 [`experiments/ch4/recorded`](../../experiments/ch4/recorded/README.md)）。表格和结论都从这些文件打印，文件里写明了命令、日期和显卡。教材关于延迟的那一半说法只能在这里评判，因为这里的时间是 CUDA 事件计时——也就是 4.3 节关于 KV 缓存的那句话：

> 教材原文：「因为KV Cache的大小在推理过程中是固定的，用池化可以避免每次生成token时都重新分配显存，推理延迟能降5-10%。」

```python
start = torch.cuda.Event(enable_timing=True)
end = torch.cuda.Event(enable_timing=True)
start.record()
logits = model(next_token, past_key_values=cache)   # 一个解码步
end.record()
torch.cuda.synchronize()
step_ms = start.elapsed_time(end)
```
*/

//nb:cell plot
func recordedH200() {
	runs := memlab.Must(ch4.LoadRecorded())
	for _, size := range []string{"small", "large"} {
		run, ok := runs.Size(size)
		if !ok {
			ch4.Say("no recorded run of the %s size", size)
			continue
		}
		fmt.Println(run.Header())
		if note := run.Note(); note != "" { // modes added since the run was recorded
			fmt.Println(note)
		}
		run.Result.Table().Show()
		run.Result.ExtrasTable().Show()
		fmt.Println(run.Result.Findings())
	}
	if large, ok := runs.Size("large"); ok {
		memlab.Show(ch4plot.Latency(large.Result))
		memlab.Show(ch4plot.InferenceCurves(large.Result))
		ll, _ := large.Result.Compare(model.LastLogits, model.Baseline, ch4.Working)
		opt, _ := large.Result.Compare(model.Optimised, model.Baseline, ch4.Working)
		memlab.Measured("large model: last-logits lowers the peak above the weights by only %.1f %% — the logits no longer make it — and optimised changes it by %+.1f %% (negative: higher)", ll, opt)
		b, _ := large.Result.Row(model.Baseline)
		c, _ := large.Result.Row(model.Chapter)
		memlab.Judge("memory optimisation is shortening temporaries' lives and avoiding needless copies", ch4.Essence(c, b),
			"the large model's chapter mode: allocator calls %d → %d, peak above the weights %s → %s", b.AllocCalls, c.AllocCalls, memlab.FormatBytes(b.Working), memlab.FormatBytes(c.Working))
	}
}

/*md
**Try it:** in a new cell, run `ch4.Inference(ch4.Setup{}, "small")` here and set its
table beside the recorded small run's. Predict: which columns agree with the H200, and
which do not? (On a machine with an NVIDIA GPU,
`go run ./cmd/memlab ch4 -device cuda -size small -record mine.json` records your card,
and `ch4.ParseRecording` reads the file.)

<details><summary>Answer</summary>

Peak allocated, peak reserved, allocator calls and `cudaMalloc` agree to the byte in
every mode — allocation decisions do not depend on the device (the test
`TestSimulatedMatchesRecordedSmall` checks it) — and the times do not: here they are the
CPU kernels'.
</details>

On the GPU the bytes and counts equal the simulated device's to the byte — allocation
decisions do not depend on the device — and the latencies are CUDA-event times. At the
large size the same effects as above decide the peak, and what the techniques save is
allocator calls, `cudaMalloc`s and reserved memory; read the notes above for how much.
None of the course's three figures is a constant: whether in-place, views and a KV-cache
pool lower the peak depends on which tensors are alive at the peak, and a fixed-size cache
trades peak memory for fewer allocations.

*/

/*md:zh-CN
**动手试试：** 在一个新单元格里，在这里运行 `ch4.Inference(ch4.Setup{}, "small")`，把它的表格和录制的 small 运行并排比较。先预测：哪些列与 H200 一致，哪些不一致？（在一台有 NVIDIA GPU 的机器上，`go run ./cmd/memlab ch4 -device cuda -size small -record mine.json` 会录下你的显卡，`ch4.ParseRecording` 可以读取这个文件。）

<details><summary>答案</summary>

峰值已分配、峰值已预留、分配器调用和 `cudaMalloc` 在每个模式下都分毫不差——分配决策与设备无关（测试 `TestSimulatedMatchesRecordedSmall` 检查了这一点）——时间则不一致：这里是 CPU 内核的时间。
</details>

在 GPU 上，字节数和次数与模拟设备分毫不差——分配决策与设备无关——延迟则是 CUDA 事件计时。在 large 规模下，决定峰值的仍是上面那些效应，这些技术省下的是分配器调用、`cudaMalloc` 次数和已预留显存；省了多少，请看上面的结论。教材的三个数字没有一个是常数：原地操作、视图和 KV 缓存池能不能降低峰值，取决于峰值那一刻有哪些张量还活着；而固定大小的缓存是用峰值显存换更少的分配。

*/

/*md
#### Summary

- The peak is made by the tensors alive at one moment; a technique lowers it only if it
  removes one of them. In the chapter's decoder that moment is the logits of every prompt
  position, which none of the three techniques touches.
- In place saves at the peak where an activation and its output make it (BERT-base's MLP,
  or every length once attention is fused), nothing where the attention scores do.
- What every technique does cut is allocator calls; a fixed-size cache or pool trades
  peak memory for fewer allocations.

#### Questions for discussion

1. In your own model, which tensors are alive at the peak? How would you find out with
   `torch.cuda.memory_snapshot()`?
2. Fused attention removed the scores from the peak; what would you expect to make the
   peak next, and which technique would then help?
3. The chapter gives figures (12 %, 20–30 %, 5–10 %) without the model and sizes they were
   measured on. What would you need to know to reproduce one?
*/

/*md:zh-CN
#### 小结

- 峰值由某一刻同时活着的张量构成；一招只有去掉其中之一，才能降低峰值。在教材的解码器里，那一刻是所有提示词位置的输出分数，三招没有一招碰得到它。
- 原地操作在激活值与它的输出构成峰值的地方才省（BERT-base 的 MLP，或者注意力融合之后的所有长度），在注意力分数构成峰值的地方一点不省。
- 每一招都确实削减的是分配器调用；固定大小的缓存或池子，是用峰值显存换更少的分配。

#### 讨论题

1. 在你自己的模型里，峰值那一刻活着的是哪些张量？你会怎样用 `torch.cuda.memory_snapshot()` 找出来？
2. 融合注意力把分数从峰值里拿掉之后，你预计接下来由什么构成峰值？那时哪一招会有用？
3. 教材给出的数字（12%、20-30%、5-10%）没有说是在什么模型、什么规模上测的。要复现其中一个，你需要知道什么？
*/
