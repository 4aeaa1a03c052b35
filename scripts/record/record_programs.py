#!/usr/bin/env python3
"""Record PyTorch programs' GPU memory history under several allocator settings.

memlab's own recorder (GPU machine; PyTorch with CUDA; transformers for the *_generate,
bert_*, gpt2_* and llama_* programs and the others whose docstrings name it, peft for
llama_lora_train_bf16 (a hand-written adapter without it), torchvision for the vision
programs whose docstrings name it, from vit_train_bf16 to multiscale_detector_train_bf16;
triton, which PyTorch's CUDA wheels bring, for triton_autotune_rmsnorm_train_bf16).
For each program and setting it starts a fresh Python process with
PYTORCH_CUDA_ALLOC_CONF set before torch is imported, records the allocator's history
from before the program's first CUDA allocation, runs the program and writes

  OUT/PROGRAM__TAG.pickle      torch.cuda.memory._dump_snapshot()
  OUT/PROGRAM__TAG.facts.json  what PyTorch measured: peaks, memory_stats(), summary, OOM

in the shape `memlab whatif` and its tests read (reference/workloads-2.11/README.md).
The default setting is recorded first, with Python stack frames; it is the input of a
what-if replay, the others are what the replay must predict. The capped setting runs
under set_per_process_memory_fraction(1.15 x the default run's peak allocated / total, at most 1).
With --jobs N, N programs share the card, except that a run under max_split_size_mb:128
(ALONE) has the card to itself: under it some programs' cached oversize blocks grow until
the card is full (on an 80 GB H100: GPT-2 prompt tuning 77.7 GB, an Evoformer stack
83.6 GB), and a run beside them then failed where the card, not its own allocator, was
full. A timeout around this script leaves its Python running: stop its process group.

  python3 record_programs.py --out DIR [--programs a,b] [--stacks-all] [--rerun] [--jobs N]
                                  [--repeats N [--settings TAG,TAG]] [--timeout S]
                                        every program (or those), every setting
  python3 record_programs.py --list

A new program can be run on the CPU first, unrecorded, to catch its bugs before a GPU is
lent: python3 cpu_smoke.py NAME [NAME ...] (its docstring says what it stands in for).

Programs marked COMPILED (torch.compile) are first run once, unrecorded, to warm a
persistent compile cache (TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR under --cache,
one folder a program); every recorded setting then runs in a fresh process on that warm
cache, so that no setting compiles or autotunes and all see the same requests. Programs
marked COLD compile from an empty cache of their own in every run (a folder under --cache),
as a job's first run does, Inductor's compile-time allocations in the snapshot. --rerun
records the default setting a second time into OUT/rerun/ and prints which figures
differ from the first (none, for a program that makes the same requests in every run).
--jobs N records N programs at once (each in its own processes; the settings of one
program one after another). --repeats N then records every setting N times more into
OUT/repeats/1..N/ (without frames; a program whose default facts are in OUT already is
not recorded first, and its capped runs use that default's fraction); --settings limits
the repeats to the settings of those tags (e.g. roundup_power2_divisions_4). Where the programs
are recorded is reference/workloads-2.11/, modern-2.11/, misses-2.11/ and programs-2.11/
(their READMEs).

Besides PyTorch's figures, each facts file holds what PyTorch reports about memory
pools: `segments` (every segment of the snapshot at the end, with its
`segment_pool_id`; (0, 0) is the default pool) and `marks` (memory_stats and segments
at the points a program marks with mark(), e.g. while a private pool is alive).
"""
import argparse
import concurrent.futures
import contextlib
import datetime
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

SETTINGS = [
    "",
    "expandable_segments:True",
    "max_split_size_mb:128",
    "roundup_power2_divisions:4",
    "max_split_size_mb:64,garbage_collection_threshold:0.6",
]
CAPPED = {"max_split_size_mb:64,garbage_collection_threshold:0.6": 1.15}
# Settings under which a run may grow until the card is full (cached oversize blocks
# under max_split_size_mb:128): with --jobs N such a run has the card to itself.
ALONE = {"max_split_size_mb:128"}


def tag(conf):
    if not conf:
        return "default"
    return conf.replace(":", "_").replace(",", "__").replace(".", "p")


# What PyTorch reports about pools, at the end of a run and at the points a program
# marks (mark(torch, "label")): the facts files' `segments` and `marks`.
MARKS = []


def segment_facts(segments):
    """Every segment of a snapshot, with its pool: segment_pool_id is (0, 0) for the
    default pool and another pair for a graph's or a MemPool's private pool."""
    return [{k: (list(v) if isinstance(v, tuple) else v) for k, v in seg.items() if k not in ("blocks", "frames")}
            | {"blocks": len(seg.get("blocks", ())),
               "active_blocks": sum(1 for b in seg.get("blocks", ()) if b["state"] != "inactive")}
            for seg in segments]


def mark(torch, label):
    """Record memory_stats() and the segments with their pool ids at this point."""
    MARKS.append({"label": label, "memory_stats": dict(torch.cuda.memory_stats()),
                  "segments": segment_facts(torch.cuda.memory_snapshot())})


# ---------------------------------------------------------------- programs
# Each takes the torch module and runs on the current CUDA device. Weights and inputs
# are seeded and nothing is autotuned, so every setting sees the same requests.

def transformer_varlen_infer(torch):
    """A 6-layer encoder serving batches of very different sequence lengths."""
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True)
    enc = torch.nn.TransformerEncoder(layer, 6, enable_nested_tensor=False).cuda().eval()
    with torch.no_grad():
        for bs, n in [(8, 128), (4, 512), (16, 64), (2, 1024), (8, 384), (1, 2048), (12, 200), (3, 700)]:
            x = torch.randn(bs, n, 512, device="cuda")
            y = enc(x)
            del x, y


def lstm_train(torch):
    """A 2-layer LSTM language model trained on sequences of changing length and batch."""
    torch.manual_seed(0)
    rnn = torch.nn.LSTM(256, 512, num_layers=2).cuda()
    head = torch.nn.Linear(512, 1000).cuda()
    opt = torch.optim.Adam(list(rnn.parameters()) + list(head.parameters()))
    for t, b in [(50, 32), (120, 16), (30, 64), (200, 8), (80, 32)]:
        x = torch.randn(t, b, 256, device="cuda")
        target = torch.randint(0, 1000, (t * b,), device="cuda")
        out, _ = rnn(x)
        loss = torch.nn.functional.cross_entropy(head(out).reshape(-1, 1000), target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del x, target, out, loss


def unet_train_bf16(torch):
    """A small U-Net trained under bf16 autocast at three resolutions."""
    torch.manual_seed(0)
    nn = torch.nn

    def block(i, o):
        return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(),
                             nn.Conv2d(o, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU())

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.d1, self.d2, self.d3 = block(3, 32), block(32, 64), block(64, 128)
            self.u2, self.u1 = block(128 + 64, 64), block(64 + 32, 32)
            self.out = nn.Conv2d(32, 2, 1)

        def forward(self, x):
            a = self.d1(x)
            b = self.d2(nn.functional.max_pool2d(a, 2))
            c = self.d3(nn.functional.max_pool2d(b, 2))
            up = nn.functional.interpolate(c, scale_factor=2)
            b = self.u2(torch.cat([up, b], 1))
            up = nn.functional.interpolate(b, scale_factor=2)
            return self.out(self.u1(torch.cat([up, a], 1)))

    torch.backends.cudnn.benchmark = False
    net = UNet().cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    for size, bs in [(128, 16), (256, 8), (192, 12), (256, 8)]:
        x = torch.randn(bs, 3, size, size, device="cuda")
        y = torch.randint(0, 2, (bs, size, size), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = nn.functional.cross_entropy(net(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del x, y, loss


def gpt2_generate(torch):
    """Greedy generation with a KV cache (transformers' GPT-2, random weights) for prompts
    of several lengths and batch sizes: variable-length inference."""
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=4, n_embd=512, n_head=8, vocab_size=32000, n_positions=1024)
    model = GPT2LMHeadModel(cfg).cuda().eval()
    with torch.no_grad():
        for bs, n in [(4, 100), (1, 400), (8, 32), (2, 250)]:
            ids = torch.randint(0, 32000, (bs, n), device="cuda")
            out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=24,
                                 do_sample=False, pad_token_id=0)
            del ids, out


def prefetch_side_stream(torch):
    """Training on batches copied in on a side stream one step ahead (record_stream on
    the compute stream): cross-stream frees, as data loaders' prefetching makes them."""
    torch.manual_seed(0)
    copy = torch.cuda.Stream()
    net = torch.nn.Sequential(torch.nn.Linear(2048, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1000)).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    host = [torch.randn(bs, 2048).pin_memory() for bs in (256, 512, 128, 1024, 384, 768)]

    def load(i):
        with torch.cuda.stream(copy):
            return host[i].to("cuda", non_blocking=True)

    nxt = load(0)
    for i in range(len(host)):
        torch.cuda.current_stream().wait_stream(copy)
        x = nxt
        x.record_stream(torch.cuda.current_stream())
        if i + 1 < len(host):
            nxt = load(i + 1)
        loss = net(x).square().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del x, loss
    torch.cuda.synchronize()


def phases_empty_cache(torch):
    """Large buffers, a hole, empty_cache between phases, then many mid-size tensors
    freed out of order: oversize blocks, splitting, releasing."""
    torch.manual_seed(0)
    big = [torch.empty(n << 20, device="cuda") for n in (300, 200, 150)]  # float32: x4 bytes
    del big[1]
    mid = torch.empty(180 << 20, device="cuda")
    del big, mid
    torch.cuda.empty_cache()
    keep = []
    g = torch.Generator().manual_seed(1)
    for i in range(400):
        n = int(torch.randint(1, 48, (1,), generator=g)) << 18
        keep.append(torch.empty(n, device="cuda"))
        if len(keep) > 24:
            keep.pop(int(torch.randint(0, len(keep), (1,), generator=g)))
    del keep
    torch.cuda.empty_cache()
    x = torch.empty(500 << 20, device="cuda")
    del x


# ---- modern programs: torch.compile, CUDA graphs, MemPool, FSDP2 (reference/modern-2.11)

def _block(torch, d, heads):
    """A pre-norm transformer block (attention through scaled_dot_product_attention, then
    an MLP), written out so that torch.compile traces it whole."""
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            b, n, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).view(b, n, 3, heads, d // heads).permute(2, 0, 3, 1, 4)
            a = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(b, n, d))
            return x + self.mlp(self.ln2(x))

    return Block()


def compile_train(torch):
    """torch.compile (default mode) training of two transformer blocks and a head, AdamW,
    3 steps at batch x seq 16x128, then 3 at 8x200: the new shape recompiles."""
    torch.manual_seed(0)
    nn = torch.nn
    model = nn.Sequential(_block(torch, 256, 4), _block(torch, 256, 4), nn.Linear(256, 1000)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    step = torch.compile(model)
    for bs, n in [(16, 128)] * 3 + [(8, 200)] * 3:
        x = torch.randn(bs, n, 256, device="cuda")
        target = torch.randint(0, 1000, (bs * n,), device="cuda")
        loss = nn.functional.cross_entropy(step(x).reshape(-1, 1000), target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del x, target, loss
    mark(torch, "after training")


def compile_reduce_overhead_infer(torch):
    """torch.compile(mode="reduce-overhead") inference of two transformer blocks at batch
    sizes 8, 16, 8, 32, 16 (seq 128), each called 3 times: CUDA graph trees warm up,
    record into their private pool and replay, one graph per batch size."""
    torch.manual_seed(0)
    nn = torch.nn
    model = nn.Sequential(_block(torch, 256, 4), _block(torch, 256, 4)).cuda().eval()
    fn = torch.compile(model, mode="reduce-overhead")
    with torch.no_grad():
        for bs in (8, 16, 8, 32, 16):
            x = torch.randn(bs, 128, 256, device="cuda")
            for _ in range(3):
                torch.compiler.cudagraph_mark_step_begin()
                y = fn(x)
                y.sum().item()  # read the graph's output before the next replay overwrites it
                del y
            del x
            if bs == 32:
                mark(torch, "after the batch-32 graph")


def graph_shared_pool(torch):
    """A hand-captured torch.cuda.CUDAGraph (an MLP's forward) and a second graph (a head
    on its output) captured into the first one's pool (pool=g1.pool()), replayed 5 times
    with eager work around them; the graphs are then deleted and the cache emptied."""
    torch.manual_seed(0)
    nn = torch.nn
    body = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).cuda().eval()
    head = nn.Sequential(nn.LayerNorm(1024), nn.Linear(1024, 512)).cuda().eval()
    with torch.no_grad():
        static_x = torch.randn(64, 1024, device="cuda")
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm up on a side stream, as the docs say
            for _ in range(3):
                head(body(static_x))
        torch.cuda.current_stream().wait_stream(side)
        g1 = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g1):
            static_h = body(static_x)
        g2 = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g2, pool=g1.pool()):
            static_y = head(static_h)
        mark(torch, "after both captures")
        outs = []
        for i in range(5):
            static_x.copy_(torch.randn(64, 1024, device="cuda"))
            g1.replay()
            g2.replay()
            outs.append(static_y.clone() * 2)
            if len(outs) > 2:
                outs.pop(0)
        extra = torch.randn(256, 4096, device="cuda") @ torch.randn(4096, 256, device="cuda")
        del outs, extra, static_y, static_h, static_x
        del g2
        mark(torch, "after deleting the second graph")
        del g1
    torch.cuda.empty_cache()


def mempool_kv_cache(torch):
    """A decoder-like loop (2 layers, d 512, 8 heads) serving 3 requests (batch x prompt x
    new tokens 4x256x16, 8x64x24, 2x512x12) whose KV-cache tensors are allocated under
    `with torch.cuda.use_mem_pool(pool)` and everything else in the default pool; each
    request's cache is freed when it ends, then the pool is deleted and the cache emptied."""
    torch.manual_seed(0)
    nn = torch.nn
    d, h, layers, vocab = 512, 8, 2, 8000
    emb = nn.Embedding(vocab, d).cuda()
    qkv = [nn.Linear(d, 3 * d).cuda() for _ in range(layers)]
    proj = [nn.Linear(d, d).cuda() for _ in range(layers)]
    mlp = [nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d)).cuda() for _ in range(layers)]
    out = nn.Linear(d, vocab).cuda()
    pool = torch.cuda.MemPool()
    with torch.no_grad():
        for r, (bs, prompt, new) in enumerate([(4, 256, 16), (8, 64, 24), (2, 512, 12)]):
            total = prompt + new
            with torch.cuda.use_mem_pool(pool):
                kv = [torch.empty(2, bs, h, total, d // h, device="cuda") for _ in range(layers)]
            ids = torch.randint(0, vocab, (bs, prompt), device="cuda")
            pos = 0
            for t in range(new + 1):
                x = emb(ids)
                n = x.shape[1]
                for l in range(layers):
                    q, k, v = qkv[l](x).view(bs, n, 3, h, d // h).permute(2, 0, 3, 1, 4)
                    kv[l][0, :, :, pos:pos + n] = k
                    kv[l][1, :, :, pos:pos + n] = v
                    a = nn.functional.scaled_dot_product_attention(
                        q, kv[l][0, :, :, :pos + n], kv[l][1, :, :, :pos + n], is_causal=(n > 1))
                    x = x + proj[l](a.transpose(1, 2).reshape(bs, n, d))
                    x = x + mlp[l](x)
                pos += n
                ids = out(x[:, -1]).argmax(-1, keepdim=True)
                del x, q, k, v, a
            mark(torch, f"request {r} done, its cache alive")
            del kv, ids
        mark(torch, "before deleting the pool")
    del pool
    torch.cuda.empty_cache()


def _init_one_rank(torch):
    """Start a process group of one rank (world size 1, NCCL on the one GPU, a free local
    port) as torchrun would for a single-GPU job, NVLink multicast off (fsdp2_train,
    ddp_accum_train_bf16)."""
    import torch.distributed as dist
    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        port = so.getsockname()[1]
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK="0", WORLD_SIZE="1",
                      LOCAL_RANK="0")
    for k in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS"):
        os.environ.setdefault(k, "0" if k == "NCCL_NVLS_ENABLE" else "1")
    dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda", 0))


def fsdp2_train(torch):
    """FSDP2 (torch.distributed.fsdp.fully_shard) on one rank (world size 1, NCCL on the one
    GPU): 4 MLP blocks (1024 -> 4096 -> 1024), each sharded, and the root; AdamW, 4 steps
    at batch 32, 64, 32, 48 of 256 tokens. All-gathers and reduce-scatters run on
    FSDP's own streams."""
    import torch.distributed as dist
    from torch.distributed.fsdp import fully_shard
    _init_one_rank(torch)
    try:
        torch.manual_seed(0)
        nn = torch.nn
        model = nn.Sequential(*[nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024))
                                for _ in range(4)]).cuda()
        for blk in model:
            fully_shard(blk)
        fully_shard(model)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        for bs in (32, 64, 32, 48):
            x = torch.randn(bs, 256, 1024, device="cuda")
            loss = model(x).square().mean()
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            del x, loss
        torch.cuda.synchronize()
        mark(torch, "after training")
        del model, opt
    finally:
        dist.destroy_process_group()


# ---- single-stream programs like the held-back misses (helper m20)

def llama_generate(torch):
    """transformers' Llama (2 layers, d 512, vocab 32000, random weights), greedy `generate`
    (DynamicCache) of 8 tokens for prompts batch x length 4x200, 1x600, 8x64."""
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(hidden_size=512, intermediate_size=1376, num_hidden_layers=2,
                      num_attention_heads=8, num_key_value_heads=8, vocab_size=32000,
                      max_position_embeddings=2048)
    model = LlamaForCausalLM(cfg).cuda().eval()
    with torch.no_grad():
        for bs, n in [(4, 200), (1, 600), (8, 64)]:
            ids = torch.randint(0, 32000, (bs, n), device="cuda")
            out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=8,
                                 min_new_tokens=8, do_sample=False, pad_token_id=0)
            del ids, out


def opt_generate(torch):
    """transformers' OPT (2 layers, d 768, vocab 50272, random weights), greedy `generate`
    of 6 tokens for prompts batch x length 8x256, 2x700, 16x96."""
    from transformers import OPTConfig, OPTForCausalLM
    torch.manual_seed(0)
    cfg = OPTConfig(hidden_size=768, ffn_dim=3072, num_hidden_layers=2, num_attention_heads=12,
                    word_embed_proj_dim=768, max_position_embeddings=2048)
    model = OPTForCausalLM(cfg).cuda().eval()
    with torch.no_grad():
        for bs, n in [(8, 256), (2, 700), (16, 96)]:
            ids = torch.randint(4, cfg.vocab_size, (bs, n), device="cuda")
            out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=6,
                                 min_new_tokens=6, do_sample=False, pad_token_id=1)
            del ids, out


def gpt2_generate_padded(torch):
    """transformers' GPT-2 (2 layers, d 768, vocab 50257, random weights), greedy `generate`
    of 6 tokens for left-padded batches (batch x length 16x128, 4x512, 32x32; each row's
    length drawn between half and all of it)."""
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=2, n_embd=768, n_head=12, n_positions=1024)
    model = GPT2LMHeadModel(cfg).cuda().eval()
    with torch.no_grad():
        for bs, n in [(16, 128), (4, 512), (32, 32)]:
            ids = torch.randint(0, cfg.vocab_size, (bs, n), device="cuda")
            lengths = torch.randint(n // 2, n + 1, (bs,), device="cuda")
            mask = (torch.arange(n, device="cuda")[None] >= (n - lengths)[:, None]).long()
            out = model.generate(ids, attention_mask=mask, max_new_tokens=6, min_new_tokens=6,
                                 do_sample=False, pad_token_id=0)
            del ids, lengths, mask, out


def gpt2_generate_large(torch):
    """transformers' GPT-2 (12 layers, d 768, vocab 50257, random weights), greedy `generate`
    of 16 tokens for prompts batch x length 8x512, 2x1000, 16x128 (meant to make prefill
    logits above 128 MiB, which generate() does not keep: see the note before
    gpt2_generate_12l)."""
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=12, n_embd=768, n_head=12, n_positions=1024)
    model = GPT2LMHeadModel(cfg).cuda().eval()
    with torch.no_grad():
        for bs, n in [(8, 512), (2, 1000), (16, 128)]:
            ids = torch.randint(0, cfg.vocab_size, (bs, n), device="cuda")
            out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=16,
                                 min_new_tokens=16, do_sample=False, pad_token_id=0)
            del ids, out


def _bert_encode(torch, hidden, heads, batches):
    """transformers' BERT encoder (4 layers, random weights, intermediate 4 x hidden),
    inference on padded batches (batch, length) with attention masks of random lengths."""
    from transformers import BertConfig, BertModel
    torch.manual_seed(0)
    cfg = BertConfig(hidden_size=hidden, num_hidden_layers=4, num_attention_heads=heads,
                     intermediate_size=4 * hidden, max_position_embeddings=512)
    model = BertModel(cfg).cuda().eval()
    with torch.no_grad():
        for bs, n in batches:
            ids = torch.randint(0, cfg.vocab_size, (bs, n), device="cuda")
            lengths = torch.randint(n // 2, n + 1, (bs,), device="cuda")
            mask = (torch.arange(n, device="cuda")[None] < lengths[:, None]).long()
            out = model(input_ids=ids, attention_mask=mask)
            del ids, lengths, mask, out


def bert_encode_base(torch):
    """transformers' BERT encoder (4 layers, d 768, 12 heads, random weights), inference on
    padded batches (batch x length 32x256, 8x512, 64x128, 16x384, 48x200) with masks."""
    _bert_encode(torch, 768, 12, [(32, 256), (8, 512), (64, 128), (16, 384), (48, 200)])


def bert_encode(torch):
    """transformers' BERT encoder (4 layers, d 512, random weights), inference on padded
    batches (batch x length 8x128, 4x384, 16x64, 2x512, 12x200) with attention masks."""
    _bert_encode(torch, 512, 8, [(8, 128), (4, 384), (16, 64), (2, 512), (12, 200)])


def vit_train_bf16(torch):
    """torchvision's vit_b_16 (random weights) trained under bf16 autocast, AdamW,
    3 steps at batch 8, 224 px."""
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.vit_b_16(weights=None).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for _ in range(3):
        x = torch.randn(8, 3, 224, 224, device="cuda")
        y = torch.randint(0, 1000, (8,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del x, y, loss


# ---- decoder `generate` programs for issue 20's held-back cases (helper rec): a decoder's
# generate under max_split_size_mb:128 (one small-pool segment more in the replay), under
# 64 + GC (capped), and its fragmentation peak under roundup_power2_divisions:4.
# transformers 5.17's generate() computes only the last position's logits (logits_to_keep=1),
# so the prefill logits above 128 MiB that these docstrings and gpt2_generate_large's name
# are not made: in their recordings the only blocks above 128 MiB are weights moved by
# .cuda() (reference/misses-2.11/README.md, "Case (a) measured"); the score-then-generate
# programs below make such blocks.

def _generate(torch, model, vocab, shapes, pad, lo=0, **kw):
    """generate() for each (batch, prompt length, new tokens) in shapes: random prompts in
    [lo, vocab), all-ones masks, exactly `new` tokens (min_new_tokens = max_new_tokens)."""
    with torch.no_grad():
        for bs, n, new in shapes:
            ids = torch.randint(lo, vocab, (bs, n), device="cuda")
            out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=new,
                                 min_new_tokens=new, pad_token_id=pad, **kw)
            del ids, out


def gpt2_generate_12l(torch):
    """transformers' GPT-2 small (12 layers, d 768, vocab 50257, random weights), greedy
    `generate` of 12 tokens for prompts batch x length 1x32, 4x200, 1x700, 2x64 (the 4x200
    and 1x700 prompts were meant to make prefill logits above 128 MiB: see the note above)."""
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=12, n_embd=768, n_head=12, n_positions=1024)
    model = GPT2LMHeadModel(cfg).cuda().eval()
    _generate(torch, model, cfg.vocab_size, [(1, 32, 12), (4, 200, 12), (1, 700, 12), (2, 64, 12)], 0,
              do_sample=False)


def gpt2_generate_sample(torch):
    """transformers' GPT-2 (6 layers, d 768, random weights), sampling `generate` (top-k 50,
    top-p 0.95, temperature 0.7: sort, cumsum, softmax, multinomial each step) of 10 tokens
    for prompts batch x length 8x128, 1x500, 16x24."""
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=6, n_embd=768, n_head=12, n_positions=1024)
    model = GPT2LMHeadModel(cfg).cuda().eval()
    _generate(torch, model, cfg.vocab_size, [(8, 128, 10), (1, 500, 10), (16, 24, 10)], 0,
              do_sample=True, top_k=50, top_p=0.95, temperature=0.7)


def gpt2_generate_beam(torch):
    """transformers' GPT-2 (6 layers, d 768, random weights), beam search (4 beams: the KV
    cache reordered each step) of 8 tokens for prompts batch x length 2x160, 1x300, 4x48."""
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=6, n_embd=768, n_head=12, n_positions=1024)
    model = GPT2LMHeadModel(cfg).cuda().eval()
    _generate(torch, model, cfg.vocab_size, [(2, 160, 8), (1, 300, 8), (4, 48, 8)], 0,
              do_sample=False, num_beams=4)


def gpt2_generate_fp16(torch):
    """transformers' GPT-2 small (12 layers, d 768, random weights) in fp16, greedy
    `generate` of 16 tokens for one prompt at a time of length 48, 900, 16, 400 (a KV cache
    in the small pool for the short ones)."""
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=12, n_embd=768, n_head=12, n_positions=1024)
    model = GPT2LMHeadModel(cfg).cuda().half().eval()
    _generate(torch, model, cfg.vocab_size, [(1, 48, 16), (1, 900, 16), (1, 16, 16), (1, 400, 16)], 0,
              do_sample=False)


def gpt2_generate_batches(torch):
    """transformers' GPT-2 (4 layers, d 768, random weights), six greedy `generate` calls of
    6 tokens with growing batches and prompts (1x20, 3x60, 5x100, 7x140, 9x180, 11x220):
    full logits would be 4 MB to 486 MB, but generate() keeps only the last position's."""
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=4, n_embd=768, n_head=12, n_positions=1024)
    model = GPT2LMHeadModel(cfg).cuda().eval()
    _generate(torch, model, cfg.vocab_size, [(b, 20 * b, 6) for b in (1, 3, 5, 7, 9, 11)], 0,
              do_sample=False)


def llama_generate_gqa_fp16(torch):
    """transformers' Llama (6 layers, d 1024, 16 heads, 4 KV heads: GQA; vocab 32000, random
    weights) in fp16, top-p sampling `generate` of 10 tokens for prompts batch x length
    8x300, 2x640, 1x40."""
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=6,
                      num_attention_heads=16, num_key_value_heads=4, vocab_size=32000,
                      max_position_embeddings=2048)
    model = LlamaForCausalLM(cfg).cuda().half().eval()
    _generate(torch, model, cfg.vocab_size, [(8, 300, 10), (2, 640, 10), (1, 40, 10)], 0,
              do_sample=True, top_p=0.9)


def qwen2_generate_bf16(torch):
    """transformers' Qwen2 (4 layers, d 896, 14 heads, 2 KV heads, vocab 151936, tied
    embeddings, random weights) in bf16, greedy `generate` of 10 tokens for prompts
    batch x length 4x160, 1x700, 8x32."""
    from transformers import Qwen2Config, Qwen2ForCausalLM
    torch.manual_seed(0)
    cfg = Qwen2Config(hidden_size=896, intermediate_size=4864, num_hidden_layers=4,
                      num_attention_heads=14, num_key_value_heads=2, vocab_size=151936,
                      max_position_embeddings=4096, tie_word_embeddings=True)
    model = Qwen2ForCausalLM(cfg).cuda().to(torch.bfloat16).eval()
    _generate(torch, model, cfg.vocab_size, [(4, 160, 10), (1, 700, 10), (8, 32, 10)], 0,
              do_sample=False)


def mistral_generate_bf16(torch):
    """transformers' Mistral (4 layers, d 1024, 16 heads, 4 KV heads, vocab 32000, random
    weights) in bf16, four greedy `generate` calls of different shapes (batch x length x
    new tokens 1x64x24, 6x256x6, 3x500x8, 12x40x12)."""
    from transformers import MistralConfig, MistralForCausalLM
    torch.manual_seed(0)
    cfg = MistralConfig(hidden_size=1024, intermediate_size=3584, num_hidden_layers=4,
                        num_attention_heads=16, num_key_value_heads=4, vocab_size=32000,
                        max_position_embeddings=4096, sliding_window=None)
    model = MistralForCausalLM(cfg).cuda().to(torch.bfloat16).eval()
    _generate(torch, model, cfg.vocab_size, [(1, 64, 24), (6, 256, 6), (3, 500, 8), (12, 40, 12)], 0,
              do_sample=False)


def opt_generate_fp16(torch):
    """transformers' OPT (6 layers, d 1024, 16 heads, vocab 50272, random weights) in fp16,
    greedy `generate` of 10 tokens for prompts batch x length 16x128, 4x400, 1x30."""
    from transformers import OPTConfig, OPTForCausalLM
    torch.manual_seed(0)
    cfg = OPTConfig(hidden_size=1024, ffn_dim=4096, num_hidden_layers=6, num_attention_heads=16,
                    word_embed_proj_dim=1024, max_position_embeddings=2048)
    model = OPTForCausalLM(cfg).cuda().half().eval()
    _generate(torch, model, cfg.vocab_size, [(16, 128, 10), (4, 400, 10), (1, 30, 10)], 1, lo=4,
              do_sample=False)


def distilgpt2_generate_long(torch):
    """transformers' GPT-2 with distilgpt2's shape (6 layers, d 768, random weights), greedy
    `generate`: one 1x700 prompt (meant for prefill logits above 128 MiB; see the note above), then 64 and 48 tokens for
    short prompts 1x24 and 2x40, whose KV caches grow in the small pool."""
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=6, n_embd=768, n_head=12, n_positions=1024)
    model = GPT2LMHeadModel(cfg).cuda().eval()
    _generate(torch, model, cfg.vocab_size, [(1, 700, 8), (1, 24, 64), (2, 40, 48)], 0,
              do_sample=False)


def gpt2_generate_12l_long(torch):
    """transformers' GPT-2 small (12 layers, d 768, random weights), greedy `generate` of
    48, 6 and 32 tokens for prompts 1x24, 1x700, 3x32: small-pool KV caches around one
    long prefill (its logits, kept for the last position only, are small)."""
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=12, n_embd=768, n_head=12, n_positions=1024)
    model = GPT2LMHeadModel(cfg).cuda().eval()
    _generate(torch, model, cfg.vocab_size, [(1, 24, 48), (1, 700, 6), (3, 32, 32)], 0,
              do_sample=False)


def gpt2_generate_sample_bs1(torch):
    """transformers' GPT-2 small (12 layers, d 768, random weights), top-k/top-p sampling
    `generate` for one prompt at a time: 40, 8 and 40 tokens for lengths 16, 680, 64."""
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=12, n_embd=768, n_head=12, n_positions=1024)
    model = GPT2LMHeadModel(cfg).cuda().eval()
    _generate(torch, model, cfg.vocab_size, [(1, 16, 40), (1, 680, 8), (1, 64, 40)], 0,
              do_sample=True, top_k=50, top_p=0.95)


def llama_generate_small(torch):
    """transformers' Llama (4 layers, d 512, 8 heads, 2 KV heads, vocab 32000, random
    weights), greedy `generate`: 8 tokens for 2x600 (meant for logits above 128 MiB; see the note above), then 64 and 32
    tokens for 1x20 and 4x30 (small-pool KV caches)."""
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(hidden_size=512, intermediate_size=1376, num_hidden_layers=4,
                      num_attention_heads=8, num_key_value_heads=2, vocab_size=32000,
                      max_position_embeddings=2048)
    model = LlamaForCausalLM(cfg).cuda().eval()
    _generate(torch, model, cfg.vocab_size, [(2, 600, 8), (1, 20, 64), (4, 30, 32)], 0,
              do_sample=False)


def opt_generate_125m(torch):
    """transformers' OPT with opt-125m's shape (12 layers, d 768, 12 heads, vocab 50272,
    random weights), greedy `generate` of 48, 8 and 32 tokens for prompts 1x20, 2x400,
    1x100."""
    from transformers import OPTConfig, OPTForCausalLM
    torch.manual_seed(0)
    cfg = OPTConfig(hidden_size=768, ffn_dim=3072, num_hidden_layers=12, num_attention_heads=12,
                    word_embed_proj_dim=768, max_position_embeddings=2048)
    model = OPTForCausalLM(cfg).cuda().eval()
    _generate(torch, model, cfg.vocab_size, [(1, 20, 48), (2, 400, 8), (1, 100, 32)], 1, lo=4,
              do_sample=False)


def gpt2_medium_generate_fp16(torch):
    """transformers' GPT-2 with gpt2-medium's shape (24 layers, d 1024, 16 heads, random
    weights) in fp16, greedy `generate` for one prompt at a time: 40, 4 and 40 tokens for
    lengths 200, 700, 32 (48 KV tensors growing in the small pool)."""
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=24, n_embd=1024, n_head=16, n_positions=1024)
    model = GPT2LMHeadModel(cfg).cuda().half().eval()
    _generate(torch, model, cfg.vocab_size, [(1, 200, 40), (1, 700, 4), (1, 32, 40)], 0,
              do_sample=False)


def llama_generate_deep_fp16(torch):
    """transformers' Llama (16 layers, d 512, 8 heads, 2 KV heads, vocab 32000, random
    weights) in fp16, greedy `generate`: 4 tokens for 1x1200, then 48 and 32 tokens for
    1x40 and 2x64 (32 small KV tensors growing in the small pool)."""
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(hidden_size=512, intermediate_size=1376, num_hidden_layers=16,
                      num_attention_heads=8, num_key_value_heads=2, vocab_size=32000,
                      max_position_embeddings=2048)
    model = LlamaForCausalLM(cfg).cuda().half().eval()
    _generate(torch, model, cfg.vocab_size, [(1, 1200, 4), (1, 40, 48), (2, 64, 32)], 0,
              do_sample=False)


# ---- score-then-generate programs for issue 20's held-back case (a) (helper small): a
# decoder scoring a long text (full logits, a block above 128 MiB, freed after) before each
# batch-1 `generate` of many tokens, whose KV caches, position ids, masks and per-step
# logits are small-pool blocks (requests of 1 MiB or less, in 2 MiB segments). Under
# max_split_size_mb:128 the freed logits block is not split for later requests, so the
# large pool's segments, and where the driver puts the small pool's, differ from the
# default run's. (`generate` itself keeps only the last position's logits.)

def _score_generate(torch, model, vocab, rounds, pad, lo=0, **kw):
    """For each (score length, prompt length, new tokens) in rounds: the full logits of one
    random text of the score length (model(ids).logits, then freed), then generate() of
    exactly `new` tokens for one random prompt (batch 1, all-ones mask)."""
    with torch.no_grad():
        for n_score, n, new in rounds:
            ids = torch.randint(lo, vocab, (1, n_score), device="cuda")
            logits = model(ids).logits
            del ids, logits
            _generate(torch, model, vocab, [(1, n, new)], pad, lo=lo, **kw)


def gpt2_score_generate_bs1(torch):
    """transformers' GPT-2 small (12 layers, d 768, vocab 50257, random weights): four rounds
    of scoring a 700-820 token text (logits 134-157 MiB) and greedy `generate` of 32-56
    tokens for a 16-40 token prompt (24 KV tensors growing in the small pool)."""
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=12, n_embd=768, n_head=12, n_positions=1024)
    model = GPT2LMHeadModel(cfg).cuda().eval()
    _score_generate(torch, model, cfg.vocab_size, [(700, 24, 40), (760, 16, 48), (820, 40, 32), (720, 20, 56)],
                    0, do_sample=False)


def distilgpt2_score_generate_bs1(torch):
    """transformers' GPT-2 in distilgpt2's shape (6 layers, d 768, random weights): four
    rounds of scoring a 680-1000 token text (logits above 128 MiB) and greedy `generate` of
    40-64 tokens for a 16-48 token prompt."""
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=6, n_embd=768, n_head=12, n_positions=1024)
    model = GPT2LMHeadModel(cfg).cuda().eval()
    _score_generate(torch, model, cfg.vocab_size, [(680, 32, 60), (900, 20, 64), (700, 48, 40), (1000, 16, 48)],
                    0, do_sample=False)


def gpt2_sample_score_generate_bs1(torch):
    """transformers' GPT-2 small (12 layers, random weights): three rounds of scoring a
    700-900 token text (logits above 128 MiB) and top-k/top-p sampling `generate` of 40-48
    tokens for a 16-36 token prompt (per-step sort, cumsum and softmax blocks in the small
    pool too)."""
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=12, n_embd=768, n_head=12, n_positions=1024)
    model = GPT2LMHeadModel(cfg).cuda().eval()
    _score_generate(torch, model, cfg.vocab_size, [(900, 20, 48), (700, 36, 40), (800, 16, 44)],
                    0, do_sample=True, top_k=50, top_p=0.95)


def gpt2_fp16_score_generate(torch):
    """transformers' GPT-2 small (12 layers, random weights) in fp16: three rounds of
    scoring (batch 2 x 800-1000 tokens: fp16 logits above 128 MiB) and greedy `generate`
    of 40-56 tokens for one 16-32 token prompt."""
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=12, n_embd=768, n_head=12, n_positions=1024)
    model = GPT2LMHeadModel(cfg).cuda().half().eval()
    with torch.no_grad():
        for n_score, n, new in [(800, 16, 56), (1000, 32, 40), (900, 24, 48)]:
            ids = torch.randint(0, cfg.vocab_size, (2, n_score), device="cuda")
            logits = model(ids).logits
            del ids, logits
            _generate(torch, model, cfg.vocab_size, [(1, n, new)], 0, do_sample=False)


def opt125m_score_generate_bs1(torch):
    """transformers' OPT in opt-125m's shape (12 layers, d 768, vocab 50272, random
    weights): three rounds of scoring a 700-880 token text (logits above 128 MiB) and
    greedy `generate` of 40-56 tokens for a 16-30 token prompt."""
    from transformers import OPTConfig, OPTForCausalLM
    torch.manual_seed(0)
    cfg = OPTConfig(hidden_size=768, ffn_dim=3072, num_hidden_layers=12, num_attention_heads=12,
                    word_embed_proj_dim=768, max_position_embeddings=2048)
    model = OPTForCausalLM(cfg).cuda().eval()
    _score_generate(torch, model, cfg.vocab_size, [(700, 20, 48), (880, 30, 40), (760, 16, 56)],
                    1, lo=4, do_sample=False)


def llama2l_score_generate_bs1(torch):
    """transformers' Llama (2 layers, d 512, 8 heads, 2 KV heads, vocab 32000, random
    weights): three rounds of scoring a 1100-1400 token text (logits above 128 MiB) and
    greedy `generate` of 40-64 tokens for a 16-40 token prompt (rotary position
    embeddings, cache positions and masks in the small pool)."""
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(hidden_size=512, intermediate_size=1376, num_hidden_layers=2,
                      num_attention_heads=8, num_key_value_heads=2, vocab_size=32000,
                      max_position_embeddings=2048)
    model = LlamaForCausalLM(cfg).cuda().eval()
    _score_generate(torch, model, cfg.vocab_size, [(1100, 24, 64), (1400, 16, 48), (1200, 40, 40)],
                    0, do_sample=False)


# ---- practitioners' programs of kinds not recorded before (issue 28, helper programs):
# reference/programs-2.11. Single-stream training and serving as people run them today.

def gpt2_bucketed_train(torch):
    """transformers' GPT-2 (4 layers, d 512, vocab 32000, random weights) trained as a
    language model on length-bucketed batches of about 8k tokens each (batch x length
    64x128, 16x512, 32x256, 8x1024, 48x170, 21x390: a new shape every step, no padding
    inside a bucket), AdamW."""
    train_gpt2_on_buckets(torch, n_layer=4, n_embd=512, n_head=8, steps=len(GPT2_BUCKETS))


# GPT2_BUCKETS are the batch x length shapes of the bucketed GPT-2 programs, in turn.
GPT2_BUCKETS = [(64, 128), (16, 512), (32, 256), (8, 1024), (48, 170), (21, 390)]


def train_gpt2_on_buckets(torch, n_layer, n_embd, n_head, steps):
    """Train transformers' GPT-2 of this size (vocab 32000, random weights, seed 0) as a
    language model with AdamW for steps steps, one GPT2_BUCKETS shape a step, in turn:
    gpt2_bucketed_train and gpt2_train_big."""
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=n_layer, n_embd=n_embd, n_head=n_head, vocab_size=32000, n_positions=1024)
    model = GPT2LMHeadModel(cfg).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for step in range(steps):
        bs, n = GPT2_BUCKETS[step % len(GPT2_BUCKETS)]
        ids = torch.randint(0, cfg.vocab_size, (bs, n), device="cuda")
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, loss


def llama_lora_train_bf16(torch):
    """LoRA fine-tuning (peft's LoraConfig, r 16, on q/k/v/o projections; without peft a
    hand-written adapter of the same shape) of transformers' Llama (4 layers, d 768, 12
    heads, vocab 32000, random weights) whose base weights are bf16 and frozen; bf16
    autocast, AdamW over the adapters only, 4 steps at batch x length 8x256, 4x512,
    16x128, 6x300."""
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(hidden_size=768, intermediate_size=2048, num_hidden_layers=4, num_attention_heads=12,
                      num_key_value_heads=12, vocab_size=32000, max_position_embeddings=2048)
    model = LlamaForCausalLM(cfg).to(torch.bfloat16).cuda()
    try:
        from peft import LoraConfig, get_peft_model
        model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05,
                                                 target_modules=["q_proj", "k_proj", "v_proj", "o_proj"]))
    except ImportError:
        nn = torch.nn

        class LoRA(nn.Module):
            def __init__(self, base):
                super().__init__()
                self.base = base
                self.a = nn.Linear(base.in_features, 16, bias=False, device="cuda")
                self.b = nn.Linear(16, base.out_features, bias=False, device="cuda")
                nn.init.zeros_(self.b.weight)

            def forward(self, x):
                return self.base(x) + 2.0 * self.b(self.a(x))

        for p in model.parameters():
            p.requires_grad_(False)
        for layer in model.model.layers:
            at = layer.self_attn
            for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
                setattr(at, name, LoRA(getattr(at, name)))
    model.train()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    for bs, n in [(8, 256), (4, 512), (16, 128), (6, 300)]:
        ids = torch.randint(0, cfg.vocab_size, (bs, n), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, loss


def efficientnet_channels_last_amp(torch):
    """torchvision's efficientnet_b0 (random weights) in channels_last memory format,
    trained under fp16 autocast with a GradScaler (scale, unscale_ for clip_grad_norm_,
    step, update), SGD with momentum, 3 steps at 48 images of 224 px, 32 of 256 px, 64 of
    192 px."""
    import torchvision
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = False
    model = torchvision.models.efficientnet_b0(weights=None).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda")
    for bs, px in [(48, 224), (32, 256), (64, 192)]:
        x = torch.randn(bs, 3, px, px, device="cuda").to(memory_format=torch.channels_last)
        y = torch.randint(0, 1000, (bs,), device="cuda")
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        del x, y, loss


def serve_continuous_batching(torch):
    """A hand-written fp16 decoder (4 layers, d 1024, 16 heads, vocab 32000) serving 10
    requests of random prompt lengths (16-600) and output lengths (4-24) with continuous
    batching: up to 4 requests decode together, a request is admitted (its prompt
    prefilled alone) as soon as one finishes, each request's KV cache grows by torch.cat
    every step, and a step's batch pads the caches to the longest with an attention mask."""
    torch.manual_seed(0)
    nn, F = torch.nn, torch.nn.functional
    d, h, layers, vocab = 1024, 16, 4, 32000
    dh = d // h
    emb = nn.Embedding(vocab, d)
    ln = nn.ModuleList(nn.LayerNorm(d) for _ in range(2 * layers))
    qkv = nn.ModuleList(nn.Linear(d, 3 * d) for _ in range(layers))
    proj = nn.ModuleList(nn.Linear(d, d) for _ in range(layers))
    mlp = nn.ModuleList(nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d)) for _ in range(layers))
    head = nn.Linear(d, vocab)
    for m in (emb, ln, qkv, proj, mlp, head):
        m.cuda().half().eval()
    g = torch.Generator().manual_seed(1)
    pending = [(r, int(torch.randint(16, 601, (1,), generator=g)), int(torch.randint(4, 25, (1,), generator=g)))
               for r in range(10)]
    active = []  # [token (1,), per-layer [k, v] of (h, length, dh), tokens left]
    with torch.no_grad():
        while pending or active:
            while pending and len(active) < 4:
                _, n, new = pending.pop(0)
                x = emb(torch.randint(0, vocab, (1, n), device="cuda"))
                kv = []
                for i in range(layers):
                    q, k, v = qkv[i](ln[2 * i](x)).view(1, n, 3, h, dh).permute(2, 0, 3, 1, 4)
                    a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                    x = x + proj[i](a.transpose(1, 2).reshape(1, n, d))
                    x = x + mlp[i](ln[2 * i + 1](x))
                    kv.append([k[0], v[0]])
                active.append([head(x[:, -1]).argmax(-1), kv, new - 1])
                del x, q, k, v, a
            b = len(active)
            lengths = torch.tensor([r[1][0][0].shape[1] + 1 for r in active], device="cuda")
            top = max(r[1][0][0].shape[1] + 1 for r in active)
            mask = (torch.arange(top, device="cuda")[None] < lengths[:, None])[:, None, None, :]
            x = emb(torch.cat([r[0] for r in active]))[:, None]
            for i in range(layers):
                q, k, v = qkv[i](ln[2 * i](x)).view(b, 1, 3, h, dh).permute(2, 0, 3, 1, 4)
                for j, r in enumerate(active):
                    r[1][i] = [torch.cat([r[1][i][0], k[j]], 1), torch.cat([r[1][i][1], v[j]], 1)]
                keys = torch.stack([F.pad(r[1][i][0], (0, 0, 0, top - r[1][i][0].shape[1])) for r in active])
                vals = torch.stack([F.pad(r[1][i][1], (0, 0, 0, top - r[1][i][1].shape[1])) for r in active])
                a = F.scaled_dot_product_attention(q, keys, vals, attn_mask=mask)
                x = x + proj[i](a.transpose(1, 2).reshape(b, 1, d))
                x = x + mlp[i](ln[2 * i + 1](x))
                del q, k, v, keys, vals, a
            tokens = head(x[:, 0]).argmax(-1)
            for j, r in enumerate(active):
                r[0], r[2] = tokens[j:j + 1], r[2] - 1
            active = [r for r in active if r[2] > 0]
            del lengths, mask, x, tokens


def compile_dynamic_train(torch):
    """torch.compile(dynamic=True) training of two transformer blocks and a head (d 384,
    6 heads), AdamW, 6 steps at batch x length 16x96, 8x200, 12x150, 4x400, 16x64,
    8x256: one graph with symbolic shapes serves every length."""
    torch.manual_seed(0)
    nn = torch.nn
    model = nn.Sequential(_block(torch, 384, 6), _block(torch, 384, 6), nn.Linear(384, 2000)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    step = torch.compile(model, dynamic=True)
    for bs, n in [(16, 96), (8, 200), (12, 150), (4, 400), (16, 64), (8, 256)]:
        x = torch.randn(bs, n, 384, device="cuda")
        target = torch.randint(0, 2000, (bs * n,), device="cuda")
        loss = nn.functional.cross_entropy(step(x).reshape(-1, 2000), target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del x, target, loss


def offload_checkpoint_train(torch):
    """Four transformer blocks (d 1024, 16 heads) and a head trained with the activations
    of the first two offloaded to pinned host memory (torch.autograd.graph.save_on_cpu)
    and the last two recomputed in backward (torch.utils.checkpoint, non-reentrant);
    AdamW, 3 steps at batch x length 8x512, 16x256, 4x1024."""
    from torch.utils.checkpoint import checkpoint
    torch.manual_seed(0)
    nn = torch.nn
    blocks = nn.ModuleList(_block(torch, 1024, 16) for _ in range(4)).cuda()
    head = nn.Linear(1024, 4000).cuda()
    opt = torch.optim.AdamW(list(blocks.parameters()) + list(head.parameters()), lr=1e-4)
    for bs, n in [(8, 512), (16, 256), (4, 1024)]:
        x = torch.randn(bs, n, 1024, device="cuda")
        target = torch.randint(0, 4000, (bs * n,), device="cuda")
        with torch.autograd.graph.save_on_cpu(pin_memory=True):
            y = blocks[1](blocks[0](x))
        y = checkpoint(blocks[3], checkpoint(blocks[2], y, use_reentrant=False), use_reentrant=False)
        loss = nn.functional.cross_entropy(head(y).reshape(-1, 4000), target)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, target, y, loss


def fasterrcnn_varsize_infer(torch):
    """torchvision's fasterrcnn_mobilenet_v3_large_fpn (random weights) serving detection
    in eval mode under torch.inference_mode: 6 batches of 2 images, each image its own size
    (between 320 and 800 px a side), so that the transform's resize and padding, the
    anchors and the region proposals (NMS: data-dependent counts) make new shapes every
    batch."""
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.detection.fasterrcnn_mobilenet_v3_large_fpn(
        weights=None, weights_backbone=None, num_classes=91).cuda().eval()
    sizes = [(480, 640), (800, 600), (320, 512), (720, 720), (600, 800), (400, 360),
             (640, 480), (512, 768), (360, 640), (800, 800), (544, 320), (700, 500)]
    with torch.inference_mode():
        for b in range(6):
            images = [torch.rand(3, h, w, device="cuda") for h, w in sizes[2 * b:2 * b + 2]]
            out = model(images)
            del images, out


def dlrm_sparse_train(torch):
    """A DLRM-like recommender: eight sparse=True EmbeddingBags (100k-400k rows, 64 wide,
    sum pooling) over bags of random length (1-40 lookups), a dense bottom MLP and a top MLP
    over the pooled features and their pairwise dot products; SparseAdam for the tables'
    sparse gradients (coalesced: their size is the distinct rows a batch touches), Adam for
    the MLPs, 5 steps at batch 2048."""
    from torch import nn
    torch.manual_seed(0)
    rows = [100_000, 200_000, 400_000, 150_000, 300_000, 120_000, 250_000, 180_000]
    tables = nn.ModuleList(nn.EmbeddingBag(n, 64, mode="sum", sparse=True) for n in rows).cuda()
    bottom = nn.Sequential(nn.Linear(13, 256), nn.ReLU(), nn.Linear(256, 64), nn.ReLU()).cuda()
    pairs = (len(rows) + 1) * len(rows) // 2
    top = nn.Sequential(nn.Linear(64 + pairs, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                        nn.Linear(256, 1)).cuda()
    sparse_opt = torch.optim.SparseAdam(list(tables.parameters()), lr=1e-3)
    dense_opt = torch.optim.Adam(list(bottom.parameters()) + list(top.parameters()), lr=1e-3)
    batch = 2048
    iu = torch.triu_indices(len(rows) + 1, len(rows) + 1, offset=1, device="cuda")
    for step in range(5):
        dense = torch.randn(batch, 13, device="cuda")
        pooled = [bottom(dense)]
        for t, n in zip(tables, rows):
            lengths = torch.randint(1, 41, (batch,), device="cuda")
            offsets = torch.cat([torch.zeros(1, dtype=torch.long, device="cuda"), lengths.cumsum(0)[:-1]])
            idx = torch.randint(0, n, (int(lengths.sum()),), device="cuda")
            pooled.append(t(idx, offsets))
        z = torch.stack(pooled, dim=1)                      # batch × 9 × 64
        dots = torch.bmm(z, z.transpose(1, 2))[:, iu[0], iu[1]]
        logit = top(torch.cat([pooled[0], dots], dim=1)).squeeze(1)
        label = torch.randint(0, 2, (batch,), device="cuda").float()
        loss = nn.functional.binary_cross_entropy_with_logits(logit, label)
        loss.backward()
        sparse_opt.step()
        dense_opt.step()
        sparse_opt.zero_grad(set_to_none=True)
        dense_opt.zero_grad(set_to_none=True)
        del dense, pooled, z, dots, logit, label, loss


def t5_beam_generate(torch):
    """transformers' T5 (encoder-decoder: 6 + 6 layers, d 512, random weights) translating
    4 batches of padded inputs of different lengths (attention mask) by beam search (4
    beams, 24 new tokens): the encoder's output and the decoder's self- and cross-attention
    caches, reordered between the beams every step."""
    from transformers import T5Config, T5ForConditionalGeneration
    torch.manual_seed(0)
    cfg = T5Config(vocab_size=32128, d_model=512, d_kv=64, d_ff=2048, num_layers=6,
                   num_decoder_layers=6, num_heads=8, decoder_start_token_id=0, pad_token_id=0,
                   eos_token_id=1)
    model = T5ForConditionalGeneration(cfg).cuda().eval()
    with torch.inference_mode():
        for bs, n in [(8, 64), (4, 200), (16, 40), (6, 128)]:
            ids = torch.randint(2, cfg.vocab_size, (bs, n), device="cuda")
            mask = torch.ones(bs, n, dtype=torch.long, device="cuda")
            for i in range(bs):                             # padded rows of different lengths
                mask[i, n - (i * n) // (2 * bs):] = 0
            out = model.generate(input_ids=ids, attention_mask=mask, num_beams=4, max_new_tokens=24,
                                 min_new_tokens=24, do_sample=False)
            del ids, mask, out


def gpt2_assisted_generate_fp16(torch):
    """Speculative decoding: transformers' assisted generation (`generate(assistant_model=)`)
    of a GPT-2 target (8 layers, d 768, random weights) with a 2-layer draft of the same
    vocabulary, both fp16, greedy, batch 1 (what assisted generation takes), four prompts of
    different lengths, 40 new tokens each: the draft proposes a few tokens, the target checks
    them in one pass, and both KV caches are cropped back to the accepted length."""
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    target = GPT2LMHeadModel(GPT2Config(n_layer=8, n_embd=768, n_head=12)).cuda().half().eval()
    draft = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=768, n_head=12)).cuda().half().eval()
    with torch.inference_mode():
        for n in (37, 180, 90, 400):
            ids = torch.randint(0, 50257, (1, n), device="cuda")
            out = target.generate(ids, attention_mask=torch.ones_like(ids), assistant_model=draft,
                                  max_new_tokens=40, min_new_tokens=40, do_sample=False,
                                  pad_token_id=0)
            del ids, out


def moe_train_bf16(torch):
    """A mixture-of-experts language model trained under bf16 autocast: 4 blocks of
    attention (scaled_dot_product_attention, causal) and an MoE feed-forward of 8 experts
    (d 512, hidden 1024) with top-2 routing, so that how many tokens each expert takes is
    decided by the router every step (index_select of a data-dependent count, then
    index_add_ back); AdamW, 4 steps at 8x256, 4x512, 16x128, 6x300 tokens."""
    from torch import nn
    F = nn.functional
    torch.manual_seed(0)
    d, heads, experts, vocab = 512, 8, 8, 8000

    class MoE(nn.Module):
        def __init__(self):
            super().__init__()
            self.router = nn.Linear(d, experts, bias=False)
            self.up = nn.ModuleList(nn.Linear(d, 2 * d) for _ in range(experts))
            self.down = nn.ModuleList(nn.Linear(2 * d, d) for _ in range(experts))

        def forward(self, x):
            flat = x.reshape(-1, d)
            weight, choice = torch.topk(F.softmax(self.router(flat).float(), dim=-1), 2, dim=-1)
            out = torch.zeros_like(flat)
            for e in range(experts):
                rows, slot = torch.nonzero(choice == e, as_tuple=True)
                if rows.numel() == 0:
                    continue
                h = self.down[e](F.gelu(self.up[e](flat.index_select(0, rows))))
                out.index_add_(0, rows, (h * weight[rows, slot, None]).to(out.dtype))
            return out.reshape_as(x)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj, self.moe = nn.Linear(d, 3 * d), nn.Linear(d, d), MoE()

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.n1(x)).view(b, t, 3, heads, d // heads).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
            return x + self.moe(self.n2(x))

    train_token_lm(torch, Block, d, vocab, 1e-4, [(8, 256), (4, 512), (16, 128), (6, 300)])


def train_token_lm(torch, block, d, vocab, lr, shapes):
    """Train a language model of an embedding, four blocks made by block() and a head,
    AdamW at lr: one step per (batch, length) of shapes on random tokens, next-token
    cross entropy under bf16 autocast (moe_train_bf16, mamba_scan_train_bf16)."""
    nn, F = torch.nn, torch.nn.functional
    emb = nn.Embedding(vocab, d).cuda()
    blocks = nn.ModuleList(block() for _ in range(4)).cuda()
    head = nn.Linear(d, vocab).cuda()
    params = list(emb.parameters()) + list(blocks.parameters()) + list(head.parameters())
    opt = torch.optim.AdamW(params, lr=lr)
    for b, t in shapes:
        ids = torch.randint(0, vocab, (b, t + 1), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            x = emb(ids[:, :-1])
            for blk in blocks:
                x = blk(x)
            loss = F.cross_entropy(head(x).float().reshape(-1, vocab), ids[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, x, loss


def llama_static_cache_generate_bf16(torch):
    """transformers' Llama (4 layers, d 768, 12 heads, 4 KV heads: GQA; vocab 32000, random
    weights) in bf16, greedy `generate` with a static KV cache (`cache_implementation=
    "static"`: the cache for prompt + new tokens allocated whole before the first token)
    for padded batches of different sizes and prompt lengths, 32 new tokens each."""
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=32000, hidden_size=768, intermediate_size=2048,
                      num_hidden_layers=4, num_attention_heads=12, num_key_value_heads=4,
                      max_position_embeddings=2048, pad_token_id=0)
    model = LlamaForCausalLM(cfg).cuda().to(torch.bfloat16).eval()
    with torch.inference_mode():
        for bs, n in [(4, 100), (2, 300), (8, 50), (3, 180)]:
            ids = torch.randint(1, cfg.vocab_size, (bs, n), device="cuda")
            mask = torch.ones_like(ids)
            for i in range(bs):                             # left padding of different lengths
                mask[i, : (i * n) // (2 * bs)] = 0
            out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=32,
                                 min_new_tokens=32, do_sample=False,
                                 cache_implementation="static")
            del ids, mask, out


def nested_jagged_encode(torch):
    """A 4-layer encoder (d 512, 8 heads) serving batches of sequences of very different
    lengths as nested tensors of the jagged layout (`torch.nested.nested_tensor(...,
    layout=torch.jagged)`): no padding, scaled_dot_product_attention on the ragged batch,
    five batches of 8-32 sequences of 16-700 tokens, in bf16 under inference_mode."""
    from torch import nn
    F = nn.functional
    torch.manual_seed(0)
    d, heads = 512, 8
    layers = [nn.ModuleDict(dict(qkv=nn.Linear(d, 3 * d), proj=nn.Linear(d, d),
                                 up=nn.Linear(d, 4 * d), down=nn.Linear(4 * d, d))).cuda().to(torch.bfloat16).eval()
              for _ in range(4)]
    g = torch.Generator().manual_seed(1)
    with torch.inference_mode():
        for batch in (8, 32, 12, 20, 16):
            lens = torch.randint(16, 701, (batch,), generator=g).tolist()
            x = torch.nested.nested_tensor([torch.randn(n, d, device="cuda", dtype=torch.bfloat16)
                                            for n in lens],
                                           layout=torch.jagged)
            for L in layers:
                q, k, v = L["qkv"](x).chunk(3, dim=-1)
                q, k, v = (t.unflatten(-1, [heads, d // heads]).transpose(1, 2) for t in (q, k, v))
                a = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).flatten(-2)
                x = x + L["proj"](a)
                x = x + L["down"](F.gelu(L["up"](x)))
            del x


def pyg_sage_train(torch):
    """PyTorch Geometric's GraphSAGE (three SAGEConv layers, 128 -> 256 -> 256 -> 40, mean
    aggregation: scatter over each edge's target) trained full-batch on four random graphs
    of different sizes (60k-200k nodes, 6-15 edges a node, self-loops removed: an edge
    count the data decides), Adam, one step a graph."""
    from torch import nn
    from torch_geometric.nn import SAGEConv
    F = nn.functional
    torch.manual_seed(0)
    convs = nn.ModuleList([SAGEConv(128, 256), SAGEConv(256, 256), SAGEConv(256, 40)]).cuda()
    opt = torch.optim.Adam(convs.parameters(), lr=1e-3)
    for n, deg in [(60_000, 12), (150_000, 8), (90_000, 15), (200_000, 6)]:
        x = torch.randn(n, 128, device="cuda")
        edges = torch.randint(0, n, (2, n * deg), device="cuda")
        edges = edges[:, edges[0] != edges[1]]
        y = torch.randint(0, 40, (n,), device="cuda")
        h = x
        for i, conv in enumerate(convs):
            h = conv(h, edges)
            if i < len(convs) - 1:
                h = F.relu(h)
        loss = F.cross_entropy(h, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, edges, y, h, loss


def clip_contrastive_train_fp16(torch):
    """transformers' CLIP (a ViT-B/32-shaped vision tower of 6 layers, d 512, 224 px, and a
    6-layer text tower, d 512, random weights) trained with its contrastive loss under fp16
    autocast and a GradScaler, AdamW; 3 steps at batch 96, 160, 64 of image-caption pairs
    whose captions are padded to each batch's longest (12-77 tokens)."""
    from transformers import CLIPConfig, CLIPModel
    torch.manual_seed(0)
    cfg = CLIPConfig(text_config=dict(hidden_size=512, intermediate_size=2048, num_hidden_layers=6,
                                      num_attention_heads=8, max_position_embeddings=77),
                     vision_config=dict(hidden_size=512, intermediate_size=2048, num_hidden_layers=6,
                                        num_attention_heads=8, image_size=224, patch_size=32),
                     projection_dim=256)
    model = CLIPModel(cfg).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scaler = torch.amp.GradScaler("cuda")
    for bs, n in [(96, 40), (160, 77), (64, 12)]:
        pixels = torch.randn(bs, 3, 224, 224, device="cuda")
        ids = torch.randint(1, cfg.text_config.vocab_size, (bs, n), device="cuda")
        mask = torch.ones_like(ids)
        for i in range(bs):                                 # captions of different lengths
            mask[i, max(2, n - (i * n) // bs):] = 0
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(input_ids=ids, attention_mask=mask, pixel_values=pixels, return_loss=True).loss
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        del pixels, ids, mask, loss


def timm_convnext_accum_ema_train(torch):
    """timm's convnext_tiny (random weights) trained at mixed resolutions under bf16
    autocast with gradient accumulation (three micro-batches a step, each its own size and
    resolution), clip_grad_norm_, fused AdamW (`fused=True`) and an exponential moving
    average of the weights (timm's ModelEmaV3, a second copy of the model on the GPU);
    3 steps."""
    import timm
    from timm.utils import ModelEmaV3
    torch.manual_seed(0)
    model = timm.create_model("convnext_tiny", pretrained=False, num_classes=100).cuda()
    ema = ModelEmaV3(model, decay=0.999)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    steps = [[(32, 224), (16, 288), (48, 160)], [(24, 256), (64, 128)], [(8, 384), (40, 192), (20, 224)]]
    for micro in steps:
        for bs, px in micro:
            x = torch.randn(bs, 3, px, px, device="cuda")
            y = torch.randint(0, 100, (bs,), device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = torch.nn.functional.cross_entropy(model(x), y) / len(micro)
            loss.backward()
            del x, y, loss
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        ema.update(model)


def deeplab_varsize_train_bf16(torch):
    """torchvision's deeplabv3_mobilenet_v3_large (random weights, 21 classes) trained for
    segmentation under bf16 autocast, SGD with momentum, on batches of different sizes and
    image shapes (8x512x512, 4x768x640, 16x320x480, 6x640x640): the dilated backbone's
    and the upsampled logits' sizes change every step."""
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(
        weights=None, weights_backbone=None, num_classes=21, aux_loss=False).cuda().train()
    opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    for bs, h, w in [(8, 512, 512), (4, 768, 640), (16, 320, 480), (6, 640, 640)]:
        x = torch.randn(bs, 3, h, w, device="cuda")
        y = torch.randint(0, 21, (bs, h, w), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x)["out"].float(), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y, loss


def paged_kv_serve_fp16(torch):
    """A hand-written fp16 decoder (4 layers, d 1024, 16 heads, vocab 32000) serving 12
    requests (prompts of 16-700 tokens, 4-32 new tokens each) as vLLM does: one pool of
    16-token blocks for every layer's keys and values allocated up front, a block table per
    request, blocks taken from a free list as a request grows and given back when it ends;
    up to 4 requests at a time, chunked prefill (at most 256 prompt tokens a step) beside
    the others' decode; each step writes the new keys and values into their blocks and
    gathers a request's blocks into contiguous tensors for attention."""
    from torch import nn
    F = nn.functional
    torch.manual_seed(0)
    d, heads, layers, vocab, blk, nblocks = 1024, 16, 4, 32000, 16, 1024
    hd = d // heads
    emb = nn.Embedding(vocab, d).cuda().half()
    qkv = nn.ModuleList(nn.Linear(d, 3 * d) for _ in range(layers)).cuda().half()
    proj = nn.ModuleList(nn.Linear(d, d) for _ in range(layers)).cuda().half()
    mlp = nn.ModuleList(nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
                        for _ in range(layers)).cuda().half()
    head = nn.Linear(d, vocab).cuda().half()
    pool = torch.zeros(layers, 2, nblocks, blk, heads, hd, device="cuda", dtype=torch.half)
    free = list(range(nblocks))
    g = torch.Generator().manual_seed(1)
    reqs = [dict(prompt=torch.randint(1, vocab, (int(torch.randint(16, 701, (1,), generator=g)),),
                                      generator=g).tolist(),
                 want=int(torch.randint(4, 33, (1,), generator=g)), tokens=[], blocks=[])
            for _ in range(12)]
    waiting, active = list(range(len(reqs))), []
    with torch.inference_mode():
        while waiting or active:
            while waiting and len(active) < 4:
                active.append(waiting.pop(0))
            for r in list(active):
                q = reqs[r]
                done = len(q["tokens"])
                if done < len(q["prompt"]):
                    new = q["prompt"][done:done + 256]
                else:
                    new = q["tokens"][-1:]
                start, n = done, len(new)
                while len(q["blocks"]) * blk < start + n:
                    q["blocks"].append(free.pop())
                table = torch.tensor(q["blocks"], device="cuda")
                pos = torch.arange(start, start + n, device="cuda")
                x = emb(torch.tensor(new, device="cuda"))
                allowed = torch.arange(start + n, device="cuda")[None, :] <= pos[:, None]
                for l in range(layers):
                    qq, k, v = qkv[l](x).view(n, 3, heads, hd).unbind(1)
                    pool[l, 0, table[pos // blk], pos % blk] = k
                    pool[l, 1, table[pos // blk], pos % blk] = v
                    keys = pool[l, 0, table].reshape(-1, heads, hd)[:start + n]
                    vals = pool[l, 1, table].reshape(-1, heads, hd)[:start + n]
                    a = F.scaled_dot_product_attention(qq.transpose(0, 1), keys.transpose(0, 1),
                                                       vals.transpose(0, 1), attn_mask=allowed)
                    x = x + proj[l](a.transpose(0, 1).reshape(n, d))
                    x = x + mlp[l](x)
                nxt = int(head(x[-1]).argmax())
                if done < len(q["prompt"]):
                    q["tokens"].extend(new)
                    if len(q["tokens"]) == len(q["prompt"]):
                        q["tokens"].append(nxt)
                else:
                    q["tokens"].append(nxt)
                if len(q["tokens"]) >= len(q["prompt"]) + q["want"]:
                    free.extend(q["blocks"])
                    q["blocks"] = []
                    active.remove(r)
                del table, pos, x, allowed


def lightning_bert_train_bf16(torch):
    """PyTorch Lightning's Trainer fitting transformers' BERT for sequence classification
    (6 layers, d 512, random weights) with `precision="bf16-mixed"`, gradient accumulation
    over 2 batches, gradient clipping and AdamW, 8 batches of different sizes and lengths
    (dynamic padding: 32x64, 8x384, 16x200, 64x48, ...); no logger, checkpoint or progress
    bar."""
    import logging
    import pytorch_lightning as pl
    from transformers import BertConfig, BertForSequenceClassification
    logging.getLogger("pytorch_lightning").setLevel(logging.ERROR)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=30522, hidden_size=512, num_hidden_layers=6, num_attention_heads=8,
                     intermediate_size=2048, num_labels=4)
    shapes = [(32, 64), (8, 384), (16, 200), (64, 48), (12, 256), (24, 128), (4, 512), (48, 96)]
    g = torch.Generator().manual_seed(1)
    batches = [(torch.randint(0, cfg.vocab_size, (b, n), generator=g), torch.randint(0, 4, (b,), generator=g))
               for b, n in shapes]

    class Module(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.model = BertForSequenceClassification(cfg)

        def training_step(self, batch, _):
            ids, labels = batch
            return self.model(input_ids=ids, labels=labels).loss

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=1e-4)

    trainer = pl.Trainer(accelerator="gpu", devices=1, precision="bf16-mixed", max_epochs=1,
                         accumulate_grad_batches=2, gradient_clip_val=1.0, logger=False,
                         enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False, num_sanity_val_steps=0)
    trainer.fit(Module(), train_dataloaders=torch.utils.data.DataLoader(batches, batch_size=None))


def hf_trainer_gpt2_accum(torch):
    """transformers' Trainer training GPT-2 (4 layers, d 512, vocab 32000, random weights)
    as a language model with bf16, gradient accumulation over 2 batches of 8 and a collator
    padding each batch to its longest (96 samples of 32-600 tokens, shuffled by the
    Trainer's seeded sampler), AdamW (the Trainer's default), 6 optimizer steps; nothing
    saved or logged."""
    import tempfile
    from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(n_layer=4, n_embd=512, n_head=8, vocab_size=32000, n_positions=1024,
                                       bos_token_id=0, eos_token_id=0))
    g = torch.Generator().manual_seed(1)
    samples = [torch.randint(0, 32000, (int(torch.randint(32, 601, (1,), generator=g)),), generator=g)
               for _ in range(96)]
    data = [{"input_ids": x} for x in samples]

    def collate(rows):
        n = max(len(r["input_ids"]) for r in rows)
        ids = torch.zeros(len(rows), n, dtype=torch.long)
        mask = torch.zeros(len(rows), n, dtype=torch.long)
        for i, r in enumerate(rows):
            ids[i, :len(r["input_ids"])], mask[i, :len(r["input_ids"])] = r["input_ids"], 1
        labels = ids.masked_fill(mask == 0, -100)
        return {"input_ids": ids, "attention_mask": mask, "labels": labels}

    with tempfile.TemporaryDirectory() as out:
        args = TrainingArguments(output_dir=out, max_steps=6, per_device_train_batch_size=8,
                                 gradient_accumulation_steps=2, bf16=True,
                                 save_strategy="no", logging_strategy="no", report_to=[],
                                 dataloader_num_workers=0, seed=0, disable_tqdm=True)
        Trainer(model=model, args=args, train_dataset=data, data_collator=collate).train()


def wav2vec2_ctc_train_fp16(torch):
    """transformers' Wav2Vec2 for CTC (a 7-layer convolutional feature encoder and 4
    transformer layers, d 384, random weights) trained on padded batches of raw 16 kHz
    audio of different lengths (1-6 s) with CTC loss over transcripts of different lengths,
    fp16 autocast and a GradScaler, AdamW, 4 steps."""
    from transformers import Wav2Vec2Config, Wav2Vec2ForCTC
    torch.manual_seed(0)
    cfg = Wav2Vec2Config(vocab_size=40, hidden_size=384, num_hidden_layers=4, num_attention_heads=6,
                         intermediate_size=1536, pad_token_id=0, ctc_loss_reduction="mean", ctc_zero_infinity=True,
                         feat_extract_norm="layer", do_stable_layer_norm=True)
    model = Wav2Vec2ForCTC(cfg).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scaler = torch.amp.GradScaler("cuda")
    g = torch.Generator().manual_seed(1)
    for bs in (8, 4, 12, 6):
        lens = torch.randint(16_000, 96_001, (bs,), generator=g)
        audio = torch.zeros(bs, int(lens.max()), device="cuda")
        mask = torch.zeros(bs, int(lens.max()), dtype=torch.long, device="cuda")
        for i, n in enumerate(lens.tolist()):
            audio[i, :n] = torch.randn(n, device="cuda")
            mask[i, :n] = 1
        tl = torch.randint(5, 40, (bs,), generator=g)
        labels = torch.full((bs, int(tl.max())), -100, dtype=torch.long)
        for i, n in enumerate(tl.tolist()):
            labels[i, :n] = torch.randint(1, 40, (n,), generator=g)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(audio, attention_mask=mask, labels=labels.cuda()).loss
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        del audio, mask, labels, loss


def r3d_video_train_bf16(torch):
    """torchvision's r3d_18 (3D ResNet for video, random weights, 50 classes) trained under
    bf16 autocast on clips of different lengths and sizes (8x16x112^2, 4x32x112^2,
    16x8x160^2, 6x24x128^2 frames x pixels), SGD with momentum."""
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.video.r3d_18(weights=None, num_classes=50).cuda().train()
    opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    for bs, t, px in [(8, 16, 112), (4, 32, 112), (16, 8, 160), (6, 24, 128)]:
        x = torch.randn(bs, 3, t, px, px, device="cuda")
        y = torch.randint(0, 50, (bs,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y, loss


def fasterrcnn_varsize_train(torch):
    """torchvision's fasterrcnn_mobilenet_v3_large_fpn (random weights, 11 classes) trained
    for detection, SGD with momentum: 3 steps of 2-4 images, each its own size (320-800 px
    a side) and 1-6 boxes, so the resize, the anchors, the sampled proposals and the
    per-image losses take new shapes every step."""
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.detection.fasterrcnn_mobilenet_v3_large_fpn(
        weights=None, weights_backbone=None, num_classes=11).cuda().train()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    steps = [[(480, 640, 3), (600, 400, 1)], [(320, 320, 6), (800, 600, 2), (512, 512, 4)],
             [(720, 480, 5), (400, 720, 2), (640, 640, 1), (360, 500, 3)]]
    for images in steps:
        xs, targets = [], []
        for h, w, k in images:
            xs.append(torch.rand(3, h, w, device="cuda"))
            lo = torch.rand(k, 2, device="cuda") * torch.tensor([w * 0.6, h * 0.6], device="cuda")
            size = 16 + torch.rand(k, 2, device="cuda") * torch.tensor([w * 0.35, h * 0.35], device="cuda")
            targets.append({"boxes": torch.cat([lo, lo + size], 1),
                            "labels": torch.randint(1, 11, (k,), device="cuda")})
        losses = model(xs, targets)
        loss = sum(losses.values())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del xs, targets, losses, loss


def bart_seq2seq_train_bf16(torch):
    """transformers' BART (3 + 3 layers, d 512, vocab 32000, random weights) trained as a
    sequence-to-sequence model (summarisation-like: sources of 64-512 tokens, targets of
    16-128, each batch padded to its longest, padding masked in the attention and as -100
    in the labels) under bf16 autocast, AdamW, 4 steps of different batch x length shapes."""
    from transformers import BartConfig, BartForConditionalGeneration
    torch.manual_seed(0)
    cfg = BartConfig(vocab_size=32000, d_model=512, encoder_layers=3, decoder_layers=3,
                     encoder_attention_heads=8, decoder_attention_heads=8, encoder_ffn_dim=2048,
                     decoder_ffn_dim=2048, max_position_embeddings=1024)
    model = BartForConditionalGeneration(cfg).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for bs, src, tgt in [(16, 256, 64), (8, 512, 128), (32, 64, 16), (12, 384, 96)]:
        ids = torch.randint(3, 32000, (bs, src), device="cuda")
        mask = torch.ones_like(ids)
        labels = torch.randint(3, 32000, (bs, tgt), device="cuda")
        for i in range(bs):                                  # each pair its own length
            mask[i, src - (i * src) // (2 * bs):] = 0
            labels[i, tgt - (i * tgt) // (2 * bs):] = -100
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, mask, labels, loss


def conditional_unet(torch):
    """A hand-written conditional U-Net for latents of 4 channels (three levels, 128-512
    channels, the timestep's and the text's 256-wide embeddings added to every block), as
    diffusion_cfg_sample_fp16 samples with and diffusion_unet_ema_train_bf16 trains."""
    nn = torch.nn
    F = nn.functional

    class Block(nn.Module):
        def __init__(self, i, o):
            super().__init__()
            self.c1, self.c2 = nn.Conv2d(i, o, 3, padding=1), nn.Conv2d(o, o, 3, padding=1)
            self.n1, self.n2 = nn.GroupNorm(8, o), nn.GroupNorm(8, o)
            self.emb = nn.Linear(256, o)

        def forward(self, x, e):
            h = F.silu(self.n1(self.c1(x))) + self.emb(e)[:, :, None, None]
            return F.silu(self.n2(self.c2(h)))

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.d1, self.d2, self.d3 = Block(4, 128), Block(128, 256), Block(256, 512)
            self.u2, self.u1 = Block(512 + 256, 256), Block(256 + 128, 128)
            self.out = nn.Conv2d(128, 4, 1)
            self.t = nn.Sequential(nn.Linear(1, 256), nn.SiLU(), nn.Linear(256, 256))

        def forward(self, x, t, cond):
            e = self.t(t[:, None]) + cond
            a = self.d1(x, e)
            b = self.d2(F.avg_pool2d(a, 2), e)
            c = self.d3(F.avg_pool2d(b, 2), e)
            b = self.u2(torch.cat([F.interpolate(c, scale_factor=2), b], 1), e)
            return self.out(self.u1(torch.cat([F.interpolate(b, scale_factor=2), a], 1), e))

    return UNet()


def diffusion_cfg_sample_fp16(torch):
    """Latent-diffusion-style sampling in fp16 under inference_mode: a hand-written
    conditional U-Net (three levels, 128-512 channels, timestep and text embeddings added
    to every block) denoising three requests of different batch and latent size (4x64^2,
    2x96^2, 8x48^2) for 12 DDIM-like steps each with classifier-free guidance (the batch
    doubled by torch.cat, the two halves mixed), then a decoder upsampling the latents 8x
    to images (the largest tensors of the run)."""
    from torch import nn
    torch.manual_seed(0)

    decoder = nn.Sequential(nn.Conv2d(4, 256, 3, padding=1), nn.SiLU(),
                            nn.Upsample(scale_factor=2), nn.Conv2d(256, 128, 3, padding=1), nn.SiLU(),
                            nn.Upsample(scale_factor=2), nn.Conv2d(128, 64, 3, padding=1), nn.SiLU(),
                            nn.Upsample(scale_factor=2), nn.Conv2d(64, 3, 3, padding=1))
    unet = conditional_unet(torch).cuda().half().eval()
    decoder = decoder.cuda().half().eval()
    text = nn.Embedding(1000, 256).cuda().half()
    with torch.inference_mode():
        for bs, px in [(4, 64), (2, 96), (8, 48)]:
            cond = text(torch.randint(0, 1000, (bs,), device="cuda"))
            uncond = torch.zeros_like(cond)
            x = torch.randn(bs, 4, px, px, device="cuda", dtype=torch.half)
            for step in range(12):
                t = torch.full((2 * bs,), 1.0 - step / 12, device="cuda", dtype=torch.half)
                eps = unet(torch.cat([x, x]), t, torch.cat([cond, uncond]))
                c, u = eps.chunk(2)
                eps = u + 7.5 * (c - u)
                x = x - 0.08 * eps
                del c, u, eps, t
            images = decoder(x).clamp(-1, 1)
            del cond, uncond, x, images


def vitmae_pretrain_bf16(torch):
    """transformers' ViTMAE (6-layer encoder, d 512, 4-layer decoder, d 256, random
    weights) pretrained as a masked autoencoder under bf16 autocast: 75 % of each image's
    16 px patches masked at random (per-sample noise sorted, the kept patches gathered),
    the pixels of the masked ones reconstructed; AdamW, 4 steps at batch 64, 128, 32, 96
    of 224 px images."""
    from transformers import ViTMAEConfig, ViTMAEForPreTraining
    torch.manual_seed(0)
    cfg = ViTMAEConfig(hidden_size=512, num_hidden_layers=6, num_attention_heads=8,
                       intermediate_size=2048, decoder_hidden_size=256, decoder_num_hidden_layers=4,
                       decoder_num_attention_heads=8, decoder_intermediate_size=1024,
                       image_size=224, patch_size=16, mask_ratio=0.75)
    model = ViTMAEForPreTraining(cfg).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1.5e-4)
    for bs in [64, 128, 32, 96]:
        pixels = torch.randn(bs, 3, 224, 224, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(pixel_values=pixels).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del pixels, loss


def ppo_rollout_train(torch):
    """Proximal policy optimisation on a synthetic vectorised environment: 64 environments
    stepped 256 times by an actor-critic MLP (observations 64 wide, two layers of 256, 18
    actions), every step's observation, action, log-probability, value and reward written
    into rollout buffers; advantages by GAE in a Python loop backwards over the steps; then
    4 epochs over minibatches of 2048 drawn by torch.randperm, clipped surrogate and value
    losses, Adam; two rollouts. Thousands of small tensors: the small pool's program."""
    from torch import nn
    F = nn.functional
    torch.manual_seed(0)
    envs, steps, obs_dim, acts = 64, 256, 64, 18
    body = nn.Sequential(nn.Linear(obs_dim, 256), nn.Tanh(), nn.Linear(256, 256), nn.Tanh()).cuda()
    pi, v = nn.Linear(256, acts).cuda(), nn.Linear(256, 1).cuda()
    params = list(body.parameters()) + list(pi.parameters()) + list(v.parameters())
    opt = torch.optim.Adam(params, lr=3e-4)
    dyn = torch.randn(obs_dim, obs_dim, device="cuda") / obs_dim ** 0.5
    obs = torch.randn(envs, obs_dim, device="cuda")
    for rollout in range(2):
        buf_obs = torch.empty(steps, envs, obs_dim, device="cuda")
        buf_act = torch.empty(steps, envs, dtype=torch.long, device="cuda")
        buf_logp = torch.empty(steps, envs, device="cuda")
        buf_val = torch.empty(steps, envs, device="cuda")
        buf_rew = torch.empty(steps, envs, device="cuda")
        with torch.no_grad():
            for t in range(steps):
                h = body(obs)
                dist = torch.distributions.Categorical(logits=pi(h))
                a = dist.sample()
                buf_obs[t], buf_act[t], buf_logp[t], buf_val[t] = obs, a, dist.log_prob(a), v(h).squeeze(1)
                obs = torch.tanh(obs @ dyn + 0.1 * torch.randn_like(obs))
                buf_rew[t] = obs[:, 0] * (a.float() / acts)
        adv = torch.zeros_like(buf_rew)
        last = torch.zeros(envs, device="cuda")
        with torch.no_grad():
            nxt = v(body(obs)).squeeze(1)
            for t in reversed(range(steps)):
                delta = buf_rew[t] + 0.99 * nxt - buf_val[t]
                last = delta + 0.99 * 0.95 * last
                adv[t], nxt = last, buf_val[t]
        ret = (adv + buf_val).reshape(-1)
        adv = ((adv - adv.mean()) / (adv.std() + 1e-8)).reshape(-1)
        o, act, logp0 = buf_obs.reshape(-1, obs_dim), buf_act.reshape(-1), buf_logp.reshape(-1)
        for epoch in range(4):
            perm = torch.randperm(steps * envs, device="cuda")
            for mb in perm.split(2048):
                h = body(o[mb])
                dist = torch.distributions.Categorical(logits=pi(h))
                ratio = (dist.log_prob(act[mb]) - logp0[mb]).exp()
                pg = -torch.min(ratio * adv[mb], ratio.clamp(0.8, 1.2) * adv[mb]).mean()
                vl = F.mse_loss(v(h).squeeze(1), ret[mb])
                loss = pg + 0.5 * vl - 0.01 * dist.entropy().mean()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(params, 0.5)
                opt.step()
        del buf_obs, buf_act, buf_logp, buf_val, buf_rew, adv, ret, o, act, logp0, perm


def embedding_index_build(torch):
    """Dense retrieval: a 4-layer encoder (d 384, 6 heads, fp16, inference_mode) embeds a
    corpus in chunks of 256-1024 passages of 32-256 tokens; the index grows by torch.cat
    after every chunk (a new, larger tensor each time, the old one freed); then 6 batches
    of queries are scored against the whole index (a matrix product) and the top 100 kept."""
    from torch import nn
    F = nn.functional
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(384, 6, 1536, batch_first=True)
    enc = nn.TransformerEncoder(layer, 4, enable_nested_tensor=False).cuda().half().eval()
    emb = nn.Embedding(30000, 384).cuda().half()
    with torch.inference_mode():
        index = torch.empty(0, 384, device="cuda", dtype=torch.half)
        for n, length in [(512, 128), (1024, 64), (256, 256), (768, 96), (1024, 32), (384, 192)]:
            ids = torch.randint(0, 30000, (n, length), device="cuda")
            vec = F.normalize(enc(emb(ids)).mean(1), dim=-1)
            index = torch.cat([index, vec])
            del ids, vec
        for q, length in [(64, 16), (256, 24), (32, 48), (128, 12), (512, 20), (16, 64)]:
            ids = torch.randint(0, 30000, (q, length), device="cuda")
            query = F.normalize(enc(emb(ids)).mean(1), dim=-1)
            scores, top = (query @ index.T).topk(100, dim=1)
            del ids, query, scores, top


def dpo_pairs_train_bf16(torch):
    """Direct preference optimisation: transformers' GPT-2 (4 layers, d 512, vocab 32000,
    random weights) as the policy, trained, and a frozen bf16 copy as the reference (eval,
    no_grad); each step B prompts with a chosen and a rejected answer of different
    lengths, one padded batch of 2B rows through both models, the answer tokens'
    log-probabilities gathered from the logits (a float log_softmax over the vocabulary),
    the DPO loss (beta 0.1) under bf16 autocast; AdamW, 4 steps."""
    import copy
    from transformers import GPT2Config, GPT2LMHeadModel
    F = torch.nn.functional
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=32000, n_positions=1024, n_embd=512, n_layer=4, n_head=8)
    policy = GPT2LMHeadModel(cfg).cuda().train()
    ref = copy.deepcopy(policy).to(torch.bfloat16).eval().requires_grad_(False)
    opt = torch.optim.AdamW(policy.parameters(), lr=1e-5)

    def answer_logps(model, ids, mask, answer):
        logits = model(input_ids=ids, attention_mask=mask).logits[:, :-1].float()
        lp = torch.gather(logits.log_softmax(-1), 2, ids[:, 1:, None]).squeeze(2)
        return (lp * answer[:, 1:]).sum(1)

    for bs, prompt, longest in [(8, 128, 256), (4, 256, 512), (16, 64, 128), (6, 200, 384)]:
        n = prompt + longest
        ids = torch.randint(0, 32000, (2 * bs, n), device="cuda")
        mask = torch.ones_like(ids)
        answer = torch.zeros(2 * bs, n, device="cuda")
        for i in range(2 * bs):                             # each answer its own length
            end = n - (i * longest) // (4 * bs)
            mask[i, end:] = 0
            answer[i, prompt:end] = 1
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            ref_lp = answer_logps(ref, ids, mask, answer)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            lp = answer_logps(policy, ids, mask, answer)
        chosen, rejected = (lp - ref_lp).chunk(2)
        loss = -F.logsigmoid(0.1 * (chosen - rejected)).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, mask, answer, ref_lp, lp, chosen, rejected, loss


def distill_resnet_train_bf16(torch):
    """Knowledge distillation: torchvision's resnet50 (random weights) as the teacher in
    eval mode under no_grad, resnet18 as the student trained on its temperature-softened
    outputs (KL divergence) and the labels, both channels_last under bf16 autocast; SGD
    with Nesterov momentum, 4 steps at 64x224, 32x288, 96x160 and 48x256 px."""
    import torchvision
    F = torch.nn.functional
    torch.manual_seed(0)
    cl = torch.channels_last
    teacher = torchvision.models.resnet50(weights=None, num_classes=100).cuda().eval().to(memory_format=cl)
    student = torchvision.models.resnet18(weights=None, num_classes=100).cuda().train().to(memory_format=cl)
    opt = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9, nesterov=True)
    for bs, px in [(64, 224), (32, 288), (96, 160), (48, 256)]:
        x = torch.randn(bs, 3, px, px, device="cuda").to(memory_format=cl)
        y = torch.randint(0, 100, (bs,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            with torch.no_grad():
                t = teacher(x)
            s = student(x)
            kd = F.kl_div(F.log_softmax(s.float() / 2, -1), F.log_softmax(t.float() / 2, -1),
                          reduction="batchmean", log_target=True)
            loss = 0.5 * F.cross_entropy(s, y) + 2.0 * kd
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y, t, s, kd, loss


def whisper_train_fp16(torch):
    """transformers' Whisper (4 + 4 layers, d 384, 80 mel bins, random weights) trained on
    30 s log-mel inputs (bs x 80 x 3000) with transcripts of 32-200 tokens padded per
    batch (-100 in the labels), fp16 autocast with a GradScaler, AdamW, 4 steps."""
    from transformers import WhisperConfig, WhisperForConditionalGeneration
    torch.manual_seed(0)
    cfg = WhisperConfig(vocab_size=51865, num_mel_bins=80, d_model=384, encoder_layers=4, decoder_layers=4,
                        encoder_attention_heads=6, decoder_attention_heads=6, encoder_ffn_dim=1536,
                        decoder_ffn_dim=1536, max_source_positions=1500, max_target_positions=448)
    model = WhisperForConditionalGeneration(cfg).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scaler = torch.amp.GradScaler("cuda")
    for bs, n in [(8, 64), (16, 32), (4, 200), (12, 100)]:
        feats = torch.randn(bs, 80, 3000, device="cuda")
        labels = torch.randint(0, 50000, (bs, n), device="cuda")
        for i in range(bs):                                 # each transcript its own length
            labels[i, n - (i * n) // (2 * bs):] = -100
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(input_features=feats, labels=labels).loss
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        del feats, labels, loss


def int8_weight_only_decode_bf16(torch):
    """A hand-written decoder (6 layers, d 1024, 16 heads, vocab 32000, random weights)
    whose linear weights are stored int8 with one bf16 scale per output channel and
    dequantized into a bf16 temporary at every call (weight-only quantisation, as
    gpt-fast does without its fused kernels), serving 5 requests one after another with
    a static KV cache (allocated for 1024 positions per request, written in place by
    index_copy_): a prefill of 64-700 tokens, then 12-32 greedy decode steps, under
    inference_mode."""
    from torch import nn
    F = nn.functional
    torch.manual_seed(0)
    d, h, layers, vocab, maxlen = 1024, 16, 6, 32000, 1024

    def qlinear(i, o):
        w = torch.randn(o, i, device="cuda") / i ** 0.5
        scale = w.abs().amax(1, keepdim=True) / 127
        return (w / scale).round().to(torch.int8), scale.to(torch.bfloat16)

    def lin(x, q):
        return F.linear(x, q[0].to(torch.bfloat16) * q[1])

    with torch.inference_mode():
        blocks = [dict(qkv=qlinear(d, 3 * d), o=qlinear(d, d), up=qlinear(d, 4 * d), down=qlinear(4 * d, d))
                  for _ in range(layers)]
        emb = (torch.randn(vocab, d, device="cuda") * 0.02).to(torch.bfloat16)
        head = qlinear(d, vocab)
        for prompt, new in [(64, 32), (700, 12), (256, 24), (512, 16), (128, 28)]:
            k_cache = torch.zeros(layers, 1, h, maxlen, d // h, device="cuda", dtype=torch.bfloat16)
            v_cache = torch.zeros_like(k_cache)
            ids = torch.randint(0, vocab, (1, prompt), device="cuda")
            pos = torch.arange(prompt, device="cuda")
            end = prompt
            for step in range(new + 1):
                x = emb[ids]
                for layer, b in enumerate(blocks):
                    q, k, v = lin(F.rms_norm(x, (d,)), b["qkv"]).split(d, -1)
                    q, k, v = (t.reshape(1, -1, h, d // h).transpose(1, 2) for t in (q, k, v))
                    k_cache[layer].index_copy_(2, pos, k)
                    v_cache[layer].index_copy_(2, pos, v)
                    a = F.scaled_dot_product_attention(q, k_cache[layer][:, :, :end], v_cache[layer][:, :, :end],
                                                       is_causal=step == 0)
                    x = x + lin(a.transpose(1, 2).reshape(1, -1, d), b["o"])
                    x = x + lin(F.silu(lin(F.rms_norm(x, (d,)), b["up"])), b["down"])
                ids = lin(x[:, -1:], head).argmax(-1)
                pos = pos[-1:] + 1
                end += 1
            del k_cache, v_cache, ids, pos, x


def bert_train_eval_interleaved_bf16(torch):
    """transformers' BERT (4 layers, d 512, random weights) fine-tuned for 5-way
    classification under bf16 autocast with AdamW on dynamically padded batches (each
    its own batch x length), and evaluated every second step: model.eval(), no_grad,
    three larger batches of other lengths, accuracy accumulated on the GPU, then back
    to training; 6 training steps."""
    from transformers import BertConfig, BertForSequenceClassification
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=30522, hidden_size=512, num_hidden_layers=4, num_attention_heads=8,
                     intermediate_size=2048, num_labels=5)
    model = BertForSequenceClassification(cfg).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-5)

    def batch(bs, n):
        ids = torch.randint(1000, 30522, (bs, n), device="cuda")
        mask = torch.ones_like(ids)
        for i in range(bs):                                 # each text its own length
            mask[i, n - (i * n) // (2 * bs):] = 0
        return ids, mask, torch.randint(0, 5, (bs,), device="cuda")

    train = [(32, 128), (16, 384), (64, 64), (24, 256), (8, 512), (48, 160)]
    evals = [(128, 128), (64, 320), (256, 48)]
    for step, (bs, n) in enumerate(train):
        model.train()
        ids, mask, y = batch(bs, n)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, attention_mask=mask, labels=y).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, mask, y, loss
        if step % 2 == 1:
            model.eval()
            correct = torch.zeros((), device="cuda")
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                for ebs, en in evals:
                    ids, mask, y = batch(ebs, en)
                    correct += (model(input_ids=ids, attention_mask=mask).logits.argmax(-1) == y).sum()
                    del ids, mask, y
            del correct


def mamba_scan_train_bf16(torch):
    """A hand-written selective state-space language model (Mamba-like: 4 blocks, d 512,
    state 16, expand 2; a depthwise causal conv, input-dependent step sizes and B, C, and
    the recurrence scanned in a Python loop over chunks of 64 positions, each chunk's
    states by cumulative sums of log-decays) trained under bf16 autocast, AdamW, 4 steps
    at 8x512, 16x256, 4x1024 and 12x384 tokens: many mid-size temporaries per chunk,
    kept for backward."""
    from torch import nn
    F = nn.functional
    torch.manual_seed(0)
    d, e, n, vocab, chunk = 512, 1024, 16, 32000, 64

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.LayerNorm(d)
            self.inp = nn.Linear(d, 2 * e)
            self.conv = nn.Conv1d(e, e, 4, groups=e, padding=3)
            self.dt, self.bc = nn.Linear(e, e), nn.Linear(e, 2 * n)
            self.a_log = nn.Parameter(torch.zeros(e, n))
            self.out = nn.Linear(e, d)

        def forward(self, x):
            length = x.shape[1]
            u, gate = self.inp(self.norm(x)).chunk(2, -1)
            u = F.silu(self.conv(u.transpose(1, 2))[..., :length].transpose(1, 2))
            dt = F.softplus(self.dt(u)).float()
            b, c = self.bc(u).float().chunk(2, -1)
            a = -torch.exp(self.a_log)
            state = torch.zeros(x.shape[0], e, n, device=x.device)
            ys = []
            for s in range(0, length, chunk):
                dtc, uc = dt[:, s:s + chunk], u[:, s:s + chunk].float()
                decay = torch.cumsum(dtc[..., None] * a, 1)            # B x T x E x N
                inp = (dtc * uc)[..., None] * b[:, s:s + chunk, None, :]
                h = torch.exp(decay) * (state[:, None] + torch.cumsum(inp * torch.exp(-decay), 1))
                ys.append((h * c[:, s:s + chunk, None, :]).sum(-1))
                state = h[:, -1]
            y = torch.cat(ys, 1).to(x.dtype) * F.silu(gate)
            return x + self.out(y)

    train_token_lm(torch, Block, d, vocab, 3e-4, [(8, 512), (16, 256), (4, 1024), (12, 384)])


def gan_train_fp16(torch):
    """A DCGAN-style GAN trained under fp16 autocast: a generator (latent 128 → 64² RGB by
    four transposed convolutions, batch norm) and a discriminator (four strided
    convolutions), two Adam optimizers and two `GradScaler`s; each step the discriminator
    on real images and on the generator's output (`detach()`), then the generator through
    the discriminator; 5 steps at batch 64, 128, 32, 96, 48."""
    nn = torch.nn
    torch.manual_seed(0)
    g = nn.Sequential(
        nn.ConvTranspose2d(128, 512, 4, 1, 0, bias=False), nn.BatchNorm2d(512), nn.ReLU(True),
        nn.ConvTranspose2d(512, 256, 4, 2, 1, bias=False), nn.BatchNorm2d(256), nn.ReLU(True),
        nn.ConvTranspose2d(256, 128, 4, 2, 1, bias=False), nn.BatchNorm2d(128), nn.ReLU(True),
        nn.ConvTranspose2d(128, 64, 4, 2, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(True),
        nn.ConvTranspose2d(64, 3, 4, 2, 1, bias=False), nn.Tanh()).cuda()
    d = nn.Sequential(
        nn.Conv2d(3, 64, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, True),
        nn.Conv2d(64, 128, 4, 2, 1, bias=False), nn.BatchNorm2d(128), nn.LeakyReLU(0.2, True),
        nn.Conv2d(128, 256, 4, 2, 1, bias=False), nn.BatchNorm2d(256), nn.LeakyReLU(0.2, True),
        nn.Conv2d(256, 512, 4, 2, 1, bias=False), nn.BatchNorm2d(512), nn.LeakyReLU(0.2, True),
        nn.Conv2d(512, 1, 4, 1, 0, bias=False), nn.Flatten()).cuda()
    opt_g = torch.optim.Adam(g.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(d.parameters(), lr=2e-4, betas=(0.5, 0.999))
    scale_g, scale_d = torch.amp.GradScaler("cuda"), torch.amp.GradScaler("cuda")
    bce = nn.BCEWithLogitsLoss()
    for bs in [64, 128, 32, 96, 48]:
        real = torch.rand(bs, 3, 64, 64, device="cuda") * 2 - 1
        z = torch.randn(bs, 128, 1, 1, device="cuda")
        ones, zeros = torch.ones(bs, 1, device="cuda"), torch.zeros(bs, 1, device="cuda")
        with torch.autocast("cuda", dtype=torch.float16):
            fake = g(z)
            loss_d = bce(d(real), ones) + bce(d(fake.detach()), zeros)
        scale_d.scale(loss_d).backward()
        scale_d.step(opt_d)
        scale_d.update()
        opt_d.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss_g = bce(d(fake), ones)
        scale_g.scale(loss_g).backward()
        scale_g.step(opt_g)
        scale_g.update()
        opt_g.zero_grad(set_to_none=True)
        opt_d.zero_grad(set_to_none=True)
        del real, z, ones, zeros, fake, loss_d, loss_g


def dpsgd_per_sample_grads(torch):
    """Differentially private SGD as Opacus does it, by hand: a small CNN (two
    convolutions, two linear layers) on 32² images, every sample's own gradient by
    `torch.func.vmap(grad(...))` (a copy of every weight per sample), each clipped to norm
    1, summed, Gaussian noise added, an SGD step; 5 steps at batch 256, 512, 128, 384,
    320."""
    from torch.func import functional_call, grad, vmap
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(64 * 8 * 8, 256), nn.ReLU(),
                          nn.Linear(256, 10)).cuda()
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss_of(p, x, y):
        out = functional_call(model, p, (x[None],))
        return F.cross_entropy(out, y[None])

    per_sample = vmap(grad(loss_of), in_dims=(None, 0, 0))
    for bs in [256, 512, 128, 384, 320]:
        x = torch.randn(bs, 3, 32, 32, device="cuda")
        y = torch.randint(0, 10, (bs,), device="cuda")
        grads = per_sample(params, x, y)
        norms = torch.stack([g.reshape(bs, -1).norm(dim=1) for g in grads.values()]).norm(dim=0)
        factor = (1.0 / (norms + 1e-6)).clamp(max=1.0)
        with torch.no_grad():
            for k, g in grads.items():
                summed = torch.einsum("b,b...->...", factor, g)
                summed += torch.randn_like(summed) * 1.1
                params[k] -= 0.05 * summed / bs
        del x, y, grads, norms, factor, summed


def swin_varres_train_bf16(torch):
    """torchvision's `swin_t` (random weights, 100 classes) trained under bf16 autocast
    at four resolutions (the shifted windows padded to fit each), AdamW with weight
    decay, `clip_grad_norm_`; steps at 32×224, 16×320, 48×192, 24×256 px."""
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.swin_t(num_classes=100).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.05)
    for bs, px in [(32, 224), (16, 320), (48, 192), (24, 256)]:
        x = torch.randn(bs, 3, px, px, device="cuda")
        y = torch.randint(0, 100, (bs,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y, loss


def nerf_rays_train(torch):
    """NeRF-style training: a coordinate MLP (8 layers of 256, a skip connection, view
    direction branch) over positionally encoded samples along rays, 64 stratified samples
    a ray, volume rendering by `cumprod` of transmittance, an MSE loss against target
    colours, Adam; each step a batch of rays rendered in chunks of 8,192 (the chunks' outputs
    kept for backward, then `torch.cat`), 4 steps of 16k, 32k, 8k and 24k rays."""
    nn = torch.nn
    torch.manual_seed(0)

    def encode(x, n):
        f = 2.0 ** torch.arange(n, device=x.device) * torch.pi
        xf = x[..., None] * f
        return torch.cat([x, torch.sin(xf).flatten(-2), torch.cos(xf).flatten(-2)], -1)

    class NeRF(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.ModuleList([nn.Linear(63, 256)] + [nn.Linear(256, 256) for _ in range(3)])
            self.b = nn.ModuleList([nn.Linear(256 + 63, 256)] + [nn.Linear(256, 256) for _ in range(3)])
            self.sigma, self.feat = nn.Linear(256, 1), nn.Linear(256, 256)
            self.rgb = nn.Sequential(nn.Linear(256 + 27, 128), nn.ReLU(), nn.Linear(128, 3))

        def forward(self, p, v):
            h = p
            for layer in self.a:
                h = torch.relu(layer(h))
            h = torch.cat([h, p], -1)
            for layer in self.b:
                h = torch.relu(layer(h))
            return torch.relu(self.sigma(h)), torch.sigmoid(self.rgb(torch.cat([self.feat(h), v], -1)))

    model = NeRF().cuda()
    opt = torch.optim.Adam(model.parameters(), lr=5e-4)
    samples = 64
    for rays in [16384, 32768, 8192, 24576]:
        origin = torch.randn(rays, 3, device="cuda")
        direction = torch.nn.functional.normalize(torch.randn(rays, 3, device="cuda"), dim=-1)
        target = torch.rand(rays, 3, device="cuda")
        colours = []
        for s in range(0, rays, 8192):
            o, dv = origin[s:s + 8192], direction[s:s + 8192]
            t = torch.linspace(2.0, 6.0, samples, device="cuda") + torch.rand(o.shape[0], samples, device="cuda") * (4.0 / samples)
            pts = o[:, None] + dv[:, None] * t[..., None]
            sigma, rgb = model(encode(pts, 10), encode(dv, 4)[:, None].expand(-1, samples, -1))
            delta = torch.cat([t[:, 1:] - t[:, :-1], torch.full_like(t[:, :1], 1e10)], -1)
            alpha = 1 - torch.exp(-sigma[..., 0] * delta)
            trans = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1 - alpha + 1e-10], -1), -1)[:, :-1]
            colours.append(((alpha * trans)[..., None] * rgb).sum(1))
        loss = torch.nn.functional.mse_loss(torch.cat(colours), target)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del origin, direction, target, colours, loss


def simclr_two_views_train_bf16(torch):
    """SimCLR-style contrastive pretraining: torchvision's resnet18 (random weights) with a
    projection head; each image's two views made on the GPU (a random crop by
    `interpolate` back to 112 px, a flip, colour jitter), both through the encoder as
    one batch of 2B, the NT-Xent loss over the 2B × 2B similarity matrix (temperature
    0.2) under bf16 autocast; SGD with momentum, 4 steps at B = 256, 512, 128, 384."""
    import torchvision
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    enc = torchvision.models.resnet18(num_classes=512).cuda().train()
    head = nn.Sequential(nn.ReLU(), nn.Linear(512, 128)).cuda()
    opt = torch.optim.SGD(list(enc.parameters()) + list(head.parameters()), lr=0.3, momentum=0.9)

    def view(x, k):
        crop = 96 + 8 * k
        v = F.interpolate(x[..., :crop, :crop], size=112, mode="bilinear", align_corners=False)
        if k % 2:
            v = v.flip(-1)
        return (v * (0.8 + 0.4 * torch.rand(x.shape[0], 3, 1, 1, device=x.device))).clamp(0, 1)

    for step, bs in enumerate([256, 512, 128, 384]):
        x = torch.rand(bs, 3, 128, 128, device="cuda")
        views = torch.cat([view(x, step), view(x, step + 1)])
        with torch.autocast("cuda", dtype=torch.bfloat16):
            z = F.normalize(head(enc(views)).float(), dim=1)
            sim = z @ z.t() / 0.2
            sim.fill_diagonal_(float("-inf"))
            labels = torch.cat([torch.arange(bs, 2 * bs), torch.arange(0, bs)]).cuda()
            loss = F.cross_entropy(sim, labels)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, views, z, sim, labels, loss


def cpu_offload_adam_train(torch):
    """ZeRO-Offload-style training on one GPU: a 6-layer transformer language model (d 768,
    vocab 32000) whose fp32 master weights and Adam states live in pinned host memory;
    each step runs forward and backward on the GPU in bf16 weights, copies every gradient
    to the host (`non_blocking` into pinned buffers, then a synchronize), steps a CPU
    Adam there and copies the updated weights back into the GPU's bf16 parameters;
    4 steps at 8×512, 16×256, 4×1024, 12×384 tokens."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    d, vocab = 768, 32000
    layers = [nn.TransformerEncoderLayer(d, 12, 4 * d, batch_first=True, norm_first=True) for _ in range(6)]
    model = nn.Sequential(nn.Embedding(vocab, d), *layers, nn.LayerNorm(d), nn.Linear(d, vocab))
    master = [p.detach().clone().pin_memory() for p in model.parameters()]
    model = model.to(torch.bfloat16).cuda()
    grads_host = [torch.empty_like(m).pin_memory() for m in master]
    opt = torch.optim.Adam(master, lr=1e-4)
    mask_cache = {}
    for bs, n in [(8, 512), (16, 256), (4, 1024), (12, 384)]:
        ids = torch.randint(0, vocab, (bs, n + 1), device="cuda")
        if n not in mask_cache:
            mask_cache[n] = nn.Transformer.generate_square_subsequent_mask(n, device="cuda", dtype=torch.bfloat16)
        h = model[0](ids[:, :-1])
        for layer in model[1:7]:
            h = layer(h, src_mask=mask_cache[n], is_causal=True)
        logits = model[8](model[7](h))
        loss = F.cross_entropy(logits.float().reshape(-1, vocab), ids[:, 1:].reshape(-1))
        loss.backward()
        for p, g in zip(model.parameters(), grads_host):
            g.copy_(p.grad, non_blocking=True)
            p.grad = None
        torch.cuda.synchronize()
        for m, g in zip(master, grads_host):
            m.grad = g.float()
        opt.step()
        with torch.no_grad():
            for p, m in zip(model.parameters(), master):
                p.copy_(m, non_blocking=True)
        torch.cuda.synchronize()
        del ids, h, logits, loss


def chunked_ce_lm_train_bf16(torch):
    """A language model with a large vocabulary (128,256, Llama-3-sized) trained under bf16
    autocast with the loss computed in chunks of 1,024 tokens, as Liger's fused linear
    cross entropy and torchtune's chunked loss do to avoid holding all the logits: each
    chunk's logits made, its loss taken and backpropagated into the hidden states at once
    (`torch.autograd.backward` of the chunk with `retain_graph`), then the trunk's backward
    from the gathered hidden-state gradient; 4 blocks of `nn.TransformerEncoderLayer`
    (d 768), AdamW, 4 steps at 8×512, 4×1024, 16×256, 6×700 tokens."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    d, vocab, chunk = 768, 128256, 1024
    emb = nn.Embedding(vocab, d).cuda()
    trunk = nn.ModuleList(nn.TransformerEncoderLayer(d, 12, 4 * d, batch_first=True, norm_first=True)
                          for _ in range(4)).cuda()
    head = nn.Linear(d, vocab, bias=False).cuda()
    params = list(emb.parameters()) + list(trunk.parameters()) + list(head.parameters())
    opt = torch.optim.AdamW(params, lr=1e-4)
    for bs, n in [(8, 512), (4, 1024), (16, 256), (6, 700)]:
        ids = torch.randint(0, vocab, (bs, n + 1), device="cuda")
        mask = nn.Transformer.generate_square_subsequent_mask(n, device="cuda", dtype=torch.bfloat16)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = emb(ids[:, :-1])
            for layer in trunk:
                h = layer(h, src_mask=mask, is_causal=True)
        flat = h.detach().reshape(-1, d).requires_grad_(True)
        target = ids[:, 1:].reshape(-1)
        tokens = target.numel()
        for s in range(0, tokens, chunk):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = head(flat[s:s + chunk]).float()
            loss = F.cross_entropy(logits, target[s:s + chunk], reduction="sum") / tokens
            loss.backward()
            del logits, loss
        h.backward(flat.grad.reshape(h.shape))
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, mask, h, flat, target


def gpt2_sliding_ppl_eval_fp16(torch):
    """Perplexity of transformers' GPT-2 (6 layers, d 768, random weights, fp16) over three
    long documents (3,000–9,000 tokens) by the sliding window of transformers' perplexity
    guide: windows of 1,024 tokens, stride 512, the overlap's labels set to -100, the
    negative log-likelihoods kept on the GPU and summed at the end, under `inference_mode`."""
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=6, n_head=12)
    model = GPT2LMHeadModel(cfg).cuda().half().eval()
    total = []
    with torch.inference_mode():
        for length in [3000, 9000, 5000]:
            doc = torch.randint(0, 50257, (1, length), device="cuda")
            prev = 0
            for begin in range(0, length, 512):
                end = min(begin + 1024, length)
                ids = doc[:, begin:end]
                labels = ids.clone()
                labels[:, :-(end - prev)] = -100
                out = model(ids, labels=labels)
                total.append(out.loss * (end - prev))
                prev = end
                del ids, labels, out
                if end == length:
                    break
            del doc
        ppl = torch.exp(torch.stack(total).sum() / 17000)
        del ppl, total


def fp16_decoder_weights(torch, d, layers, vocab):
    """The weights of a hand-written fp16 decoder on the GPU, in eval mode, made in this
    order: the token embedding, per layer the fused q/k/v and the output projections and
    a 4×-wide GELU MLP, and the head (fp16_decoder_forward runs it; kv_int8_cache_decode_fp16
    runs its own forward over an int8 cache)."""
    nn = torch.nn
    emb = nn.Embedding(vocab, d)
    qkv = nn.ModuleList(nn.Linear(d, 3 * d) for _ in range(layers))
    proj = nn.ModuleList(nn.Linear(d, d) for _ in range(layers))
    mlp = nn.ModuleList(nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d)) for _ in range(layers))
    head = nn.Linear(d, vocab)
    for m in (emb, qkv, proj, mlp, head):
        m.cuda().half().eval()
    return emb, qkv, proj, mlp, head


def fp16_decoder_forward(torch, weights, heads, tokens, past, qkv_delta=None, keep=None):
    """One forward of fp16_decoder_weights' decoder over tokens (batch x n) after the keys
    and values of past (a (k, v) per layer, or None: a causal prefill). Returns the last
    position's logits and each layer's keys and values, past's put before the tokens' own
    by `torch.cat`. qkv_delta(i, x), if given, is added to layer i's fused q/k/v
    projection (multi_lora_serve_fp16's adapters); keep(t), if given, is what a layer keeps
    of its keys and of its values (streaming_sink_kv_decode_fp16's eviction). Used by
    prefix_cache_serve_fp16 too."""
    F = torch.nn.functional
    emb, qkv, proj, mlp, head = weights
    x = emb(tokens)
    b, n = tokens.shape
    d = x.shape[-1]
    new = []
    for i in range(len(qkv)):
        y = qkv[i](x)
        if qkv_delta is not None:
            y = y + qkv_delta(i, x)
        q, k, v = y.view(b, n, 3, heads, d // heads).permute(2, 0, 3, 1, 4)
        if past is not None:
            k, v = torch.cat([past[i][0], k], 2), torch.cat([past[i][1], v], 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=past is None)
        x = x + proj[i](a.transpose(1, 2).reshape(b, n, d))
        x = x + mlp[i](x)
        new.append((k, v) if keep is None else (keep(k), keep(v)))
    return head(x[:, -1]), new


def prefix_cache_serve_fp16(torch):
    """Serving with a shared-prefix cache, as vLLM's and SGLang's prefix caching do, by hand:
    a hand-written fp16 decoder (4 layers, d 1024) and 12 requests that begin with one of
    four system prompts (300, 700, 150, 500 tokens); a prompt's KV is computed once and
    kept, a request's own suffix (20–200 tokens) prefilled on top of a copy of it
    (`torch.cat`), then 8–24 decode steps growing that copy; a cached prompt evicted
    (least recently used) when a fourth would be kept; under `inference_mode`."""
    torch.manual_seed(0)
    d, h, layers, vocab = 1024, 16, 4, 32000
    weights = fp16_decoder_weights(torch, d, layers, vocab)

    def forward(tokens, past):
        return fp16_decoder_forward(torch, weights, h, tokens, past)

    g = torch.Generator().manual_seed(2)
    prompts = {0: 300, 1: 700, 2: 150, 3: 500}
    cache = {}
    order = []
    with torch.inference_mode():
        for r in range(12):
            p = [0, 1, 0, 2, 3, 0, 1, 2, 3, 1, 0, 2][r]
            if p not in cache:
                if len(cache) == 3:
                    del cache[order.pop(0)]
                _, cache[p] = forward(torch.randint(0, vocab, (1, prompts[p]), device="cuda"), None)
            else:
                order.remove(p)
            order.append(p)
            suffix = int(torch.randint(20, 201, (1,), generator=g))
            logits, kv = forward(torch.randint(0, vocab, (1, suffix), device="cuda"), cache[p])
            for _ in range(int(torch.randint(8, 25, (1,), generator=g))):
                logits, kv = forward(logits.argmax(-1, keepdim=True), kv)
            del logits, kv


def gradcache_contrastive_train(torch):
    """Contrastive training of a text encoder with in-batch negatives at a batch larger than
    memory would allow, by GradCache: the batch's query and passage embeddings first
    computed without gradients in sub-batches of 64, the loss and its gradient taken with
    respect to the cached embeddings, then each sub-batch run again with gradients and
    backpropagated from its slice of that gradient; a 4-layer encoder (d 512), AdamW,
    3 steps at 512, 1,024 and 768 pairs of 64 and 192 tokens."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    d, vocab, sub = 512, 30522, 64
    emb = nn.Embedding(vocab, d).cuda()
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 8, 4 * d, batch_first=True), 4,
                                enable_nested_tensor=False).cuda()
    params = list(emb.parameters()) + list(enc.parameters())
    opt = torch.optim.AdamW(params, lr=1e-4)

    def embed(ids):
        return F.normalize(enc(emb(ids)).mean(1), dim=-1)

    for pairs in [512, 1024, 768]:
        q = torch.randint(0, vocab, (pairs, 64), device="cuda")
        p = torch.randint(0, vocab, (pairs, 192), device="cuda")
        with torch.no_grad():
            rq = torch.cat([embed(q[s:s + sub]) for s in range(0, pairs, sub)])
            rp = torch.cat([embed(p[s:s + sub]) for s in range(0, pairs, sub)])
        rq.requires_grad_(True)
        rp.requires_grad_(True)
        loss = F.cross_entropy(rq @ rp.t() / 0.05, torch.arange(pairs, device="cuda"))
        loss.backward()
        for ids, grad in ((q, rq.grad), (p, rp.grad)):
            for s in range(0, pairs, sub):
                embed(ids[s:s + sub]).backward(grad[s:s + sub])
        opt.step()
        opt.zero_grad(set_to_none=True)
        del q, p, rq, rp, loss, grad


def maml_second_order_train(torch):
    """Second-order MAML by `torch.func.functional_call`: a 4-layer MLP (1,024 wide) adapted
    to each of 8 tasks by 3 inner SGD steps whose gradients keep their graph
    (`create_graph=True`), the query loss after adaptation backpropagated through the inner
    steps into the meta-parameters; Adam on the meta-parameters, 4 meta-steps with support
    and query sets of 256/512, 512/1,024, 128/256 and 384/768 points."""
    from torch.func import functional_call
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(64, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                        nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1)).cuda()
    meta = dict(net.named_parameters())
    opt = torch.optim.Adam(meta.values(), lr=1e-3)
    for support, query in [(256, 512), (512, 1024), (128, 256), (384, 768)]:
        total = 0
        for task in range(8):
            xs, ys = torch.randn(support, 64, device="cuda"), torch.randn(support, 1, device="cuda")
            xq, yq = torch.randn(query, 64, device="cuda"), torch.randn(query, 1, device="cuda")
            fast = meta
            for _ in range(3):
                loss = F.mse_loss(functional_call(net, fast, (xs,)), ys)
                grads = torch.autograd.grad(loss, list(fast.values()), create_graph=True)
                fast = {k: w - 0.01 * g for (k, w), g in zip(fast.items(), grads)}
            total = total + F.mse_loss(functional_call(net, fast, (xq,)), yq)
            del xs, ys, xq, yq, fast, loss, grads
        (total / 8).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del total


def longctx_ckpt_train_bf16(torch):
    """Long-context training: a 6-block decoder (d 1024, 16 heads, causal
    `scaled_dot_product_attention`) on sequences of 4k–16k tokens at batch 1–4, every block
    recomputed in backward (`torch.utils.checkpoint`, non-reentrant), bf16 weights and
    autocast, the loss over a 32,000-token vocabulary computed in float; AdamW, 4 steps at
    2×8192, 1×16384, 4×4096, 1×12288."""
    nn = torch.nn
    F = nn.functional
    from torch.utils.checkpoint import checkpoint
    torch.manual_seed(0)
    d, heads, vocab = 1024, 16, 32000

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            b, n, _ = x.shape
            q, k, v = self.qkv(self.n1(x)).view(b, n, 3, heads, d // heads).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.out(a.transpose(1, 2).reshape(b, n, d))
            return x + self.mlp(self.n2(x))

    emb = nn.Embedding(vocab, d).cuda().bfloat16()
    blocks = nn.ModuleList(Block() for _ in range(6)).cuda().bfloat16()
    head = nn.Linear(d, vocab).cuda().bfloat16()
    params = list(emb.parameters()) + list(blocks.parameters()) + list(head.parameters())
    opt = torch.optim.AdamW(params, lr=1e-4)
    for bs, n in [(2, 8192), (1, 16384), (4, 4096), (1, 12288)]:
        ids = torch.randint(0, vocab, (bs, n + 1), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            x = emb(ids[:, :-1])
            for blk in blocks:
                x = checkpoint(blk, x, use_reentrant=False)
            loss = F.cross_entropy(head(x).float().reshape(-1, vocab), ids[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, x, loss


def vae_tiled_decode_fp16(torch):
    """Tiled VAE decoding, as diffusers' `enable_vae_tiling` does to decode large images in
    bounded memory, by hand: a convolutional decoder (latent 4 channels → RGB, 8× up, 512–128
    channels, group norm, SiLU) run on overlapping 64×64 latent tiles (overlap 16), each
    tile's output blended into the image with linear ramps over the overlap; four images of
    96², 128×192, 160² and 64×256 latents in fp16 under `inference_mode`."""
    nn = torch.nn
    torch.manual_seed(0)

    def block(cin, cout):
        return nn.Sequential(nn.GroupNorm(32, cin), nn.SiLU(), nn.Conv2d(cin, cout, 3, padding=1))

    dec = nn.Sequential(nn.Conv2d(4, 512, 3, padding=1), block(512, 512), block(512, 512),
                        nn.Upsample(scale_factor=2), block(512, 512), block(512, 256),
                        nn.Upsample(scale_factor=2), block(256, 256), block(256, 128),
                        nn.Upsample(scale_factor=2), block(128, 128), block(128, 128),
                        nn.GroupNorm(32, 128), nn.SiLU(), nn.Conv2d(128, 3, 3, padding=1)).cuda().half().eval()
    tile, overlap, up = 64, 16, 8
    step = tile - overlap
    ramp = torch.linspace(0, 1, overlap * up, device="cuda", dtype=torch.float16)
    with torch.inference_mode():
        for h, w in [(96, 96), (128, 192), (160, 160), (64, 256)]:
            z = torch.randn(1, 4, h, w, device="cuda", dtype=torch.float16)
            image = torch.zeros(1, 3, h * up, w * up, device="cuda", dtype=torch.float16)
            weight = torch.zeros(1, 1, h * up, w * up, device="cuda", dtype=torch.float16)
            for y in range(0, max(h - overlap, 1), step):
                for x in range(0, max(w - overlap, 1), step):
                    t = dec(z[:, :, y:y + tile, x:x + tile])
                    th, tw = t.shape[-2:]
                    mask = torch.ones(1, 1, th, tw, device="cuda", dtype=torch.float16)
                    if y > 0:
                        mask[..., :overlap * up, :] *= ramp[:, None]
                    if x > 0:
                        mask[..., :, :overlap * up] *= ramp[None, :]
                    image[..., y * up:y * up + th, x * up:x * up + tw] += t * mask
                    weight[..., y * up:y * up + th, x * up:x * up + tw] += mask
                    del t, mask
            image /= weight.clamp(min=1e-3)
            del z, image, weight


def speculative_decode_fp16(torch):
    """Speculative decoding by hand, as vLLM's and transformers' assisted generation do: a
    2-layer draft and an 8-layer target decoder (d 1024, fp16, hand-written, each with its
    own KV cache grown by `torch.cat`); the draft proposes 4 tokens one at a time, the target
    scores them in one pass, the longest agreeing prefix (the data decides) is kept and both
    caches cut back to it by slicing (`contiguous()` copies); 4 prompts of 64–900 tokens, 48
    new tokens each, under `inference_mode`."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    d, h, vocab = 1024, 16, 32000
    dh = d // h

    class Decoder(nn.Module):
        def __init__(self, layers):
            super().__init__()
            self.emb = nn.Embedding(vocab, d)
            self.qkv = nn.ModuleList(nn.Linear(d, 3 * d) for _ in range(layers))
            self.proj = nn.ModuleList(nn.Linear(d, d) for _ in range(layers))
            self.mlp = nn.ModuleList(nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
                                     for _ in range(layers))
            self.head = nn.Linear(d, vocab)

        def forward(self, tokens, past):
            x = self.emb(tokens)
            n = tokens.shape[1]
            new = []
            for i in range(len(self.qkv)):
                q, k, v = self.qkv[i](x).view(1, n, 3, h, dh).permute(2, 0, 3, 1, 4)
                if past:
                    k, v = torch.cat([past[i][0], k], 2), torch.cat([past[i][1], v], 2)
                a = F.scaled_dot_product_attention(q, k, v, is_causal=not past and n > 1)
                x = x + self.proj[i](a.transpose(1, 2).reshape(1, n, d))
                x = x + self.mlp[i](x)
                new.append((k, v))
            return self.head(x), new

    draft = Decoder(2).cuda().half().eval()
    target = Decoder(8).cuda().half().eval()
    # the draft mostly agrees with the target: it shares its embedding and head
    with torch.no_grad():
        draft.emb.weight.copy_(target.emb.weight)
        draft.head.weight.copy_(target.head.weight)

    def cut(kv, length):
        return [(k[:, :, :length].contiguous(), v[:, :, :length].contiguous()) for k, v in kv]

    with torch.inference_mode():
        for n in [64, 900, 300, 600]:
            prompt = torch.randint(0, vocab, (1, n), device="cuda")
            logits, tkv = target(prompt, None)
            _, dkv = draft(prompt, None)
            last = logits[:, -1:].argmax(-1)
            done = 0
            while done < 48:
                proposal, dl, dk = [], last, dkv
                for _ in range(4):
                    out, dk = draft(dl, dk)
                    dl = out[:, -1:].argmax(-1)
                    proposal.append(dl)
                block = torch.cat([last] + proposal, 1)
                out, tk = target(block, tkv)
                agree = (out[:, :-1].argmax(-1) == block[:, 1:]).int().cumprod(1).sum().item()
                keep = tkv[0][0].shape[2] + 1 + agree
                tkv, dkv = cut(tk, keep), cut(dk, keep)
                last = out[:, agree:agree + 1].argmax(-1)
                done += agree + 1
                del proposal, block, out, tk, dk, dl
            del prompt, logits, tkv, dkv, last


def bert_token_budget_serve_fp16(torch):
    """An embedding server batching by token budget: transformers' BERT (6 layers, d 768,
    random weights, fp16) encoding 600 texts of 8–512 tokens, sorted by length and packed
    into batches of at most 16,384 padded tokens (batch size the lengths decide), each
    batch's mean-pooled embeddings normalised and copied to the host; `inference_mode`."""
    from transformers import BertConfig, BertModel
    torch.manual_seed(0)
    model = BertModel(BertConfig(hidden_size=768, num_hidden_layers=6, num_attention_heads=12,
                                 intermediate_size=3072)).cuda().half().eval()
    g = torch.Generator().manual_seed(3)
    lengths = sorted(int(x) for x in torch.randint(8, 513, (600,), generator=g))
    batches, cur = [], []
    for n in lengths:
        if cur and (len(cur) + 1) * n > 16384:
            batches.append(cur)
            cur = []
        cur.append(n)
    batches.append(cur)
    out = []
    with torch.inference_mode():
        for b in batches:
            longest = b[-1]
            ids = torch.randint(1000, 30000, (len(b), longest), device="cuda")
            mask = (torch.arange(longest, device="cuda")[None] < torch.tensor(b, device="cuda")[:, None]).long()
            hidden = model(input_ids=ids, attention_mask=mask).last_hidden_state
            emb = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
            out.append(torch.nn.functional.normalize(emb.float(), dim=-1).cpu())
            del ids, mask, hidden, emb


def fp8_scaled_mm_train(torch):
    """Float8 training of the linear layers by hand, as torchao's float8 recipe does: a
    4-block MLP-mixer-like model (d 2048) whose every linear layer casts its input and weight
    to `float8_e4m3fn` with a per-tensor scale from the amax, multiplies them with
    `torch._scaled_mm` into bf16, and in backward casts the output gradient to
    `float8_e5m2` for the two gradient products; AdamW over bf16 weights, 4 steps at 4,096,
    8,192, 2,048 and 6,144 tokens."""
    nn = torch.nn
    torch.manual_seed(0)
    e4, e5 = torch.float8_e4m3fn, torch.float8_e5m2

    def to_f8(t, dtype):
        scale = torch.finfo(dtype).max / t.abs().amax().float().clamp(min=1e-12)
        return (t.float() * scale).to(dtype), scale.reciprocal()

    class F8Matmul(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            x8, sx = to_f8(x, e4)
            w8, sw = to_f8(w, e4)
            ctx.save_for_backward(x8, sx, w8, sw)
            return torch._scaled_mm(x8, w8.t(), scale_a=sx, scale_b=sw, out_dtype=torch.bfloat16)

        @staticmethod
        def backward(ctx, g):
            x8, sx, w8, sw = ctx.saved_tensors
            g8, sg = to_f8(g, e5)
            gx = torch._scaled_mm(g8, w8.t().contiguous().t(), scale_a=sg, scale_b=sw, out_dtype=torch.bfloat16)
            gw = torch._scaled_mm(g8.t().contiguous(), x8.t().contiguous().t(), scale_a=sg, scale_b=sx,
                                  out_dtype=torch.bfloat16)
            return gx, gw

    class Linear(nn.Module):
        def __init__(self, i, o):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(o, i, dtype=torch.bfloat16) * i ** -0.5)

        def forward(self, x):
            shape = x.shape
            return F8Matmul.apply(x.reshape(-1, shape[-1]), self.weight).reshape(*shape[:-1], -1)

    d = 2048
    blocks = nn.ModuleList(nn.ModuleList([nn.LayerNorm(d), Linear(d, 4 * d), Linear(4 * d, d)])
                           for _ in range(4)).cuda().to(torch.bfloat16)
    opt = torch.optim.AdamW(blocks.parameters(), lr=1e-4)
    for tokens in [4096, 8192, 2048, 6144]:
        x = torch.randn(tokens, d, device="cuda", dtype=torch.bfloat16)
        for norm, up, down in blocks:
            x = x + down(torch.nn.functional.gelu(up(norm(x))))
        x.float().pow(2).mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x


def gru_packed_seq_train(torch):
    """A GRU sequence tagger trained on variable-length batches as `PackedSequence`s: an
    embedding, a 2-layer bidirectional `nn.GRU` (hidden 512) over
    `pack_padded_sequence(enforce_sorted=False)`, unpacked and tagged per token, masked cross
    entropy; Adam, `clip_grad_norm_`, 5 steps at batch 64 of 20–400, 32 of 100–800, 128 of
    5–60, 48 of 50–500 and 96 of 10–200 tokens."""
    nn = torch.nn
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    torch.manual_seed(0)
    emb = nn.Embedding(20000, 256).cuda()
    gru = nn.GRU(256, 512, num_layers=2, bidirectional=True, batch_first=True).cuda()
    tag = nn.Linear(1024, 50).cuda()
    params = list(emb.parameters()) + list(gru.parameters()) + list(tag.parameters())
    opt = torch.optim.Adam(params, lr=1e-3)
    g = torch.Generator().manual_seed(4)
    for bs, lo, hi in [(64, 20, 400), (32, 100, 800), (128, 5, 60), (48, 50, 500), (96, 10, 200)]:
        lengths = torch.randint(lo, hi + 1, (bs,), generator=g)
        longest = int(lengths.max())
        ids = torch.randint(0, 20000, (bs, longest), device="cuda")
        labels = torch.randint(0, 50, (bs, longest), device="cuda")
        packed = pack_padded_sequence(emb(ids), lengths, batch_first=True, enforce_sorted=False)
        out, _ = gru(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=longest)
        mask = torch.arange(longest, device="cuda")[None] < lengths.cuda()[:, None]
        loss = nn.functional.cross_entropy(tag(out)[mask], labels[mask])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, labels, packed, out, mask, loss


def resnet_dynamic_batch_serve_fp16(torch):
    """An image classifier serving a queue with dynamic batching: torchvision's resnet50
    (random weights) in fp16 and `channels_last` under `inference_mode`; requests of
    224–384 px arrive in bursts, each burst resized to one size and batched up to 32 (the
    last batch of a burst smaller), top-5 classes copied to the host; 8 bursts."""
    import torchvision
    F = torch.nn.functional
    torch.manual_seed(0)
    model = torchvision.models.resnet50().cuda().half().eval().to(memory_format=torch.channels_last)
    g = torch.Generator().manual_seed(5)
    with torch.inference_mode():
        for burst in range(8):
            count = int(torch.randint(5, 70, (1,), generator=g))
            px = [224, 256, 288, 320, 384][burst % 5]
            for s in range(0, count, 32):
                n = min(32, count - s)
                raw = torch.rand(n, 3, px + 37, px + 53, device="cuda", dtype=torch.float16)
                x = F.interpolate(raw, size=(px, px), mode="bilinear", align_corners=False)
                x = x.contiguous(memory_format=torch.channels_last)
                top = model(x).float().softmax(-1).topk(5).indices.cpu()
                del raw, x, top


def dqn_replay_train(torch):
    """DQN with a replay buffer on the GPU: a buffer of 200,000 transitions (84×84×4 uint8
    frames, actions, rewards, done flags) preallocated up front and written ring-wise by
    index, a convolutional Q-network (Nature DQN) and its target copy; each of 300
    environment steps writes a batch of 32 transitions, every 4th a minibatch of 128
    sampled by `torch.randint` and indexed out, the Huber loss on the Bellman target, Adam;
    the target network synchronised every 100 steps."""
    import copy
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    cap = 200_000
    frames = torch.zeros(cap, 4, 84, 84, dtype=torch.uint8, device="cuda")
    nexts = torch.zeros(cap, 4, 84, 84, dtype=torch.uint8, device="cuda")
    actions = torch.zeros(cap, dtype=torch.long, device="cuda")
    rewards = torch.zeros(cap, device="cuda")
    dones = torch.zeros(cap, device="cuda")
    q = nn.Sequential(nn.Conv2d(4, 32, 8, 4), nn.ReLU(), nn.Conv2d(32, 64, 4, 2), nn.ReLU(),
                      nn.Conv2d(64, 64, 3, 1), nn.ReLU(), nn.Flatten(), nn.Linear(3136, 512), nn.ReLU(),
                      nn.Linear(512, 18)).cuda()
    target = copy.deepcopy(q)
    opt = torch.optim.Adam(q.parameters(), lr=1e-4)
    pos, size = 0, 0
    for step in range(300):
        idx = (torch.arange(32, device="cuda") + pos) % cap
        frames[idx] = torch.randint(0, 256, (32, 4, 84, 84), dtype=torch.uint8, device="cuda")
        nexts[idx] = torch.randint(0, 256, (32, 4, 84, 84), dtype=torch.uint8, device="cuda")
        actions[idx] = torch.randint(0, 18, (32,), device="cuda")
        rewards[idx] = torch.randn(32, device="cuda")
        dones[idx] = (torch.rand(32, device="cuda") < 0.01).float()
        pos, size = (pos + 32) % cap, min(size + 32, cap)
        if step % 4 == 3:
            s = torch.randint(0, size, (128,), device="cuda")
            obs, nxt = frames[s].float() / 255, nexts[s].float() / 255
            with torch.no_grad():
                best = target(nxt).max(1).values
                goal = rewards[s] + 0.99 * (1 - dones[s]) * best
            pred = q(obs).gather(1, actions[s][:, None]).squeeze(1)
            loss = F.smooth_l1_loss(pred, goal)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            del s, obs, nxt, best, goal, pred, loss
        if step % 100 == 99:
            target.load_state_dict(q.state_dict())


def qat_resnet18_train(torch):
    """Quantisation-aware training with `torch.ao.quantization`: torchvision's resnet18
    (random weights) with the default QAT qconfig (fake-quantised weights and activations,
    observers updating their ranges), `prepare_qat` after fusing nothing, trained 4 steps
    with SGD at 64×224, 32×256, 96×160 and 48×192 px, the observers frozen after the third."""
    import torchvision
    from torch.ao import quantization as tq
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=100).train()
    model.qconfig = tq.get_default_qat_qconfig("x86")
    model = tq.prepare_qat(model).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for step, (bs, px) in enumerate([(64, 224), (32, 256), (96, 160), (48, 192)]):
        if step == 3:
            model.apply(tq.disable_observer)
        x = torch.randn(bs, 3, px, px, device="cuda")
        y = torch.randint(0, 100, (bs,), device="cuda")
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y, loss


def prune_masks_finetune_bf16(torch):
    """Pruning with `torch.nn.utils.prune`: the feed-forward layers and the head of a
    6-layer transformer language model (d 768) pruned by L1 magnitude to 30 %, then 50 % (a `weight_orig`
    parameter and a `weight_mask` buffer each, the weight recomputed as their product at
    every forward), fine-tuned under bf16 autocast with AdamW between the two rounds and
    after, then `prune.remove` making the pruning permanent; 4 steps at 8×512, 16×256,
    4×1024, 12×384 tokens."""
    nn = torch.nn
    F = nn.functional
    from torch.nn.utils import prune
    torch.manual_seed(0)
    d, vocab = 768, 32000
    model = nn.Sequential(nn.Embedding(vocab, d),
                          *[nn.TransformerEncoderLayer(d, 12, 4 * d, batch_first=True, norm_first=True)
                            for _ in range(6)],
                          nn.LayerNorm(d), nn.Linear(d, vocab)).cuda()
    # the feed-forward layers and the head: attention's out_proj is read as a weight by
    # MultiheadAttention, not called, so a pruning hook on it would not run
    linears = [m for m in model.modules() if type(m) is nn.Linear]

    def finetune(shapes):
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        for bs, n in shapes:
            ids = torch.randint(0, vocab, (bs, n + 1), device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(ids[:, :-1])
                loss = F.cross_entropy(logits.float().reshape(-1, vocab), ids[:, 1:].reshape(-1))
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            del ids, logits, loss

    for m in linears:
        prune.l1_unstructured(m, "weight", amount=0.3)
    finetune([(8, 512), (16, 256)])
    for m in linears:
        prune.l1_unstructured(m, "weight", amount=0.5)
    finetune([(4, 1024), (12, 384)])
    for m in linears:
        prune.remove(m, "weight")


def layer_offload_infer_fp16(torch):
    """Inference of a model larger than the GPU would hold, as accelerate's CPU offload
    does, by hand: a 24-layer decoder (d 2048, fp16) whose layer weights stay in pinned
    host memory; for each layer its weights are copied to the GPU (`non_blocking`), the
    layer runs on the batch's hidden states, and its GPU copy is dropped; 4 batches of
    4×512, 1×2048, 8×256 and 2×1024 tokens, under `inference_mode`."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    d, heads, vocab, layers = 2048, 16, 32000, 24
    host = []
    for _ in range(layers):
        host.append({
            "qkv": (torch.randn(3 * d, d, dtype=torch.float16) * 0.02).pin_memory(),
            "out": (torch.randn(d, d, dtype=torch.float16) * 0.02).pin_memory(),
            "up": (torch.randn(4 * d, d, dtype=torch.float16) * 0.02).pin_memory(),
            "down": (torch.randn(d, 4 * d, dtype=torch.float16) * 0.02).pin_memory(),
        })
    emb = nn.Embedding(vocab, d).cuda().half()
    head = nn.Linear(d, vocab, bias=False).cuda().half()
    with torch.inference_mode():
        for bs, n in [(4, 512), (1, 2048), (8, 256), (2, 1024)]:
            x = emb(torch.randint(0, vocab, (bs, n), device="cuda"))
            for w in host:
                g = {k: v.to("cuda", non_blocking=True) for k, v in w.items()}
                q, k, v = F.linear(F.layer_norm(x, (d,)), g["qkv"]).view(bs, n, 3, heads, d // heads).permute(2, 0, 3, 1, 4)
                a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                x = x + F.linear(a.transpose(1, 2).reshape(bs, n, d), g["out"])
                x = x + F.linear(F.gelu(F.linear(F.layer_norm(x, (d,)), g["up"])), g["down"])
                del g, q, k, v, a
            top = head(x[:, -1]).argmax(-1).cpu()
            del x, top


def _sam_like_model(torch, d):
    """The Segment-Anything-like model of the SAM programs, fp16 and in eval mode, made in
    this order: the ViT encoder's patch embedding, its 12 layers (width d) and neck, the
    point-prompt embedding, the two-way decoder's two attentions and its upscaling."""
    nn = torch.nn
    patch = nn.Conv2d(3, d, 16, 16).cuda().half().eval()
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 12, 4 * d, batch_first=True, norm_first=True), 12,
                                enable_nested_tensor=False).cuda().half().eval()
    neck = nn.Conv2d(d, 256, 1).cuda().half().eval()
    prompt_emb = nn.Linear(2, 256).cuda().half().eval()
    t2i = nn.MultiheadAttention(256, 8, batch_first=True).cuda().half().eval()
    i2t = nn.MultiheadAttention(256, 8, batch_first=True).cuda().half().eval()
    up = nn.Sequential(nn.ConvTranspose2d(256, 64, 2, 2), nn.GELU(), nn.ConvTranspose2d(64, 32, 2, 2)).cuda().half().eval()
    return patch, enc, neck, prompt_emb, t2i, i2t, up


def sam_like_prompt_decode_fp16(torch):
    """Segment-Anything-style serving: a ViT image encoder (12 layers, d 768, 16-pixel
    patches of a 1024² image, fp16) run once per image and its embedding kept; then batches
    of point prompts (16–128 a batch, the count varies) each through a light two-way mask
    decoder (prompt tokens attending to the 64×64 embedding and back, two transposed
    convolutions up to 256² masks); 3 images, 5 prompt batches each, under
    `inference_mode`."""
    torch.manual_seed(0)
    d = 768
    patch, enc, neck, prompt_emb, t2i, i2t, up = _sam_like_model(torch, d)
    g = torch.Generator().manual_seed(6)
    with torch.inference_mode():
        for image in range(3):
            img = torch.randn(1, 3, 1024, 1024, device="cuda", dtype=torch.float16)
            tokens = patch(img).flatten(2).transpose(1, 2)
            emb = neck(enc(tokens).transpose(1, 2).reshape(1, d, 64, 64))
            for _ in range(5):
                count = int(torch.randint(16, 129, (1,), generator=g))
                pts = prompt_emb(torch.rand(count, 1, 2, device="cuda", dtype=torch.float16))
                src = emb.flatten(2).transpose(1, 2).expand(count, -1, -1)
                pts = pts + t2i(pts, src, src)[0]
                src = src + i2t(src, pts, pts)[0]
                masks = up(src.transpose(1, 2).reshape(count, 256, 64, 64))
                best = (masks.mean(1) > 0).float().mean((1, 2)).cpu()
                del pts, src, masks, best
            del img, tokens, emb


def gpt2_topp_sample_generate_fp16(torch):
    """Sampling several answers per prompt with transformers' `generate`: GPT-2 (6 layers,
    d 768, random weights, fp16) with `do_sample=True`, `top_p=0.9`, `temperature=0.8`,
    `num_return_sequences=4`, 64 new tokens, on 4 padded batches of prompts (batch 2–8,
    32–400 tokens, left padding and an attention mask); seeded."""
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=6,
                                       n_head=12)).cuda().half().eval()
    with torch.inference_mode():
        for bs, longest in [(4, 128), (2, 400), (8, 32), (6, 256)]:
            ids = torch.randint(0, 50257, (bs, longest), device="cuda")
            mask = torch.ones_like(ids)
            for i in range(bs):
                mask[i, :(i * longest) // (2 * bs)] = 0
            torch.manual_seed(bs)
            out = model.generate(input_ids=ids, attention_mask=mask, do_sample=True, top_p=0.9,
                                 temperature=0.8, num_return_sequences=4, max_new_tokens=64,
                                 min_new_tokens=64, pad_token_id=0)
            del ids, mask, out


def diffusion_unet_ema_train_bf16(torch):
    """Latent-diffusion training: a hand-written conditional U-Net (three levels, 128–512
    channels, timestep and text embeddings in every block) learning to predict the noise
    added to latents at random timesteps of a cosine schedule, the text condition dropped
    for 10 % of the batch (for classifier-free guidance), bf16 autocast, AdamW, and an EMA
    copy of the weights updated by `torch._foreach_lerp_` after every step; 5 steps at
    32×64², 16×96², 64×32², 24×80² and 48×48² latents."""
    import copy
    import math
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)

    unet = conditional_unet(torch).cuda()
    text = nn.Embedding(1000, 256).cuda()
    ema = copy.deepcopy(unet).requires_grad_(False)
    params = list(unet.parameters()) + list(text.parameters())
    opt = torch.optim.AdamW(params, lr=1e-4)
    for bs, side in [(32, 64), (16, 96), (64, 32), (24, 80), (48, 48)]:
        latents = torch.randn(bs, 4, side, side, device="cuda")
        t = torch.rand(bs, device="cuda")
        alpha = torch.cos(t * math.pi / 2)[:, None, None, None]
        noise = torch.randn_like(latents)
        noisy = alpha * latents + (1 - alpha ** 2).sqrt() * noise
        cond = text(torch.randint(0, 1000, (bs,), device="cuda"))
        cond = cond * (torch.rand(bs, 1, device="cuda") > 0.1)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.mse_loss(unet(noisy, t, cond).float(), noise)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        with torch.no_grad():
            torch._foreach_lerp_(list(ema.parameters()), list(unet.parameters()), 0.001)
        del latents, t, alpha, noise, noisy, cond, loss


def llama_packed_pretrain_bf16(torch):
    """Pretraining on packed sequences, as practitioners pack documents to avoid padding:
    transformers' Llama (4 layers, d 768, GQA with 4 KV heads, random weights, bf16
    weights) fed rows of 2,048 tokens, each the concatenation of several documents of
    random lengths, with `position_ids` restarting at every document boundary and labels
    -100 at each document's first token; AdamW, 4 steps at batch 4, 8, 2 and 6."""
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=32000, hidden_size=768, intermediate_size=2048, num_hidden_layers=4,
                      num_attention_heads=12, num_key_value_heads=4, max_position_embeddings=2048)
    model = LlamaForCausalLM(cfg).to(torch.bfloat16).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    g = torch.Generator().manual_seed(7)
    for bs in [4, 8, 2, 6]:
        ids = torch.randint(0, 32000, (bs, 2048), device="cuda")
        positions = torch.empty(bs, 2048, dtype=torch.long)
        labels = ids.clone()
        for row in range(bs):
            start = 0
            while start < 2048:
                n = min(int(torch.randint(64, 900, (1,), generator=g)), 2048 - start)
                positions[row, start:start + n] = torch.arange(n)
                labels[row, start] = -100
                start += n
        out = model(input_ids=ids, position_ids=positions.cuda(), labels=labels)
        out.loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, positions, labels, out


def llava_like_projector_train_bf16(torch):
    """Vision-language alignment as LLaVA's first stage does: a frozen ViT image encoder
    (12 layers, d 768, 14-pixel patches of 336² images: 576 tokens) and a frozen
    transformers Llama language model (4 layers, d 1024, bf16) with only a two-layer MLP
    projector trained; each sample's 576 projected image tokens spliced into its caption's
    embeddings by `torch.cat` (captions of 16–120 tokens, padded), the caption tokens'
    next-token loss, AdamW; 4 steps at batch 16, 8, 24 and 12."""
    from transformers import LlamaConfig, LlamaForCausalLM
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    patch = nn.Conv2d(3, 768, 14, 14)
    vit = nn.TransformerEncoder(nn.TransformerEncoderLayer(768, 12, 3072, batch_first=True, norm_first=True), 12,
                                enable_nested_tensor=False)
    for m in (patch, vit):
        m.to(torch.bfloat16).cuda().eval().requires_grad_(False)
    lm = LlamaForCausalLM(LlamaConfig(vocab_size=32000, hidden_size=1024, intermediate_size=2816,
                                      num_hidden_layers=4, num_attention_heads=16, num_key_value_heads=16))
    lm = lm.to(torch.bfloat16).cuda().eval().requires_grad_(False)
    proj = nn.Sequential(nn.Linear(768, 1024), nn.GELU(), nn.Linear(1024, 1024)).cuda()
    opt = torch.optim.AdamW(proj.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(8)
    for bs in [16, 8, 24, 12]:
        images = torch.randn(bs, 3, 336, 336, device="cuda", dtype=torch.bfloat16)
        lengths = [int(x) for x in torch.randint(16, 121, (bs,), generator=g)]
        longest = max(lengths)
        caption = torch.randint(0, 32000, (bs, longest), device="cuda")
        with torch.no_grad():
            feats = vit(patch(images).flatten(2).transpose(1, 2))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            image_tokens = proj(feats)
            embeds = torch.cat([image_tokens.to(torch.bfloat16), lm.get_input_embeddings()(caption)], 1)
            mask = torch.ones(bs, 576 + longest, dtype=torch.long, device="cuda")
            labels = torch.full((bs, 576 + longest), -100, dtype=torch.long, device="cuda")
            for i, n in enumerate(lengths):
                mask[i, 576 + n:] = 0
                labels[i, 576:576 + n] = caption[i, :n]
            loss = lm(inputs_embeds=embeds, attention_mask=mask, labels=labels).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del images, caption, feats, image_tokens, embeds, mask, labels, loss


def swa_resnet_train(torch):
    """Stochastic weight averaging with `torch.optim.swa_utils`: torchvision's resnet50
    (random weights, 100 classes) trained with SGD and a cosine schedule for 3 steps, then
    with `SWALR` for 3 more, each averaged into an `AveragedModel` (a second copy of the
    weights and buffers on the GPU), and `update_bn` recomputing the averaged model's batch
    norm statistics over 4 batches; batches of 64×160, 32×224, 48×192 px in turn."""
    import torchvision
    from torch.optim.swa_utils import SWALR, AveragedModel, update_bn
    torch.manual_seed(0)
    model = torchvision.models.resnet50(num_classes=100).cuda().train()
    swa = AveragedModel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    cosine = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=3)
    swalr = SWALR(opt, swa_lr=0.05)
    shapes = [(64, 160), (32, 224), (48, 192)]
    for step in range(6):
        bs, px = shapes[step % 3]
        x = torch.randn(bs, 3, px, px, device="cuda")
        y = torch.randint(0, 100, (bs,), device="cuda")
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step < 3:
            cosine.step()
        else:
            swa.update_parameters(model)
            swalr.step()
        del x, y, loss
    loader = [torch.randn(bs, 3, px, px, device="cuda") for bs, px in shapes + shapes[:1]]
    update_bn(loader, swa)
    del loader


def vit_mixup_cutmix_train_bf16(torch):
    """A timm-style ViT recipe by hand: torchvision's `vit_b_16` (random weights, 100
    classes) under bf16 autocast with Mixup and CutMix on the GPU (the batch mixed with its
    flipped self, a random box pasted for CutMix on every other step), soft targets with
    label smoothing 0.1, random erasing of a patch per image, AdamW with weight decay,
    `clip_grad_norm_`; 4 steps at batch 64, 96, 32 and 80 of 224 px."""
    import torchvision
    F = torch.nn.functional
    torch.manual_seed(0)
    model = torchvision.models.vit_b_16(num_classes=100).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.05)
    for step, bs in enumerate([64, 96, 32, 80]):
        x = torch.rand(bs, 3, 224, 224, device="cuda")
        y = F.one_hot(torch.randint(0, 100, (bs,), device="cuda"), 100).float() * 0.9 + 0.1 / 100
        lam = 0.7
        if step % 2:
            x[:, :, 56:168, 56:168] = x.flip(0)[:, :, 56:168, 56:168]
            lam = 1 - (112 * 112) / (224 * 224)
        else:
            x = lam * x + (1 - lam) * x.flip(0)
        y = lam * y + (1 - lam) * y.flip(0)
        erase = torch.rand(bs, 1, 224, 224, device="cuda") < 0.02
        x = x.masked_fill(erase, 0.0)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.sum(-y * F.log_softmax(model(x).float(), -1), -1).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y, erase, loss


def kv_int8_cache_decode_fp16(torch):
    """Decoding with an int8-quantised KV cache, as serving engines offer to fit more
    requests: a hand-written fp16 decoder (6 layers, d 1024, 16 heads) whose keys and
    values are stored as int8 with an fp16 scale per head and position, in caches
    preallocated for 2,048 positions and written by index; every step dequantises the
    cache up to the current length into fp16 temporaries for attention; 4 requests (batch
    4, 2, 8, 1) of 128–1,500-token prompts and 32–96 new tokens, `inference_mode`."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    d, h, layers, vocab, cap = 1024, 16, 6, 32000, 2048
    dh = d // h
    emb, qkv, proj, mlp, head = fp16_decoder_weights(torch, d, layers, vocab)

    def quant(t):
        scale = t.abs().amax(-1, keepdim=True).clamp(min=1e-4) / 127
        return (t / scale).round().to(torch.int8), scale

    with torch.inference_mode():
        for bs, prompt, new in [(4, 512, 64), (2, 1500, 32), (8, 128, 96), (1, 900, 48)]:
            kq = [torch.zeros(bs, h, cap, dh, dtype=torch.int8, device="cuda") for _ in range(layers)]
            vq = [torch.zeros(bs, h, cap, dh, dtype=torch.int8, device="cuda") for _ in range(layers)]
            ks = [torch.zeros(bs, h, cap, 1, dtype=torch.float16, device="cuda") for _ in range(layers)]
            vs = [torch.zeros(bs, h, cap, 1, dtype=torch.float16, device="cuda") for _ in range(layers)]
            tokens = torch.randint(0, vocab, (bs, prompt), device="cuda")
            length = 0
            for _ in range(new + 1):
                n = tokens.shape[1]
                x = emb(tokens)
                for i in range(layers):
                    q, k, v = qkv[i](x).view(bs, n, 3, h, dh).permute(2, 0, 3, 1, 4)
                    kq[i][:, :, length:length + n], ks[i][:, :, length:length + n] = quant(k)
                    vq[i][:, :, length:length + n], vs[i][:, :, length:length + n] = quant(v)
                    end = length + n
                    kf = kq[i][:, :, :end].half() * ks[i][:, :, :end]
                    vf = vq[i][:, :, :end].half() * vs[i][:, :, :end]
                    a = F.scaled_dot_product_attention(q, kf, vf, is_causal=n > 1)
                    x = x + proj[i](a.transpose(1, 2).reshape(bs, n, d))
                    x = x + mlp[i](x)
                    del q, k, v, kf, vf, a
                length += n
                tokens = head(x[:, -1:]).argmax(-1)
                del x
            del kq, vq, ks, vs, tokens


def whisper_greedy_decode_fp16(torch):
    """Speech recognition serving: transformers' Whisper (4 + 4 layers, d 512, random
    weights, fp16) encoding batches of 30 s log-mel inputs (80 × 3,000) once, then decoding
    greedily with the decoder's self-attention cache grown step by step and the
    cross-attention cache computed at the first step; 4 batches of 8, 2, 16 and 4
    utterances, 24–64 tokens each, under `inference_mode`."""
    from transformers import WhisperConfig, WhisperForConditionalGeneration
    torch.manual_seed(0)
    cfg = WhisperConfig(vocab_size=51865, d_model=512, encoder_layers=4, decoder_layers=4,
                        encoder_attention_heads=8, decoder_attention_heads=8,
                        encoder_ffn_dim=2048, decoder_ffn_dim=2048, num_mel_bins=80)
    model = WhisperForConditionalGeneration(cfg).cuda().half().eval()
    with torch.inference_mode():
        for bs, steps in [(8, 48), (2, 64), (16, 24), (4, 40)]:
            features = torch.randn(bs, 80, 3000, device="cuda", dtype=torch.float16)
            encoded = model.model.encoder(features)
            tokens = torch.full((bs, 1), 50258, dtype=torch.long, device="cuda")
            past = None
            for _ in range(steps):
                out = model(encoder_outputs=encoded, decoder_input_ids=tokens[:, -1:], past_key_values=past,
                            use_cache=True)
                past = out.past_key_values
                tokens = torch.cat([tokens, out.logits[:, -1].argmax(-1, keepdim=True)], 1)
                del out
            del features, encoded, tokens, past


def bert_mlm_dynamic_mask_bf16(torch):
    """Masked-language-model pretraining with dynamic masking on the GPU, as transformers'
    `DataCollatorForLanguageModeling` does: transformers' BERT (6 layers, d 768, random
    weights) under bf16 autocast; each batch's 15 % of tokens chosen anew, 80 % of those
    replaced by [MASK], 10 % by random tokens, the loss only over the chosen ones (labels
    -100 elsewhere), AdamW; 5 steps at 32×128, 16×512, 64×64,
    8×512 and 24×256 tokens."""
    from transformers import BertConfig, BertForMaskedLM
    torch.manual_seed(0)
    model = BertForMaskedLM(BertConfig(hidden_size=768, num_hidden_layers=6, num_attention_heads=12,
                                       intermediate_size=3072)).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for bs, n in [(32, 128), (16, 512), (64, 64), (8, 512), (24, 256)]:
        ids = torch.randint(1000, 30000, (bs, n), device="cuda")
        chosen = torch.rand(bs, n, device="cuda") < 0.15
        labels = ids.masked_fill(~chosen, -100)
        roll = torch.rand(bs, n, device="cuda")
        inputs = ids.masked_fill(chosen & (roll < 0.8), 103)
        swap = chosen & (roll >= 0.8) & (roll < 0.9)
        inputs = torch.where(swap, torch.randint_like(ids, 1000, 30000), inputs)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=inputs, labels=labels).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, chosen, labels, roll, inputs, swap, loss


def pointnet_knn_train(torch):
    """Point-cloud segmentation in the manner of PointNet++/DGCNN: for each cloud the
    16 nearest neighbours of every point by `torch.cdist` and `topk` (an N × N distance
    matrix), neighbour features gathered and combined by shared MLPs with max-pooling
    (edge convolutions, three layers), per-point classification, Adam; 4 steps of 8 clouds
    of 4,096, 4 of 8,192, 16 of 2,048 and 6 of 6,144 points."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)

    class EdgeConv(nn.Module):
        def __init__(self, i, o):
            super().__init__()
            self.mlp = nn.Sequential(nn.Linear(2 * i, o), nn.LayerNorm(o), nn.GELU(), nn.Linear(o, o))

        def forward(self, x, idx):
            b, n, c = x.shape
            nb = torch.gather(x, 1, idx.reshape(b, -1, 1).expand(-1, -1, c)).reshape(b, n, -1, c)
            e = torch.cat([x[:, :, None].expand_as(nb), nb - x[:, :, None]], -1)
            return self.mlp(e).amax(2)

    layers = nn.ModuleList([EdgeConv(3, 64), EdgeConv(64, 64), EdgeConv(64, 128)]).cuda()
    head = nn.Linear(64 + 64 + 128, 13).cuda()
    opt = torch.optim.Adam(list(layers.parameters()) + list(head.parameters()), lr=1e-3)
    for bs, n in [(8, 4096), (4, 8192), (16, 2048), (6, 6144)]:
        pts = torch.randn(bs, n, 3, device="cuda")
        labels = torch.randint(0, 13, (bs, n), device="cuda")
        with torch.no_grad():
            idx = torch.cdist(pts, pts).topk(16, largest=False).indices
        feats, x = [], pts
        for layer in layers:
            x = layer(x, idx)
            feats.append(x)
        loss = F.cross_entropy(head(torch.cat(feats, -1)).reshape(-1, 13), labels.reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del pts, labels, idx, feats, x, loss


def conformer_ctc_train_bf16(torch):
    """Speech recognition training with a Conformer encoder and CTC, by hand: log-mel
    frames (80) subsampled 4× by two strided convolutions, 6 Conformer blocks (d 256: a
    half feed-forward, self-attention with a key padding mask, a depthwise convolution
    module, another half feed-forward), per-frame logits over 128 tokens and
    `F.ctc_loss` against transcripts of data-decided lengths; bf16 autocast, AdamW, 4 steps
    of 16 utterances of 2–15 s, 32 of 1–6 s, 8 of 10–30 s and 24 of 3–10 s."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    d = 256

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ff1 = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d))
            self.ff2 = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d))
            self.norm_a, self.norm_c, self.norm_o = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
            self.attn = nn.MultiheadAttention(d, 4, batch_first=True)
            self.pw1, self.dw, self.pw2 = nn.Linear(d, 2 * d), nn.Conv1d(d, d, 31, padding=15, groups=d), nn.Linear(d, d)
            self.bn = nn.BatchNorm1d(d)

        def forward(self, x, pad):
            x = x + 0.5 * self.ff1(x)
            h = self.norm_a(x)
            x = x + self.attn(h, h, h, key_padding_mask=pad, need_weights=False)[0]
            h = F.glu(self.pw1(self.norm_c(x)), -1).transpose(1, 2)
            x = x + self.pw2(F.silu(self.bn(self.dw(h))).transpose(1, 2))
            return self.norm_o(x + 0.5 * self.ff2(x))

    sub = nn.Sequential(nn.Conv1d(80, d, 3, stride=2, padding=1), nn.SiLU(),
                        nn.Conv1d(d, d, 3, stride=2, padding=1), nn.SiLU()).cuda()
    blocks = nn.ModuleList(Block() for _ in range(6)).cuda()
    out = nn.Linear(d, 128).cuda()
    params = list(sub.parameters()) + list(blocks.parameters()) + list(out.parameters())
    opt = torch.optim.AdamW(params, lr=1e-3)
    g = torch.Generator().manual_seed(9)
    for bs, lo, hi in [(16, 2, 15), (32, 1, 6), (8, 10, 30), (24, 3, 10)]:
        seconds = torch.randint(lo, hi + 1, (bs,), generator=g)
        frames = seconds * 100
        longest = int(frames.max())
        mel = torch.randn(bs, 80, longest, device="cuda")
        lengths = (frames + 3) // 4
        targets = [torch.randint(1, 128, (int(s) * 3,), generator=g) for s in seconds]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            x = sub(mel).transpose(1, 2)
            pad = torch.arange(x.shape[1])[None] >= lengths[:, None]
            pad = pad.cuda()
            for blk in blocks:
                x = blk(x, pad)
            logp = out(x).float().log_softmax(-1).transpose(0, 1)
        loss = F.ctc_loss(logp, torch.cat(targets).cuda(), lengths.cuda(),
                          torch.tensor([len(t) for t in targets]).cuda(), zero_infinity=True)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del mel, x, pad, logp, loss


def moe_generate_bf16(torch):
    """Serving a mixture-of-experts decoder, as Mixtral-style models are served, by hand:
    8 layers (d 1024), 8 experts of 2,816 hidden units each with top-2 routing (each expert
    taking the tokens the router sends it by `index_select` and giving them back by
    `index_add_`: counts the data decides), a KV cache grown by `torch.cat`; 4 requests
    (batch 1, 4, 2, 8) with 200–1,200-token prompts and 32–64 new tokens, bf16,
    `inference_mode`."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    d, h, layers, experts, hidden, vocab = 1024, 16, 8, 8, 2816, 32000
    dh = d // h
    emb = nn.Embedding(vocab, d)
    qkv = nn.ModuleList(nn.Linear(d, 3 * d, bias=False) for _ in range(layers))
    proj = nn.ModuleList(nn.Linear(d, d, bias=False) for _ in range(layers))
    router = nn.ModuleList(nn.Linear(d, experts, bias=False) for _ in range(layers))
    up = nn.ModuleList(nn.ModuleList(nn.Linear(d, 2 * hidden, bias=False) for _ in range(experts)) for _ in range(layers))
    down = nn.ModuleList(nn.ModuleList(nn.Linear(hidden, d, bias=False) for _ in range(experts)) for _ in range(layers))
    head = nn.Linear(d, vocab, bias=False)
    for m in (emb, qkv, proj, router, up, down, head):
        m.cuda().to(torch.bfloat16).eval()
    with torch.inference_mode():
        for bs, prompt, new in [(1, 1200, 64), (4, 400, 48), (2, 800, 32), (8, 200, 40)]:
            tokens = torch.randint(0, vocab, (bs, prompt), device="cuda")
            cache = [None] * layers
            for _ in range(new + 1):
                n = tokens.shape[1]
                x = emb(tokens)
                for i in range(layers):
                    q, k, v = qkv[i](F.rms_norm(x, (d,))).view(bs, n, 3, h, dh).permute(2, 0, 3, 1, 4)
                    if cache[i] is not None:
                        k, v = torch.cat([cache[i][0], k], 2), torch.cat([cache[i][1], v], 2)
                    cache[i] = (k, v)
                    a = F.scaled_dot_product_attention(q, k, v, is_causal=n > 1)
                    x = x + proj[i](a.transpose(1, 2).reshape(bs, n, d))
                    flat = F.rms_norm(x, (d,)).reshape(-1, d)
                    weights, chosen = router[i](flat).softmax(-1).topk(2, -1)
                    mixed = torch.zeros_like(flat)
                    for e in range(experts):
                        rows, slot = (chosen == e).nonzero(as_tuple=True)
                        if rows.numel() == 0:
                            continue
                        gate, val = up[i][e](flat.index_select(0, rows)).chunk(2, -1)
                        y = down[i][e](F.silu(gate) * val) * weights[rows, slot, None]
                        mixed.index_add_(0, rows, y)
                    x = x + mixed.view(bs, n, d)
                    del q, k, v, a, flat, weights, chosen, mixed
                tokens = head(F.rms_norm(x[:, -1:], (d,))).argmax(-1)
                del x
            del cache, tokens


def reward_model_pairwise_train_bf16(torch):
    """Reward-model training for RLHF: transformers' GPT-2 (6 layers, d 768, random weights)
    with a scalar head on the last non-padding token, each pair's chosen and rejected
    responses (different lengths, right-padded) as one batch of 2B rows, the pairwise
    log-sigmoid ranking loss, bf16 autocast, AdamW; 4 steps at B = 8, 16, 4, 12 with
    prompts plus responses of up to 1,024 tokens."""
    from transformers import GPT2Config, GPT2Model
    F = torch.nn.functional
    torch.manual_seed(0)
    body = GPT2Model(GPT2Config(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=6, n_head=12)).cuda().train()
    score = torch.nn.Linear(768, 1).cuda()
    opt = torch.optim.AdamW(list(body.parameters()) + list(score.parameters()), lr=1e-5)
    g = torch.Generator().manual_seed(10)
    for bs, longest in [(8, 512), (16, 256), (4, 1024), (12, 384)]:
        lengths = torch.randint(longest // 4, longest + 1, (2 * bs,), generator=g)
        ids = torch.randint(0, 50257, (2 * bs, longest), device="cuda")
        mask = (torch.arange(longest)[None] < lengths[:, None]).long().cuda()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            hidden = body(input_ids=ids, attention_mask=mask).last_hidden_state
            last = hidden[torch.arange(2 * bs, device="cuda"), lengths.cuda() - 1]
            r = score(last).float().squeeze(-1)
        chosen, rejected = r.chunk(2)
        loss = -F.logsigmoid(chosen - rejected).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, mask, hidden, last, r, chosen, rejected, loss


def vmap_ensemble_train(torch):
    """Model ensembling with torch.func: eight small CNN classifiers' parameters stacked
    (`stack_module_state`), one `functional_call` under `vmap` over the ensemble for the
    forward pass, each member's loss summed, Adam on the stacked parameters; 4 steps of
    64, 256, 32 and 128 images of 64 x 64, each member seeing the same batch."""
    from torch.func import functional_call, stack_module_state
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)

    def make():
        return nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Linear(64 * 16 * 16, 128), nn.ReLU(), nn.Linear(128, 10)).cuda()

    members = [make() for _ in range(8)]
    params, buffers = stack_module_state(members)
    base = make().to("meta")
    leaves = list(params.values())
    opt = torch.optim.Adam(leaves, lr=1e-3)

    def one(p, b, x):
        return functional_call(base, (p, b), (x,))

    for bs in [64, 256, 32, 128]:
        x = torch.randn(bs, 3, 64, 64, device="cuda")
        y = torch.randint(0, 10, (bs,), device="cuda")
        logits = torch.vmap(one, in_dims=(0, 0, None))(params, buffers, x)
        loss = F.cross_entropy(logits.reshape(-1, 10), y.repeat(8))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y, logits, loss


def _decoder_lm(torch, d, layers, vocab):
    """A decoder-only language model on the GPU, made in this order: `layers`
    nn.TransformerEncoderLayer blocks (d, 16 heads, pre-norm, no dropout), a token embedding
    and an untied head (muon_optimizer_train_bf16, galore_projected_adam_train_bf16,
    adam8bit_blockwise_train, optimizer_in_backward_train)."""
    nn = torch.nn
    layer = nn.TransformerEncoderLayer(d, 16, 4 * d, dropout=0.0, batch_first=True, norm_first=True)
    body = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False).cuda()
    emb, head = nn.Embedding(vocab, d).cuda(), nn.Linear(d, vocab, bias=False).cuda()
    return body, emb, head


def _decoder_lm_loss(torch, body, emb, head, vocab, bs, n):
    """bs random sequences of n + 1 tokens through _decoder_lm's model under bf16 autocast,
    causally masked: returns the tokens, the mask, the last hidden states and the
    next-token loss, for the caller to keep until its step ends, as the recorded runs did."""
    nn = torch.nn
    ids = torch.randint(0, vocab, (bs, n + 1), device="cuda")
    mask = nn.Transformer.generate_square_subsequent_mask(n, device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        h = body(emb(ids[:, :-1]), mask=mask, is_causal=True)
        loss = nn.functional.cross_entropy(head(h).float().reshape(-1, vocab), ids[:, 1:].reshape(-1))
    return ids, mask, h, loss


def muon_optimizer_train_bf16(torch):
    """A decoder-only transformer (8 layers, d 1,024, 16 heads, random weights) trained with
    a Muon optimizer written out: each matrix's momentum orthogonalised by five
    Newton-Schulz iterations in bf16 (the quintic of Keller Jordan's Muon), the embeddings,
    head and norms by AdamW; bf16 autocast, 4 steps at batch x length 8 x 1,024, 16 x 512,
    4 x 2,048 and 12 x 768."""
    torch.manual_seed(0)
    vocab = 32000
    body, emb, head = _decoder_lm(torch, 1024, 8, vocab)
    mats = [p for p in body.parameters() if p.ndim == 2]
    rest = [p for p in body.parameters() if p.ndim != 2] + list(emb.parameters()) + list(head.parameters())
    adamw = torch.optim.AdamW(rest, lr=3e-4)
    momentum = [torch.zeros_like(p) for p in mats]

    def newton_schulz(g):
        a, b, c = 3.4445, -4.7750, 2.0315
        x = g.bfloat16()
        x = x / (x.norm() + 1e-7)
        tall = x.size(0) > x.size(1)
        if tall:
            x = x.T
        for _ in range(5):
            m = x @ x.T
            x = a * x + (b * m + c * m @ m) @ x
        return x.T if tall else x

    for bs, n in [(8, 1024), (16, 512), (4, 2048), (12, 768)]:
        ids, mask, h, loss = _decoder_lm_loss(torch, body, emb, head, vocab, bs, n)
        loss.backward()
        with torch.no_grad():
            for p, m in zip(mats, momentum):
                m.mul_(0.95).add_(p.grad)
                u = newton_schulz(p.grad.add(m, alpha=0.95))
                p.add_(u.to(p.dtype), alpha=-0.02 * max(1, p.size(0) / p.size(1)) ** 0.5)
                p.grad = None
        adamw.step()
        adamw.zero_grad(set_to_none=True)
        del ids, mask, h, loss


def patch_forecast_train(torch):
    """Multivariate time-series forecasting in the manner of PatchTST: each channel on its
    own (channels folded into the batch), series cut into patches of 16 with stride 8,
    instance-normalised, a 4-layer transformer encoder over the patches, a flattening head
    to the horizon; Adam, 4 steps of datasets of 7, 21, 321 and 862 channels (ETT, weather,
    electricity, traffic) at context 512 and horizon 96, batches of 32, 32, 8 and 4."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    ctx, horizon, plen, stride, d = 512, 96, 16, 8, 128
    npatch = (ctx - plen) // stride + 1
    proj = nn.Linear(plen, d).cuda()
    pos = nn.Parameter(torch.randn(npatch, d, device="cuda") * 0.02)
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 16, 256, dropout=0.1, batch_first=True), 4,
                                enable_nested_tensor=False).cuda()
    head = nn.Linear(npatch * d, horizon).cuda()
    opt = torch.optim.Adam(list(proj.parameters()) + [pos] + list(enc.parameters()) + list(head.parameters()), lr=1e-4)
    for bs, ch in [(32, 7), (32, 21), (8, 321), (4, 862)]:
        x = torch.randn(bs, ctx + horizon, ch, device="cuda").cumsum(1)
        past, future = x[:, :ctx], x[:, ctx:]
        mu, sd = past.mean(1, keepdim=True), past.std(1, keepdim=True) + 1e-5
        z = ((past - mu) / sd).permute(0, 2, 1).reshape(bs * ch, ctx)
        patches = z.unfold(-1, plen, stride)
        h = enc(proj(patches) + pos)
        out = head(h.flatten(1)).reshape(bs, ch, horizon).permute(0, 2, 1) * sd + mu
        loss = F.mse_loss(out, future)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, past, future, mu, sd, z, patches, h, out, loss


def unet3d_sliding_window_infer_fp16(torch):
    """Sliding-window inference of a 3D segmentation network over whole volumes, as MONAI's
    `sliding_window_inference` does for CT: a small 3D U-Net in fp16, overlapping 96^3
    patches (overlap 0.25) batched 4 at a time, each prediction weighted by a Gaussian and
    added into full-volume output and weight buffers, divided at the end; three volumes of
    160 x 160 x 128, 256 x 256 x 96 and 192 x 224 x 160 voxels, 14 classes."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)

    def block(i, o):
        return nn.Sequential(nn.Conv3d(i, o, 3, padding=1), nn.InstanceNorm3d(o), nn.LeakyReLU(),
                             nn.Conv3d(o, o, 3, padding=1), nn.InstanceNorm3d(o), nn.LeakyReLU())

    class UNet3D(nn.Module):
        def __init__(self):
            super().__init__()
            self.e1, self.e2, self.e3 = block(1, 16), block(16, 32), block(32, 64)
            self.u2, self.d2 = nn.ConvTranspose3d(64, 32, 2, 2), block(64, 32)
            self.u1, self.d1 = nn.ConvTranspose3d(32, 16, 2, 2), block(32, 16)
            self.out = nn.Conv3d(16, 14, 1)

        def forward(self, x):
            a = self.e1(x)
            b = self.e2(F.max_pool3d(a, 2))
            c = self.e3(F.max_pool3d(b, 2))
            b = self.d2(torch.cat([self.u2(c), b], 1))
            return self.out(self.d1(torch.cat([self.u1(b), a], 1)))

    net = UNet3D().cuda().half().eval()
    roi, step = 96, 72
    g = torch.exp(-((torch.arange(roi, device="cuda") - (roi - 1) / 2) ** 2) / (2 * (roi / 8) ** 2))
    weight = (g[:, None, None] * g[None, :, None] * g[None, None, :]).half()

    def starts(n):
        return sorted({min(i, n - roi) for i in range(0, n - roi + step, step)})

    with torch.inference_mode():
        for shape in [(160, 160, 128), (256, 256, 96), (192, 224, 160)]:
            vol = torch.randn(1, 1, *shape, device="cuda", dtype=torch.half)
            out = torch.zeros(1, 14, *shape, device="cuda", dtype=torch.float32)
            count = torch.zeros(1, 1, *shape, device="cuda", dtype=torch.float32)
            windows = [(i, j, k) for i in starts(shape[0]) for j in starts(shape[1]) for k in starts(shape[2])]
            for w in range(0, len(windows), 4):
                batch = windows[w:w + 4]
                x = torch.cat([vol[..., i:i + roi, j:j + roi, k:k + roi] for i, j, k in batch])
                pred = net(x).float() * weight
                for n, (i, j, k) in enumerate(batch):
                    out[..., i:i + roi, j:j + roi, k:k + roi] += pred[n:n + 1]
                    count[..., i:i + roi, j:j + roi, k:k + roi] += weight
                del x, pred
            seg = (out / count).argmax(1)
            del vol, out, count, seg


def gptq_calibrate_quantize(torch):
    """Post-training quantisation of a decoder's linear layers in the manner of GPTQ: a
    Llama-style model (8 layers, d 2,048, random weights, fp16) run layer by layer over
    128 calibration sequences of 512 tokens; for each linear layer the inputs' Hessian
    (2 X^T X, accumulated over the batches by forward hooks), damped, inverted through
    its Cholesky factor, and the weight quantised to 4 bits block by block of 128 columns
    with each block's error fed forward to the columns after it; each layer's outputs then
    the next layer's inputs."""
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=32000, hidden_size=2048, intermediate_size=5504, num_hidden_layers=8,
                      num_attention_heads=16, num_key_value_heads=16, max_position_embeddings=1024)
    model = LlamaForCausalLM(cfg).half().cuda().eval()
    layers = model.model.layers
    n, seqlen, chunk = 128, 512, 16

    def quantize(w, H):
        cols = w.shape[1]
        dead = torch.diag(H) == 0
        H[dead, dead] = 1
        w[:, dead] = 0
        H += 0.01 * torch.mean(torch.diag(H)) * torch.eye(cols, device="cuda")
        Hinv = torch.linalg.cholesky(torch.cholesky_inverse(torch.linalg.cholesky(H)), upper=True)
        scale = w.abs().amax(1, keepdim=True) / 7
        for b in range(0, cols, 128):
            wb = w[:, b:b + 128]
            q = (wb / scale).round().clamp(-8, 7) * scale
            err = (wb - q) / torch.diag(Hinv)[b:b + 128]
            w[:, b:b + 128] = q
            w[:, b + 128:] -= err @ Hinv[b:b + 128, b + 128:]
            del q, err

    def run(layer, x):
        out = layer(x, position_embeddings=rope)
        return out[0] if isinstance(out, tuple) else out

    with torch.no_grad():
        ids = torch.randint(0, 32000, (n, seqlen), device="cuda")
        hidden = torch.cat([model.model.embed_tokens(ids[i:i + chunk]) for i in range(0, n, chunk)])
        pos = torch.arange(seqlen, device="cuda")[None]
        rope = model.model.rotary_emb(hidden[:1], pos)
        for layer in layers:
            linears = {name: m for name, m in layer.named_modules() if isinstance(m, torch.nn.Linear)}
            H = {name: torch.zeros(m.in_features, m.in_features, device="cuda") for name, m in linears.items()}

            def hook(name):
                def f(mod, inp, out):
                    x = inp[0].reshape(-1, inp[0].shape[-1]).float()
                    H[name].addmm_(x.T, x, alpha=2 / n)
                return f
            hooks = [m.register_forward_hook(hook(name)) for name, m in linears.items()]
            for i in range(0, n, chunk):
                run(layer, hidden[i:i + chunk])
            for h in hooks:
                h.remove()
            for name, m in linears.items():
                w = m.weight.data.float()
                quantize(w, H.pop(name))
                m.weight.data.copy_(w.half())
                del w
            hidden = torch.cat([run(layer, hidden[i:i + chunk]) for i in range(0, n, chunk)])
            del H, hooks


def sparse24_mlp_infer_fp16(torch):
    """Inference through 2:4 semi-structured sparse weights (`to_sparse_semi_structured`,
    NVIDIA's sparse tensor cores): a 12-block MLP stack (d 4,096, hidden 16,384, fp16)
    pruned to two of every four weights along each row and converted, then batches of
    256, 4,096, 1,024 and 8,192 tokens through it."""
    from torch.sparse import to_sparse_semi_structured
    nn = torch.nn
    torch.manual_seed(0)
    blocks = []
    for _ in range(12):
        up, down = nn.Linear(4096, 16384).half().cuda(), nn.Linear(16384, 4096).half().cuda()
        for lin in (up, down):
            w = lin.weight.data
            keep = w.abs().reshape(-1, 4).topk(2, dim=1).indices
            mask = torch.zeros(w.numel() // 4, 4, device="cuda", dtype=torch.bool).scatter_(1, keep, True)
            lin.weight = nn.Parameter(to_sparse_semi_structured(w * mask.reshape(w.shape)), requires_grad=False)
            del keep, mask, w
        blocks.append((up, down))
    with torch.inference_mode():
        for tokens in [256, 4096, 1024, 8192]:
            x = torch.randn(tokens, 4096, device="cuda", dtype=torch.half)
            for up, down in blocks:
                x = x + down(torch.nn.functional.gelu(up(x)))
            del x


def galore_projected_adam_train_bf16(torch):
    """GaLore (gradient low-rank projection): a decoder-only transformer (6 layers, d 1,024,
    random weights) whose matrices' gradients are projected onto their top 128 singular
    vectors (left or right, whichever side is shorter), recomputed every second step by
    `torch.linalg.svd` of the gradient, with Adam's moments kept in the projected space and
    the update projected back; AdamW for the embeddings, head and norms; bf16 autocast,
    5 steps at batch x length 8 x 1,024, 16 x 512, 4 x 2,048, 8 x 1,024 and 12 x 768."""
    torch.manual_seed(0)
    vocab, rank = 32000, 128
    body, emb, head = _decoder_lm(torch, 1024, 6, vocab)
    mats = [p for p in body.parameters() if p.ndim == 2]
    rest = [p for p in body.parameters() if p.ndim != 2] + list(emb.parameters()) + list(head.parameters())
    adamw = torch.optim.AdamW(rest, lr=3e-4)
    state = [{} for _ in mats]
    b1, b2, lr = 0.9, 0.999, 1e-3
    for step, (bs, n) in enumerate([(8, 1024), (16, 512), (4, 2048), (8, 1024), (12, 768)]):
        ids, mask, h, loss = _decoder_lm_loss(torch, body, emb, head, vocab, bs, n)
        loss.backward()
        with torch.no_grad():
            for p, s in zip(mats, state):
                g = p.grad
                left = g.shape[0] <= g.shape[1]
                if step % 2 == 0:
                    u, _, vh = torch.linalg.svd(g, full_matrices=False)
                    s["P"] = (u[:, :rank] if left else vh[:rank].T).contiguous()
                    del u, vh
                P = s["P"]
                r = P.T @ g if left else g @ P
                if "m" not in s:
                    s["m"], s["v"] = torch.zeros_like(r), torch.zeros_like(r)
                s["m"].mul_(b1).add_(r, alpha=1 - b1)
                s["v"].mul_(b2).addcmul_(r, r, value=1 - b2)
                u = s["m"] / (s["v"].sqrt() + 1e-8)
                p.add_(P @ u if left else u @ P.T, alpha=-lr)
                p.grad = None
                del g, r, u
        adamw.step()
        adamw.zero_grad(set_to_none=True)
        del ids, mask, h, loss


def vqvae_codebook_train(torch):
    """A VQ-VAE trained on images: a convolutional encoder to a 32 x 32 grid of 64-wide
    latents, each snapped to the nearest of 1,024 codes (`torch.cdist`, `argmin`), the
    straight-through estimator and a commitment loss, a decoder back to the image, Adam;
    the codebook updated by exponential moving averages of the latents assigned to each
    code (one-hot counts and sums); 4 steps of 32, 64, 16 and 48 images of 128 x 128."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    K, D = 1024, 64
    enc = nn.Sequential(nn.Conv2d(3, 128, 4, 2, 1), nn.ReLU(), nn.Conv2d(128, 256, 4, 2, 1), nn.ReLU(),
                        nn.Conv2d(256, D, 3, 1, 1)).cuda()
    dec = nn.Sequential(nn.Conv2d(D, 256, 3, 1, 1), nn.ReLU(), nn.ConvTranspose2d(256, 128, 4, 2, 1), nn.ReLU(),
                        nn.ConvTranspose2d(128, 3, 4, 2, 1)).cuda()
    codebook = torch.randn(K, D, device="cuda")
    ema_count = torch.ones(K, device="cuda")
    ema_sum = codebook.clone()
    opt = torch.optim.Adam(list(enc.parameters()) + list(dec.parameters()), lr=2e-4)
    for bs in [32, 64, 16, 48]:
        x = torch.rand(bs, 3, 128, 128, device="cuda")
        z = enc(x).permute(0, 2, 3, 1).reshape(-1, D)
        idx = torch.cdist(z.detach(), codebook).argmin(1)
        q = codebook[idx]
        zq = (z + (q - z).detach()).reshape(bs, 32, 32, D).permute(0, 3, 1, 2)
        loss = F.mse_loss(dec(zq), x) + 0.25 * F.mse_loss(z, q)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        with torch.no_grad():
            onehot = F.one_hot(idx, K).float()
            ema_count.mul_(0.99).add_(onehot.sum(0), alpha=0.01)
            ema_sum.mul_(0.99).add_(onehot.T @ z.detach(), alpha=0.01)
            codebook.copy_(ema_sum / (ema_count + 1e-5)[:, None])
        del x, z, idx, q, zq, loss, onehot


def streaming_sink_kv_decode_fp16(torch):
    """Decoding past the cache's length with attention sinks, as StreamingLLM (and
    transformers' former SinkCache) does: a hand-written fp16 decoder (6 layers, d 1,024)
    keeps the keys and values of the first 4 tokens and of the 508 most recent; once the
    cache is full, every step rebuilds it by `torch.cat` of the sinks and the window less
    its oldest token. Three batches of 2 requests, prompts of 300, 1,000 (longer than the
    cache: only the sinks and its last 508 tokens kept) and 64 tokens, each generating 600
    tokens greedily, under `inference_mode`."""
    torch.manual_seed(0)
    d, h, layers, vocab, sinks, window = 1024, 16, 6, 32000, 4, 508
    weights = fp16_decoder_weights(torch, d, layers, vocab)

    def evict(t):
        if t.shape[2] <= sinks + window:
            return t
        return torch.cat([t[:, :, :sinks], t[:, :, -window:]], 2)

    def forward(tokens, past):
        return fp16_decoder_forward(torch, weights, h, tokens, past, keep=evict)

    with torch.inference_mode():
        for prompt in [300, 1000, 64]:
            logits, kv = forward(torch.randint(0, vocab, (2, prompt), device="cuda"), None)
            for _ in range(600):
                logits, kv = forward(logits.argmax(-1, keepdim=True), kv)
            del logits, kv


def selective_ckpt_train_bf16(torch):
    """Selective activation checkpointing (`torch.utils.checkpoint` with `context_fn`
    from `create_selective_checkpoint_contexts`): 8 transformer blocks (d 1,024) each
    run under a policy that saves the outputs of matrix multiplies and attention and
    recomputes everything else in backward; bf16 autocast, AdamW, 4 steps at batch x
    length 8 x 1,024, 4 x 2,048, 16 x 512 and 6 x 1,536."""
    import functools
    from torch.utils.checkpoint import CheckpointPolicy, checkpoint, create_selective_checkpoint_contexts
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    d, vocab = 1024, 32000
    aten = torch.ops.aten
    names = ["mm", "addmm", "bmm", "_scaled_dot_product_flash_attention",
             "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention"]
    saved = {getattr(aten, n).default for n in names if hasattr(aten, n)}

    def policy(ctx, op, *args, **kwargs):
        return CheckpointPolicy.MUST_SAVE if op in saved else CheckpointPolicy.PREFER_RECOMPUTE

    blocks = nn.ModuleList(_block(torch, d, 16) for _ in range(8)).cuda()
    emb, head = nn.Embedding(vocab, d).cuda(), nn.Linear(d, vocab, bias=False).cuda()
    opt = torch.optim.AdamW(list(blocks.parameters()) + list(emb.parameters()) + list(head.parameters()), lr=3e-4)
    ctx = functools.partial(create_selective_checkpoint_contexts, policy)
    for bs, n in [(8, 1024), (4, 2048), (16, 512), (6, 1536)]:
        ids = torch.randint(0, vocab, (bs, n + 1), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            x = emb(ids[:, :-1])
            for b in blocks:
                x = checkpoint(b, x, use_reentrant=False, context_fn=ctx)
            loss = F.cross_entropy(head(x).float().reshape(-1, vocab), ids[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, x, loss


def multi_lora_serve_fp16(torch):
    """Serving many LoRA adapters over one base model in the same batch, as S-LoRA and
    Punica do, by hand: a hand-written fp16 decoder (4 layers, d 2,048) and 16 adapters of
    rank 16 on its fused q/k/v projection, stacked per layer ([16, d, 16] and
    [16, 16, 3d]); each request's rows gather their adapter's matrices by index (`A[idx]`)
    and add the low-rank update by two `torch.bmm`; 3 batches of 8, 3 and 12 requests, each
    of one prompt length (512, 1,500 and 256 tokens), then 32, 48 and 16 decode steps with
    KV caches grown by `torch.cat`, under `inference_mode`."""
    torch.manual_seed(0)
    d, h, layers, vocab, adapters, r = 2048, 16, 4, 32000, 16, 16
    weights = fp16_decoder_weights(torch, d, layers, vocab)
    A = [torch.randn(adapters, d, r, device="cuda", dtype=torch.half) * 0.01 for _ in range(layers)]
    B = [torch.randn(adapters, r, 3 * d, device="cuda", dtype=torch.half) * 0.01 for _ in range(layers)]

    def forward(tokens, past, idx):
        def lora(i, x):
            return torch.bmm(torch.bmm(x, A[i][idx]), B[i][idx])
        return fp16_decoder_forward(torch, weights, h, tokens, past, qkv_delta=lora)

    with torch.inference_mode():
        for bs, prompt, steps in [(8, 512, 32), (3, 1500, 48), (12, 256, 16)]:
            idx = torch.randint(0, adapters, (bs,), device="cuda")
            logits, kv = forward(torch.randint(0, vocab, (bs, prompt), device="cuda"), None, idx)
            for _ in range(steps):
                logits, kv = forward(logits.argmax(-1, keepdim=True), kv, idx)
            del idx, logits, kv


def adam8bit_blockwise_train(torch):
    """An 8-bit Adam written out, in the manner of bitsandbytes' blockwise optimizers: each
    parameter's two moments kept as int8 (first) and uint8 (second) in blocks of 2,048
    values with an fp32 absolute-maximum scale per block (linear quantisation, not
    bitsandbytes' dynamic map), dequantised to fp32 for each parameter's update and
    quantised back after it; a decoder-only transformer (6 layers, d 1,024, vocab 32,000,
    random weights) under bf16 autocast, 4 steps at batch x length 8 x 1,024, 16 x 512,
    4 x 2,048 and 12 x 768."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    vocab, block = 32000, 2048
    body, emb, head = _decoder_lm(torch, 1024, 6, vocab)
    params = list(body.parameters()) + list(emb.parameters()) + list(head.parameters())
    b1, b2, lr, wd = 0.9, 0.999, 3e-4, 0.01

    def quantize(x, top, dtype):
        flat = F.pad(x.flatten(), (0, (-x.numel()) % block)).view(-1, block)
        scale = flat.abs().amax(1, keepdim=True).clamp_min(1e-12)
        return (flat / scale * top).round().to(dtype), scale

    def dequantize(q, scale, top, like):
        return (q.float() * (scale / top)).flatten()[:like.numel()].view_as(like)

    state = {}
    for t, (bs, n) in enumerate([(8, 1024), (16, 512), (4, 2048), (12, 768)], 1):
        ids, mask, h, loss = _decoder_lm_loss(torch, body, emb, head, vocab, bs, n)
        loss.backward()
        with torch.no_grad():
            for i, p in enumerate(params):
                g = p.grad
                if i in state:
                    mq, ms, vq, vs = state[i]
                    m, v = dequantize(mq, ms, 127, g), dequantize(vq, vs, 255, g)
                else:
                    m, v = torch.zeros_like(g), torch.zeros_like(g)
                m.mul_(b1).add_(g, alpha=1 - b1)
                v.mul_(b2).addcmul_(g, g, value=1 - b2)
                p.mul_(1 - lr * wd)
                p.addcdiv_(m / (1 - b1 ** t), (v / (1 - b2 ** t)).sqrt_().add_(1e-8), value=-lr)
                state[i] = quantize(m, 127, torch.int8) + quantize(v, 255, torch.uint8)
                p.grad = None
                del g, m, v
        del ids, mask, h, loss


def grpo_group_rollout_train_bf16(torch):
    """GRPO (group relative policy optimisation, as in TRL's `GRPOTrainer`): transformers'
    GPT-2 (6 layers, d 768, random weights) samples 8 completions for each of 4 prompts
    with `generate` (a fixed number of new tokens), rewards (random here) are normalised
    within each prompt's group into advantages, and the policy is trained on the
    completions' token log-probabilities with a KL penalty against a frozen reference
    copy; bf16 autocast, AdamW, 3 steps at prompts of 64, 128 and 32 tokens and 128, 64
    and 96 new tokens."""
    import copy
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=6, n_head=12,
                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    policy = GPT2LMHeadModel(cfg).cuda()
    ref = copy.deepcopy(policy).eval().requires_grad_(False)
    opt = torch.optim.AdamW(policy.parameters(), lr=1e-6)
    group, beta = 8, 0.04

    def token_logps(model, seqs, prompt):
        logits = model(seqs).logits[:, prompt - 1:-1].float()
        return torch.gather(logits.log_softmax(-1), 2, seqs[:, prompt:, None]).squeeze(-1)

    for prompt, new in [(64, 128), (128, 64), (32, 96)]:
        ids = torch.randint(0, 50257, (4, prompt), device="cuda")
        policy.eval()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            seqs = policy.generate(ids, attention_mask=torch.ones_like(ids), do_sample=True,
                                   num_return_sequences=group, max_new_tokens=new, min_new_tokens=new,
                                   pad_token_id=0)
        policy.train()
        rewards = torch.rand(4, group, device="cuda")
        adv = ((rewards - rewards.mean(1, keepdim=True)) / (rewards.std(1, keepdim=True) + 1e-4)).reshape(-1, 1)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            with torch.no_grad():
                ref_logps = token_logps(ref, seqs, prompt)
            logps = token_logps(policy, seqs, prompt)
        kl = torch.exp(ref_logps - logps) - (ref_logps - logps) - 1
        loss = -(torch.exp(logps - logps.detach()) * adv - beta * kl).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, seqs, rewards, adv, ref_logps, logps, kl, loss


def adafactor_t5_train(torch):
    """T5 trained with PyTorch's own Adafactor (`torch.optim.Adafactor`: factored second
    moments, a row and a column vector per matrix instead of a full one): transformers' T5
    (6 + 6 layers, d 512, random weights) as a sequence-to-sequence model on padded batches,
    4 steps at source x target lengths 32 x 512 x 128, 64 x 256 x 64, 16 x 1,024 x 256 and
    48 x 384 x 96 (batch x source x target)."""
    from transformers import T5Config, T5ForConditionalGeneration
    torch.manual_seed(0)
    cfg = T5Config(vocab_size=32128, d_model=512, d_kv=64, d_ff=2048, num_layers=6, num_decoder_layers=6,
                   num_heads=8, dropout_rate=0.0, decoder_start_token_id=0, pad_token_id=0)
    model = T5ForConditionalGeneration(cfg).cuda().train()
    opt = torch.optim.Adafactor(model.parameters(), lr=1e-3)
    for bs, src, tgt in [(32, 512, 128), (64, 256, 64), (16, 1024, 256), (48, 384, 96)]:
        ids = torch.randint(0, 32128, (bs, src), device="cuda")
        lengths = torch.randint(src // 4, src + 1, (bs,), device="cuda")
        mask = (torch.arange(src, device="cuda")[None] < lengths[:, None]).long()
        labels = torch.randint(0, 32128, (bs, tgt), device="cuda")
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, lengths, mask, labels, loss


def dit_cfg_sample_bf16(torch):
    """Class-conditional sampling with a diffusion transformer (DiT, as in Peebles and Xie,
    hand-written): 4 x 32 x 32 latents cut into 2 x 2 patches (256 tokens), 12 blocks of
    d 768 modulated by adaLN-Zero from the timestep's and the class's embeddings, the
    batch doubled for classifier-free guidance (the null class), 50 DDIM steps; batches of
    8, 16 and 4 images under bf16 autocast and `inference_mode`."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    d, heads, depth, classes, p = 768, 12, 12, 1000, 2

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(d, elementwise_affine=False)
            self.ln2 = nn.LayerNorm(d, elementwise_affine=False)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"), nn.Linear(4 * d, d))
            self.ada = nn.Sequential(nn.SiLU(), nn.Linear(d, 6 * d))

        def forward(self, x, c):
            s1, b1, g1, s2, b2, g2 = self.ada(c)[:, None].chunk(6, -1)
            b, n, _ = x.shape
            q, k, v = self.qkv(self.ln1(x) * (1 + s1) + b1).view(b, n, 3, heads, d // heads).permute(2, 0, 3, 1, 4)
            x = x + g1 * self.proj(F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, d))
            return x + g2 * self.mlp(self.ln2(x) * (1 + s2) + b2)

    embed = nn.Conv2d(4, d, p, p).cuda()
    pos = torch.randn(1, 256, d, device="cuda") * 0.02
    t_mlp = nn.Sequential(nn.Linear(256, d), nn.SiLU(), nn.Linear(d, d)).cuda()
    y_emb = nn.Embedding(classes + 1, d).cuda()
    blocks = nn.ModuleList(Block() for _ in range(depth)).cuda()
    final = nn.Linear(d, p * p * 8).cuda()
    half = torch.exp(-torch.arange(128, device="cuda") * (9.21 / 128))
    alphas = torch.cumprod(1 - torch.linspace(1e-4, 0.02, 1000, device="cuda"), 0)

    def model(x, t, y):
        h = embed(x).flatten(2).transpose(1, 2) + pos
        f = t[:, None].float() * half[None]
        c = t_mlp(torch.cat([f.cos(), f.sin()], 1)) + y_emb(y)
        for blk in blocks:
            h = blk(h, c)
        out = final(h).view(-1, 16, 16, p, p, 8).permute(0, 5, 1, 3, 2, 4).reshape(-1, 8, 32, 32)
        return out[:, :4]

    with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
        for bs in [8, 16, 4]:
            x = torch.randn(bs, 4, 32, 32, device="cuda")
            y = torch.randint(0, classes, (bs,), device="cuda")
            yy = torch.cat([y, torch.full_like(y, classes)])
            steps = torch.linspace(999, 0, 50, device="cuda").long()
            for i, t in enumerate(steps):
                eps_c, eps_u = model(torch.cat([x, x]), t.repeat(2 * bs), yy).float().chunk(2)
                eps = eps_u + 4.0 * (eps_c - eps_u)
                a = alphas[t]
                a_prev = alphas[steps[i + 1]] if i + 1 < len(steps) else torch.ones_like(a)
                x0 = (x - (1 - a).sqrt() * eps) / a.sqrt()
                x = a_prev.sqrt() * x0 + (1 - a_prev).sqrt() * eps
                del eps_c, eps_u, eps, x0
            del x, y, yy


def parametrized_norms_train(torch):
    """Training through `torch.nn.utils.parametrizations`, whose weights are computed anew
    at every use: a convolutional classifier with `weight_norm` on its six convolutions,
    `spectral_norm` (a power iteration per forward) on its two hidden linear layers and
    `orthogonal` on a square 512 x 512 one; Adam, 4 steps of 128, 32, 256 and 64 images of
    64 x 64."""
    from torch.nn.utils import parametrizations as P
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    convs = [P.weight_norm(nn.Conv2d(i, o, 3, padding=1)) for i, o in
             [(3, 64), (64, 64), (64, 128), (128, 128), (128, 256), (256, 256)]]
    body = nn.Sequential(convs[0], nn.ReLU(), convs[1], nn.ReLU(), nn.MaxPool2d(2),
                         convs[2], nn.ReLU(), convs[3], nn.ReLU(), nn.MaxPool2d(2),
                         convs[4], nn.ReLU(), convs[5], nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten(),
                         P.spectral_norm(nn.Linear(1024, 512)), nn.ReLU(),
                         P.orthogonal(nn.Linear(512, 512)), nn.ReLU(),
                         P.spectral_norm(nn.Linear(512, 256)), nn.ReLU(), nn.Linear(256, 100)).cuda()
    opt = torch.optim.Adam(body.parameters(), lr=1e-3)
    for bs in [128, 32, 256, 64]:
        x = torch.randn(bs, 3, 64, 64, device="cuda")
        y = torch.randint(0, 100, (bs,), device="cuda")
        loss = F.cross_entropy(body(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y, loss


def realnvp_flow_train(torch):
    """A normalising flow in the manner of RealNVP trained by maximum likelihood on images:
    3 x 64 x 64 inputs squeezed to 12 x 32 x 32, 8 affine coupling layers (alternating
    channel halves; each scale and shift from a 4-block residual CNN of 128 channels),
    half the channels factored out, squeezed again to 24 x 16 x 16 and 6 couplings more,
    the log-determinants summed; Adam, 4 steps of 64, 32, 128 and 16 images."""
    nn = torch.nn
    torch.manual_seed(0)

    class Coupling(nn.Module):
        def __init__(self, c, flip):
            super().__init__()
            self.flip, h = flip, c // 2
            self.net = nn.Sequential(nn.Conv2d(h, 128, 3, padding=1), nn.ReLU(),
                                     *[m for _ in range(4) for m in (nn.Conv2d(128, 128, 3, padding=1), nn.ReLU())],
                                     nn.Conv2d(128, 2 * (c - h), 3, padding=1))

        def forward(self, x):
            a, b = x.chunk(2, 1)
            if self.flip:
                a, b = b, a
            s, t = self.net(a).chunk(2, 1)
            s = torch.tanh(s)
            b = b * s.exp() + t
            out = torch.cat([b, a] if self.flip else [a, b], 1)
            return out, s.flatten(1).sum(1)

    def squeeze(x):
        b, c, h, w = x.shape
        return x.view(b, c, h // 2, 2, w // 2, 2).permute(0, 1, 3, 5, 2, 4).reshape(b, 4 * c, h // 2, w // 2)

    first = nn.ModuleList(Coupling(12, i % 2 == 1) for i in range(8)).cuda()
    second = nn.ModuleList(Coupling(24, i % 2 == 1) for i in range(6)).cuda()
    opt = torch.optim.Adam(list(first.parameters()) + list(second.parameters()), lr=1e-4)
    for bs in [64, 32, 128, 16]:
        x = squeeze(torch.rand(bs, 3, 64, 64, device="cuda"))
        logdet = torch.zeros(bs, device="cuda")
        for f in first:
            x, ld = f(x)
            logdet = logdet + ld
        z1, x = x.chunk(2, 1)
        x = squeeze(x)
        for f in second:
            x, ld = f(x)
            logdet = logdet + ld
        prior = -0.5 * (z1.pow(2).flatten(1).sum(1) + x.pow(2).flatten(1).sum(1))
        loss = -(prior + logdet).mean() / (3 * 64 * 64)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, logdet, z1, prior, loss, ld


def dino_multicrop_train_bf16(torch):
    """DINO self-distillation with multi-crop: a student and an EMA teacher ViT (6 layers,
    d 384, patch 16, position embeddings interpolated to the crop), each with a head to
    4,096 prototypes; per step 2 global crops of 224 x 224 through both, 6 local crops of
    96 x 96 through the student only, the teacher's outputs centred and sharpened, the
    cross-entropy over every pair of crops but the same one, AdamW on the student, the
    teacher updated by `torch._foreach_lerp_`; bf16 autocast, 3 steps at 32, 16 and 48
    images."""
    import copy
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    d = 384

    class ViT(nn.Module):
        def __init__(self):
            super().__init__()
            self.patch = nn.Conv2d(3, d, 16, 16)
            self.cls = nn.Parameter(torch.zeros(1, 1, d))
            self.pos = nn.Parameter(torch.randn(1, 1 + 14 * 14, d) * 0.02)
            layer = nn.TransformerEncoderLayer(d, 6, 4 * d, dropout=0.0, batch_first=True, norm_first=True)
            self.body = nn.TransformerEncoder(layer, 6, enable_nested_tensor=False)
            self.head = nn.Sequential(nn.Linear(d, 2048), nn.GELU(), nn.Linear(2048, 256), nn.Linear(256, 4096))

        def forward(self, x):
            h = self.patch(x).flatten(2).transpose(1, 2)
            g = x.shape[-1] // 16
            pos = F.interpolate(self.pos[:, 1:].reshape(1, 14, 14, d).permute(0, 3, 1, 2), size=(g, g),
                                mode="bicubic").permute(0, 2, 3, 1).reshape(1, g * g, d)
            h = torch.cat([self.cls.expand(len(x), -1, -1), h], 1) + torch.cat([self.pos[:, :1], pos], 1)
            return self.head(self.body(h)[:, 0])

    student = ViT().cuda()
    teacher = copy.deepcopy(student).requires_grad_(False)
    opt = torch.optim.AdamW(student.parameters(), lr=5e-4)
    center = torch.zeros(1, 4096, device="cuda")
    for bs in [32, 16, 48]:
        globals_ = [torch.randn(bs, 3, 224, 224, device="cuda") for _ in range(2)]
        locals_ = [torch.randn(bs, 3, 96, 96, device="cuda") for _ in range(6)]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            with torch.no_grad():
                t_out = teacher(torch.cat(globals_)).float()
                t_prob = F.softmax((t_out - center) / 0.04, -1).chunk(2)
            s_out = torch.cat([student(torch.cat(globals_)), student(torch.cat(locals_))]).float()
            s_logp = F.log_softmax(s_out / 0.1, -1).chunk(8)
            loss = sum(-(t * s).sum(-1).mean() for i, t in enumerate(t_prob) for j, s in enumerate(s_logp) if i != j) / 14
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        with torch.no_grad():
            torch._foreach_lerp_(list(teacher.parameters()), list(student.parameters()), 0.004)
            center.mul_(0.9).add_(t_out.mean(0, keepdim=True), alpha=0.1)
        del globals_, locals_, t_out, t_prob, s_out, s_logp, loss


def ddp_accum_train_bf16(torch):
    """DistributedDataParallel on one rank (world size 1, NCCL on the one GPU), as torchrun
    runs a single-GPU job: transformers' GPT-2 (6 layers, d 768, random weights) in DDP with
    its default 25 MB gradient buckets, 2 micro-batches a step, the first under `no_sync()`
    and the second's backward all-reducing the buckets; bf16 autocast, AdamW, 3 steps at
    batch x length 8 x 512, 16 x 256 and 4 x 1,024."""
    import contextlib
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel
    from transformers import GPT2Config, GPT2LMHeadModel
    _init_one_rank(torch)
    try:
        torch.manual_seed(0)
        cfg = GPT2Config(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=6, n_head=12,
                         resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
        model = DistributedDataParallel(GPT2LMHeadModel(cfg).cuda(), device_ids=[0])
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        for bs, n in [(8, 512), (16, 256), (4, 1024)]:
            for micro in range(2):
                ids = torch.randint(0, 50257, (bs, n), device="cuda")
                with model.no_sync() if micro == 0 else contextlib.nullcontext():
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        loss = model(ids, labels=ids).loss / 2
                    loss.backward()
                del ids, loss
            opt.step()
            opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        mark(torch, "after training")
        del model, opt
    finally:
        dist.destroy_process_group()


def optimizer_in_backward_train(torch):
    """The optimizer step fused into the backward pass (PyTorch's tutorial "How to save
    memory by fusing the optimizer step into the backward pass"): a decoder-only transformer
    (_decoder_lm: 6 layers, d 1,024, random weights) with one AdamW per parameter, each
    stepped and its gradient freed by a `register_post_accumulate_grad_hook` as soon as that
    gradient is complete, so that the whole set of gradients is never held at once; bf16
    autocast, 4 steps at batch x length 8 x 1,024, 16 x 512, 4 x 2,048 and 12 x 768."""
    torch.manual_seed(0)
    vocab = 32000
    body, emb, head = _decoder_lm(torch, 1024, 6, vocab)
    params = [p for m in (body, emb, head) for p in m.parameters()]
    opts = {p: torch.optim.AdamW([p], lr=3e-4, foreach=False) for p in params}

    def step(p):
        opts[p].step()
        opts[p].zero_grad(set_to_none=True)

    for p in params:
        p.register_post_accumulate_grad_hook(step)
    for bs, n in [(8, 1024), (16, 512), (4, 2048), (12, 768)]:
        ids, mask, h, loss = _decoder_lm_loss(torch, body, emb, head, vocab, bs, n)
        loss.backward()
        del ids, mask, h, loss


def qlora_nf4_train_bf16(torch):
    """QLoRA written out (what bitsandbytes' 4-bit NF4 with peft's LoRA does): transformers'
    Llama (6 layers, d 2,048, random weights, bf16) whose projections are quantized to
    4-bit NormalFloat on the GPU, two codes a byte and a float absmax per block of 64, and
    dequantized to bf16 in each forward and again in each backward (an autograd function
    that saves only the packed weight); rank-16 LoRA adapters on every projection trained
    with AdamW, gradient checkpointing on as peft's `prepare_model_for_kbit_training` turns
    it on (reentrant, the embeddings' output made to require grad so that the adapters
    inside each checkpointed layer get gradients); 4 steps at batch x length 4 x 1,024,
    8 x 512, 2 x 2,048 and 6 x 768. (Non-reentrant checkpointing, with its early stop on as
    by default, fails in PyTorch 2.11 in the first backward while the allocator's history is
    recorded with Python frames: `SystemError: ... run_backward ... returned NULL without
    setting an exception`; with `set_checkpoint_early_stop(False)` it runs.)"""
    from transformers import LlamaConfig, LlamaForCausalLM
    nn = torch.nn
    torch.manual_seed(0)
    levels = torch.tensor([-1.0, -0.6961928, -0.5250731, -0.3949175, -0.2844414, -0.1847734, -0.0910500, 0.0,
                           0.0795803, 0.1609302, 0.2461123, 0.3379152, 0.4407098, 0.5626170, 0.7229568, 1.0],
                          device="cuda")
    edges = (levels[1:] + levels[:-1]) / 2

    def quantize(w):
        blocks = w.float().reshape(-1, 64)
        absmax = blocks.abs().amax(1, keepdim=True)
        codes = torch.bucketize(blocks / absmax, edges).to(torch.uint8)
        return (codes[:, 0::2] << 4 | codes[:, 1::2]).contiguous(), absmax

    def dequantize(packed, absmax, shape):
        codes = torch.stack([packed >> 4, packed & 15], -1).reshape(len(packed), -1)
        return (levels[codes.long()] * absmax).to(torch.bfloat16).reshape(shape)

    class NF4Matmul(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, packed, absmax, shape):
            ctx.save_for_backward(packed, absmax)
            ctx.shape = shape
            return x @ dequantize(packed, absmax, shape).T

        @staticmethod
        def backward(ctx, g):
            packed, absmax = ctx.saved_tensors
            return g @ dequantize(packed, absmax, ctx.shape), None, None, None

    class QLoRALinear(nn.Module):
        def __init__(self, linear, r=16):
            super().__init__()
            self.shape = tuple(linear.weight.shape)
            packed, absmax = quantize(linear.weight.data.cuda())
            self.register_buffer("packed", packed)
            self.register_buffer("absmax", absmax)
            self.a = nn.Parameter(torch.randn(r, self.shape[1], device="cuda", dtype=torch.bfloat16) * 0.01)
            self.b = nn.Parameter(torch.zeros(self.shape[0], r, device="cuda", dtype=torch.bfloat16))

        def forward(self, x):
            return NF4Matmul.apply(x, self.packed, self.absmax, self.shape) + (x @ self.a.T) @ self.b.T * 2.0

    cfg = LlamaConfig(hidden_size=2048, intermediate_size=5632, num_hidden_layers=6, num_attention_heads=16,
                      num_key_value_heads=16, vocab_size=32000, max_position_embeddings=4096, use_cache=False)
    model = LlamaForCausalLM(cfg).to(torch.bfloat16).requires_grad_(False)
    for layer in model.model.layers:
        for parent, names in ((layer.self_attn, ("q_proj", "k_proj", "v_proj", "o_proj")),
                              (layer.mlp, ("gate_proj", "up_proj", "down_proj"))):
            for name in names:
                setattr(parent, name, QLoRALinear(getattr(parent, name)))
    model.cuda().train()
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": True})
    model.enable_input_require_grads()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=2e-4)
    for bs, n in [(4, 1024), (8, 512), (2, 2048), (6, 768)]:
        ids = torch.randint(0, 32000, (bs, n), device="cuda")
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, loss


def gcn_sparse_full_batch_train(torch):
    """A graph convolutional network (Kipf and Welling) trained full-batch, the normalised
    adjacency a coalesced torch.sparse COO matrix and each propagation a `torch.sparse.mm`:
    3 layers 256 -> 256 -> 256 -> 40 with ReLU and dropout, AdamW, on a random graph of
    200,000 nodes and 2,000,000 edges (made symmetric, with self-loops) for 4 epochs and an
    evaluation under no_grad, then on a second graph of 120,000 nodes and 3,000,000 edges
    for 2 epochs (graphs of a multi-graph dataset, each built on the GPU)."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    layers = nn.ModuleList([nn.Linear(256, 256), nn.Linear(256, 256), nn.Linear(256, 40)]).cuda()
    opt = torch.optim.AdamW(layers.parameters(), lr=1e-2)

    def graph(nodes, edges):
        src = torch.randint(0, nodes, (edges,), device="cuda")
        dst = torch.randint(0, nodes, (edges,), device="cuda")
        loops = torch.arange(nodes, device="cuda")
        idx = torch.stack([torch.cat([src, dst, loops]), torch.cat([dst, src, loops])])
        deg = torch.bincount(idx[0], minlength=nodes).float()
        dinv = deg.rsqrt()
        adj = torch.sparse_coo_tensor(idx, dinv[idx[0]] * dinv[idx[1]], (nodes, nodes),
                                      check_invariants=False).coalesce()
        return adj, torch.randn(nodes, 256, device="cuda"), torch.randint(0, 40, (nodes,), device="cuda")

    def forward(adj, x):
        for i, lin in enumerate(layers):
            x = torch.sparse.mm(adj, lin(x))
            if i < len(layers) - 1:
                x = F.dropout(F.relu(x), 0.5, layers.training)
        return x

    for nodes, edges, epochs in [(200_000, 2_000_000, 4), (120_000, 3_000_000, 2)]:
        adj, x, y = graph(nodes, edges)
        layers.train()
        for _ in range(epochs):
            loss = F.cross_entropy(forward(adj, x), y)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            del loss
        layers.eval()
        with torch.no_grad():
            acc = (forward(adj, x).argmax(1) == y).float().mean()
        del adj, x, y, acc


def sharpness_aware_resnet_train_bf16(torch):
    """Sharpness-aware minimisation (SAM, Foret et al., as the widely used `sam.py` wraps a
    base optimizer): torchvision's ResNet-50 (random weights, channels-last) and SGD with
    momentum; each step a forward and backward, every weight moved up its gradient by
    rho / ||g|| (the moves kept), a second forward and backward at the moved weights, the
    moves undone and SGD stepped with the second gradients; bf16 autocast, 4 steps at 64,
    96, 32 and 128 images of 224 x 224."""
    import torchvision
    F = torch.nn.functional
    torch.manual_seed(0)
    model = torchvision.models.resnet50().cuda().to(memory_format=torch.channels_last).train()
    params = list(model.parameters())
    base = torch.optim.SGD(params, lr=0.1, momentum=0.9)
    rho = 0.05

    def loss_of(x, y):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return F.cross_entropy(model(x), y)

    for bs in [64, 96, 32, 128]:
        x = torch.randn(bs, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
        y = torch.randint(0, 1000, (bs,), device="cuda")
        loss_of(x, y).backward()
        with torch.no_grad():
            norm = torch.stack([p.grad.norm(2) for p in params]).norm(2)
            moves = [p.grad * (rho / (norm + 1e-12)) for p in params]
            torch._foreach_add_(params, moves)
        base.zero_grad(set_to_none=True)
        loss_of(x, y).backward()
        with torch.no_grad():
            torch._foreach_sub_(params, moves)
        base.step()
        base.zero_grad(set_to_none=True)
        del x, y, norm, moves


def llama_chunked_prefill_generate_fp16(torch):
    """Long prompts prefilled in chunks (as vLLM's chunked prefill and transformers'
    `prefill_chunk_size` do) so that no whole-prompt activation is made: transformers' Llama
    (4 layers, d 1,024, 16 query and 4 key-value heads, fp16, random weights) fed each
    prompt 512 tokens at a time into a DynamicCache, logits of the last position only, then
    32 greedy tokens; prompts of batch x length 2 x 3,000, 1 x 6,000 and 4 x 1,800."""
    from transformers import DynamicCache, LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=4, num_attention_heads=16,
                      num_key_value_heads=4, vocab_size=32000, max_position_embeddings=8192)
    model = LlamaForCausalLM(cfg).half().cuda().eval()
    with torch.inference_mode():
        for bs, n in [(2, 3000), (1, 6000), (4, 1800)]:
            ids = torch.randint(0, 32000, (bs, n), device="cuda")
            cache = DynamicCache()
            for i in range(0, n, 512):
                out = model(ids[:, i:i + 512], past_key_values=cache, use_cache=True, logits_to_keep=1)
            tok = out.logits[:, -1:].argmax(-1)
            del out
            for _ in range(32):
                out = model(tok, past_key_values=cache, use_cache=True, logits_to_keep=1)
                tok = out.logits[:, -1:].argmax(-1)
                del out
            del ids, cache, tok


def checkpoint_resume_train_bf16(torch):
    """Training resumed from a checkpoint (`torch.save` / `torch.load`, as a trainer does after
    a preemption): transformers' GPT-2 (8 layers, d 1,024, vocab 32000, random weights)
    trained with AdamW under bf16 autocast for 2 steps, the model's and the optimizer's state
    saved to an in-memory file, both deleted and made again, the checkpoint loaded with
    `map_location="cuda"` (a whole copy of the weights and both Adam moments on the GPU
    beside the new model's) into `load_state_dict`, the loaded dict dropped, then 2 steps
    more; batch x length 8 x 512, 4 x 1,024, 16 x 256 and 6 x 768."""
    import io
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=8, n_embd=1024, n_head=16, vocab_size=32000, n_positions=1024)

    def make():
        model = GPT2LMHeadModel(cfg).cuda().train()
        return model, torch.optim.AdamW(model.parameters(), lr=3e-4)

    def step(model, opt, bs, n):
        ids = torch.randint(0, 32000, (bs, n), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    model, opt = make()
    for bs, n in [(8, 512), (4, 1024)]:
        step(model, opt, bs, n)
    buf = io.BytesIO()
    torch.save({"model": model.state_dict(), "optim": opt.state_dict()}, buf)
    del model, opt
    model, opt = make()
    buf.seek(0)
    ckpt = torch.load(buf, map_location="cuda")
    model.load_state_dict(ckpt["model"])
    opt.load_state_dict(ckpt["optim"])
    del ckpt, buf
    for bs, n in [(16, 256), (6, 768)]:
        step(model, opt, bs, n)


def meta_init_shard_load_generate_bf16(torch):
    """A model made on the meta device and filled shard by shard (what transformers'
    `from_pretrained` and accelerate's loaders do instead of initialising weights that a
    checkpoint overwrites): transformers' Llama (8 layers, d 1,536, bf16) built under
    `torch.device("meta")` and given GPU storage with `to_empty`, then loaded from four
    checkpoint shards in pinned CPU memory (random weights, the state dict's keys cut in
    four in order, as a checkpoint's files hold consecutive layers), each moved to the GPU with
    `non_blocking=True`, loaded with `load_state_dict(strict=False)` and dropped; the rotary
    embedding (a buffer no checkpoint holds) made again; then `generate()` of 32 greedy
    tokens after prompts of batch x length 4 x 512, 1 x 2,048 and 8 x 256 (_generate)."""
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(hidden_size=1536, intermediate_size=4096, num_hidden_layers=8, num_attention_heads=12,
                      num_key_value_heads=4, vocab_size=32000, max_position_embeddings=4096)
    state = LlamaForCausalLM(cfg).to(torch.bfloat16).state_dict()
    names = list(state)
    shards = [{k: state[k].pin_memory() for k in names[i * len(names) // 4:(i + 1) * len(names) // 4]}
              for i in range(4)]
    del state
    with torch.device("meta"):
        model = LlamaForCausalLM(cfg).to(torch.bfloat16)
    model.to_empty(device="cuda")
    for shard in shards:
        on_gpu = {k: v.to("cuda", non_blocking=True) for k, v in shard.items()}
        model.load_state_dict(on_gpu, strict=False)
        del on_gpu
    model.model.rotary_emb = type(model.model.rotary_emb)(cfg).cuda()
    _generate(torch, model.eval(), 32000, [(4, 512, 32), (1, 2048, 32), (8, 256, 32)], pad=0)


def vocoder_varlen_infer_fp16(torch):
    """A neural vocoder turning mel spectrograms of different lengths into waveforms, as a
    text-to-speech server does: HiFi-GAN's generator written out (V1: 80 mel bins to 512
    channels, four transposed-convolution upsamplings by 8, 8, 2 and 2 to 32 channels, each
    followed by three residual blocks of kernel 3, 7 and 11 at dilations 1, 3 and 5, then
    one channel through tanh; random weights, fp16, inference mode); batches of batch x
    frames 16 x 400, 2 x 3,000, 32 x 160 and 8 x 1,000, 256 samples a frame."""
    nn = torch.nn
    torch.manual_seed(0)

    class ResBlock(nn.Module):
        def __init__(self, ch, k):
            super().__init__()
            self.c1 = nn.ModuleList(nn.Conv1d(ch, ch, k, dilation=d, padding=d * (k - 1) // 2) for d in (1, 3, 5))
            self.c2 = nn.ModuleList(nn.Conv1d(ch, ch, k, padding=(k - 1) // 2) for _ in range(3))

        def forward(self, x):
            for a, b in zip(self.c1, self.c2):
                x = x + b(nn.functional.leaky_relu(a(nn.functional.leaky_relu(x, 0.1)), 0.1))
            return x

    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.pre = nn.Conv1d(80, 512, 7, padding=3)
            chans = [512, 256, 128, 64, 32]
            self.ups = nn.ModuleList(nn.ConvTranspose1d(chans[i], chans[i + 1], 2 * r, stride=r, padding=r // 2)
                                     for i, r in enumerate((8, 8, 2, 2)))
            self.res = nn.ModuleList(nn.ModuleList(ResBlock(chans[i + 1], k) for k in (3, 7, 11)) for i in range(4))
            self.post = nn.Conv1d(32, 1, 7, padding=3)

        def forward(self, mel):
            x = self.pre(mel)
            for up, blocks in zip(self.ups, self.res):
                x = up(nn.functional.leaky_relu(x, 0.1))
                x = sum(b(x) for b in blocks) / len(blocks)
            return torch.tanh(self.post(nn.functional.leaky_relu(x)))

    model = Generator().half().cuda().eval()
    with torch.inference_mode():
        for bs, frames in [(16, 400), (2, 3000), (32, 160), (8, 1000)]:
            mel = torch.randn(bs, 80, frames, device="cuda", dtype=torch.float16)
            wav = model(mel)
            assert wav.shape[-1] == frames * 256, wav.shape
            del mel, wav


def kd_llm_logits_train_bf16(torch):
    """A small language model distilled from a larger one on the teacher's full logits (as
    MiniLLM-style and most logit distillation recipes do): transformers' Llama as teacher
    (8 layers, d 1,024, frozen, bf16 weights, `no_grad`) and student (4 layers, d 768,
    AdamW), vocab 32000, under bf16 autocast; the loss is the KL divergence between the
    softened distributions (temperature 2) plus the student's cross entropy, so that both
    models' logits are held at once; 4 steps at batch x length 8 x 512, 4 x 1,024,
    16 x 256 and 6 x 768."""
    from transformers import LlamaConfig, LlamaForCausalLM
    F = torch.nn.functional
    torch.manual_seed(0)

    def llama(d, layers, heads):
        return LlamaConfig(hidden_size=d, intermediate_size=d * 11 // 4, num_hidden_layers=layers,
                           num_attention_heads=heads, num_key_value_heads=heads, vocab_size=32000,
                           max_position_embeddings=2048)

    teacher = LlamaForCausalLM(llama(1024, 8, 16)).to(torch.bfloat16).cuda().eval().requires_grad_(False)
    student = LlamaForCausalLM(llama(768, 4, 12)).cuda().train()
    opt = torch.optim.AdamW(student.parameters(), lr=3e-4)
    temp = 2.0
    for bs, n in [(8, 512), (4, 1024), (16, 256), (6, 768)]:
        ids = torch.randint(0, 32000, (bs, n), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            with torch.no_grad():
                t_logits = teacher(ids).logits
            s_logits = student(ids).logits
            kd = F.kl_div(F.log_softmax(s_logits.float() / temp, -1), F.softmax(t_logits.float() / temp, -1),
                          reduction="batchmean") * temp * temp
            ce = F.cross_entropy(s_logits[:, :-1].flatten(0, 1).float(), ids[:, 1:].flatten())
            loss = kd / n + ce
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, t_logits, s_logits, kd, ce, loss


def pinn_burgers_train(torch):
    """A physics-informed network (PINN) for Burgers' equation, u_t + u u_x = nu u_xx: an MLP
    (5 layers of 256, tanh) from (x, t) to u, its derivatives u_t, u_x and u_xx at the
    collocation points taken with `torch.autograd.grad(create_graph=True)` (second
    derivatives through the first), the equation's residual and the initial and boundary
    conditions as the loss, backpropagated through those graphs; Adam, 4 steps at 20,000,
    50,000, 10,000 and 35,000 collocation points, resampled each step."""
    nn = torch.nn
    torch.manual_seed(0)
    layers = [nn.Linear(2, 256), nn.Tanh()]
    for _ in range(4):
        layers += [nn.Linear(256, 256), nn.Tanh()]
    model = nn.Sequential(*layers, nn.Linear(256, 1)).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    nu = 0.01 / torch.pi
    for n in [20_000, 50_000, 10_000, 35_000]:
        xt = torch.rand(n, 2, device="cuda") * torch.tensor([2.0, 1.0], device="cuda") - torch.tensor([1.0, 0.0], device="cuda")
        xt.requires_grad_(True)
        u = model(xt)
        du = torch.autograd.grad(u.sum(), xt, create_graph=True)[0]
        u_x, u_t = du[:, :1], du[:, 1:]
        u_xx = torch.autograd.grad(u_x.sum(), xt, create_graph=True)[0][:, :1]
        residual = u_t + u * u_x - nu * u_xx
        x0 = torch.rand(n // 10, 1, device="cuda") * 2 - 1
        initial = model(torch.cat([x0, torch.zeros_like(x0)], 1)) + torch.sin(torch.pi * x0)
        tb = torch.rand(n // 10, 1, device="cuda")
        edges = torch.cat([torch.cat([-torch.ones_like(tb), tb], 1), torch.cat([torch.ones_like(tb), tb], 1)])
        loss = residual.pow(2).mean() + initial.pow(2).mean() + model(edges).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del xt, u, du, u_x, u_t, u_xx, residual, x0, initial, tb, edges, loss


def hparam_sweep_sequential_train(torch):
    """A hyperparameter sweep run the way a notebook or an Optuna study runs it, one trial
    after another in one process: a transformer encoder classifier (PyTorch's
    TransformerEncoder, pre-norm, vocab 8,000) built at each trial's width and depth
    (d 512 x 6 layers, 1,024 x 4, 768 x 8, 1,536 x 2), trained with AdamW for 3 steps at
    batch x length 32 x 256 under bf16 autocast and evaluated once at 64 x 256, then
    dropped (`del`, `gc.collect()`, no `empty_cache`), so that each trial's weights, Adam
    moments and activations must come out of the segments the trials before it left
    cached."""
    import gc
    nn = torch.nn
    torch.manual_seed(0)
    for d, depth, lr in [(512, 6, 3e-4), (1024, 4, 1e-4), (768, 8, 2e-4), (1536, 2, 1e-4)]:
        layer = nn.TransformerEncoderLayer(d, d // 64, 4 * d, batch_first=True, norm_first=True)
        body = nn.Sequential(nn.Embedding(8000, d), nn.TransformerEncoder(layer, depth, enable_nested_tensor=False))
        model = nn.ModuleDict({"body": body, "head": nn.Linear(d, 10)}).cuda()
        opt = torch.optim.AdamW(model.parameters(), lr=lr)
        for _ in range(3):
            ids = torch.randint(0, 8000, (32, 256), device="cuda")
            y = torch.randint(0, 10, (32,), device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = nn.functional.cross_entropy(model["head"](model["body"](ids).mean(1)), y)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        model.eval()
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            ids = torch.randint(0, 8000, (64, 256), device="cuda")
            score = model["head"](model["body"](ids).mean(1)).argmax(-1).eq(0).float().mean().item()
        del layer, body, model, opt, ids, y, loss, score
        gc.collect()


def trainer_eval_gather_logits_bf16(torch):
    """Evaluation as transformers' Trainer runs it when `eval_accumulation_steps` is not set:
    a causal LM's logits (GPT-2, 6 layers, d 768, vocab 50,257, random weights, bf16) kept
    on the GPU for the metrics and grown batch by batch with transformers' own
    `nested_concat`, which pads a batch of another length with -100 into a new tensor
    holding everything so far (`torch_pad_and_concatenate`); 10 batches of 4 sequences
    padded to 96 to 320 tokens, labels gathered the same way; then the metric (token
    accuracy) over the gathered logits."""
    from transformers import GPT2Config, GPT2LMHeadModel
    from transformers.trainer_pt_utils import nested_concat
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=6, n_embd=768, n_head=12, vocab_size=50257, n_positions=512)
    model = GPT2LMHeadModel(cfg).to(torch.bfloat16).cuda().eval()
    all_logits = all_labels = None
    for n in [128, 256, 96, 320, 192, 160, 288, 224, 128, 256]:
        ids = torch.randint(0, 50257, (4, n), device="cuda")
        labels = ids.clone()
        labels[:, n * 3 // 4:] = -100
        with torch.no_grad():
            logits = model(ids).logits
        all_logits = logits if all_logits is None else nested_concat(all_logits, logits, padding_index=-100)
        all_labels = labels if all_labels is None else nested_concat(all_labels, labels, padding_index=-100)
        del ids, labels, logits
    preds = all_logits[:, :-1].argmax(-1)
    target = all_labels[:, 1:]
    mask = target != -100
    accuracy = (preds[mask] == target[mask]).float().mean().item()
    del all_logits, all_labels, preds, target, mask, accuracy


def moco_queue_train_bf16(torch):
    """MoCo v2: torchvision's resnet50 (random weights, a 2-layer 128-d projection head) as
    the query encoder trained with SGD, a momentum copy of it as the key encoder (updated
    in place with `torch._foreach_lerp_`, never trained), a queue of 65,536 keys (128 x
    65,536, fp32) overwritten in place at a moving pointer, and the InfoNCE loss over
    logits against the whole queue (batch x 65,537); two views of each image, channels_last
    under bf16 autocast, 4 steps at batch 128 of 224 px."""
    import copy
    import torchvision
    F = torch.nn.functional
    nn = torch.nn
    torch.manual_seed(0)
    cl = torch.channels_last
    q_enc = torchvision.models.resnet50(weights=None, num_classes=2048)
    q_enc.fc = nn.Sequential(nn.Linear(2048, 2048), nn.ReLU(), nn.Linear(2048, 128))
    q_enc = q_enc.cuda().to(memory_format=cl).train()
    k_enc = copy.deepcopy(q_enc).requires_grad_(False)
    opt = torch.optim.SGD(q_enc.parameters(), lr=0.03, momentum=0.9, weight_decay=1e-4)
    queue = F.normalize(torch.randn(128, 65536, device="cuda"), dim=0)
    ptr = 0
    for _ in range(4):
        img = torch.randn(128, 3, 224, 224, device="cuda")
        x_q = (img + 0.1 * torch.randn_like(img)).to(memory_format=cl)
        x_k = img.flip(3).to(memory_format=cl)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            q = F.normalize(q_enc(x_q).float(), dim=1)
            with torch.no_grad():
                torch._foreach_lerp_(list(k_enc.parameters()), list(q_enc.parameters()), 0.001)
                k = F.normalize(k_enc(x_k).float(), dim=1)
            logits = torch.cat([(q * k).sum(1, keepdim=True), q @ queue], dim=1) / 0.2
            loss = F.cross_entropy(logits, torch.zeros(128, dtype=torch.long, device="cuda"))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        queue[:, ptr:ptr + 128] = k.T
        ptr = (ptr + 128) % 65536
        del img, x_q, x_k, q, k, logits, loss


def multiscale_detector_train_bf16(torch):
    """Single-stage detector training with multi-scale inputs, as YOLO's `--multi-scale`
    does: each step draws its image size from 320 to 640 px in steps of 32; torchvision's
    resnet34 (random weights) as the backbone, a feature pyramid over its last three stages
    (256 channels, nearest upsampling) and a shared dense head predicting, at every cell
    of every level, objectness, 80 classes and a box; BCE and L1 losses against random
    targets; SGD with momentum, channels_last under bf16 autocast, 6 steps at batch 16."""
    import random
    import torchvision
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    rng = random.Random(0)
    cl = torch.channels_last

    class Detector(nn.Module):
        def __init__(self):
            super().__init__()
            r = torchvision.models.resnet34(weights=None)
            self.stem = nn.Sequential(r.conv1, r.bn1, r.relu, r.maxpool, r.layer1)
            self.stages = nn.ModuleList([r.layer2, r.layer3, r.layer4])
            self.lateral = nn.ModuleList([nn.Conv2d(c, 256, 1) for c in (128, 256, 512)])
            self.smooth = nn.ModuleList([nn.Conv2d(256, 256, 3, padding=1) for _ in range(3)])
            self.head = nn.Sequential(nn.Conv2d(256, 256, 3, padding=1), nn.SiLU(),
                                      nn.Conv2d(256, 256, 3, padding=1), nn.SiLU(), nn.Conv2d(256, 85, 1))

        def forward(self, x):
            x = self.stem(x)
            feats = []
            for stage in self.stages:
                x = stage(x)
                feats.append(x)
            lat = [l(f) for l, f in zip(self.lateral, feats)]
            for i in (1, 0):
                lat[i] = lat[i] + F.interpolate(lat[i + 1], size=lat[i].shape[-2:], mode="nearest")
            return [self.head(s(p)) for s, p in zip(self.smooth, lat)]

    model = Detector().cuda().to(memory_format=cl).train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.937, nesterov=True)
    for _ in range(6):
        px = rng.randrange(320, 641, 32)
        x = torch.randn(16, 3, px, px, device="cuda").to(memory_format=cl)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            outs = model(x)
            loss = 0
            for o in outs:
                o = o.float()
                obj = (torch.rand_like(o[:, :1]) < 0.02).float()
                cls = torch.randint(0, 80, o[:, 0].shape, device="cuda")
                loss = loss + F.binary_cross_entropy_with_logits(o[:, :1], obj)
                loss = loss + (F.cross_entropy(o[:, 1:81], cls, reduction="none") * obj[:, 0]).mean()
                loss = loss + ((o[:, 81:].sigmoid() - torch.rand_like(o[:, 81:])).abs() * obj).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, outs, loss, o, obj, cls


def llama_hidden_states_probe_bf16(torch):
    """Representation extraction for linear probes, as interpretability and evaluation
    code does it: transformers' Llama (8 layers, d 1,024, vocab 32,000, random weights,
    bf16) run under `torch.inference_mode` with `output_hidden_states=True`, so that all
    nine hidden-state tensors of a batch are held at once, each mean-pooled over its
    right-padded batch's attention mask; 6 batches (8 x 512, 16 x 128, 4 x 1,024,
    12 x 256, 8 x 384, 2 x 2,048 tokens, each row of its own length); then a linear probe
    for each layer trained on the GPU over the pooled features (AdamW, 50 full-batch
    steps each, 4 classes)."""
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=8, num_attention_heads=16,
                      num_key_value_heads=16, vocab_size=32000, max_position_embeddings=2048, pad_token_id=0)
    model = LlamaForCausalLM(cfg).to(torch.bfloat16).cuda().eval()
    pooled = [[] for _ in range(cfg.num_hidden_layers + 1)]
    with torch.inference_mode():
        for bs, n in [(8, 512), (16, 128), (4, 1024), (12, 256), (8, 384), (2, 2048)]:
            lengths = torch.randint(n // 4, n + 1, (bs,), device="cuda")
            mask = (torch.arange(n, device="cuda")[None, :] < lengths[:, None]).long()
            ids = torch.randint(1, 32000, (bs, n), device="cuda") * mask
            out = model.model(input_ids=ids, attention_mask=mask, output_hidden_states=True)
            w = mask.unsqueeze(-1).to(torch.bfloat16)
            for i, h in enumerate(out.hidden_states):
                pooled[i].append(((h * w).sum(1) / w.sum(1)).float())
            del lengths, mask, ids, out, w, h
    labels = torch.randint(0, 4, (sum(p.shape[0] for p in pooled[0]),), device="cuda")
    for feats in pooled:
        x = torch.cat(feats)
        probe = torch.nn.Linear(x.shape[1], 4).cuda()
        opt = torch.optim.AdamW(probe.parameters(), lr=1e-2)
        for _ in range(50):
            loss = torch.nn.functional.cross_entropy(probe(x), labels)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        del x, probe, opt, loss
    del pooled, labels


def llama_generate_scores_bf16(torch):
    """Batched sampling that keeps what it saw, as evaluation harnesses and RL rollouts do:
    transformers' Llama (6 layers, d 1,024, vocab 32,000, random weights, bf16), prompts of
    their own lengths left-padded into a batch (attention mask), `generate` with top-k
    sampling and `return_dict_in_generate=True, output_scores=True, output_logits=True`, so
    that every step's raw and processed logits (batch x 32,000, fp32) are held until it
    ends; then each generated token's log-probability (`compute_transition_scores`). Three
    batches: 8 prompts of 20 to 300 tokens with 96 new tokens, 16 of 10 to 120 with 64,
    4 of 200 to 600 with 200."""
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=6, num_attention_heads=16,
                      num_key_value_heads=16, vocab_size=32000, max_position_embeddings=2048,
                      pad_token_id=0, bos_token_id=1, eos_token_id=2)
    model = LlamaForCausalLM(cfg).to(torch.bfloat16).cuda().eval()
    for bs, lo, hi, new in [(8, 20, 300, 96), (16, 10, 120, 64), (4, 200, 600, 200)]:
        lengths = torch.randint(lo, hi + 1, (bs,)).tolist()
        n = max(lengths)
        ids = torch.zeros(bs, n, dtype=torch.long, device="cuda")
        mask = torch.zeros(bs, n, dtype=torch.long, device="cuda")
        for r, k in enumerate(lengths):
            ids[r, n - k:] = torch.randint(3, 32000, (k,), device="cuda")
            mask[r, n - k:] = 1
        with torch.no_grad():
            out = model.generate(input_ids=ids, attention_mask=mask, do_sample=True, top_k=50,
                                 max_new_tokens=new, min_new_tokens=new, return_dict_in_generate=True,
                                 output_scores=True, output_logits=True)
            logp = model.compute_transition_scores(out.sequences, out.scores, normalize_logits=True)
            total = logp.sum().item()
        del ids, mask, out, logp, total


def oom_batch_halving_train_bf16(torch):
    """accelerate's `find_executable_batch_size` (what the Trainer's
    `auto_find_batch_size` uses) finding a batch size that fits, the way a practitioner
    meets device out-of-memory errors: GPT-2 (6 layers, d 768, vocab 50,257, random
    weights) trained on 1,024-token sequences under bf16 autocast with AdamW, the first
    try at the smallest power of two above twice the device's memory in GB (256 on an
    80 GB card, 512 on the H200's 150 GB), well past what fits. Each torch.OutOfMemoryError at the device's own
    limit (no cap) is caught, the cache emptied (gc.collect() and
    torch.cuda.empty_cache(): accelerate's `clear_device_cache`) and the batch size
    reduced by accelerate's rule; then 3 steps at the first size that fits. The sizes
    tried go to stderr."""
    import math
    from accelerate.utils import find_executable_batch_size
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(n_layer=6, n_embd=768, n_head=12, n_positions=1024)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    start = 1 << math.ceil(math.log2(2 * torch.cuda.get_device_properties(0).total_memory / 1e9))
    tried = []

    @find_executable_batch_size(starting_batch_size=start)
    def train(batch_size):
        tried.append(batch_size)
        g = torch.Generator(device="cuda").manual_seed(batch_size)
        for _ in range(3):
            ids = torch.randint(0, 50257, (batch_size, 1024), device="cuda", generator=g)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(input_ids=ids, labels=ids).loss
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        return batch_size

    fits = train()
    print(f"oom_batch_halving_train_bf16: batch sizes tried {tried}, {fits} fits", file=sys.stderr)


def oom_split_batch_serve_fp16(torch):
    """An embedding server that splits a batch in two when it runs out of device memory,
    as OOM-safe batching helpers do: transformers' BERT (6 layers, d 768, 12 heads,
    vocab 30,522, random weights, fp16) with eager attention, so that each layer holds
    its batch's attention scores (batch x 12 x length x length), under
    `torch.inference_mode`. A queue of texts of 128 to 512 tokens, sorted longest first,
    goes in three batches of as many texts as the device has GB x 200, rounded up to a
    power of two (32,768 on the H200 and on an 80 GB card), each padded to its longest
    text: at first too big for the device. A batch that raises torch.OutOfMemoryError at
    the device's own limit (no cap) is split in half and each half encoded the same way,
    without `empty_cache` (what PyTorch's retry path released before raising is all that
    goes back to the driver; the failed try's blocks go back to the cache when the
    exception is dropped); each encoded batch's embeddings are mean-pooled over the mask,
    normalised and copied to the host. The batch sizes encoded go to stderr."""
    import math
    from transformers import BertConfig, BertModel
    torch.manual_seed(0)
    cfg = BertConfig(hidden_size=768, num_hidden_layers=6, num_attention_heads=12, intermediate_size=3072)
    model = BertModel._from_config(cfg, attn_implementation="eager").cuda().half().eval()
    per = 1 << math.ceil(math.log2(200 * torch.cuda.get_device_properties(0).total_memory / 1e9))
    g = torch.Generator().manual_seed(5)
    lengths = sorted(torch.randint(128, 513, (3 * per,), generator=g).tolist(), reverse=True)
    encoded, failed, out = [], [], []

    def encode(b):
        n = b[0]
        ids = torch.randint(1000, 30000, (len(b), n), device="cuda")
        mask = (torch.arange(n, device="cuda")[None] < torch.tensor(b, device="cuda")[:, None]).long()
        hidden = model(input_ids=ids, attention_mask=mask).last_hidden_state
        emb = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
        return torch.nn.functional.normalize(emb.float(), dim=-1).cpu()

    def serve(b):
        try:
            out.append(encode(b))
            encoded.append(len(b))
            return
        except torch.OutOfMemoryError:
            failed.append(len(b))
        half = len(b) // 2
        serve(b[:half])
        serve(b[half:])

    with torch.inference_mode():
        for i in range(3):
            serve(lengths[i * per:(i + 1) * per])
    print(f"oom_split_batch_serve_fp16: {per} texts a batch; OOM at {failed}; encoded {encoded}",
          file=sys.stderr)


def resnet_cudnn_benchmark_train_bf16(torch):
    """Multi-scale image classification as most vision training scripts run it, with
    `torch.backends.cudnn.benchmark = True`: cuDNN times its convolution algorithms for
    each new input shape, PyTorch allocating through the caching allocator the largest
    workspace any of them needs (up to the largest block the allocator or the driver can
    give) and emptying the cache after each benchmark. torchvision's resnet50 (random
    weights) in channels_last under bf16 autocast, SGD with momentum and weight decay,
    3 steps at 64×224, 48×256 and 64×224 px (the last a shape already benchmarked)."""
    import torchvision
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    model = torchvision.models.resnet50(num_classes=1000).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    for bs, px in [(64, 224), (48, 256), (64, 224)]:
        x = torch.randn(bs, 3, px, px, device="cuda").to(memory_format=torch.channels_last)
        y = torch.randint(0, 1000, (bs,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y, loss


def bit_stdconv_cudnn_benchmark_train_bf16(torch):
    """Transfer-learning-style training of timm's Big Transfer ResNetV2 (resnetv2_50x1_bit,
    random weights, 100 classes), whose weight-standardised convolutions (timm's
    StdConv2d) call torch.nn.functional.conv2d themselves, under
    `torch.backends.cudnn.benchmark = True` (cuDNN times its algorithms for each new input
    shape and PyTorch empties the cache after each benchmark, inside timm's call);
    channels_last, bf16 autocast, SGD with momentum, 3 steps at 32×224, 48×192 and 32×224
    px (the last a shape already benchmarked)."""
    import timm
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    model = timm.create_model("resnetv2_50x1_bit", pretrained=False, num_classes=100)
    model = model.cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for bs, px in [(32, 224), (48, 192), (32, 224)]:
        x = torch.randn(bs, 3, px, px, device="cuda").to(memory_format=torch.channels_last)
        y = torch.randint(0, 100, (bs,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y, loss


def compile_cold_train_bf16(torch):
    """torch.compile (default mode) training recorded from a cold start, as a practitioner
    records the first steps of a job: every run compiles from an empty compile cache
    (COLD), so the snapshot holds what Inductor allocates while it compiles and
    benchmarks its kernels' configurations (clones of the arguments a kernel mutates, the
    buffer it flushes the L2 cache with) beside the program's own tensors. A GPT-style
    decoder written out (6 blocks, d 768, 12 heads, vocabulary 32,000, SDPA causal
    attention, tied embedding), bf16 autocast, AdamW, 4 steps at batch x length 8x512,
    8x384, 8x512 and 4x1024: a new shape compiles again (torch.compile's automatic
    dynamic shapes decide with which graph)."""
    torch.manual_seed(0)
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self, d, h):
            super().__init__()
            self.h, self.ln1, self.ln2 = h, nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            b, n, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).view(b, n, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(b, n, d))
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class Decoder(nn.Module):
        def __init__(self, vocab=32000, d=768, h=12, layers=6):
            super().__init__()
            self.emb, self.pos = nn.Embedding(vocab, d), nn.Embedding(1024, d)
            self.blocks = nn.ModuleList(Block(d, h) for _ in range(layers))
            self.ln = nn.LayerNorm(d)

        def forward(self, ids, targets):
            x = self.emb(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
            for blk in self.blocks:
                x = blk(x)
            logits = self.ln(x) @ self.emb.weight.t()
            return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.view(-1))

    model = Decoder().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    step = torch.compile(model)
    for bs, n in [(8, 512), (8, 384), (8, 512), (4, 1024)]:
        ids = torch.randint(0, 32000, (bs, n), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = step(ids, ids.roll(-1, 1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, loss


def flex_attention_docmask_train_bf16(torch):
    """Packed-document pretraining with FlexAttention, as recent LLM training code does it:
    each row of the batch packs documents of random lengths, and attention is causal within
    a document only, through a BlockMask built for each batch (create_block_mask over the
    row's document ids) and torch.compile'd flex_attention (its own fused kernels, no S x S
    scores). A decoder written out in bf16 (4 blocks, d 512, 8 heads, vocabulary 16,000),
    AdamW, 4 steps at batch x length 4x4096 (three batches of other documents) and then
    8x2048 (flex_attention compiles again for the new shape). Compiled on a warm cache."""
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    torch.manual_seed(0)
    nn, F = torch.nn, torch.nn.functional
    flex = torch.compile(flex_attention, dynamic=False)

    class Block(nn.Module):
        def __init__(self, d, h):
            super().__init__()
            self.h, self.ln1, self.ln2 = h, nn.RMSNorm(d), nn.RMSNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d, bias=False)
            self.up, self.down = nn.Linear(d, 4 * d, bias=False), nn.Linear(4 * d, d, bias=False)

        def forward(self, x, block_mask):
            b, n, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).view(b, n, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
            a = flex(q, k, v, block_mask=block_mask)
            x = x + self.proj(a.transpose(1, 2).reshape(b, n, d))
            return x + self.down(F.silu(self.up(self.ln2(x))))

    d, vocab = 512, 16000
    emb = nn.Embedding(vocab, d).cuda().to(torch.bfloat16)
    blocks = nn.ModuleList(Block(d, 8) for _ in range(4)).cuda().to(torch.bfloat16)
    head = nn.Linear(d, vocab, bias=False).cuda().to(torch.bfloat16)
    params = list(emb.parameters()) + list(blocks.parameters()) + list(head.parameters())
    opt = torch.optim.AdamW(params, lr=3e-4)
    g = torch.Generator().manual_seed(0)
    for bs, n in [(4, 4096)] * 3 + [(8, 2048)]:
        doc = torch.empty(bs, n, dtype=torch.int32)
        for r in range(bs):
            lens = torch.randint(64, n // 2, (n // 64,), generator=g).cumsum(0)
            doc[r] = torch.bucketize(torch.arange(n), lens[lens < n], right=True).to(torch.int32)
        doc = doc.cuda()

        def same_doc_causal(b, h, q, kv):
            return (doc[b, q] == doc[b, kv]) & (q >= kv)

        block_mask = create_block_mask(same_doc_causal, bs, None, n, n, device="cuda")
        ids = torch.randint(0, vocab, (bs, n), device="cuda")
        x = emb(ids)
        for blk in blocks:
            x = blk(x, block_mask)
        loss = F.cross_entropy(head(x).float().view(-1, vocab), ids.roll(-1, 1).view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del doc, block_mask, ids, x, loss


def triton_autotune_rmsnorm_train_bf16(torch):
    """Training with a hand-written Triton kernel tuned by @triton.autotune, as Liger-style
    fused-kernel libraries do: RMSNorm's forward is a Triton kernel whose launch width is
    tuned for each new row width (key n_cols), Triton's benchmark allocating through
    PyTorch's caching allocator (the buffer it flushes the L2 cache with, each
    configuration) on the first call of each width; its backward is PyTorch's. A
    LLaMA-style MLP stack in bf16 (6 blocks at d 2048, SwiGLU 5,632, the norm of the
    head's input at d 2048 and of a 1,536-wide adapter's output), AdamW, 4 steps at
    batch x length 8x512, 4x1536, 8x512 and 16x256."""
    import triton
    import triton.language as tl
    torch.manual_seed(0)
    nn, F = torch.nn, torch.nn.functional

    @triton.autotune(configs=[triton.Config({}, num_warps=w) for w in (2, 4, 8, 16)], key=["n_cols"])
    @triton.jit
    def rmsnorm_fwd(X, W, Y, Rstd, stride, n_cols, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
        w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(Y + row * stride + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=mask)
        tl.store(Rstd + row, rstd)

    class TritonRMSNorm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, eps):
            x2 = x.reshape(-1, x.shape[-1])
            y = torch.empty_like(x2)
            rstd = torch.empty(x2.shape[0], dtype=torch.float32, device=x.device)
            rmsnorm_fwd[(x2.shape[0],)](x2, w, y, rstd, x2.stride(0), x2.shape[1], eps,
                                        BLOCK=triton.next_power_of_2(x2.shape[1]))
            ctx.save_for_backward(x2, w, rstd)
            ctx.shape = x.shape
            return y.view_as(x)

        @staticmethod
        def backward(ctx, gy):
            x, w, rstd = ctx.saved_tensors
            gy = gy.reshape(-1, x.shape[-1]).float()
            xhat = x.float() * rstd[:, None]
            gw = (gy * xhat).sum(0)
            gxhat = gy * w.float()
            gx = rstd[:, None] * (gxhat - xhat * (gxhat * xhat).mean(-1, keepdim=True))
            return gx.to(x.dtype).view(ctx.shape), gw.to(w.dtype), None

    class Norm(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(d))

        def forward(self, x):
            return TritonRMSNorm.apply(x, self.weight, 1e-6)

    class Block(nn.Module):
        def __init__(self, d, f):
            super().__init__()
            self.norm = Norm(d)
            self.gate, self.up = nn.Linear(d, f, bias=False), nn.Linear(d, f, bias=False)
            self.down = nn.Linear(f, d, bias=False)

        def forward(self, x):
            h = self.norm(x)
            return x + self.down(F.silu(self.gate(h)) * self.up(h))

    d, vocab = 2048, 32000
    emb = nn.Embedding(vocab, d)
    blocks = nn.ModuleList(Block(d, 5632) for _ in range(6))
    adapter, adapter_norm = nn.Linear(d, 1536, bias=False), Norm(1536)
    back, norm, head = nn.Linear(1536, d, bias=False), Norm(d), nn.Linear(d, vocab, bias=False)
    model = nn.ModuleList([emb, blocks, adapter, adapter_norm, back, norm, head]).cuda().to(torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for bs, n in [(8, 512), (4, 1536), (8, 512), (16, 256)]:
        ids = torch.randint(0, vocab, (bs, n), device="cuda")
        x = emb(ids)
        for blk in blocks:
            x = blk(x)
        x = x + back(adapter_norm(adapter(x)))
        loss = F.cross_entropy(head(norm(x)).float().view(-1, vocab), ids.roll(-1, 1).view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, x, loss


def oom_fragmented_cache_serve_fp16(torch):
    """A chat server that keeps each session's KV cache on the device while the session
    lasts, and dies of fragmentation when a batch of long documents arrives:
    transformers' GPT-2 (12 layers, d 768, 12 heads, 8,192 positions, random weights,
    fp16, SDPA attention) under `torch.inference_mode`, each session's cache a
    DynamicCache (a key and a value a layer, 6.3 to 9.4 MB each, which PyTorch carves
    from the cached segments of the prefills' MLP activations, 26 to 36 MiB each). Sessions of 4,096 to 6,144 prompt tokens
    arrive one after another and are prefilled (`logits_to_keep=1`) until their caches
    reach 80 % of the device memory free at the start (as a server admits sessions up to
    a memory budget); then every session decodes one token in turn (its cache grows by
    `torch.cat`: each key and value a new block, the old one freed); then half of them,
    chosen at random, end and their caches are dropped, and a batch of 4,096-token
    documents is scored without a cache, its logits (fp16, vocabulary 50,257) one block
    of 38 % of that free memory. The sizes follow from the free memory at the start
    alone, not from the allocator's settings, so that every setting makes the same
    requests up to the logits. The memory the ended sessions leave lies in segments that
    live caches still hold; under PyTorch's defaults the logits raise
    torch.OutOfMemoryError at the device's own limit, which the program does not catch.
    What happened goes to stderr."""
    import random
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=12, n_embd=768, n_head=12, n_positions=8192)
    model = GPT2LMHeadModel._from_config(cfg, attn_implementation="sdpa").cuda().half().eval()
    free0, _ = torch.cuda.mem_get_info()
    rng = random.Random(7)
    per_token = cfg.n_layer * 2 * cfg.n_embd * 2  # a session's cache: a key and a value a layer, fp16
    lengths, planned = [], 0
    while planned < 0.8 * free0:
        lengths.append(rng.randint(4096, 6144))
        planned += lengths[-1] * per_token
    ended = rng.sample(range(len(lengths)), len(lengths) // 2)
    docs, length = max(1, round(0.38 * free0 / (4096 * cfg.vocab_size * 2))), 4096
    print(f"oom_fragmented_cache_serve_fp16: {len(lengths)} sessions, {planned / 2**30:.2f} GiB of caches, "
          f"{len(ended)} end; then {docs} documents of {length} tokens", file=sys.stderr, flush=True)
    caches = {}
    with torch.inference_mode():
        for i, n in enumerate(lengths):
            ids = torch.randint(0, cfg.vocab_size, (1, n), device="cuda")
            caches[i] = model(input_ids=ids, use_cache=True, logits_to_keep=1).past_key_values
        for i in range(len(lengths)):
            ids = torch.randint(0, cfg.vocab_size, (1, 1), device="cuda")
            model(input_ids=ids, past_key_values=caches[i], use_cache=True, logits_to_keep=1)
        for i in ended:
            del caches[i]
        ids = torch.randint(0, cfg.vocab_size, (docs, length), device="cuda")
        logits = model(input_ids=ids, use_cache=False).logits
        print(f"oom_fragmented_cache_serve_fp16: the documents scored ({logits.shape[0]} x {logits.shape[1]} logits)",
              file=sys.stderr, flush=True)


# ---- six more kinds for issue 28 (2026-12-06, evening): CUDA graph trees in training,
# grouped GEMM experts, concurrent streams, compressed saved activations, a Shampoo
# optimizer's eigendecompositions, an offloaded KV cache.

def compile_reduce_overhead_train_bf16(torch):
    """torch.compile(mode="reduce-overhead") training, as a practitioner turns on CUDA
    graphs to cut launch overhead: CUDA graph trees warm up, then record the compiled
    forward and backward graphs into their private memory pool and replay them, one graph
    pair for each shape. Two pre-norm transformer blocks and a head (d 512, 8 heads,
    2,000 classes), bf16 autocast around the compiled call, AdamW (foreach) outside the
    graphs, 4 steps at batch x length 16x256, then 4 at 8x512 (a new shape: compiled and
    recorded again). Compiled on a warm cache."""
    torch.manual_seed(0)
    nn, F = torch.nn, torch.nn.functional
    model = nn.Sequential(_block(torch, 512, 8), _block(torch, 512, 8), nn.Linear(512, 2000)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    step = torch.compile(model, mode="reduce-overhead")
    for bs, n in [(16, 256)] * 4 + [(8, 512)] * 4:
        torch.compiler.cudagraph_mark_step_begin()
        x = torch.randn(bs, n, 512, device="cuda")
        target = torch.randint(0, 2000, (bs * n,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = step(x)
        loss = F.cross_entropy(out.float().reshape(-1, 2000), target)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, target, out, loss
    mark(torch, "after training")


def grouped_mm_moe_train_bf16(torch):
    """Mixture-of-experts training with grouped GEMMs, as torchtitan-style MoE code runs its
    experts: each layer's router picks 2 of 16 experts a token, the tokens are sorted by
    expert and every expert's SwiGLU MLP runs in one torch._grouped_mm call over the
    sorted tokens (offsets from the router's counts, so the groups' sizes are the data's),
    the outputs weighted and scattered back by index_add_. 4 pre-norm layers (d 1,024,
    8 heads, experts' hidden 1,536), parameters in bf16, AdamW, 4 steps at batch x length
    8x512, 4x1024, 16x256 and 8x512."""
    torch.manual_seed(0)
    nn, F = torch.nn, torch.nn.functional
    E, k, d, f = 16, 2, 1024, 1536

    class MoE(nn.Module):
        def __init__(self):
            super().__init__()
            self.router = nn.Linear(d, E, bias=False)
            self.w_gate = nn.Parameter(torch.randn(E, d, f) * d ** -0.5)
            self.w_up = nn.Parameter(torch.randn(E, d, f) * d ** -0.5)
            self.w_down = nn.Parameter(torch.randn(E, f, d) * f ** -0.5)

        def forward(self, x):
            t = x.reshape(-1, d)
            weight, expert = self.router(t).float().softmax(-1).topk(k, dim=-1)
            order = expert.reshape(-1).argsort(stable=True)
            offs = torch.bincount(expert.reshape(-1), minlength=E).cumsum(0).to(torch.int32)
            token = order // k
            xs = t[token]
            h = F.silu(torch._grouped_mm(xs, self.w_gate, offs=offs)) * torch._grouped_mm(xs, self.w_up, offs=offs)
            y = torch._grouped_mm(h, self.w_down, offs=offs) * weight.reshape(-1)[order, None].to(x.dtype)
            return torch.zeros_like(t).index_add_(0, token, y).view_as(x)

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.RMSNorm(d), nn.RMSNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d, bias=False)
            self.moe = MoE()

        def forward(self, x):
            b, n, _ = x.shape
            q, kk, v = self.qkv(self.ln1(x)).view(b, n, 3, 8, d // 8).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, kk, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(b, n, d))
            return x + self.moe(self.ln2(x))

    vocab = 16000
    emb, head = nn.Embedding(vocab, d), nn.Linear(d, vocab, bias=False)
    layers = nn.ModuleList(Layer() for _ in range(4))
    model = nn.ModuleList([emb, layers, head]).cuda().to(torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for bs, n in [(8, 512), (4, 1024), (16, 256), (8, 512)]:
        ids = torch.randint(0, vocab, (bs, n), device="cuda")
        x = emb(ids)
        for layer in layers:
            x = layer(x)
        loss = F.cross_entropy(head(x).float().view(-1, vocab), ids.roll(-1, 1).view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, x, loss


def two_stream_towers_infer_fp16(torch):
    """Two-tower retrieval scoring with the towers on two CUDA streams at once, as serving
    code overlaps independent branches: each batch's queries go through the query tower on
    one side stream while its candidate documents go through the document tower on
    another; the default stream waits for both (wait_stream), takes the towers' outputs
    over (record_stream) and scores and ranks them; the inputs, made on the default
    stream, are marked in use by the side streams. fp16 MLP towers (768 and 1,024 in,
    2 hidden layers of 2,048, 512 out), torch.inference_mode, 6 batches of 32 to 256
    queries against 2,048 to 16,384 documents: blocks of three streams, freed across
    streams."""
    torch.manual_seed(0)
    nn, F = torch.nn, torch.nn.functional

    def tower(d_in):
        return nn.Sequential(nn.Linear(d_in, 2048), nn.GELU(), nn.Linear(2048, 2048), nn.GELU(),
                             nn.Linear(2048, 512)).cuda().half().eval()

    q_tower, d_tower = tower(768), tower(1024)
    main, sq, sd = torch.cuda.current_stream(), torch.cuda.Stream(), torch.cuda.Stream()
    ranked = []
    with torch.inference_mode():
        for nq, nd in [(64, 4096), (128, 8192), (32, 2048), (256, 16384), (96, 6144), (64, 4096)]:
            q_in = torch.randn(nq, 768, device="cuda", dtype=torch.half)
            d_in = torch.randn(nd, 1024, device="cuda", dtype=torch.half)
            sq.wait_stream(main)
            sd.wait_stream(main)
            with torch.cuda.stream(sq):
                q = F.normalize(q_tower(q_in), dim=-1)
            with torch.cuda.stream(sd):
                docs = F.normalize(d_tower(d_in), dim=-1)
            q_in.record_stream(sq)
            d_in.record_stream(sd)
            main.wait_stream(sq)
            main.wait_stream(sd)
            q.record_stream(main)
            docs.record_stream(main)
            scores = q @ docs.t()
            ranked.append(scores.topk(10, dim=-1).indices)
            del q_in, d_in, q, docs, scores
    torch.cuda.synchronize()


def fp8_saved_activations_train_bf16(torch):
    """Training with its saved activations compressed to float8, as activation-compression
    recipes do to fit longer sequences: torch.autograd.graph.saved_tensors_hooks pack every
    floating-point tensor autograd saves that an op made (not a leaf) and that has 65,536
    elements or more into float8_e4m3fn with a per-tensor scale (its absolute maximum over
    448), and unpack it to its own dtype in backward; smaller ones and leaves are saved as
    they are. 6 pre-norm transformer blocks (d 1,024, 16 heads) and a 16,000-word head,
    bf16 autocast, AdamW, 3 steps at batch x length 8x1024, 4x2048 and 16x512."""
    torch.manual_seed(0)
    nn, F = torch.nn, torch.nn.functional

    def pack(t):
        if t.is_floating_point() and t.grad_fn is not None and t.numel() >= 65536:
            scale = t.detach().abs().amax().float().clamp(min=1e-12) / 448.0
            return (t.detach() / scale).to(torch.float8_e4m3fn), scale, t.dtype
        return t

    def unpack(p):
        if isinstance(p, tuple):
            q, scale, dtype = p
            return (q.float() * scale).to(dtype)
        return p

    vocab = 16000
    emb = nn.Embedding(vocab, 1024).cuda()
    blocks = nn.ModuleList(_block(torch, 1024, 16) for _ in range(6)).cuda()
    head = nn.Linear(1024, vocab).cuda()
    params = list(emb.parameters()) + list(blocks.parameters()) + list(head.parameters())
    opt = torch.optim.AdamW(params, lr=1e-4)
    for bs, n in [(8, 1024), (4, 2048), (16, 512)]:
        ids = torch.randint(0, vocab, (bs, n), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16), torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            x = emb(ids)
            for blk in blocks:
                x = blk(x)
            logits = head(x)
        loss = F.cross_entropy(logits.float().view(-1, vocab), ids.roll(-1, 1).view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, x, logits, loss


def shampoo_eigh_train(torch):
    """Training with a Shampoo-style preconditioned optimizer, the kind second-order
    optimizers (Shampoo, SOAP) run: for every weight matrix G (m x n) it keeps the float32
    statistics L (m x m) and R (n x n), accumulating G G^T and G^T G each step, and every
    second step recomputes the preconditioners L^-1/4 and R^-1/4 by torch.linalg.eigh
    (cuSOLVER's workspaces through PyTorch's allocator); the update is L^-1/4 G R^-1/4
    scaled to the gradient's norm; biases take plain SGD. An MLP of 4 layers (1,024 in,
    hidden 2,048 and 1,536, 1,000 classes) trained for 6 steps at batches of 512, 1,024,
    256, 2,048, 512 and 1,024."""
    torch.manual_seed(0)
    nn, F = torch.nn, torch.nn.functional
    model = nn.Sequential(nn.Linear(1024, 2048), nn.GELU(), nn.Linear(2048, 2048), nn.GELU(),
                          nn.Linear(2048, 1536), nn.GELU(), nn.Linear(1536, 1000)).cuda()
    mats = [p for p in model.parameters() if p.dim() == 2]
    stats = {p: [torch.zeros(p.shape[0], p.shape[0], device="cuda"), torch.zeros(p.shape[1], p.shape[1], device="cuda")]
             for p in mats}
    precond = {}

    def inv_root(a):
        evals, evecs = torch.linalg.eigh(a + 1e-6 * torch.eye(a.shape[0], device="cuda"))
        return evecs @ torch.diag(evals.clamp(min=1e-6) ** -0.25) @ evecs.t()

    for i, bs in enumerate([512, 1024, 256, 2048, 512, 1024]):
        x = torch.randn(bs, 1024, device="cuda")
        y = torch.randint(0, 1000, (bs,), device="cuda")
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                g = p.grad
                if p.dim() != 2:
                    p.add_(g, alpha=-0.01)
                    continue
                left, right = stats[p]
                left.mul_(0.95).add_(g @ g.t())
                right.mul_(0.95).add_(g.t() @ g)
                if i % 2 == 0:
                    precond[p] = (inv_root(left), inv_root(right))
                pl, pr = precond[p]
                update = pl @ g @ pr
                p.add_(update, alpha=-0.01 * float(g.norm() / update.norm().clamp(min=1e-12)))
        model.zero_grad(set_to_none=True)
        del x, y, loss


def offloaded_cache_generate_fp16(torch):
    """Long-context generation with transformers' offloaded KV cache
    (generate(cache_implementation="offloaded")), as serving code does to fit a cache
    larger than the device: every layer's keys and values live in host memory but for the
    layer being computed and the next, which the cache prefetches on a side stream of its
    own while the current one runs. A LLaMA-style decoder (transformers' LlamaConfig,
    12 layers, d 1,024, 16 heads, random weights, fp16), greedy, 3 batches (2 prompts of
    1,536 tokens, 4 of 768, 1 of 3,072), 128 new tokens each."""
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=12, num_attention_heads=16,
                      num_key_value_heads=16, vocab_size=32000, max_position_embeddings=4096)
    model = LlamaForCausalLM._from_config(cfg, attn_implementation="sdpa", torch_dtype=torch.float16).cuda().eval()
    for bs, n in [(2, 1536), (4, 768), (1, 3072)]:
        ids = torch.randint(3, cfg.vocab_size, (bs, n), device="cuda")
        with torch.no_grad():
            out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=128, min_new_tokens=128,
                                 do_sample=False, cache_implementation="offloaded", pad_token_id=0)
        del ids, out


# ---- four more kinds for issue 28 (2026-12-06, evening): FFT layers, a quasi-Newton
# optimizer, augmentation on the GPU, Mixture-of-Depths routing.

def fno_fft_train(torch):
    """A Fourier neural operator trained on 2-D fields, as PDE-surrogate code does: each of
    4 spectral layers takes torch.fft.rfft2 of its input, multiplies the lowest 16 x 16
    modes (both signs of the first frequency) by complex64 weights (torch.einsum over the
    channels), returns by torch.fft.irfft2 and adds a 1x1 convolution of its input;
    cuFFT's plans are cached per shape and their work areas come from PyTorch's allocator.
    32 channels, AdamW on the complex weights too, 5 steps at batch x resolution 16x128,
    8x256, 32x64, 8x256 and 4x384."""
    torch.manual_seed(0)
    nn, F = torch.nn, torch.nn.functional
    width, modes = 32, 16

    class Spectral(nn.Module):
        def __init__(self):
            super().__init__()
            scale = 1 / (width * width)
            self.w1 = nn.Parameter(scale * torch.randn(width, width, modes, modes, dtype=torch.cfloat))
            self.w2 = nn.Parameter(scale * torch.randn(width, width, modes, modes, dtype=torch.cfloat))
            self.pointwise = nn.Conv2d(width, width, 1)

        def forward(self, x):
            b, c, h, w = x.shape
            xf = torch.fft.rfft2(x)
            out = torch.zeros(b, c, h, w // 2 + 1, dtype=torch.cfloat, device=x.device)
            out[:, :, :modes, :modes] = torch.einsum("bixy,ioxy->boxy", xf[:, :, :modes, :modes], self.w1)
            out[:, :, -modes:, :modes] = torch.einsum("bixy,ioxy->boxy", xf[:, :, -modes:, :modes], self.w2)
            return F.gelu(torch.fft.irfft2(out, s=(h, w)) + self.pointwise(x))

    model = nn.Sequential(nn.Conv2d(3, width, 1), *[Spectral() for _ in range(4)],
                          nn.Conv2d(width, 128, 1), nn.GELU(), nn.Conv2d(128, 1, 1)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for bs, res in [(16, 128), (8, 256), (32, 64), (8, 256), (4, 384)]:
        x = torch.randn(bs, 3, res, res, device="cuda")
        y = torch.randn(bs, 1, res, res, device="cuda")
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y, loss


def lbfgs_full_batch_train(torch):
    """Full-batch fitting with torch.optim.LBFGS, as scientific and small-data code does: a
    closure that drops the gradients (zero_grad) and evaluates the loss and its gradient
    over the whole dataset (65,536 samples of 256 features; an MLP of two hidden layers of
    1,024), a history of 10 curvature pairs (flat vectors the size of all parameters) and
    the strong-Wolfe line search, which evaluates the closure several times a step; 6
    steps of at most 8 iterations, the dataset drawn again (98,304 samples) after the
    third."""
    torch.manual_seed(0)
    nn, F = torch.nn, torch.nn.functional
    model = nn.Sequential(nn.Linear(256, 1024), nn.Tanh(), nn.Linear(1024, 1024), nn.Tanh(),
                          nn.Linear(1024, 1)).cuda()
    opt = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=8, history_size=10, line_search_fn="strong_wolfe")
    x = torch.randn(65536, 256, device="cuda")
    y = torch.sin(x[:, :8].sum(1, keepdim=True))
    for step in range(6):
        if step == 3:
            del x, y
            x = torch.randn(98304, 256, device="cuda")
            y = torch.sin(x[:, :8].sum(1, keepdim=True))

        def closure():
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            return loss

        opt.step(closure)


def gpu_augment_varres_train_bf16(torch):
    """Image training with its augmentation on the GPU, as loaders without DALI do with
    torchvision.transforms.v2 on device tensors: every uint8 image comes in at its own size
    (256 to 640 px a side), is copied to the device and there converted to float, randomly
    resized-cropped to 224 px, flipped and colour-jittered, one image at a time, and the
    batch stacked; torchvision's resnet50 (random weights, 100 classes), channels_last,
    bf16 autocast, SGD with momentum, 4 steps of 48 images."""
    import torchvision
    from torchvision.transforms import v2
    torch.manual_seed(0)
    F = torch.nn.functional
    aug = v2.Compose([v2.ToDtype(torch.float32, scale=True), v2.RandomResizedCrop(224, antialias=True),
                      v2.RandomHorizontalFlip(), v2.ColorJitter(0.4, 0.4, 0.4),
                      v2.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    model = torchvision.models.resnet50(num_classes=100).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    g = torch.Generator().manual_seed(1)
    for step in range(4):
        images = []
        for _ in range(48):
            h, w = (int(v) for v in torch.randint(256, 641, (2,), generator=g))
            raw = torch.randint(0, 256, (3, h, w), dtype=torch.uint8, generator=g)
            images.append(aug(raw.cuda()))
        x = torch.stack(images).contiguous(memory_format=torch.channels_last)
        y = torch.randint(0, 100, (48,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del images, x, y, loss


def mixture_of_depths_train_bf16(torch):
    """Mixture-of-Depths routing, as compute-saving LLM training does: in every second block
    a router scores the tokens and only each sequence's top eighth goes through the block
    (gathered by torch.topk's indices, kept in order, the block's change weighted by the
    router's sigmoid and added back by scatter_add); the other blocks see every token.
    8 pre-norm blocks (d 768, 12 heads), a 32,000-word head, bf16 autocast, AdamW, 4 steps
    at batch x length 8x1024, 16x512, 4x2048 and 8x1024."""
    torch.manual_seed(0)
    nn, F = torch.nn, torch.nn.functional
    d, vocab = 768, 32000

    class Routed(nn.Module):
        def __init__(self):
            super().__init__()
            self.router, self.block = nn.Linear(d, 1), _block(torch, d, 12)

        def forward(self, x):
            b, n, _ = x.shape
            score = self.router(x).squeeze(-1)
            weight, idx = score.topk(n // 8, dim=1)
            idx, order = idx.sort(dim=1)
            weight = weight.gather(1, order)
            where = idx[..., None].expand(-1, -1, d)
            picked = x.gather(1, where)
            change = (self.block(picked) - picked) * torch.sigmoid(weight)[..., None]
            return x.scatter_add(1, where, change.to(x.dtype))

    emb, head = nn.Embedding(vocab, d), nn.Linear(d, vocab, bias=False)
    blocks = nn.ModuleList(Routed() if i % 2 else _block(torch, d, 12) for i in range(8))
    model = nn.ModuleList([emb, blocks, head]).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for bs, n in [(8, 1024), (16, 512), (4, 2048), (8, 1024)]:
        ids = torch.randint(0, vocab, (bs, n), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            x = emb(ids)
            for blk in blocks:
                x = blk(x)
            logits = head(x)
        loss = F.cross_entropy(logits.float().view(-1, vocab), ids.roll(-1, 1).view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, x, logits, loss


def deterministic_index_add_train(torch):
    """Training under torch.use_deterministic_algorithms(True), as code that must reproduce
    its results bit for bit does: CUBLAS_WORKSPACE_CONFIG=:4096:8 (set before cuBLAS's
    first call: its workspaces are PyTorch allocations of that size), message passing whose
    index_add_ runs its deterministic kernel (index_put_ with accumulate, which sorts the
    indices) and whose gathers' backward does the same, a node-type embedding, and every
    torch.empty filled (fill_uninitialized_memory). 3 message-passing layers of 128
    features, AdamW, 5 steps over random graphs of 50k to 80k nodes and 250k to 800k
    edges."""
    import os
    os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
    torch.use_deterministic_algorithms(True)
    try:
        torch.manual_seed(0)
        nn, F = torch.nn, torch.nn.functional
        d = 128

        class Layer(nn.Module):
            def __init__(self):
                super().__init__()
                self.msg, self.upd = nn.Linear(2 * d, d), nn.Linear(2 * d, d)

            def forward(self, x, src, dst):
                m = F.silu(self.msg(torch.cat([x[src], x[dst]], dim=1)))
                agg = torch.zeros_like(x).index_add_(0, dst, m)
                return x + F.silu(self.upd(torch.cat([x, agg], dim=1)))

        kinds = nn.Embedding(16, d)
        layers = nn.ModuleList(Layer() for _ in range(3))
        head = nn.Linear(d, 1)
        model = nn.ModuleList([kinds, layers, head]).cuda()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        for n, e in [(50_000, 400_000), (80_000, 800_000), (30_000, 250_000), (80_000, 800_000),
                     (60_000, 500_000)]:
            kind = torch.randint(0, 16, (n,), device="cuda")
            src = torch.randint(0, n, (e,), device="cuda")
            dst = torch.randint(0, n, (e,), device="cuda")
            y = torch.randn(n, 1, device="cuda")
            x = kinds(kind)
            for layer in layers:
                x = layer(x, src, dst)
            loss = F.mse_loss(head(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            del kind, src, dst, y, x, loss
    finally:
        torch.use_deterministic_algorithms(False)


def minhash_lsh_dedup(torch):
    """Near-duplicate detection of a text corpus on the GPU, as LLM data pipelines do
    (MinHash and LSH banding): each shard of documents (token ids, 64 to 4,096 tokens
    each, every fifth a copy of the one before with 3 % of its tokens changed) is cut into
    5-token shingles (unfold) hashed to int64, the shingles that stay inside a document
    picked by a boolean mask, 128 MinHash permutations ((a x + b) over int64, 32 at a
    time) reduced to each document's minimum (scatter_reduce amin), 16 bands of 8 rows
    hashed into bucket keys that torch.unique (return_inverse, return_counts) groups, and
    the documents sharing a bucket paired (nonzero, argsort, unique over rows) and kept
    where their signatures agree on 70 %: sizes known only on the device, CUB's temporary
    storage from PyTorch's allocator. 5 shards of 2,000, 3,000, 1,500, 2,500 and 3,000
    documents."""
    torch.manual_seed(0)
    vocab, perms, bands = 50_000, 128, 16
    a = torch.randint(1, 1 << 61, (perms,), device="cuda")
    b = torch.randint(0, 1 << 61, (perms,), device="cuda")
    kept = []
    for ndocs in [2000, 3000, 1500, 2500, 3000]:
        lens = torch.randint(64, 4097, (ndocs,))
        lens[4::5] = lens[3::5]
        starts = (torch.cumsum(lens, 0) - lens).cuda()
        lens_d = lens.cuda()
        total = int(lens.sum())
        doc = torch.repeat_interleave(torch.arange(ndocs, device="cuda"), lens_d)
        pos = torch.arange(total, device="cuda") - starts[doc]
        src = starts[torch.where(doc % 5 == 4, doc - 1, doc)] + pos
        tokens = torch.randint(0, vocab, (total,), device="cuda")[src]
        tokens = torch.where(torch.rand(total, device="cuda") < 0.03, torch.randint_like(tokens, vocab), tokens)
        sh = tokens.unfold(0, 5, 1)
        key = sh[:, 0]
        for j in range(1, 5):
            key = key * 1_000_003 ^ sh[:, j]
        inside = pos[: total - 4] <= lens_d[doc[: total - 4]] - 5
        key, kdoc = key[inside], doc[: total - 4][inside]
        sig = torch.empty(ndocs, perms, dtype=torch.long, device="cuda")
        for c in range(0, perms, 32):
            h = (key[:, None] * a[None, c:c + 32] + b[None, c:c + 32]) & ((1 << 61) - 1)
            part = torch.full((ndocs, 32), 1 << 62, dtype=torch.long, device="cuda")
            sig[:, c:c + 32] = part.scatter_reduce_(0, kdoc[:, None].expand(-1, 32), h, reduce="amin")
            del h, part
        band_key = sig.view(ndocs, bands, perms // bands)[..., 0]
        for j in range(1, perms // bands):
            band_key = band_key * 1_000_003 ^ sig.view(ndocs, bands, perms // bands)[..., j]
        band_key = (band_key * bands + torch.arange(bands, device="cuda")).reshape(-1)
        _, inv, counts = torch.unique(band_key, return_inverse=True, return_counts=True)
        members = torch.nonzero(counts[inv] > 1).squeeze(1)
        members = members[torch.argsort(inv[members], stable=True)]
        bucket = inv[members]
        same = bucket[1:] == bucket[:-1]
        pairs = torch.unique(torch.stack([members[:-1][same] // bands, members[1:][same] // bands], 1), dim=0)
        agree = (sig[pairs[:, 0]] == sig[pairs[:, 1]]).float().mean(1)
        keep = torch.ones(ndocs, dtype=torch.bool, device="cuda")
        keep[pairs[agree > 0.7, 1]] = False
        kept.append(int(keep.sum()))
        del starts, lens_d, doc, pos, src, tokens, sh, key, inside, kdoc, sig, band_key, inv, counts
        del members, bucket, same, pairs, agree, keep


def cudnn_sdpa_train_bf16(torch):
    """A decoder trained with its attention on cuDNN's fused kernel, as code that picks
    SDPA's backend does (torch.nn.attention.sdpa_kernel(SDPBackend.CUDNN_ATTENTION)):
    cuDNN builds an execution plan for each shape and takes its workspaces from PyTorch's
    allocator. 6 pre-norm blocks (d 1,024, 16 heads of 64), a 16,000-word head, bf16
    autocast, AdamW, 5 steps at batch x length 8x1024, 4x2048, 16x512, 2x4096 and
    8x1024."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    torch.manual_seed(0)
    nn, F = torch.nn, torch.nn.functional
    d, vocab = 1024, 16000
    emb, head = nn.Embedding(vocab, d), nn.Linear(d, vocab, bias=False)
    blocks = nn.ModuleList(_block(torch, d, 16) for _ in range(6))
    model = nn.ModuleList([emb, blocks, head]).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        for bs, n in [(8, 1024), (4, 2048), (16, 512), (2, 4096), (8, 1024)]:
            ids = torch.randint(0, vocab, (bs, n), device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                x = emb(ids)
                for blk in blocks:
                    x = blk(x)
                logits = head(x)
            loss = F.cross_entropy(logits.float().view(-1, vocab), ids.roll(-1, 1).view(-1))
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            del ids, x, logits, loss


def async_activation_offload_train_bf16(torch):
    """Activation offloading overlapped with compute, as torchtune's OffloadActivations does:
    saved_tensors_hooks copy every saved activation of 1 MiB or more into pinned host
    memory on a side stream (which waits for the default stream; the activation is marked
    in use there, record_stream, so its block is reused only after the copy) and, in
    backward, bring it back on that side stream, the default stream waiting for it and
    taking it over (record_stream). 8 pre-norm blocks (d 1,024, 16 heads), a 16,000-word
    head, bf16 autocast, AdamW, 4 steps at batch x length 8x1024, 4x2048, 16x512 and
    8x1024."""
    torch.manual_seed(0)
    nn, F = torch.nn, torch.nn.functional
    d, vocab = 1024, 16000
    main, side = torch.cuda.current_stream(), torch.cuda.Stream()
    pin = torch.cuda.is_available()

    def pack(t):
        if t.device.type == "cpu" or t.numel() * t.element_size() < (1 << 20) or isinstance(t, nn.Parameter):
            return t
        host = torch.empty(t.shape, dtype=t.dtype, pin_memory=pin)
        side.wait_stream(main)
        with torch.cuda.stream(side):
            host.copy_(t, non_blocking=True)
        t.record_stream(side)
        return host, t.device

    def unpack(p):
        if isinstance(p, torch.Tensor):
            return p
        host, device = p
        side.wait_stream(main)
        with torch.cuda.stream(side):
            t = host.to(device, non_blocking=True)
        main.wait_stream(side)
        t.record_stream(main)
        return t

    emb, head = nn.Embedding(vocab, d), nn.Linear(d, vocab, bias=False)
    blocks = nn.ModuleList(_block(torch, d, 16) for _ in range(8))
    model = nn.ModuleList([emb, blocks, head]).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for bs, n in [(8, 1024), (4, 2048), (16, 512), (8, 1024)]:
        ids = torch.randint(0, vocab, (bs, n), device="cuda")
        with torch.autograd.graph.saved_tensors_hooks(pack, unpack), torch.autocast("cuda", dtype=torch.bfloat16):
            x = emb(ids)
            for blk in blocks:
                x = blk(x)
            logits = head(x)
        loss = F.cross_entropy(logits.float().view(-1, vocab), ids.roll(-1, 1).view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, x, logits, loss
    torch.cuda.synchronize()


def multistream_serve_fp16(torch):
    """Concurrent inference on four CUDA streams, as a server overlaps requests in one
    process: a 12-layer encoder (d 768, 12 heads, pre-norm) in fp16; 48 requests of 1 to 64
    sequences of 64 to 512 tokens, round-robin over the streams. Each request's token ids
    are uploaded on the default stream and handed to its stream (`wait_stream`,
    `record_stream`), the encoder runs there under `torch.no_grad()`, and the mean-pooled
    output is copied to pinned host memory; every fourth request the server waits for the
    four streams (back-pressure). Blocks made on a stream are cached for that stream only."""
    torch.manual_seed(0)
    nn = torch.nn
    d, vocab = 768, 30000
    layer = nn.TransformerEncoderLayer(d, 12, 4 * d, dropout=0.0, batch_first=True, norm_first=True)
    enc = nn.TransformerEncoder(layer, 12, enable_nested_tensor=False)
    model = nn.ModuleDict({"emb": nn.Embedding(vocab, d), "enc": enc}).cuda().half().eval()
    main = torch.cuda.current_stream()
    streams = [torch.cuda.Stream() for _ in range(4)]
    pin = torch.cuda.is_available()
    g = torch.Generator().manual_seed(1)
    outs = []
    with torch.no_grad():
        for i in range(48):
            bs = int(torch.randint(1, 65, (1,), generator=g))
            n = int(torch.randint(64, 513, (1,), generator=g))
            ids = torch.randint(0, vocab, (bs, n), generator=g).to("cuda")
            s = streams[i % 4]
            s.wait_stream(main)
            with torch.cuda.stream(s):
                ids.record_stream(s)
                h = model["enc"](model["emb"](ids))
                pooled = h.mean(1)
                out = torch.empty(pooled.shape, dtype=pooled.dtype, pin_memory=pin)
                out.copy_(pooled, non_blocking=True)
            outs.append(out)
            del ids, h, pooled
            if i % 4 == 3:
                for st in streams:
                    st.synchronize()
    torch.cuda.synchronize()


def fsdp2_mixed_precision_ckpt_train_bf16(torch):
    """FSDP2 as torchtitan trains with it, on one rank (world size 1, NCCL on the one GPU):
    a decoder-only transformer (8 pre-norm blocks, d 1,024, 16 heads, a 32,000-word head),
    each block activation-checkpointed (`torch.utils.checkpoint`, non-reentrant) and
    sharded by `fully_shard` with `MixedPrecisionPolicy(param_dtype=bfloat16,
    reduce_dtype=float32)`, the root too; fp32 sharded parameters, AdamW, gradient norm
    clipped, 4 steps at batch x length 8 x 1,024, 4 x 2,048, 16 x 512 and 8 x 1,024.
    All-gathers and reduce-scatters run on FSDP's own streams."""
    import torch.distributed as dist
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    from torch.utils.checkpoint import checkpoint
    _init_one_rank(torch)
    try:
        torch.manual_seed(0)
        nn, F = torch.nn, torch.nn.functional
        d, vocab = 1024, 32000

        class Checkpointed(nn.Module):
            def __init__(self, blk):
                super().__init__()
                self.blk = blk

            def forward(self, x):
                return checkpoint(self.blk, x, use_reentrant=False)

        blocks = [Checkpointed(_block(torch, d, 16)) for _ in range(8)]
        model = nn.Sequential(nn.Embedding(vocab, d), *blocks, nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)).cuda()
        mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        for blk in blocks:
            fully_shard(blk, mp_policy=mp)
        fully_shard(model, mp_policy=mp)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        for bs, n in [(8, 1024), (4, 2048), (16, 512), (8, 1024)]:
            ids = torch.randint(0, vocab, (bs, n + 1), device="cuda")
            logits = model(ids[:, :-1])
            loss = F.cross_entropy(logits.float().reshape(-1, vocab), ids[:, 1:].reshape(-1))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            del ids, logits, loss
        torch.cuda.synchronize()
        mark(torch, "after training")
        del model, opt
    finally:
        dist.destroy_process_group()


def vit_token_merging_infer_fp16(torch):
    """A ViT-B/16 (12 blocks, d 768, 12 heads, random weights) at inference with token
    merging (ToMe, Bolya et al.): after each block's attention the tokens are split into
    alternate halves, each of one half matched to its most similar token of the other by
    cosine similarity, and the r best-matched merged into their partners by a size-weighted
    mean (`scatter_reduce`), so the sequence shrinks block by block; fp16, 40 batches of 1
    to 128 images at 224 or 384 pixels, r = 8 to 24 tokens a block."""
    torch.manual_seed(0)
    nn, F = torch.nn, torch.nn.functional
    d, heads = 768, 12
    patch = nn.Conv2d(3, d, 16, 16)
    blocks = nn.ModuleList(_block(torch, d, heads) for _ in range(12))
    norm, head = nn.LayerNorm(d), nn.Linear(d, 1000)
    model = nn.ModuleList([patch, blocks, norm, head]).cuda().half().eval()

    def merge(x, size, r):
        b, n, c = x.shape
        r = min(r, max(0, (n - 9) // 2))  # keep the class token and at least 8 others
        if r == 0:
            return x, size
        cls, rest = x[:, :1], x[:, 1:]
        scls, srest = size[:, :1], size[:, 1:]
        a, bb = rest[:, ::2], rest[:, 1::2]
        sa, sb = srest[:, ::2], srest[:, 1::2]
        sim = F.normalize(a.float(), dim=-1) @ F.normalize(bb.float(), dim=-1).transpose(1, 2)
        best, partner = sim.max(dim=-1)
        order = best.argsort(dim=-1, descending=True)
        merged, kept = order[:, :r], order[:, r:]
        gather = lambda t, i: t.gather(1, i.unsqueeze(-1).expand(-1, -1, t.shape[-1]))
        dst = partner.gather(1, merged)
        wb = (bb * sb).float().scatter_reduce(1, dst.unsqueeze(-1).expand(-1, -1, c), gather(a * sa, merged).float(), reduce="sum")
        nb = sb.float().scatter_reduce(1, dst.unsqueeze(-1), gather(sa, merged).float(), reduce="sum")
        x = torch.cat([cls, gather(a, kept), (wb / nb).to(x.dtype)], dim=1)
        size = torch.cat([scls, gather(sa, kept), nb.to(size.dtype)], dim=1)
        return x, size

    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for _ in range(40):
            bs = int(torch.randint(1, 129, (1,), generator=g))
            res = 224 if int(torch.randint(0, 3, (1,), generator=g)) else 384
            r = int(torch.randint(8, 25, (1,), generator=g))
            img = torch.randn(bs, 3, res, res, generator=g).to("cuda", torch.float16)
            x = patch(img).flatten(2).transpose(1, 2)
            x = torch.cat([x.new_zeros(bs, 1, d), x], dim=1)
            size = x.new_ones(bs, x.shape[1], 1)
            for blk in blocks:
                x = blk(x)
                x, size = merge(x, size, r)
            logits = head(norm(x[:, 0]))
            top = logits.argmax(-1).cpu()
            del img, x, size, logits, top


def ddp_powersgd_train_bf16(torch):
    """DistributedDataParallel on one rank (world size 1, NCCL on the one GPU) with
    PowerSGD gradient compression (`powerSGD_hook`, rank 4, error feedback, warm start,
    compression from the second step), as jobs on slow interconnects train: a decoder-only
    transformer (_decoder_lm: 6 layers, d 1,024, a 32,000-word head) with its 25 MB buckets,
    bf16 autocast, AdamW, 5 steps at batch x length 8 x 1,024, 16 x 512, 4 x 2,048, 12 x 768
    and 8 x 1,024. The hook keeps P and Q matrices and an error buffer for every bucket."""
    import torch.distributed as dist
    from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as powersgd
    from torch.nn.parallel import DistributedDataParallel
    _init_one_rank(torch)
    try:
        torch.manual_seed(0)
        nn = torch.nn
        vocab = 32000
        body, emb, head = _decoder_lm(torch, 1024, 6, vocab)

        class LM(nn.Module):
            def __init__(self):
                super().__init__()
                self.body, self.emb, self.head = body, emb, head

            def forward(self, ids):
                n = ids.shape[1] - 1
                mask = nn.Transformer.generate_square_subsequent_mask(n, device=ids.device)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    h = self.body(self.emb(ids[:, :-1]), mask=mask, is_causal=True)
                    logits = self.head(h).float()
                return nn.functional.cross_entropy(logits.reshape(-1, vocab), ids[:, 1:].reshape(-1))

        model = DistributedDataParallel(LM(), device_ids=[0])
        state = powersgd.PowerSGDState(process_group=None, matrix_approximation_rank=4,
                                       start_powerSGD_iter=2, min_compression_rate=2,
                                       use_error_feedback=True, warm_start=True)
        model.register_comm_hook(state, powersgd.powerSGD_hook)
        opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
        for bs, n in [(8, 1024), (16, 512), (4, 2048), (12, 768), (8, 1024)]:
            ids = torch.randint(0, vocab, (bs, n + 1), device="cuda")
            loss = model(ids)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            del ids, loss
        torch.cuda.synchronize()
        mark(torch, "after training")
        del model, opt, state
    finally:
        dist.destroy_process_group()


def bf16_master_weights_train(torch):
    """Mixed-precision training with the model itself in bf16 and fp32 master weights, as
    Megatron-style trainers do: every bf16 parameter's gradient is added into an fp32
    main_grad buffer by a post-accumulate-grad hook and then dropped, 4 micro-batches a
    step accumulate there, AdamW steps the fp32 masters (main_grad as their gradient) and
    the bf16 parameters are copied back from them. 8 pre-norm blocks (d 1,024, 16 heads), a
    16,000-word head, 3 steps of micro-batches at batch x length 4x1024, 2x2048, 8x512 and
    4x1024."""
    torch.manual_seed(0)
    nn, F = torch.nn, torch.nn.functional
    d, vocab = 1024, 16000
    emb, head = nn.Embedding(vocab, d), nn.Linear(d, vocab, bias=False)
    blocks = nn.ModuleList(_block(torch, d, 16) for _ in range(8))
    model = nn.ModuleList([emb, blocks, head]).cuda().to(torch.bfloat16)
    params = list(model.parameters())
    masters = [p.detach().float() for p in params]
    for m, p in zip(masters, params):
        m.grad = torch.zeros_like(m)

        def accumulate(p, m=m):
            m.grad.add_(p.grad)
            p.grad = None
        p.register_post_accumulate_grad_hook(accumulate)
    opt = torch.optim.AdamW(masters, lr=1e-4)
    for step in range(3):
        for bs, n in [(4, 1024), (2, 2048), (8, 512), (4, 1024)]:
            ids = torch.randint(0, vocab, (bs, n), device="cuda")
            x = emb(ids)
            for blk in blocks:
                x = blk(x)
            loss = F.cross_entropy(head(x).float().view(-1, vocab), ids.roll(-1, 1).view(-1)) / 4
            loss.backward()
            del ids, x, loss
        opt.step()
        with torch.no_grad():
            for m, p in zip(masters, params):
                p.copy_(m)
                m.grad.zero_()


def neural_ode_rk4_train(torch):
    """A neural ODE trained by backpropagating through its solver, as latent-dynamics code
    without an adjoint does: an MLP vector field f(t, z) (256 state, two hidden layers of
    1,024, SiLU) integrated by classic fixed-step RK4 from t = 0 to 1, the state kept at 8
    observation times and compared with targets; every stage's activations stay saved for
    backward. AdamW, 4 steps at batch x RK4 steps 512x40, 1024x24, 256x80 and 512x40."""
    torch.manual_seed(0)
    nn, F = torch.nn, torch.nn.functional
    dim = 256
    field = nn.Sequential(nn.Linear(dim + 1, 1024), nn.SiLU(), nn.Linear(1024, 1024), nn.SiLU(),
                          nn.Linear(1024, dim)).cuda()
    opt = torch.optim.AdamW(field.parameters(), lr=1e-3)

    def f(t, z):
        return field(torch.cat([z, t.expand(z.shape[0], 1)], dim=1))

    for bs, steps in [(512, 40), (1024, 24), (256, 80), (512, 40)]:
        z = torch.randn(bs, dim, device="cuda")
        target = torch.randn(8, bs, dim, device="cuda")
        h = 1.0 / steps
        every = steps // 8
        seen = []
        for i in range(steps):
            t = torch.full((1, 1), i * h, device="cuda")
            k1 = f(t, z)
            k2 = f(t + h / 2, z + h / 2 * k1)
            k3 = f(t + h / 2, z + h / 2 * k2)
            k4 = f(t + h, z + h * k3)
            z = z + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            if (i + 1) % every == 0:
                seen.append(z)
        loss = F.mse_loss(torch.stack(seen), target)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del z, target, seen, loss, k1, k2, k3, k4


def graphed_callables_train(torch):
    """Training with torch.cuda.make_graphed_callables, as MLPerf-style trainers capture
    their static-shape modules: an encoder and a head (an MLP of 4 residual layers of
    2,048 with LayerNorm, then a 2,048 x 10,000 classifier) are warmed up on a side stream
    and captured, forward and backward, into CUDA graphs that share one private memory
    pool; the loss and AdamW run outside the graphs, 6 steps at batch 1,024, the inputs
    copied into the graphs' static tensors by the graphed callables."""
    torch.manual_seed(0)
    nn, F = torch.nn, torch.nn.functional
    d = 2048

    class Residual(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln, self.fc1, self.fc2 = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            return x + self.fc2(F.gelu(self.fc1(self.ln(x))))

    encoder = nn.Sequential(nn.Linear(512, d), *[Residual() for _ in range(4)]).cuda()
    head = nn.Linear(d, 10_000).cuda()
    opt = torch.optim.AdamW(list(encoder.parameters()) + list(head.parameters()), lr=1e-4)
    x0 = torch.randn(1024, 512, device="cuda")
    h0 = torch.randn(1024, d, device="cuda", requires_grad=True)
    encoder, head = torch.cuda.make_graphed_callables((encoder, head), ((x0,), (h0,)))
    del x0, h0
    for step in range(6):
        x = torch.randn(1024, 512, device="cuda")
        y = torch.randint(0, 10_000, (1024,), device="cuda")
        loss = F.cross_entropy(head(encoder(x)), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y, loss


def vit_gpt2_caption_beam_generate_fp16(torch):
    """Image captioning by beam search, as vision-language serving does with transformers'
    VisionEncoderDecoderModel: a ViT encoder (8 layers, d 768, 224 px, patches of 16) and a
    GPT-2 decoder with cross-attention (6 layers, d 768, random weights), fp16, 4 beams and
    24 new tokens, the encoder's 197 patch states expanded to the beams and the decoder's
    self- and cross-attention caches reordered every step. torch.inference_mode, 4 batches
    of 8, 16, 4 and 12 images."""
    from transformers import GPT2Config, ViTConfig, VisionEncoderDecoderConfig, VisionEncoderDecoderModel
    torch.manual_seed(0)
    enc = ViTConfig(hidden_size=768, num_hidden_layers=8, num_attention_heads=12, intermediate_size=3072,
                    image_size=224, patch_size=16)
    dec = GPT2Config(n_layer=6, n_embd=768, n_head=12, add_cross_attention=True, is_decoder=True,
                     bos_token_id=50256, eos_token_id=50256)
    cfg = VisionEncoderDecoderConfig.from_encoder_decoder_configs(enc, dec)
    cfg.decoder_start_token_id = cfg.pad_token_id = 50256
    model = VisionEncoderDecoderModel(cfg).cuda().half().eval()
    with torch.inference_mode():
        for bs in [8, 16, 4, 12]:
            pixels = torch.randn(bs, 3, 224, 224, device="cuda", dtype=torch.half)
            out = model.generate(pixel_values=pixels, num_beams=4, max_new_tokens=24, min_new_tokens=24,
                                 do_sample=False, decoder_start_token_id=50256, pad_token_id=50256)
            del pixels, out


def wgan_gp_train(torch):
    """A Wasserstein GAN with gradient penalty, as WGAN-GP code does: each generator step
    follows 5 critic steps, and each critic step takes the critic's gradient with respect
    to random interpolations of real and generated 64 px images
    (torch.autograd.grad(create_graph=True)) and penalises its norm, so backward runs
    through that gradient's graph (double backward through the convolutions). A DCGAN-like
    generator (128-d noise, transposed convolutions) and a critic of strided convolutions
    with LayerNorm-free LeakyReLU blocks, Adam (0.0, 0.9), 3 generator steps at batch 64,
    128 and 96."""
    torch.manual_seed(0)
    nn = torch.nn
    gen = nn.Sequential(nn.ConvTranspose2d(128, 512, 4, 1, 0), nn.BatchNorm2d(512), nn.ReLU(),
                        nn.ConvTranspose2d(512, 256, 4, 2, 1), nn.BatchNorm2d(256), nn.ReLU(),
                        nn.ConvTranspose2d(256, 128, 4, 2, 1), nn.BatchNorm2d(128), nn.ReLU(),
                        nn.ConvTranspose2d(128, 64, 4, 2, 1), nn.BatchNorm2d(64), nn.ReLU(),
                        nn.ConvTranspose2d(64, 3, 4, 2, 1), nn.Tanh()).cuda()
    critic = nn.Sequential(nn.Conv2d(3, 64, 4, 2, 1), nn.LeakyReLU(0.2),
                           nn.Conv2d(64, 128, 4, 2, 1), nn.LeakyReLU(0.2),
                           nn.Conv2d(128, 256, 4, 2, 1), nn.LeakyReLU(0.2),
                           nn.Conv2d(256, 512, 4, 2, 1), nn.LeakyReLU(0.2),
                           nn.Conv2d(512, 1, 4, 1, 0)).cuda()
    opt_g = torch.optim.Adam(gen.parameters(), lr=1e-4, betas=(0.0, 0.9))
    opt_c = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.0, 0.9))
    for bs in [64, 128, 96]:
        for _ in range(5):
            real = torch.rand(bs, 3, 64, 64, device="cuda") * 2 - 1
            with torch.no_grad():
                fake = gen(torch.randn(bs, 128, 1, 1, device="cuda"))
            eps = torch.rand(bs, 1, 1, 1, device="cuda")
            mix = (eps * real + (1 - eps) * fake).requires_grad_(True)
            grad, = torch.autograd.grad(critic(mix).sum(), mix, create_graph=True)
            penalty = ((grad.flatten(1).norm(dim=1) - 1) ** 2).mean()
            loss_c = critic(fake).mean() - critic(real).mean() + 10 * penalty
            opt_c.zero_grad(set_to_none=True)
            loss_c.backward()
            opt_c.step()
            del real, fake, eps, mix, grad, penalty, loss_c
        loss_g = -critic(gen(torch.randn(bs, 128, 1, 1, device="cuda"))).mean()
        opt_g.zero_grad(set_to_none=True)
        loss_g.backward()
        opt_g.step()
        del loss_g


def alphazero_selfplay_infer(torch):
    """Self-play search, as AlphaZero-style code does: 64 games in parallel, each move a
    batched evaluation of a residual policy/value network (10 blocks of 128 channels on a
    19 x 19 board, bf16 autocast, torch.inference_mode) over the leaves the search picked,
    whose number changes every evaluation (1 to 256 positions, as games finish and trees
    widen), the policy's top moves (softmax, topk) and values copied back to the host for
    the tree. 600 evaluations."""
    torch.manual_seed(0)
    nn, F = torch.nn, torch.nn.functional

    class Res(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.b1 = nn.Conv2d(128, 128, 3, padding=1, bias=False), nn.BatchNorm2d(128)
            self.c2, self.b2 = nn.Conv2d(128, 128, 3, padding=1, bias=False), nn.BatchNorm2d(128)

        def forward(self, x):
            return F.relu(x + self.b2(self.c2(F.relu(self.b1(self.c1(x))))))

    trunk = nn.Sequential(nn.Conv2d(17, 128, 3, padding=1, bias=False), nn.BatchNorm2d(128), nn.ReLU(),
                          *[Res() for _ in range(10)]).cuda().eval()
    policy = nn.Sequential(nn.Conv2d(128, 2, 1), nn.Flatten(), nn.Linear(2 * 361, 362)).cuda().eval()
    value = nn.Sequential(nn.Conv2d(128, 1, 1), nn.Flatten(), nn.Linear(361, 256), nn.ReLU(),
                          nn.Linear(256, 1), nn.Tanh()).cuda().eval()
    g = torch.Generator().manual_seed(1)
    with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
        for step in range(600):
            n = int(torch.randint(1, 257, (1,), generator=g))
            boards = (torch.rand(n, 17, 19, 19, device="cuda") < 0.3).float()
            h = trunk(boards)
            p = F.softmax(policy(h).float(), dim=-1)
            top, moves = p.topk(16, dim=-1)
            v = value(h).float()
            top, moves, v = top.cpu(), moves.cpu(), v.cpu()
            del boards, h, p


def gpt2_train_big(torch):
    """The big-snapshot benchmark's input, not shipped (BENCHMARKS.md, "Big snapshots"):
    transformers' GPT-2 (12 layers, d 768, vocab 32000, random weights) trained with AdamW
    for 300 steps on length-bucketed batches (the shapes of gpt2_bucketed_train, in turn),
    so that its default recording with Python stacks holds about a million trace entries,
    as a real training job's `max_entries=1_000_000` snapshot does."""
    train_gpt2_on_buckets(torch, n_layer=12, n_embd=768, n_head=12, steps=300)


def seq_len_warmup_train_bf16(torch):
    """Sequence-length warmup (the curriculum of DeepSpeed's data efficiency library and Li
    et al.'s "stability-efficiency dilemma"): a 6-layer decoder (_decoder_lm, d 768, vocab
    32,000) trained with AdamW under bf16 autocast for 24 steps at about 16,384 tokens a
    step, the sequence length growing from 64 to 2,048 tokens (a multiple of 8, linear in
    the step) and the batch shrinking with it, so every step asks for other sizes."""
    torch.manual_seed(0)
    d, vocab, steps = 768, 32000, 24
    body, emb, head = _decoder_lm(torch, d, 6, vocab)
    opt = torch.optim.AdamW([*body.parameters(), *emb.parameters(), *head.parameters()], lr=1e-4)
    for step in range(steps):
        n = (64 + (2048 - 64) * step // (steps - 1)) // 8 * 8
        bs = max(1, 16384 // n)
        ids, mask, h, loss = _decoder_lm_loss(torch, body, emb, head, vocab, bs, n)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, mask, h, loss


def feature_hook_leak_train_bf16(torch):
    """A leak and its fix: torchvision's resnet50 (random weights) trained with SGD under
    bf16 autocast, forward hooks on layer1 to layer4 keeping each step's feature maps for
    a later plot as they came (`feats.append(out)`, still on the GPU and part of the
    graph), so the memory grows step by step; after 12 steps of 32 images at 224 px the
    list is cleared and the hooks keep only a detached per-channel mean on the host for 6
    steps more."""
    import torchvision
    F = torch.nn.functional
    torch.manual_seed(0)
    model = torchvision.models.resnet50(weights=None, num_classes=100).cuda().train()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    feats, leak = [], [True]

    def keep(module, inputs, out):
        feats.append(out if leak[0] else out.detach().float().mean((2, 3)).cpu())

    hooks = [getattr(model, f"layer{i}").register_forward_hook(keep) for i in range(1, 5)]
    for step in range(18):
        if step == 12:
            feats.clear()
            leak[0] = False
        x = torch.randn(32, 3, 224, 224, device="cuda")
        y = torch.randint(0, 100, (32,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y, loss
    for h in hooks:
        h.remove()


def reversible_transformer_train_bf16(torch):
    """Reversible residual layers (RevNet, Reformer): 12 layers of a two-stream transformer
    (d 1,024, 16 heads), y1 = x1 + Attn(x2), y2 = x2 + MLP(y1), in one custom
    `autograd.Function` that keeps only the last layer's outputs and, in backward,
    recomputes each layer's inputs from its outputs layer by layer (`torch.autograd.backward`
    on each sublayer), so activation memory does not grow with depth; bf16 autocast
    (`torch.amp.custom_fwd`), AdamW, 5 steps at batch x length 8 x 1,024, 4 x 2,048,
    16 x 512, 2 x 4,096 and 8 x 1,024."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    d, heads, vocab = 1024, 16, 32000

    class Attn(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln, self.qkv, self.proj = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)

        def forward(self, x):
            b, n, _ = x.shape
            q, k, v = self.qkv(self.ln(x)).view(b, n, 3, heads, d // heads).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.proj(a.transpose(1, 2).reshape(b, n, d))

    def mlp():
        return nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    fs = nn.ModuleList(Attn() for _ in range(12)).cuda()
    gs = nn.ModuleList(mlp() for _ in range(12)).cuda()

    class Reversible(torch.autograd.Function):
        @staticmethod
        @torch.amp.custom_fwd(device_type="cuda")
        def forward(ctx, x1, x2):
            with torch.no_grad():
                for f, g in zip(fs, gs):
                    x1 = x1 + f(x2)
                    x2 = x2 + g(x1)
            ctx.save_for_backward(x1, x2)
            return x1, x2

        @staticmethod
        @torch.amp.custom_bwd(device_type="cuda")
        def backward(ctx, dy1, dy2):
            y1, y2 = ctx.saved_tensors
            for f, g in zip(reversed(fs), reversed(gs)):
                with torch.enable_grad():
                    y1 = y1.detach().requires_grad_()
                    gy = g(y1)
                    torch.autograd.backward(gy, dy2)
                with torch.no_grad():
                    x2 = y2 - gy
                    dy1 = dy1 + y1.grad
                del gy
                with torch.enable_grad():
                    x2 = x2.detach().requires_grad_()
                    fx = f(x2)
                    torch.autograd.backward(fx, dy1)
                with torch.no_grad():
                    x1 = y1 - fx
                    dy2 = dy2 + x2.grad
                del fx
                y1, y2 = x1, x2.detach()
            return dy1, dy2

    emb, head = nn.Embedding(vocab, d).cuda(), nn.Linear(d, vocab, bias=False).cuda()
    params = [*fs.parameters(), *gs.parameters(), *emb.parameters(), *head.parameters()]
    opt = torch.optim.AdamW(params, lr=3e-4)
    for bs, n in [(8, 1024), (4, 2048), (16, 512), (2, 4096), (8, 1024)]:
        ids = torch.randint(0, vocab, (bs, n + 1), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            x = emb(ids[:, :-1])
            y1, y2 = Reversible.apply(x, x)
            loss = F.cross_entropy(head((y1 + y2) / 2).float().reshape(-1, vocab), ids[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, x, y1, y2, loss


def transformer_xl_recurrence_train_bf16(torch):
    """Segment-level recurrence (Transformer-XL, the Recurrent Memory Transformer): long
    documents of 4 x 4,096 tokens read in segments of 512 by an 8-layer decoder (d 768, 12
    heads), each layer attending to its own hidden states of the previous segment (a
    detached memory of 512 positions, kept on the GPU from segment to segment and dropped at
    a new document) and to the segment causally; bf16 autocast, AdamW, a step per segment,
    3 documents, the last cut to 2,560 tokens."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    d, heads, vocab, seg, mem_len = 768, 12, 32000, 512, 512

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.q, self.kv, self.proj = nn.Linear(d, d), nn.Linear(d, 2 * d), nn.Linear(d, d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x, mem):
            b, n, _ = x.shape
            h = self.ln1(x)
            ctx = h if mem is None else torch.cat([self.ln1(mem), h], dim=1)
            m = ctx.shape[1] - n
            q = self.q(h).view(b, n, heads, -1).transpose(1, 2)
            k, v = self.kv(ctx).view(b, m + n, 2, heads, -1).permute(2, 0, 3, 1, 4)
            allowed = torch.ones(n, m + n, dtype=torch.bool, device=x.device).tril(diagonal=m)
            a = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
            x = x + self.proj(a.transpose(1, 2).reshape(b, n, d))
            return x + self.mlp(self.ln2(x))

    layers = nn.ModuleList(Layer() for _ in range(8)).cuda()
    emb, head = nn.Embedding(vocab, d).cuda(), nn.Linear(d, vocab, bias=False).cuda()
    opt = torch.optim.AdamW([*layers.parameters(), *emb.parameters(), *head.parameters()], lr=3e-4)
    for length in (4096, 4096, 2560):
        doc = torch.randint(0, vocab, (4, length + 1), device="cuda")
        mems = [None] * len(layers)
        for s in range(0, length, seg):
            ids = doc[:, s:s + seg + 1]
            with torch.autocast("cuda", dtype=torch.bfloat16):
                x = emb(ids[:, :-1])
                new = []
                for i, layer in enumerate(layers):
                    new.append(x.detach()[:, -mem_len:])
                    x = layer(x, mems[i])
                loss = F.cross_entropy(head(x).float().reshape(-1, vocab), ids[:, 1:].reshape(-1))
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            mems = new
            del ids, x, loss, new
        del doc, mems


def fedavg_clients_train(torch):
    """Federated averaging simulated on one GPU, as Flower's and FedML's simulations run it:
    a global torchvision resnet18 (random weights, 10 classes); each of 4 rounds copies it
    for 5 clients in turn (`copy.deepcopy`), trains each copy 2 local steps of SGD on its own
    batch (16 to 64 images at 64 px), keeps the copy's weights, frees the copy, and at the
    end of the round averages the kept weights into the global model."""
    import copy

    import torchvision
    F = torch.nn.functional
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None, num_classes=10).cuda()
    g = torch.Generator().manual_seed(1)
    for _ in range(4):
        states = []
        for _ in range(5):
            local = copy.deepcopy(model).train()
            opt = torch.optim.SGD(local.parameters(), lr=0.05, momentum=0.9)
            bs = int(torch.randint(16, 65, (1,), generator=g))
            for _ in range(2):
                x = torch.randn(bs, 3, 64, 64, generator=g).cuda()
                y = torch.randint(0, 10, (bs,), generator=g).cuda()
                loss = F.cross_entropy(local(x), y)
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
                del x, y, loss
            states.append({k: v.detach().clone() for k, v in local.state_dict().items()})
            del local, opt
        with torch.no_grad():
            avg = {}
            for k, v in model.state_dict().items():
                stacked = torch.stack([s[k] for s in states])
                avg[k] = stacked.float().mean(0).to(v.dtype) if v.is_floating_point() else stacked[0]
            model.load_state_dict(avg)
        del states, avg


def early_exit_encoder_infer_fp16(torch):
    """Early exit at inference (DeeBERT, PABEE): a 12-layer encoder (d 768, 12 heads,
    random weights, fp16) with a 4-class classifier after every layer; after each layer the
    sequences whose classifier is confident enough (top softmax probability at least 0.8)
    leave with that answer and the rest of the batch is gathered and goes on, so the batch
    shrinks layer by layer; 40 batches of 16 to 256 sequences of 64 to 512 tokens."""
    nn = torch.nn
    torch.manual_seed(0)
    d, heads, vocab = 768, 12, 30522
    emb = nn.Embedding(vocab, d)
    layers = nn.ModuleList(nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, batch_first=True,
                                                      norm_first=True) for _ in range(12))
    heads_ = nn.ModuleList(nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4)) for _ in range(12))
    for h in heads_:
        nn.init.normal_(h[1].weight, std=0.08)
    model = nn.ModuleList([emb, layers, heads_]).cuda().half().eval()
    g = torch.Generator().manual_seed(1)
    with torch.inference_mode():
        for _ in range(40):
            bs = int(torch.randint(16, 257, (1,), generator=g))
            n = int(torch.randint(64, 513, (1,), generator=g))
            ids = torch.randint(0, vocab, (bs, n), generator=g).cuda()
            answers = torch.full((bs,), -1, dtype=torch.long, device="cuda")
            alive = torch.arange(bs, device="cuda")
            x = emb(ids)
            for layer, head in zip(layers, heads_):
                x = layer(x)
                p = head(x[:, 0]).float().softmax(-1)
                conf, label = p.max(-1)
                done = conf >= 0.8
                answers[alive[done]] = label[done]
                x, alive = x[~done], alive[~done]
                if alive.numel() == 0:
                    break
            if alive.numel():
                answers[alive] = label[~done]
            out = answers.cpu()
            del ids, answers, alive, x, p, conf, label, done, out


def layerdrop_train_bf16(torch):
    """LayerDrop (Fan et al.) with stochastic depth: a 16-layer decoder (_block, d 1,024, 16
    heads) in which every training step skips each layer with probability 0.25 (a fresh
    draw each step, so each step runs another stack of layers and saves other activations);
    bf16 autocast, AdamW, 12 steps of 4 to 16 sequences of 256 to 1,024 tokens."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    d, vocab = 1024, 32000
    blocks = nn.ModuleList(_block(torch, d, 16) for _ in range(16)).cuda()
    emb, head = nn.Embedding(vocab, d).cuda(), nn.Linear(d, vocab, bias=False).cuda()
    opt = torch.optim.AdamW([*blocks.parameters(), *emb.parameters(), *head.parameters()], lr=3e-4)
    g = torch.Generator().manual_seed(1)
    for _ in range(12):
        bs = int(torch.randint(4, 17, (1,), generator=g))
        n = int(torch.randint(256, 1025, (1,), generator=g)) // 8 * 8
        keep = torch.rand(len(blocks), generator=g) >= 0.25
        ids = torch.randint(0, vocab, (bs, n + 1), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            x = emb(ids[:, :-1])
            for b, k in zip(blocks, keep.tolist()):
                if k:
                    x = b(x)
            loss = F.cross_entropy(head(x).float().reshape(-1, vocab), ids[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, x, loss


def deq_fixed_point_train(torch):
    """A deep equilibrium model (Bai et al.; the implicit-layers tutorial's recipe): the hidden
    state z* = f(z*, x) of a weight-tied transformer-style cell (d 512, 8 heads, sequences
    of 256) is found without autograd by fixed-point iteration (at most 40 steps, until the
    relative residual falls under 1e-3: a different number of iterations each batch), one
    more call of f with autograd on, and a backward hook that solves the implicit
    function theorem's linear system g = J^T g + grad by iterating vector-Jacobian products
    (`torch.autograd.grad`, at most 40); AdamW, 10 steps of 16 to 64 sequences."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    d, heads, n, classes = 512, 8, 256, 10

    class Cell(nn.Module):
        def __init__(self):
            super().__init__()
            self.inj = nn.Linear(d, d)
            self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

        def forward(self, z, x):
            h = self.ln1(z + self.inj(x))
            h = h + self.attn(h, h, h, need_weights=False)[0]
            return self.ln2(h + self.mlp(h))

    cell = Cell().cuda()
    embed, head = nn.Linear(32, d).cuda(), nn.Linear(d, classes).cuda()
    opt = torch.optim.AdamW([*cell.parameters(), *embed.parameters(), *head.parameters()], lr=1e-4)

    def solve(fn, z0, iters=40, tol=1e-3):
        z = z0
        for _ in range(iters):
            nxt = fn(z)
            res = (nxt - z).norm() / (nxt.norm() + 1e-8)
            z = nxt
            if res.item() < tol:
                break
        return z

    g = torch.Generator().manual_seed(1)
    for _ in range(10):
        bs = int(torch.randint(16, 65, (1,), generator=g))
        x = embed(torch.randn(bs, n, 32, generator=g).cuda())
        y = torch.randint(0, classes, (bs,), generator=g).cuda()
        with torch.no_grad():
            z = solve(lambda z: cell(z, x), torch.zeros_like(x))
        z = cell(z.requires_grad_(), x)
        z0 = z.detach().requires_grad_()
        f0 = cell(z0, x)

        def implicit(grad, f0=f0, z0=z0):
            return solve(lambda y: torch.autograd.grad(f0, z0, y, retain_graph=True)[0] + grad, grad)

        z.register_hook(implicit)
        loss = F.cross_entropy(head(z.mean(1)), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y, z, z0, f0, loss


def mc_dropout_uncertainty_infer(torch):
    """Uncertainty by Monte Carlo dropout (Gal and Ghahramani): a ResNet-50-sized image
    classifier (torchvision's resnet50, random weights, a dropout of 0.3 before its head)
    kept in eval mode but for its dropout, each batch of 8 to 64 images at 224 px expanded
    to 16 stochastic samples per image (`repeat_interleave`) and run in chunks of at most
    256, the softmax outputs stacked to give the predictive mean and entropy; 24 batches,
    fp32."""
    import torchvision
    nn = torch.nn
    torch.manual_seed(0)
    model = torchvision.models.resnet50(weights=None, num_classes=100)
    model.fc = nn.Sequential(nn.Dropout(0.3), model.fc)
    model = model.cuda().eval()
    model.fc[0].train()
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for _ in range(24):
            bs = int(torch.randint(8, 65, (1,), generator=g))
            x = torch.randn(bs, 3, 224, 224, generator=g).cuda()
            feats = []
            for chunk in x.repeat_interleave(16, dim=0).split(256):
                feats.append(model(chunk).softmax(-1))
            probs = torch.cat(feats).view(bs, 16, -1)
            mean = probs.mean(1)
            entropy = -(mean * mean.clamp_min(1e-12).log()).sum(-1)
            out = (mean.argmax(-1).cpu(), entropy.cpu())
            del x, feats, probs, mean, entropy, out


def pcgrad_multitask_train_bf16(torch):
    """Multi-task learning with PCGrad (Yu et al.): a shared 6-layer encoder (_block, d 768,
    12 heads) and three heads (token tagging over 50 labels, sequence classification over
    10, token prediction over a 32,000 vocabulary at every 8th position); each task's
    gradients of the shared parameters come from `torch.autograd.grad(..., retain_graph=True)` (the graph and its
    saved activations kept until the last task's), are flattened into one vector each,
    projected off one another where they conflict, summed and written back as `.grad`;
    bf16 autocast, AdamW, 10 steps of 8 to 32 sequences of 128 to 512 tokens."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    d, vocab = 768, 32000
    emb = nn.Embedding(vocab, d).cuda()
    trunk = nn.ModuleList(_block(torch, d, 12) for _ in range(6)).cuda()
    heads = nn.ModuleList([nn.Linear(d, 50), nn.Linear(d, 10), nn.Linear(d, vocab)]).cuda()
    shared = [*emb.parameters(), *trunk.parameters()]
    opt = torch.optim.AdamW([*shared, *heads.parameters()], lr=3e-4)
    g = torch.Generator().manual_seed(1)
    for _ in range(10):
        bs = int(torch.randint(8, 33, (1,), generator=g))
        n = int(torch.randint(128, 513, (1,), generator=g)) // 8 * 8
        ids = torch.randint(0, vocab, (bs, n), device="cuda")
        tags = torch.randint(0, 50, (bs, n), device="cuda")
        cls = torch.randint(0, 10, (bs,), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            x = emb(ids)
            for b in trunk:
                x = b(x)
            losses = [F.cross_entropy(heads[0](x).float().flatten(0, 1), tags.flatten()),
                      F.cross_entropy(heads[1](x.mean(1)).float(), cls),
                      F.cross_entropy(heads[2](x[:, ::8]).float().flatten(0, 1), ids[:, ::8].flatten())]
        flat = []
        for t, loss in enumerate(losses):
            grads = torch.autograd.grad(loss, shared + list(heads[t].parameters()), retain_graph=t < 2)
            flat.append(torch.cat([gr.flatten() for gr in grads[:len(shared)]]))
            for p, gr in zip(heads[t].parameters(), grads[len(shared):]):
                p.grad = gr
            del grads
        projected = []
        for i, gi in enumerate(flat):
            gi = gi.clone()
            for j, gj in enumerate(flat):
                dot = torch.dot(gi, gj)
                if j != i and dot < 0:
                    gi -= dot / gj.square().sum() * gj
            projected.append(gi)
        total = torch.stack(projected).sum(0)
        offset = 0
        for p in shared:
            p.grad = total[offset:offset + p.numel()].view_as(p)
            offset += p.numel()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, tags, cls, x, losses, flat, projected, total


def eval_graph_leak_train_bf16(torch):
    """A leak and its fix: a 12-layer decoder (_block, d 768, 12 heads) trained under bf16
    autocast with AdamW, and after every 4 steps a validation pass of 6 batches written
    without `torch.no_grad()` that adds each batch's loss tensor to a running total (`val
    += loss`), so every batch's graph and saved activations stay alive until the total is
    printed; after two such passes, two more with `torch.no_grad()` and `loss.item()`; 16
    steps of 4 to 12 sequences of 512 to 1,024 tokens, validation batches of 4."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    d, vocab = 768, 32000
    emb = nn.Embedding(vocab, d).cuda()
    blocks = nn.ModuleList(_block(torch, d, 12) for _ in range(12)).cuda()
    head = nn.Linear(d, vocab, bias=False).cuda()
    params = [*emb.parameters(), *blocks.parameters(), *head.parameters()]
    opt = torch.optim.AdamW(params, lr=3e-4)
    g = torch.Generator().manual_seed(1)

    def lm_loss(ids):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            x = emb(ids[:, :-1])
            for b in blocks:
                x = b(x)
            return F.cross_entropy(head(x).float().flatten(0, 1), ids[:, 1:].flatten())

    def batch(bs=None):
        bs = bs or int(torch.randint(4, 13, (1,), generator=g))
        n = int(torch.randint(512, 1025, (1,), generator=g)) // 8 * 8
        return torch.randint(0, vocab, (bs, n + 1), device="cuda")

    for step in range(16):
        loss = lm_loss(batch())
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del loss
        if step % 4 == 3:
            blocks.eval()
            if step < 8:
                val = 0
                for _ in range(6):
                    val += lm_loss(batch(4))
                print(f"val {val.item() / 6:.3f}")
                del val
            else:
                val = 0.0
                with torch.no_grad():
                    for _ in range(6):
                        val += lm_loss(batch(4)).item()
                print(f"val {val / 6:.3f}")
            blocks.train()


def pgd_adversarial_train_bf16(torch):
    """Adversarial training (Madry et al.): torchvision's resnet18 (random weights, 100
    classes) on 96 px images; each step first finds a perturbation of the batch within an
    L-infinity ball of 8/255 by 7 steps of projected gradient ascent (`torch.autograd.grad`
    of the loss with respect to the input, the model in eval mode, its parameters not
    requiring grad meanwhile), then trains on the perturbed batch; bf16 autocast, SGD with
    momentum, 12 steps of 64 to 256 images."""
    import torchvision
    F = torch.nn.functional
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None, num_classes=100).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    eps, alpha = 8 / 255, 2 / 255
    g = torch.Generator().manual_seed(1)
    for _ in range(12):
        bs = int(torch.randint(64, 257, (1,), generator=g))
        x = torch.rand(bs, 3, 96, 96, device="cuda")
        y = torch.randint(0, 100, (bs,), device="cuda")
        model.eval()
        model.requires_grad_(False)
        delta = torch.empty_like(x).uniform_(-eps, eps)
        for _ in range(7):
            delta.requires_grad_(True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = F.cross_entropy(model((x + delta).clamp(0, 1)), y)
            (grad,) = torch.autograd.grad(loss, delta)
            delta = (delta.detach() + alpha * grad.sign()).clamp(-eps, eps)
            del loss, grad
        model.requires_grad_(True)
        model.train()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model((x + delta).clamp(0, 1)), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y, delta, loss


def raft_corr_volume_train(torch):
    """Optical flow in the manner of RAFT (Teed and Deng): a convolutional encoder to 1/8
    resolution (256 channels) for both frames, the all-pairs correlation volume of the two
    feature maps (one matmul, batch x HW x H x W) and a 4-level pyramid of it by average
    pooling, then 12 recurrent refinements, each looking up a 9 x 9 window of every level
    around the current flow (`grid_sample`), a convolutional GRU (128 channels) and a flow
    head, with an L1 loss on every refinement's flow (RAFT's sequence loss); fp32, AdamW,
    10 steps of 2 to 6 image pairs cropped to 256 to 384 by 384 to 512 px."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)

    def conv(i, o, s=1):
        return nn.Sequential(nn.Conv2d(i, o, 3, s, 1), nn.InstanceNorm2d(o), nn.ReLU(inplace=True))

    fnet = nn.Sequential(conv(3, 64, 2), conv(64, 96, 2), conv(96, 128, 2), nn.Conv2d(128, 256, 1)).cuda()
    cnet = nn.Sequential(conv(3, 64, 2), conv(64, 96, 2), conv(96, 128, 2), nn.Conv2d(128, 256, 1)).cuda()
    levels, r = 4, 4
    menc = nn.Sequential(nn.Conv2d(levels * (2 * r + 1) ** 2 + 2, 128, 3, padding=1), nn.ReLU()).cuda()
    gru = nn.ModuleList([nn.Conv2d(128 + 256, 128, 3, padding=1) for _ in range(3)]).cuda()
    fhead = nn.Sequential(nn.Conv2d(128, 256, 3, padding=1), nn.ReLU(), nn.Conv2d(256, 2, 3, padding=1)).cuda()
    mods = nn.ModuleList([fnet, cnet, menc, gru, fhead])
    opt = torch.optim.AdamW(mods.parameters(), lr=2e-4)
    d = torch.arange(-r, r + 1, device="cuda", dtype=torch.float32)
    window = torch.stack(torch.meshgrid(d, d, indexing="ij"), -1).flip(-1).view(1, 2 * r + 1, 2 * r + 1, 2)
    g = torch.Generator().manual_seed(1)
    for _ in range(10):
        bs = int(torch.randint(2, 7, (1,), generator=g))
        hi = int(torch.randint(256, 385, (1,), generator=g)) // 8 * 8
        wi = int(torch.randint(384, 513, (1,), generator=g)) // 8 * 8
        im1 = torch.rand(bs, 3, hi, wi, device="cuda")
        im2 = torch.rand(bs, 3, hi, wi, device="cuda")
        gt = torch.randn(bs, 2, hi // 8, wi // 8, device="cuda")
        f1, f2 = fnet(torch.cat([im1, im2])).chunk(2)
        b, c, h, w = f1.shape
        corr = (f1.flatten(2).transpose(1, 2) @ f2.flatten(2)).view(b * h * w, 1, h, w) / c ** 0.5
        pyramid = [corr]
        for _ in range(levels - 1):
            pyramid.append(F.avg_pool2d(pyramid[-1], 2, 2))
        hidden, ctx = cnet(im1).split(128, 1)
        hidden, ctx = hidden.tanh(), ctx.relu()
        ys, xs = torch.meshgrid(torch.arange(h, device="cuda"), torch.arange(w, device="cuda"), indexing="ij")
        base = torch.stack([xs, ys]).float().expand(b, 2, h, w)
        flow = torch.zeros(b, 2, h, w, device="cuda")
        loss = 0
        for it in range(12):
            flow = flow.detach()
            centre = (base + flow).permute(0, 2, 3, 1).reshape(b * h * w, 1, 1, 2)
            looked = []
            for lvl, vol in enumerate(pyramid):
                pts = centre / 2 ** lvl + window
                hh, ww = vol.shape[-2:]
                grid = torch.stack([2 * pts[..., 0] / (ww - 1) - 1, 2 * pts[..., 1] / (hh - 1) - 1], -1)
                looked.append(F.grid_sample(vol, grid, align_corners=True).view(b, h, w, -1))
            feat = menc(torch.cat([torch.cat(looked, -1).permute(0, 3, 1, 2), flow], 1))
            hx = torch.cat([hidden, feat, ctx], 1)
            z, q = gru[0](hx).sigmoid(), gru[1](hx).sigmoid()
            cand = gru[2](torch.cat([q * hidden, feat, ctx], 1)).tanh()
            hidden = (1 - z) * hidden + z * cand
            flow = flow + fhead(hidden)
            loss = loss + 0.8 ** (11 - it) * (flow - gt).abs().mean()
            del looked, feat, hx
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del im1, im2, gt, f1, f2, corr, pyramid, hidden, ctx, base, flow, loss


def stft_loss_vocoder_train_bf16(torch):
    """A neural vocoder in the manner of HiFi-GAN's generator (a mel spectrogram of 80 bins
    upsampled 256 times by four transposed convolutions, each followed by dilated residual
    convolutions) trained with the multi-resolution STFT loss (`torch.stft` at FFT sizes
    512, 1,024 and 2,048: spectral convergence and log magnitude, in fp32, whose cuFFT plans
    take workspaces from the caching allocator) and an L1 loss on the waveform; bf16
    autocast for the generator, AdamW, 12 steps of 4 to 16 clips of 0.5 to 2 s at 22,050
    Hz (the mel frames, and so the audio, of a new length each step)."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)

    class Res(nn.Module):
        def __init__(self, ch):
            super().__init__()
            self.convs = nn.ModuleList(nn.Conv1d(ch, ch, 3, dilation=dl, padding=dl) for dl in (1, 3, 5))

        def forward(self, x):
            for c in self.convs:
                x = x + c(F.leaky_relu(x, 0.1))
            return x

    layers, ch = [nn.Conv1d(80, 512, 7, padding=3)], 512
    for u in (8, 8, 2, 2):
        layers += [nn.LeakyReLU(0.1), nn.ConvTranspose1d(ch, ch // 2, 2 * u, u, padding=u // 2), Res(ch // 2)]
        ch //= 2
    layers += [nn.LeakyReLU(0.1), nn.Conv1d(ch, 1, 7, padding=3), nn.Tanh()]
    gen = nn.Sequential(*layers).cuda()
    opt = torch.optim.AdamW(gen.parameters(), lr=2e-4, betas=(0.8, 0.99))
    windows = {n: torch.hann_window(n, device="cuda") for n in (512, 1024, 2048)}

    def stft_loss(fake, real):
        total = 0
        for n, win in windows.items():
            sf = torch.stft(fake, n, n // 4, window=win, return_complex=True).abs().clamp_min(1e-5)
            sr = torch.stft(real, n, n // 4, window=win, return_complex=True).abs().clamp_min(1e-5)
            total = total + (sr - sf).norm() / sr.norm() + (sr.log() - sf.log()).abs().mean()
        return total

    g = torch.Generator().manual_seed(1)
    for _ in range(12):
        bs = int(torch.randint(4, 17, (1,), generator=g))
        frames = int(torch.randint(43, 173, (1,), generator=g))
        mel = torch.randn(bs, 80, frames, device="cuda")
        real = torch.randn(bs, frames * 256, device="cuda") * 0.1
        with torch.autocast("cuda", dtype=torch.bfloat16):
            fake = gen(mel).squeeze(1)
        fake = fake.float()
        loss = stft_loss(fake, real) + 45 * (fake - real).abs().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del mel, real, fake, loss


def deform_conv_detector_train_bf16(torch):
    """Deformable convolutions (DCN, torchvision.ops.deform_conv2d) in a detector's neck: a
    resnet50 backbone (torchvision, random weights) whose layer3 and layer4 outputs each go
    through two 3 x 3 deformable convolutions (256 channels), whose offsets a plain
    convolution predicts from the same input; its CUDA kernel unfolds the input into a
    columns buffer from the caching allocator; a dense head (80 classes, 4 box values)
    trained with a focal-style loss; the deformable layers in fp32, the rest under bf16
    autocast, SGD, 10 steps of 4 to 12 images of 512 to 800 px a side."""
    import torchvision
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    body = torchvision.models.resnet50(weights=None)
    stem = nn.Sequential(body.conv1, body.bn1, body.relu, body.maxpool, body.layer1, body.layer2).cuda()
    layer3, layer4 = body.layer3.cuda(), body.layer4.cuda()

    class DCN(nn.Module):
        def __init__(self, i, o):
            super().__init__()
            self.offset = nn.Conv2d(i, 2 * 9, 3, padding=1)
            nn.init.zeros_(self.offset.weight)
            self.weight = nn.Parameter(torch.randn(o, i, 3, 3) * (2 / (9 * i)) ** 0.5)
            self.bias = nn.Parameter(torch.zeros(o))

        def forward(self, x):
            x = x.float()
            return F.relu(torchvision.ops.deform_conv2d(x, self.offset(x), self.weight, self.bias, padding=1))

    necks = nn.ModuleList([nn.Sequential(DCN(1024, 256), DCN(256, 256)),
                           nn.Sequential(DCN(2048, 256), DCN(256, 256))]).cuda()
    head = nn.Conv2d(256, 80 + 4, 3, padding=1).cuda()
    mods = nn.ModuleList([stem, layer3, layer4, necks, head])
    opt = torch.optim.SGD(mods.parameters(), lr=0.01, momentum=0.9)
    g = torch.Generator().manual_seed(1)
    for _ in range(10):
        bs = int(torch.randint(4, 13, (1,), generator=g))
        hw = [int(torch.randint(512, 801, (1,), generator=g)) // 32 * 32 for _ in range(2)]
        x = torch.randn(bs, 3, *hw, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            c3 = layer3(stem(x))
            c4 = layer4(c3)
        loss = 0
        for neck, feat in zip(necks, (c3, c4)):
            out = head(neck(feat))
            cls, box = out[:, :80], out[:, 80:]
            target = (torch.rand_like(cls) < 0.01).float()
            p = cls.sigmoid()
            focal = F.binary_cross_entropy_with_logits(cls, target, reduction="none") * (1 - (p * target + (1 - p) * (1 - target))) ** 2
            loss = loss + focal.sum() / max(1.0, float(target.sum())) + F.smooth_l1_loss(box, torch.zeros_like(box))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, c3, c4, out, cls, box, target, p, focal, loss


def torchscript_resnet_serve_fp16(torch):
    """TorchScript serving, as a TorchServe handler or a C++ deployment loads a model: torchvision's
    resnet50 (random weights) in fp16, `torch.jit.script`ed and frozen (`torch.jit.freeze`,
    batch norms folded into the convolutions), run under `torch.inference_mode()` by the
    profiling executor, which profiles the first calls of each shape and then optimises the
    graph; 60 requests of 1 to 64 images at 224 px, the outputs' top-5 copied to the host."""
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.resnet50(weights=None).cuda().half().eval()
    scripted = torch.jit.freeze(torch.jit.script(model))
    del model
    g = torch.Generator().manual_seed(1)
    with torch.inference_mode():
        for _ in range(60):
            bs = int(torch.randint(1, 65, (1,), generator=g))
            x = torch.randn(bs, 3, 224, 224, device="cuda", dtype=torch.half)
            top = scripted(x).float().softmax(-1).topk(5).indices.cpu()
            del x, top


def sparse_embedding_transe_train(torch):
    """Knowledge-graph embeddings (TransE) with sparse gradients: entity and relation tables
    (2,000,000 and 2,000 rows of 256) as `nn.Embedding(sparse=True)`, whose gradients are
    sparse COO tensors of the rows a batch touched, stepped by `torch.optim.SparseAdam`
    (state kept only where rows were touched, but allocated for the whole table); each step
    scores a batch of true triples against 64 corrupted tails each with a margin loss; 20
    steps of 2,048 to 8,192 triples."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    n_ent, n_rel, d = 2_000_000, 2_000, 256
    ent = nn.Embedding(n_ent, d, sparse=True).cuda()
    rel = nn.Embedding(n_rel, d, sparse=True).cuda()
    nn.init.uniform_(ent.weight, -0.1, 0.1)
    nn.init.uniform_(rel.weight, -0.1, 0.1)
    opt = torch.optim.SparseAdam([*ent.parameters(), *rel.parameters()], lr=1e-3)
    g = torch.Generator().manual_seed(1)
    for _ in range(20):
        bs = int(torch.randint(2048, 8193, (1,), generator=g))
        h = torch.randint(0, n_ent, (bs,), device="cuda")
        r = torch.randint(0, n_rel, (bs,), device="cuda")
        t = torch.randint(0, n_ent, (bs,), device="cuda")
        neg = torch.randint(0, n_ent, (bs, 64), device="cuda")
        q = ent(h) + rel(r)
        pos = (q - ent(t)).norm(dim=-1)
        negd = (q.unsqueeze(1) - ent(neg)).norm(dim=-1)
        loss = F.relu(1.0 + pos.unsqueeze(1) - negd).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del h, r, t, neg, q, pos, negd, loss


def gat_edge_softmax_train(torch):
    """A graph attention network (GAT) written with PyTorch's scatter ops, as PyG's GATConv
    computes it: per-edge attention logits from the two endpoints' projections, a softmax
    over each node's incoming edges (`scatter_reduce` for the maximum, `index_add_` for the
    sums), messages weighted per edge and summed into their targets; 3 layers (two of 8
    heads of 32, then one head over the classes) on a new random graph each step (40,000
    to 120,000 nodes, average degree 8 to 16, 128 input features), node classification
    over 40 classes; fp32, Adam, 12 steps."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    heads, hid, classes = 8, 32, 40

    class GATLayer(nn.Module):
        def __init__(self, i, o, h):
            super().__init__()
            self.h, self.o = h, o
            self.lin = nn.Linear(i, h * o, bias=False)
            self.a_src = nn.Parameter(torch.randn(h, o) * 0.1)
            self.a_dst = nn.Parameter(torch.randn(h, o) * 0.1)

        def forward(self, x, src, dst):
            n = x.shape[0]
            z = self.lin(x).view(n, self.h, self.o)
            e = F.leaky_relu((z * self.a_src).sum(-1)[src] + (z * self.a_dst).sum(-1)[dst], 0.2)
            emax = torch.full((n, self.h), float("-inf"), device=x.device)
            emax = emax.scatter_reduce(0, dst.unsqueeze(1).expand(-1, self.h), e, "amax")
            w = (e - emax[dst]).exp()
            denom = torch.zeros(n, self.h, device=x.device).index_add_(0, dst, w)
            alpha = w / denom[dst].clamp_min(1e-16)
            msg = z[src] * alpha.unsqueeze(-1)
            return torch.zeros_like(z).index_add_(0, dst, msg)

    layers = nn.ModuleList([GATLayer(128, hid, heads), GATLayer(heads * hid, hid, heads),
                            GATLayer(heads * hid, classes, 1)]).cuda()
    opt = torch.optim.Adam(layers.parameters(), lr=5e-3)
    g = torch.Generator().manual_seed(1)
    for _ in range(12):
        n = int(torch.randint(40_000, 120_001, (1,), generator=g))
        deg = int(torch.randint(8, 17, (1,), generator=g))
        src = torch.randint(0, n, (n * deg,), device="cuda")
        dst = torch.randint(0, n, (n * deg,), device="cuda")
        x = torch.randn(n, 128, device="cuda")
        y = torch.randint(0, classes, (n,), device="cuda")
        h = x
        for i, layer in enumerate(layers):
            h = layer(h, src, dst)
            h = F.elu(h.flatten(1)) if i < len(layers) - 1 else h.mean(1)
        loss = F.cross_entropy(h, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del src, dst, x, y, h, loss


def perceiver_io_train_bf16(torch):
    """Perceiver IO (Jaegle et al.): a long input array (8,192 to 32,768 tokens of 256
    features, a byte-level document) cross-attended into 512 latents of 1,024, a stack of 8
    self-attention blocks over the latents only (_block), and a decoder whose per-position
    queries cross-attend to the latents to predict each input position's masked byte (262
    classes); bf16 autocast, AdamW, 10 steps of 2 to 8 documents."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    d_in, d, n_lat, vocab = 256, 1024, 512, 262

    class Cross(nn.Module):
        def __init__(self, dq, dkv, heads):
            super().__init__()
            self.h = heads
            self.lnq, self.lnkv = nn.LayerNorm(dq), nn.LayerNorm(dkv)
            self.q, self.kv, self.o = nn.Linear(dq, d), nn.Linear(dkv, 2 * d), nn.Linear(d, dq)
            self.mlp = nn.Sequential(nn.LayerNorm(dq), nn.Linear(dq, 4 * dq), nn.GELU(), nn.Linear(4 * dq, dq))

        def forward(self, xq, xkv):
            b, nq, _ = xq.shape
            q = self.q(self.lnq(xq)).view(b, nq, self.h, -1).transpose(1, 2)
            k, v = self.kv(self.lnkv(xkv)).view(b, xkv.shape[1], 2, self.h, -1).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v)
            xq = xq + self.o(a.transpose(1, 2).reshape(b, nq, d))
            return xq + self.mlp(xq)

    emb = nn.Embedding(vocab, d_in).cuda()
    pos = nn.Parameter(torch.randn(32768, d_in, device="cuda") * 0.02)
    latents = nn.Parameter(torch.randn(n_lat, d, device="cuda") * 0.02)
    enc = Cross(d, d_in, 8).cuda()
    blocks = nn.ModuleList(_block(torch, d, 16) for _ in range(8)).cuda()
    dec = Cross(d_in, d, 8).cuda()
    head = nn.Linear(d_in, vocab).cuda()
    params = [pos, latents, *emb.parameters(), *enc.parameters(), *blocks.parameters(),
              *dec.parameters(), *head.parameters()]
    opt = torch.optim.AdamW(params, lr=3e-4)
    g = torch.Generator().manual_seed(1)
    for _ in range(10):
        bs = int(torch.randint(2, 9, (1,), generator=g))
        n = int(torch.randint(8192, 32769, (1,), generator=g)) // 64 * 64
        ids = torch.randint(0, vocab, (bs, n), device="cuda")
        masked = ids.masked_fill(torch.rand(bs, n, device="cuda") < 0.15, 0)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            x = emb(masked) + pos[:n]
            z = enc(latents.expand(bs, -1, -1), x)
            for b in blocks:
                z = b(z)
            out = dec(pos[:n].expand(bs, -1, -1), z)
            loss = F.cross_entropy(head(out).float().flatten(0, 1), ids.flatten())
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, masked, x, z, out, loss


def lstmcell_attention_decoder_train(torch):
    """An attention-based sequence-to-sequence model trained step by step, as Tacotron's and
    Listen-Attend-Spell's decoders are: a bidirectional LSTM encoder over the input frames,
    then a Python loop over the output steps, each running an `LSTMCell` on the previous
    target (teacher forcing) and the last context, additive (Bahdanau) attention over the
    encoder outputs (the context a batched matmul of the weights and the encoder outputs)
    and a projection, the step's outputs stacked at the end; fp32, Adam, gradient clipping,
    12 steps of 8 to 32 pairs of 100 to 400 input frames (80 features) and 50 to 150 output
    steps (80 features)."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    d = 512
    enc = nn.LSTM(80, d // 2, num_layers=2, batch_first=True, bidirectional=True).cuda()
    cell = nn.LSTMCell(80 + d, d).cuda()
    wq, wk, v = nn.Linear(d, 256, bias=False).cuda(), nn.Linear(d, 256).cuda(), nn.Linear(256, 1, bias=False).cuda()
    proj = nn.Linear(2 * d, 80).cuda()
    mods = nn.ModuleList([enc, cell, wq, wk, v, proj])
    opt = torch.optim.Adam(mods.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    for _ in range(12):
        bs = int(torch.randint(8, 33, (1,), generator=g))
        t_in = int(torch.randint(100, 401, (1,), generator=g))
        t_out = int(torch.randint(50, 151, (1,), generator=g))
        src = torch.randn(bs, t_in, 80, device="cuda")
        tgt = torch.randn(bs, t_out, 80, device="cuda")
        mem, _ = enc(src)
        keys = wk(mem)
        h = c = torch.zeros(bs, d, device="cuda")
        ctx = torch.zeros(bs, d, device="cuda")
        prev = torch.zeros(bs, 80, device="cuda")
        outs = []
        for t in range(t_out):
            h, c = cell(torch.cat([prev, ctx], -1), (h, c))
            score = v(torch.tanh(wq(h).unsqueeze(1) + keys)).squeeze(-1)
            ctx = torch.bmm(score.softmax(-1).unsqueeze(1), mem).squeeze(1)
            outs.append(proj(torch.cat([h, ctx], -1)))
            prev = tgt[:, t]
        loss = F.l1_loss(torch.stack(outs, 1), tgt)
        loss.backward()
        nn.utils.clip_grad_norm_(mods.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del src, tgt, mem, keys, h, c, ctx, prev, outs, loss


def attention_slicing_unet_sample_fp16(torch):
    """Attention slicing, as diffusers' `enable_attention_slicing()` runs a sampler on a small
    card: a denoiser of convolutional blocks and self-attention at 64 x 64 and 32 x 32
    latents (4,096 and 1,024 tokens, 8 heads of 64), whose attention is computed one slice
    of (batch x heads) at a time with explicit softmax(QK^T)V into a preallocated output,
    so the score matrix of only one slice is alive; fp16, `inference_mode`, classifier-free
    guidance (the batch doubled), 25 denoising steps for each of 6 prompts' batches of 1 to
    4 images, slice sizes 1, 2 and 4 in turn."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    ch, heads = 512, 8

    class SlicedAttn(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.GroupNorm(32, ch)
            self.qkv, self.out = nn.Conv2d(ch, 3 * ch, 1), nn.Conv2d(ch, ch, 1)
            self.slice = 1

        def forward(self, x):
            b, c, h, w = x.shape
            q, k, v = self.qkv(self.norm(x)).view(b, 3, heads, c // heads, h * w).unbind(1)
            q, k, v = (t.transpose(-1, -2).reshape(b * heads, h * w, c // heads) for t in (q, k, v))
            o = torch.empty_like(q)
            for i in range(0, b * heads, self.slice):
                s = torch.baddbmm(torch.empty(1, 1, 1, device=q.device, dtype=q.dtype), q[i:i + self.slice],
                                  k[i:i + self.slice].transpose(1, 2), beta=0, alpha=(c // heads) ** -0.5)
                o[i:i + self.slice] = torch.bmm(s.softmax(-1), v[i:i + self.slice])
                del s
            o = o.view(b, heads, h * w, c // heads).transpose(-1, -2).reshape(b, c, h, w)
            return x + self.out(o)

    def res():
        return nn.Sequential(nn.GroupNorm(32, ch), nn.SiLU(), nn.Conv2d(ch, ch, 3, padding=1))

    attns = [SlicedAttn() for _ in range(4)]
    net = nn.ModuleDict(dict(inp=nn.Conv2d(4, ch, 3, padding=1), r1=res(), a1=attns[0], down=nn.Conv2d(ch, ch, 3, 2, 1),
                             r2=res(), a2=attns[1], a3=attns[2], up=nn.ConvTranspose2d(ch, ch, 4, 2, 1),
                             r3=res(), a4=attns[3], outp=nn.Conv2d(ch, 4, 3, padding=1))).cuda().half().eval()

    def denoise(x):
        h0 = net["inp"](x)
        h1 = net["a1"](h0 + net["r1"](h0))
        d = net["a3"](net["a2"](net["r2"](net["down"](h1))))
        u = net["a4"](net["r3"](net["up"](d) + h1))
        return net["outp"](u)

    g = torch.Generator().manual_seed(1)
    with torch.inference_mode():
        for p in range(6):
            for a in attns:
                a.slice = (1, 2, 4)[p % 3]
            bs = int(torch.randint(1, 5, (1,), generator=g))
            x = torch.randn(bs, 4, 64, 64, device="cuda", dtype=torch.half)
            for t in range(25):
                eps_u, eps_c = denoise(torch.cat([x, x])).chunk(2)
                x = x - 0.04 * (eps_u + 7.5 * (eps_c - eps_u))
                del eps_u, eps_c
            img = x.float().clamp(-1, 1).cpu()
            del x, img


def hf_bert_reentrant_ckpt_train_fp16(torch):
    """transformers' BERT (bert-base shapes, random weights) fine-tuned for sequence
    classification with `gradient_checkpointing_enable(gradient_checkpointing_kwargs=
    {"use_reentrant": True})`, as older recipes and codebases still run it: each layer's
    forward runs under no_grad and is recomputed inside the backward by the reentrant
    `CheckpointFunction`; fp16 autocast with a GradScaler, AdamW, 12 steps of 16 to 64
    sequences of 128 to 512 tokens (dynamic padding)."""
    from transformers import BertConfig, BertForSequenceClassification
    torch.manual_seed(0)
    model = BertForSequenceClassification(BertConfig(num_labels=4)).cuda().train()
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": True})
    opt = torch.optim.AdamW(model.parameters(), lr=2e-5)
    scaler = torch.amp.GradScaler("cuda")
    g = torch.Generator().manual_seed(1)
    for _ in range(12):
        bs = int(torch.randint(16, 65, (1,), generator=g))
        n = int(torch.randint(128, 513, (1,), generator=g)) // 8 * 8
        ids = torch.randint(0, 30522, (bs, n), device="cuda")
        mask = torch.ones(bs, n, dtype=torch.long, device="cuda")
        labels = torch.randint(0, 4, (bs,), device="cuda")
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        del ids, mask, labels, loss


def gp_exact_cholesky_train(torch):
    """Exact Gaussian-process regression, as GPyTorch's exact GPs fit their kernel
    hyperparameters: an RBF-plus-noise kernel matrix over N training points (N 2,000 to
    12,000, 16 features, fp64), its Cholesky factor (`torch.linalg.cholesky`, whose cuSOLVER
    workspace comes from the caching allocator), the negative log marginal likelihood from
    `cholesky_solve` and the factor's diagonal, backward through both; Adam on the
    lengthscales, outputscale and noise, 15 steps, a new subset of the data each step."""
    torch.manual_seed(0)
    log_ls = torch.zeros(16, device="cuda", dtype=torch.float64, requires_grad=True)
    log_os = torch.zeros((), device="cuda", dtype=torch.float64, requires_grad=True)
    log_noise = torch.full((), -2.0, device="cuda", dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([log_ls, log_os, log_noise], lr=0.05)
    g = torch.Generator().manual_seed(1)
    for _ in range(15):
        n = int(torch.randint(2000, 12001, (1,), generator=g))
        x = torch.rand(n, 16, device="cuda", dtype=torch.float64)
        y = torch.sin(x.sum(-1, keepdim=True) * 3) + 0.1 * torch.randn(n, 1, device="cuda", dtype=torch.float64)
        z = x / log_ls.exp()
        d2 = (z.square().sum(-1, keepdim=True) - 2 * z @ z.T + z.square().sum(-1)).clamp_min(0)
        k = log_os.exp() * torch.exp(-0.5 * d2) + (log_noise.exp() + 1e-6) * torch.eye(n, device="cuda", dtype=torch.float64)
        chol = torch.linalg.cholesky(k)
        alpha = torch.cholesky_solve(y, chol)
        nll = 0.5 * (y * alpha).sum() + chol.diagonal().log().sum()
        opt.zero_grad(set_to_none=True)
        nll.backward()
        opt.step()
        del x, y, z, d2, k, chol, alpha, nll


def dreamer_rssm_imagine_train(torch):
    """A Dreamer-style world model and its imagination (Hafner et al.): a recurrent
    state-space model (GRU cell, 1,024 deterministic and 32 x 32 categorical stochastic
    units) observed over batches of 16 to 48 sequences of 64 steps of 64 x 64 images (a
    convolutional encoder and decoder), trained step by step in a Python loop; then from
    every one of the posterior states (batch x 64, detached) an actor imagines 15 steps
    ahead with the prior, and actor and critic are trained on the imagined returns; bf16
    autocast, Adam for each of the three, 6 training iterations."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    deter, cls, cats, act_dim, emb_dim = 1024, 32, 32, 6, 1024
    stoch = cls * cats
    enc = nn.Sequential(nn.Conv2d(3, 48, 4, 2), nn.SiLU(), nn.Conv2d(48, 96, 4, 2), nn.SiLU(),
                        nn.Conv2d(96, 192, 4, 2), nn.SiLU(), nn.Conv2d(192, 384, 4, 2), nn.SiLU(), nn.Flatten(),
                        nn.Linear(384 * 2 * 2, emb_dim)).cuda()
    dec = nn.Sequential(nn.Linear(deter + stoch, 384 * 4 * 4), nn.Unflatten(1, (384, 4, 4)),
                        nn.ConvTranspose2d(384, 192, 4, 2, 1), nn.SiLU(), nn.ConvTranspose2d(192, 96, 4, 2, 1), nn.SiLU(),
                        nn.ConvTranspose2d(96, 48, 4, 2, 1), nn.SiLU(), nn.ConvTranspose2d(48, 3, 4, 2, 1)).cuda()
    cell = nn.GRUCell(stoch + act_dim, deter).cuda()
    prior = nn.Sequential(nn.Linear(deter, 512), nn.SiLU(), nn.Linear(512, stoch)).cuda()
    post = nn.Sequential(nn.Linear(deter + emb_dim, 512), nn.SiLU(), nn.Linear(512, stoch)).cuda()
    reward = nn.Sequential(nn.Linear(deter + stoch, 512), nn.SiLU(), nn.Linear(512, 1)).cuda()
    actor = nn.Sequential(nn.Linear(deter + stoch, 512), nn.SiLU(), nn.Linear(512, act_dim)).cuda()
    critic = nn.Sequential(nn.Linear(deter + stoch, 512), nn.SiLU(), nn.Linear(512, 1)).cuda()
    wm = nn.ModuleList([enc, dec, cell, prior, post, reward])
    opt_wm, opt_a, opt_c = (torch.optim.Adam(m.parameters(), lr=3e-4) for m in (wm, actor, critic))

    def sample(logits):
        probs = logits.float().view(*logits.shape[:-1], cats, cls).softmax(-1)
        idx = torch.multinomial(probs.flatten(0, -2), 1).view(*probs.shape[:-1])
        onehot = F.one_hot(idx, cls).float()
        return (onehot + probs - probs.detach()).flatten(-2)

    g = torch.Generator().manual_seed(1)
    for _ in range(6):
        bs = int(torch.randint(16, 49, (1,), generator=g))
        T = 64
        obs = torch.rand(bs, T, 3, 64, 64, device="cuda")
        acts = F.one_hot(torch.randint(0, act_dim, (bs, T), device="cuda"), act_dim).float()
        rews = torch.randn(bs, T, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            emb = enc(obs.flatten(0, 1)).view(bs, T, -1)
            h = torch.zeros(bs, deter, device="cuda")
            s = torch.zeros(bs, stoch, device="cuda")
            feats, kl = [], 0
            for t in range(T):
                h = cell(torch.cat([s, acts[:, t]], -1), h)
                pl, ql = prior(h), post(torch.cat([h, emb[:, t]], -1))
                s = sample(ql)
                pp = pl.float().view(bs, cats, cls).log_softmax(-1)
                qp = ql.float().view(bs, cats, cls).log_softmax(-1)
                kl = kl + (qp.exp() * (qp - pp)).sum((-1, -2)).mean()
                feats.append(torch.cat([h, s], -1))
            feat = torch.stack(feats, 1)
            recon = dec(feat.flatten(0, 1)).view(bs, T, 3, 64, 64)
            loss = F.mse_loss(recon.float(), obs) + F.mse_loss(reward(feat).squeeze(-1).float(), rews) + 0.1 * kl / T
        loss.backward()
        opt_wm.step()
        opt_wm.zero_grad(set_to_none=True)
        start = feat.detach().flatten(0, 1)
        del obs, acts, rews, emb, h, s, feats, kl, feat, recon, loss
        wm.requires_grad_(False)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h, s = start[:, :deter], start[:, deter:]
            traj, rs = [start], []
            for _ in range(15):
                a = F.gumbel_softmax(actor(torch.cat([h, s], -1)).float(), hard=True)
                h = cell(torch.cat([s, a], -1), h)
                s = sample(prior(h))
                traj.append(torch.cat([h, s], -1))
                rs.append(reward(traj[-1]).squeeze(-1).float())
            values = critic(torch.stack(traj).detach()).squeeze(-1).float()
            ret = torch.stack(rs).sum(0) + values[-1].detach()
            actor_loss = -ret.mean()
            critic_loss = F.mse_loss(values[0], ret.detach())
        (actor_loss + critic_loss).backward()
        opt_a.step()
        opt_c.step()
        opt_a.zero_grad(set_to_none=True)
        opt_c.zero_grad(set_to_none=True)
        wm.requires_grad_(True)
        del start, h, s, traj, rs, values, ret, actor_loss, critic_loss, a


def streaming_conv_state_asr_infer_fp16(torch):
    """Streaming speech recognition inference, as cache-aware streaming Conformers serve live
    audio: each of 24 streams of 20 to 60 s arrives in chunks of 640 ms (64 frames of 80
    features after subsampling), and each of 12 layers keeps two caches from chunk to chunk:
    its last 30 frames of depthwise-convolution input, concatenated before the chunk
    (`torch.cat`) and sliced back, and its attention keys and values over a left context of
    at most 256 frames, appended each chunk and trimmed; fp16, `inference_mode`, 4 streams
    decoded at once (batches of streams ending at different chunks), greedy CTC labels
    copied to the host per chunk."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    d, heads, layers, vocab, left, kconv, chunk = 512, 8, 12, 1024, 256, 31, 64

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2, self.ln3 = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.o = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.pw1, self.dw, self.pw2 = nn.Linear(d, 2 * d), nn.Conv1d(d, d, kconv, groups=d), nn.Linear(d, d)
            self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d))

        def forward(self, x, kv, conv):
            b, n, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).view(b, n, 3, heads, d // heads).permute(2, 0, 3, 1, 4)
            if kv is not None:
                k, v = torch.cat([kv[0], k], 2), torch.cat([kv[1], v], 2)
            a = F.scaled_dot_product_attention(q, k, v)
            x = x + self.o(a.transpose(1, 2).reshape(b, n, d))
            c = F.glu(self.pw1(self.ln2(x)), -1).transpose(1, 2)
            c = torch.cat([conv, c], 2) if conv is not None else F.pad(c, (kconv - 1, 0))
            x = x + self.pw2(F.silu(self.dw(c)).transpose(1, 2))
            x = x + self.ff(self.ln3(x))
            return x, (k[:, :, -left:].contiguous(), v[:, :, -left:].contiguous()), c[:, :, -(kconv - 1):].contiguous()

    stack = nn.ModuleList(Layer() for _ in range(layers)).cuda().half().eval()
    inp, out = nn.Linear(80, d).cuda().half(), nn.Linear(d, vocab).cuda().half()
    g = torch.Generator().manual_seed(1)
    lengths = [int(torch.randint(20, 61, (1,), generator=g)) * 100 // chunk for _ in range(24)]
    with torch.inference_mode():
        for s0 in range(0, 24, 4):
            group = sorted(lengths[s0:s0 + 4], reverse=True)  # the batch keeps the streams still live first
            caches = [(None, None)] * layers
            for c in range(max(group)):
                live = sum(1 for n in group if n > c)
                if caches[0][0] is not None and caches[0][0][0].shape[0] > live:
                    caches = [((kv[0][:live], kv[1][:live]), conv[:live]) for kv, conv in caches]
                x = inp(torch.randn(live, chunk, 80, device="cuda", dtype=torch.half))
                new = []
                for layer, (kv, conv) in zip(stack, caches):
                    x, kv, conv = layer(x, kv, conv)
                    new.append((kv, conv))
                caches = new
                labels = out(x).argmax(-1).cpu()
                del x, new, labels
            del caches



def _hungarian(cost):
    """The rows' distinct columns at the least total cost (len(cost) <= len(cost[0])),
    computed on the host as DETR's matcher does with scipy: the O(n^2 m) shortest
    augmenting path form of the Hungarian algorithm. Returns each row's column."""
    n, m = len(cost), len(cost[0])
    inf = float("inf")
    u, v, p, way = [0.0] * (n + 1), [0.0] * (m + 1), [0] * (m + 1), [0] * (m + 1)
    for i in range(1, n + 1):
        p[0], j0 = i, 0
        minv, used = [inf] * (m + 1), [False] * (m + 1)
        while True:
            used[j0] = True
            i0, delta, j1 = p[j0], inf, 0
            row = cost[i0 - 1]
            for j in range(1, m + 1):
                if not used[j]:
                    cur = row[j - 1] - u[i0] - v[j]
                    if cur < minv[j]:
                        minv[j], way[j] = cur, j0
                    if minv[j] < delta:
                        delta, j1 = minv[j], j
            for j in range(m + 1):
                if used[j]:
                    u[p[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
    col = [0] * n
    for j in range(1, m + 1):
        if p[j]:
            col[p[j] - 1] = j - 1
    return col


def detr_hungarian_train_bf16(torch):
    """DETR-style set prediction (Carion et al.): a resnet50 backbone (torchvision, random
    weights), a 256-wide transformer of 6 encoder and 6 decoder layers over the stride-32
    feature map and 100 object queries, class (91 and no object) and box heads on every
    decoder layer's output; each image has its own number of boxes (1 to 40), matched to
    the queries one image at a time: the class, L1 and GIoU cost matrix built on the GPU,
    copied to the host and assigned there by the Hungarian algorithm (the last layer's
    assignment reused for the auxiliary losses); the matched predictions gathered by index
    for the L1 and GIoU losses; bf16 autocast, AdamW with gradient clipping, 10 steps of 4 to
    10 images of 512 to 896 px a side."""
    import torchvision
    nn = torch.nn
    F = nn.functional
    ops = torchvision.ops
    torch.manual_seed(0)
    d, queries, classes = 256, 100, 91
    body = torchvision.models.resnet50(weights=None)
    backbone = nn.Sequential(*list(body.children())[:-2]).cuda()
    proj = nn.Conv2d(2048, d, 1).cuda()
    pos = nn.Parameter(torch.randn(28 * 28, d, device="cuda") * 0.02)
    query = nn.Parameter(torch.randn(queries, d, device="cuda"))
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 8, 2048, 0.1, batch_first=True), 6,
                                    enable_nested_tensor=False).cuda()
    decoder = nn.ModuleList(nn.TransformerDecoderLayer(d, 8, 2048, 0.1, batch_first=True) for _ in range(6)).cuda()
    norm, cls_head = nn.LayerNorm(d).cuda(), nn.Linear(d, classes + 1).cuda()
    box_head = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 4)).cuda()
    mods = nn.ModuleList([backbone, proj, encoder, decoder, norm, cls_head, box_head])
    params = list(mods.parameters()) + [pos, query]
    opt = torch.optim.AdamW(params, lr=1e-4, weight_decay=1e-4)
    empty = torch.ones(classes + 1, device="cuda")
    empty[-1] = 0.1

    def xyxy(b):
        return ops.box_convert(b, "cxcywh", "xyxy")

    g = torch.Generator().manual_seed(1)
    for _ in range(10):
        bs = int(torch.randint(4, 11, (1,), generator=g))
        hw = [int(torch.randint(512, 897, (1,), generator=g)) // 32 * 32 for _ in range(2)]
        x = torch.randn(bs, 3, *hw, device="cuda")
        targets = []
        for _ in range(bs):
            n = int(torch.randint(1, 41, (1,), generator=g))
            centre, size = 0.1 + 0.8 * torch.rand(n, 2, generator=g), 0.05 + 0.25 * torch.rand(n, 2, generator=g)
            targets.append((torch.randint(0, classes, (n,), generator=g).to("cuda"),
                            torch.cat([centre, size], 1).to("cuda")))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            f = proj(backbone(x))
            h, w = f.shape[-2:]
            memory = encoder(f.flatten(2).transpose(1, 2) + pos.view(28, 28, d)[:h, :w].reshape(h * w, d))
            tgt, outs = query.expand(bs, -1, -1), []
            for layer in decoder:
                tgt = layer(tgt, memory)
                outs.append(norm(tgt))
            hs = torch.stack(outs)
            logits, boxes = cls_head(hs).float(), box_head(hs).float().sigmoid()
        with torch.no_grad():
            order = []
            for i, (labels, tboxes) in enumerate(targets):
                prob = logits[-1, i].softmax(-1)
                cost = (5 * torch.cdist(boxes[-1, i], tboxes, p=1) - prob[:, labels]
                        - 2 * ops.generalized_box_iou(xyxy(boxes[-1, i]), xyxy(tboxes)))
                order.append(_hungarian(cost.T.cpu().tolist()))
        batch_idx = torch.cat([torch.full((len(o),), i, dtype=torch.long) for i, o in enumerate(order)]).to("cuda")
        query_idx = torch.cat([torch.tensor(o, dtype=torch.long) for o in order]).to("cuda")
        tlabels = torch.cat([t[0] for t in targets])
        tboxes = torch.cat([t[1] for t in targets])
        loss = 0
        for lg, bx in zip(logits, boxes):
            target_classes = torch.full((bs, queries), classes, dtype=torch.long, device="cuda")
            target_classes[batch_idx, query_idx] = tlabels
            matched = bx[batch_idx, query_idx]
            loss = (loss + F.cross_entropy(lg.transpose(1, 2), target_classes, weight=empty)
                    + 5 * F.l1_loss(matched, tboxes)
                    + 2 * (1 - ops.generalized_box_iou(xyxy(matched), xyxy(tboxes)).diagonal()).mean())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 0.1)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, targets, f, memory, tgt, outs, hs, logits, boxes, batch_idx, query_idx, tlabels, tboxes
        del loss, target_classes, matched


def rnnt_joint_loss_train_bf16(torch):
    """An RNN-T (transducer) speech recogniser trained with its loss written out, as recipes
    without a fused loss kernel do: a convolutional subsampling (4x in time) and a 4-layer
    LSTM encoder (512 wide) over 80 log-mel features, an embedding and one-layer LSTM
    prediction network over the labels, and the joint network over every (frame, label)
    pair: a (batch, frames, labels + 1, 512) tanh projected to 1,025 outputs (the blank and
    1,024 word pieces), log_softmax in fp32, and the transducer's forward variable computed
    over the lattice one anti-diagonal at a time (logaddexp of the blank and label moves,
    every step's tensors saved for backward); batches of 8 utterances of 4 to 12 s and 20 to
    80 labels, padded; the LSTMs in fp32, the rest under bf16 autocast, Adam, 8 steps."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    d, vocab, hidden = 512, 1024, 512
    sub = nn.Sequential(nn.Conv2d(1, 64, 3, 2, 1), nn.ReLU(), nn.Conv2d(64, 64, 3, 2, 1), nn.ReLU()).cuda()
    inp = nn.Linear(64 * 20, d).cuda()
    enc = nn.LSTM(d, d, 4, batch_first=True).cuda()
    emb = nn.Embedding(vocab + 1, d).cuda()
    pred = nn.LSTM(d, d, 1, batch_first=True).cuda()
    j_enc, j_pred, j_out = nn.Linear(d, hidden).cuda(), nn.Linear(d, hidden).cuda(), nn.Linear(hidden, vocab + 1).cuda()
    mods = nn.ModuleList([sub, inp, enc, emb, pred, j_enc, j_pred, j_out])
    opt = torch.optim.Adam(mods.parameters(), lr=3e-4)
    g = torch.Generator().manual_seed(1)
    for _ in range(8):
        frames = [int(torch.randint(400, 1201, (1,), generator=g)) // 4 * 4 for _ in range(8)]
        nlab = [int(torch.randint(20, 81, (1,), generator=g)) for _ in range(8)]
        T_in, U = max(frames), max(nlab)
        feats = torch.randn(8, 1, 80, T_in, device="cuda")
        labels = torch.randint(1, vocab + 1, (8, U), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            s = sub(feats)
            x = inp(s.permute(0, 3, 1, 2).flatten(2))
        with torch.autocast("cuda", enabled=False):
            e, _ = enc(x.float())
            p, _ = pred(emb(F.pad(labels, (1, 0))))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            z = torch.tanh(j_enc(e)[:, :, None] + j_pred(p)[:, None])
            logp = j_out(z).float().log_softmax(-1)
        T = logp.shape[1]
        blank = logp[..., 0]
        emit = logp[:, :, :-1].gather(-1, labels[:, None, :, None].expand(-1, T, -1, -1)).squeeze(-1)
        u = torch.arange(U + 1, device="cuda")
        neg = torch.tensor(-1e4, device="cuda")
        alpha = torch.where(u == 0, torch.zeros((), device="cuda"), neg).expand(8, -1)
        alphas = [alpha]
        for diag in range(1, T + U):
            t = diag - u
            stay = torch.where(((t - 1 >= 0) & (t - 1 < T))[None], alpha + blank[:, (t - 1).clamp(0, T - 1), u], neg)
            move = torch.where(((u >= 1) & (t >= 0) & (t < T))[None],
                               F.pad(alpha[:, :-1], (1, 0), value=-1e4)
                               + F.pad(emit[:, t.clamp(0, T - 1)[1:], u[:-1]], (1, 0), value=-1e4), neg)
            alpha = torch.where(((t >= 0) & (t < T))[None], torch.logaddexp(stay, move), neg)
            alphas.append(alpha)
        t_len = [min(T, f // 4) for f in frames]
        total = torch.stack([alphas[t_len[b] - 1 + nlab[b]][b, nlab[b]] + blank[b, t_len[b] - 1, nlab[b]]
                             for b in range(8)])
        loss = -(total / torch.tensor(nlab, device="cuda")).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del feats, labels, s, x, e, p, z, logp, blank, emit, alpha, alphas, stay, move, total, loss


def pyhessian_eigen_trace_resnet(torch):
    """The loss's curvature measured as PyHessian does (Yao et al.) to compare minima: a
    resnet18 (torchvision, random weights, 100 classes) trained for 20 SGD steps on
    batches of 256 images of 64 x 64 px, then on each of 4 batches of 128 to 384 images the
    gradient taken with `create_graph=True`, and 12 power iterations for the top Hessian
    eigenvalue and 12 Hutchinson samples (Rademacher vectors) for its trace, each a
    Hessian-vector product (`torch.autograd.grad` of the gradient against the vector,
    `retain_graph=True`) through the double-backward graph kept across all 24; fp32, batch
    norm in train mode as PyHessian runs it."""
    import torchvision
    F = torch.nn.functional
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None, num_classes=100).cuda()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.SGD(params, lr=0.05, momentum=0.9)
    for _ in range(20):
        x = torch.randn(256, 3, 64, 64, device="cuda")
        y = torch.randint(0, 100, (256,), device="cuda")
        F.cross_entropy(model(x), y).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    del x, y
    g = torch.Generator().manual_seed(1)
    for _ in range(4):
        n = int(torch.randint(128, 385, (1,), generator=g))
        x = torch.randn(n, 3, 64, 64, device="cuda")
        y = torch.randint(0, 100, (n,), device="cuda")
        grads = torch.autograd.grad(F.cross_entropy(model(x), y), params, create_graph=True)
        v = [torch.randn_like(p) for p in params]
        norm = torch.sqrt(sum((w * w).sum() for w in v))
        v = [w / norm for w in v]
        eigen = None
        for _ in range(12):
            hv = torch.autograd.grad(grads, params, v, retain_graph=True)
            eigen = sum((a * b).sum() for a, b in zip(hv, v)).item()
            norm = torch.sqrt(sum((w * w).sum() for w in hv))
            v = [w / (norm + 1e-6) for w in hv]
        trace = 0.0
        for _ in range(12):
            v = [torch.randint_like(p, 2) * 2 - 1 for p in params]
            hv = torch.autograd.grad(grads, params, v, retain_graph=True)
            trace += sum((a * b).sum() for a, b in zip(hv, v)).item() / 12
        del x, y, grads, v, hv, norm, eigen, trace


def tta_multiscale_flip_seg_infer_fp16(torch):
    """Test-time augmentation for semantic segmentation, as mmsegmentation's and nnU-Net's
    inference does it: torchvision's DeepLabV3-ResNet50 (random weights, 21 classes) in fp16;
    each of 16 images of its own size (480 to 1,024 px a side) resized so that its short
    side is 0.75, 1.0, 1.25 and 1.5 times 512 px, every scale run on the image and its
    mirror image together (a batch of two), the logits flipped back, resized to the image
    and summed into a float32 accumulator; `inference_mode`, one image at a time, the
    argmax copied to the host."""
    import torchvision
    F = torch.nn.functional
    torch.manual_seed(0)
    model = torchvision.models.segmentation.deeplabv3_resnet50(
        weights=None, weights_backbone=None, num_classes=21, aux_loss=False).cuda().half().eval()
    g = torch.Generator().manual_seed(1)
    with torch.inference_mode():
        for _ in range(16):
            h, w = (int(torch.randint(480, 1025, (1,), generator=g)) for _ in range(2))
            image = torch.rand(1, 3, h, w, device="cuda", dtype=torch.half)
            acc = torch.zeros(1, 21, h, w, device="cuda")
            for scale in (0.75, 1.0, 1.25, 1.5):
                r = scale * 512 / min(h, w)
                x = F.interpolate(image, size=(round(h * r), round(w * r)), mode="bilinear", align_corners=False)
                out = model(torch.cat([x, x.flip(-1)]))["out"]
                out = out[:1] + out[1:].flip(-1)
                acc += F.interpolate(out.float(), size=(h, w), mode="bilinear", align_corners=False)
                del x, out
            labels = acc.argmax(1).cpu()
            del image, acc, labels


def fixmatch_pseudo_label_train_bf16(torch):
    """FixMatch semi-supervised training (Sohn et al.): a resnet50 (torchvision, random weights,
    10 classes) on 96 x 96 px images (STL-10's size), each step 64 labelled images and 7 x 64
    unlabelled ones, the unlabelled in a weak view (flip and shift) and a strong one (the weak
    one with colour, contrast and solarize changes and a 32 px cutout), all made on the GPU;
    the three batches in one forward pass (960 images) under bf16 autocast, pseudo-labels from
    the weak view's detached softmax kept where it is at least 0.95 confident (a mask, so no
    shape depends on it), SGD with Nesterov momentum; an EMA copy of the weights updated
    every step (`torch._foreach_lerp_`) and evaluated under `no_grad` on 512 images every 4
    steps; 12 steps."""
    import copy
    import torchvision
    F = torch.nn.functional
    torch.manual_seed(0)
    model = torchvision.models.resnet50(weights=None, num_classes=10).cuda()
    ema = copy.deepcopy(model).eval()
    opt = torch.optim.SGD(model.parameters(), lr=0.03, momentum=0.9, nesterov=True, weight_decay=5e-4)
    mu, bs = 7, 64

    def weak(x):
        flip = torch.rand(x.shape[0], 1, 1, 1, device="cuda") < 0.5
        x = torch.where(flip, x.flip(-1), x)
        return torch.roll(x, shifts=(int(torch.randint(-12, 13, (1,))), int(torch.randint(-12, 13, (1,)))), dims=(2, 3))

    def strong(x):
        x = x * (0.5 + torch.rand(x.shape[0], 3, 1, 1, device="cuda"))
        mean = x.mean((1, 2, 3), keepdim=True)
        x = (x - mean) * (0.5 + torch.rand(x.shape[0], 1, 1, 1, device="cuda")) + mean
        x = torch.where(x > 0.8, 1 - x, x)
        cy, cx = torch.randint(0, 64, (2,))
        x = x.clone()
        x[:, :, cy:cy + 32, cx:cx + 32] = 0.5
        return x

    for step in range(12):
        xl = torch.rand(bs, 3, 96, 96, device="cuda")
        yl = torch.randint(0, 10, (bs,), device="cuda")
        xu = torch.rand(mu * bs, 3, 96, 96, device="cuda")
        xw = weak(xu)
        xs = strong(xw)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(torch.cat([weak(xl), xw, xs])).float()
        lx, lw, ls = logits[:bs], logits[bs:bs + mu * bs], logits[bs + mu * bs:]
        conf, pseudo = lw.detach().softmax(-1).max(-1)
        mask = (conf >= 0.95).float()
        loss = F.cross_entropy(lx, yl) + (F.cross_entropy(ls, pseudo, reduction="none") * mask).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        with torch.no_grad():
            torch._foreach_lerp_(list(ema.parameters()), list(model.parameters()), 0.001)
            for b, mb in zip(ema.buffers(), model.buffers()):
                b.copy_(mb)
        del xl, yl, xu, xw, xs, logits, lx, lw, ls, conf, pseudo, mask, loss
        if step % 4 == 3:
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                xt = torch.rand(512, 3, 96, 96, device="cuda")
                acc = (ema(xt).argmax(-1) == torch.randint(0, 10, (512,), device="cuda")).float().mean().item()
                del xt, acc



def perceptual_sr_gan_train_bf16(torch):
    """ESRGAN-style 4x super-resolution training (Wang et al.): a generator of 16 residual
    blocks (64 channels, no batch norm) and two pixel-shuffle upsamplings, a VGG-style
    discriminator (strided convolutions to 512 channels, a linear head) under the
    relativistic average loss, and a perceptual loss on torchvision's VGG19 features
    (conv5_4's output before its activation; random weights, frozen, `requires_grad_(False)`)
    of the output and of the target; two Adam optimizers, the discriminator stepped after the generator on its
    detached output; bf16 autocast, batches of 16 low-resolution crops of 48 or 64 px (192
    or 256 px targets), 10 steps."""
    import torchvision
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Conv2d(64, 64, 3, 1, 1), nn.Conv2d(64, 64, 3, 1, 1)

        def forward(self, x):
            return x + 0.2 * self.b(F.leaky_relu(self.a(x), 0.2))

    gen = nn.Sequential(nn.Conv2d(3, 64, 3, 1, 1), *[Block() for _ in range(16)],
                        nn.Conv2d(64, 256, 3, 1, 1), nn.PixelShuffle(2), nn.LeakyReLU(0.2),
                        nn.Conv2d(64, 256, 3, 1, 1), nn.PixelShuffle(2), nn.LeakyReLU(0.2),
                        nn.Conv2d(64, 3, 3, 1, 1)).cuda()
    layers, c = [], 3
    for o in (64, 128, 256, 512, 512):
        layers += [nn.Conv2d(c, o, 3, 1, 1), nn.LeakyReLU(0.2), nn.Conv2d(o, o, 4, 2, 1), nn.LeakyReLU(0.2)]
        c = o
    disc = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 1)).cuda()
    vgg = torchvision.models.vgg19(weights=None).features[:35].cuda().eval().requires_grad_(False)
    opt_g = torch.optim.Adam(gen.parameters(), lr=1e-4, betas=(0.9, 0.99))
    opt_d = torch.optim.Adam(disc.parameters(), lr=1e-4, betas=(0.9, 0.99))
    for step in range(10):
        lr_px = 48 if step % 2 else 64
        hr = torch.rand(16, 3, 4 * lr_px, 4 * lr_px, device="cuda")
        lr = F.interpolate(hr, scale_factor=0.25, mode="bicubic", align_corners=False)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            sr = gen(lr)
            real, fake = disc(hr).float(), disc(sr).float()
            adv = (F.binary_cross_entropy_with_logits(real - fake.mean(), torch.zeros_like(real))
                   + F.binary_cross_entropy_with_logits(fake - real.mean(), torch.ones_like(fake))) / 2
            percep = F.l1_loss(vgg(sr).float(), vgg(hr).float())
            loss_g = percep + 5e-3 * adv + 1e-2 * F.l1_loss(sr.float(), hr)
        loss_g.backward()
        opt_g.step()
        opt_g.zero_grad(set_to_none=True)
        opt_d.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            real, fake = disc(hr).float(), disc(sr.detach()).float()
            loss_d = (F.binary_cross_entropy_with_logits(real - fake.mean(), torch.ones_like(real))
                      + F.binary_cross_entropy_with_logits(fake - real.mean(), torch.zeros_like(fake))) / 2
        loss_d.backward()
        opt_d.step()
        opt_d.zero_grad(set_to_none=True)
        del hr, lr, sr, real, fake, adv, percep, loss_g, loss_d


def sinkhorn_ot_unrolled_train(torch):
    """Point-cloud matching through entropic optimal transport, differentiated by unrolling
    the solver as geomloss's and OTT's unrolled mode do: a PointNet-style encoder (shared
    MLP, 3 to 256 to 256 to 64) embeds two clouds of 2,048 to 5,120 points each, the
    squared-distance cost between every pair of embeddings (an n x m fp32 matrix, from the
    norms and one matrix product), 30 log-domain Sinkhorn iterations (`logsumexp` over the cost minus the potentials, every
    iteration's n x m tensors kept for backward), the transport cost of the final plan as
    the loss; fp32, Adam, 8 steps, a new pair of sizes each step."""
    nn = torch.nn
    torch.manual_seed(0)
    enc = nn.Sequential(nn.Linear(3, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 64)).cuda()
    opt = torch.optim.Adam(enc.parameters(), lr=1e-3)
    eps = 0.05
    g = torch.Generator().manual_seed(1)
    for _ in range(8):
        n, m = (int(torch.randint(2048, 5121, (1,), generator=g)) for _ in range(2))
        a, b = torch.randn(n, 3, device="cuda"), torch.randn(m, 3, device="cuda") * 1.2 + 0.3
        x, y = enc(a), enc(b)
        cost = (x.square().sum(-1)[:, None] + y.square().sum(-1)[None, :] - 2 * x @ y.T) / x.shape[1]
        log_a = torch.full((n,), -float(torch.log(torch.tensor(float(n)))), device="cuda")
        log_b = torch.full((m,), -float(torch.log(torch.tensor(float(m)))), device="cuda")
        f, h = torch.zeros(n, device="cuda"), torch.zeros(m, device="cuda")
        for _ in range(30):
            f = -eps * torch.logsumexp((h[None, :] - cost) / eps + log_b[None, :], 1)
            h = -eps * torch.logsumexp((f[:, None] - cost) / eps + log_a[:, None], 0)
        plan = torch.exp((f[:, None] + h[None, :] - cost) / eps + log_a[:, None] + log_b[None, :])
        loss = (plan * cost).sum()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del a, b, x, y, cost, log_a, log_b, f, h, plan, loss


def ohem_topk_seg_train_bf16(torch):
    """Semantic segmentation with online hard example mining (OHEM, Shrivastava et al.) as
    segmentation codebases use it: torchvision's LR-ASPP MobileNetV3-Large (random weights,
    19 classes, Cityscapes' count), the per-pixel cross-entropy (`reduction="none"`) over the
    upsampled logits, only the hardest quarter of each batch's pixels kept (`topk` over the
    flattened losses, their indices sorted), their mean the loss; bf16 autocast, SGD with
    momentum and a polynomial learning rate, 12 steps of 4 to 12 crops of 512 to 1,024 px a
    side."""
    import torchvision
    F = torch.nn.functional
    torch.manual_seed(0)
    model = torchvision.models.segmentation.lraspp_mobilenet_v3_large(
        weights=None, weights_backbone=None, num_classes=19).cuda().train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=4e-5)
    sched = torch.optim.lr_scheduler.PolynomialLR(opt, total_iters=12, power=0.9)
    g = torch.Generator().manual_seed(1)
    for _ in range(12):
        bs = int(torch.randint(4, 13, (1,), generator=g))
        h, w = (int(torch.randint(512, 1025, (1,), generator=g)) // 16 * 16 for _ in range(2))
        x = torch.randn(bs, 3, h, w, device="cuda")
        y = torch.randint(0, 19, (bs, h, w), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x)["out"]
        pixel = F.cross_entropy(logits.float(), y, reduction="none").flatten()
        hard, idx = pixel.topk(pixel.numel() // 4, sorted=False)
        loss = hard.mean()
        loss.backward()
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        del x, y, logits, pixel, hard, idx, loss


def hard_negative_retrieval_train_fp16(torch):
    """A dense passage retriever trained with mined hard negatives (DPR / ANCE style): a
    6-layer, 768-wide transformer encoder (hand-written, 30,522-token vocabulary, the first
    token's output the embedding) shared by queries and passages; every 4 steps the corpus
    of 60,000 passages of 128 tokens is re-encoded under `no_grad` in chunks of 1,024 into
    an fp16 index, and each of the next steps' queries gets as hard negatives the passages
    ranked 2 to 8 by a chunked `index @ q.T` and `topk` (the top one left out as a likely
    positive); a step trains on 32 queries of 16 to 48 tokens, each with its positive and its
    7 negatives (256 passages), in-batch softmax over all of them;
    fp16 autocast with a `GradScaler`, AdamW, 12 steps."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    d, heads, vocab, corpus, plen = 768, 12, 30522, 60000, 128

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb, self.pos = nn.Embedding(vocab, d), nn.Embedding(512, d)
            self.layers = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, heads, 4 * d, 0.1, batch_first=True,
                                                                           norm_first=True), 6,
                                                enable_nested_tensor=False)

        def forward(self, ids):
            x = self.emb(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
            return F.normalize(self.layers(x)[:, 0], dim=-1)

    model = Encoder().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-5)
    scaler = torch.amp.GradScaler("cuda")
    passages = torch.randint(0, vocab, (corpus, plen), device="cuda")
    g = torch.Generator().manual_seed(1)
    index = None
    for step in range(12):
        if step % 4 == 0:
            del index
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):
                index = torch.cat([model(passages[i:i + 1024]).half() for i in range(0, corpus, 1024)])
            model.train()
        qlen = int(torch.randint(16, 49, (1,), generator=g))
        queries = torch.randint(0, vocab, (32, qlen), device="cuda")
        positives = torch.randint(0, corpus, (32,), device="cuda")
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):
            q = model(queries).half()
            scores = torch.cat([index[i:i + 8192] @ q.T for i in range(0, corpus, 8192)])
            negatives = scores.topk(8, dim=0).indices[1:].T.flatten()
        with torch.autocast("cuda", dtype=torch.float16):
            q = model(queries)
            p = model(passages[torch.cat([positives, negatives])])
            loss = F.cross_entropy(q.float() @ p.float().T / 0.05, torch.arange(32, device="cuda"))
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        del queries, positives, q, scores, negatives, p, loss
    del index


def blockwise_attention_train_bf16(torch):
    """Long-sequence attention computed block by block with an online softmax, as
    memory-efficient attention (Rabe & Staats) and ring attention on one device write it in
    PyTorch: a 4-layer, 1,024-wide decoder (16 heads) whose attention walks the keys and
    values in blocks of 1,024 tokens for each block of 1,024 queries, keeping a running
    maximum, normaliser and output (causal blocks skipped, the diagonal block masked), each
    query block's loop wrapped in non-reentrant `torch.utils.checkpoint` so that backward
    recomputes it; sequences of 4,096 to 12,288 tokens, batch 2, bf16 autocast, AdamW,
    8 steps."""
    from torch.utils.checkpoint import checkpoint
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    d, heads, layers, vocab, blk = 1024, 16, 4, 32000, 1024
    hd = d // heads

    def attend(q, k, v, i):
        """Query block i against key blocks 0..i, online softmax."""
        m = torch.full(q.shape[:-1], -float("inf"), device=q.device)
        s = torch.zeros(q.shape[:-1], device=q.device)
        o = torch.zeros(q.shape, device=q.device)
        for j in range(i + 1):
            kj, vj = k[:, :, j * blk:(j + 1) * blk], v[:, :, j * blk:(j + 1) * blk]
            logits = (q @ kj.transpose(-1, -2)).float() / hd ** 0.5
            if j == i:
                logits = logits.masked_fill(torch.ones(blk, blk, dtype=torch.bool, device=q.device).triu(1), -float("inf"))
            m_new = torch.maximum(m, logits.amax(-1))
            p = torch.exp(logits - m_new[..., None])
            scale = torch.exp(m - m_new)
            s = s * scale + p.sum(-1)
            o = o * scale[..., None] + (p.to(vj.dtype) @ vj).float()
            m = m_new
        return (o / s[..., None]).to(q.dtype)

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.o = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            b, n, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).view(b, n, 3, heads, hd).permute(2, 0, 3, 1, 4)
            out = torch.cat([checkpoint(attend, q[:, :, i * blk:(i + 1) * blk], k, v, i, use_reentrant=False)
                             for i in range(n // blk)], 2)
            x = x + self.o(out.transpose(1, 2).reshape(b, n, d))
            return x + self.mlp(self.ln2(x))

    emb, stack = nn.Embedding(vocab, d).cuda(), nn.ModuleList(Layer() for _ in range(layers)).cuda()
    head = nn.Linear(d, vocab, bias=False).cuda()
    mods = nn.ModuleList([emb, stack, head])
    opt = torch.optim.AdamW(mods.parameters(), lr=3e-4)
    g = torch.Generator().manual_seed(1)
    for _ in range(8):
        n = int(torch.randint(4, 13, (1,), generator=g)) * blk
        ids = torch.randint(0, vocab, (2, n + 1), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            x = emb(ids[:, :-1])
            for layer in stack:
                x = layer(x)
            loss = F.cross_entropy(head(x).float().flatten(0, 1), ids[:, 1:].flatten())
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, x, loss



def kmeans_chunked_assign(torch):
    """GPU k-means as faiss's and cuML's trainers run it, in PyTorch: 1,000,000 to 2,000,000
    embeddings of 128 dimensions (fp32) clustered into 4,096 centroids, each of 12 Lloyd
    iterations assigning the points in chunks of 65,536 (a chunk x 4,096 distance matrix
    from the norms and one matrix product, its argmin), then the centroids recomputed with
    `index_add_` and `bincount`, empty clusters re-seeded from random points; three
    datasets of their own sizes, one after another, each freed before the next."""
    torch.manual_seed(0)
    k, dim, chunk = 4096, 128, 65536
    g = torch.Generator().manual_seed(1)
    for _ in range(3):
        n = int(torch.randint(1_000_000, 2_000_001, (1,), generator=g))
        x = torch.randn(n, dim, device="cuda")
        centroids = x[torch.randperm(n, device="cuda")[:k]].clone()
        xx = x.square().sum(1)
        for _ in range(12):
            cc = centroids.square().sum(1)
            assign = torch.cat([(xx[i:i + chunk, None] - 2 * x[i:i + chunk] @ centroids.T + cc).argmin(1)
                                for i in range(0, n, chunk)])
            sums = torch.zeros_like(centroids).index_add_(0, assign, x)
            counts = torch.bincount(assign, minlength=k)
            centroids = torch.where(counts[:, None] > 0, sums / counts.clamp_min(1)[:, None],
                                    x[torch.randint(0, n, (k,), device="cuda")])
            del cc, assign, sums, counts
        del x, centroids, xx


def crnn_ocr_ctc_varwidth_train(torch):
    """Text-line recognition as CRNN-style OCR trains it: a VGG-style convolutional stack
    over grey text-line images 32 px high and of a batch's own width (the widest line,
    others padded: 128 to 1,024 px), pooled to one row of features per 4 px of width, a
    two-layer bidirectional LSTM (256 a direction), and CTC loss against label sequences of
    their own lengths (5 to 60 of 96 characters); bf16 autocast for the convolutions, the
    LSTM and the loss in fp32, Adam, 16 steps of 32 lines."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)

    def block(i, o, pool):
        return [nn.Conv2d(i, o, 3, 1, 1), nn.BatchNorm2d(o), nn.ReLU(), nn.MaxPool2d(pool)]

    cnn = nn.Sequential(*block(1, 64, (2, 2)), *block(64, 128, (2, 2)), *block(128, 256, (2, 1)),
                        *block(256, 256, (2, 1)), *block(256, 512, (2, 1))).cuda()
    rnn = nn.LSTM(512, 256, 2, bidirectional=True, batch_first=True).cuda()
    out = nn.Linear(512, 97).cuda()
    mods = nn.ModuleList([cnn, rnn, out])
    opt = torch.optim.Adam(mods.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    for _ in range(16):
        widths = [int(torch.randint(128, 1025, (1,), generator=g)) // 4 * 4 for _ in range(32)]
        lengths = [int(torch.randint(5, 61, (1,), generator=g)) for _ in range(32)]
        x = torch.rand(32, 1, 32, max(widths), device="cuda")
        targets = torch.randint(1, 97, (sum(lengths),), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            f = cnn(x)
        seq, _ = rnn(f.float().squeeze(2).transpose(1, 2))
        logp = out(seq).log_softmax(-1).transpose(0, 1)
        loss = F.ctc_loss(logp, targets, [w // 4 for w in widths], lengths, zero_infinity=True)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, targets, f, seq, logp, loss


def siamese_tracker_xcorr_infer_fp16(torch):
    """Visual object tracking as SiamRPN++ runs it: a resnet50 backbone (torchvision, random
    weights, fp16) whose layer2 to layer4 features of each target's 127 px template are
    computed once and kept, then every frame's 255 px search region per target goes
    through the backbone and a depthwise cross-correlation (`conv2d` with the template's
    central 7 x 7 features, or all of layer4's 4 x 4, as a grouped kernel) at each of the
    three levels, resized to 25 x 25 and summed into a classification and a box map
    whose best score picks the next search region (copied to the host); 8 videos of 40 to
    120 frames, 1 to 6 targets each (a batch of targets per frame), `inference_mode`."""
    import torchvision
    F = torch.nn.functional
    torch.manual_seed(0)
    body = torchvision.models.resnet50(weights=None)
    stem = torch.nn.Sequential(body.conv1, body.bn1, body.relu, body.maxpool, body.layer1).cuda().half().eval()
    layers = torch.nn.ModuleList([body.layer2, body.layer3, body.layer4]).cuda().half().eval()
    necks = torch.nn.ModuleList(torch.nn.Conv2d(c, 256, 1) for c in (512, 1024, 2048)).cuda().half().eval()
    head = torch.nn.Conv2d(256, 2 * 5 + 4 * 5, 1).cuda().half().eval()

    def features(img):
        f, outs = stem(img), []
        for layer, neck in zip(layers, necks):
            f = layer(f)
            outs.append(neck(f))
        return outs

    g = torch.Generator().manual_seed(1)
    with torch.inference_mode():
        for _ in range(8):
            frames = int(torch.randint(40, 121, (1,), generator=g))
            targets = int(torch.randint(1, 7, (1,), generator=g))
            z = torch.rand(targets, 3, 127, 127, device="cuda", dtype=torch.half)
            kernels = [f[:, :, (f.shape[2] - s) // 2:(f.shape[2] + s) // 2, (f.shape[3] - s) // 2:(f.shape[3] + s) // 2].contiguous()
                       for f in features(z) for s in [min(7, f.shape[2])]]
            for _ in range(frames):
                x = torch.rand(targets, 3, 255, 255, device="cuda", dtype=torch.half)
                score = 0
                for f, kern in zip(features(x), kernels):
                    b, c, h, w = f.shape
                    corr = F.conv2d(f.reshape(1, b * c, h, w), kern.reshape(b * c, 1, *kern.shape[2:]), groups=b * c)
                    score = score + F.interpolate(head(corr.view(b, c, *corr.shape[2:])), size=(25, 25), mode="bilinear")
                best = score[:, :10].flatten(1).argmax(1).cpu()
                del x, score, corr, best
            del z, kernels


def gpt2_prompt_tuning_train_bf16(torch):
    """Prompt tuning (Lester et al.) of a frozen causal LM: transformers' GPT-2 at 12 layers
    (random weights, `requires_grad_(False)`) with 50 trainable soft-prompt vectors
    prepended to each sequence's token embeddings (`inputs_embeds`), so the backward runs
    through the whole frozen model to reach them; the loss on the tokens only (labels -100
    over the prompt and the padding), batches of 8 to 32 sequences of 128 to 512 tokens,
    bf16 autocast, AdamW on the prompt alone, 12 steps."""
    import transformers
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(n_layer=12, n_embd=768, n_head=12, n_positions=1024)
    model = transformers.GPT2LMHeadModel(cfg).cuda().requires_grad_(False)
    prompt = torch.nn.Parameter(torch.randn(50, 768, device="cuda") * 0.02)
    opt = torch.optim.AdamW([prompt], lr=3e-2)
    wte = model.get_input_embeddings()
    g = torch.Generator().manual_seed(1)
    for _ in range(12):
        bs = int(torch.randint(8, 33, (1,), generator=g))
        n = int(torch.randint(128, 513, (1,), generator=g))
        ids = torch.randint(0, cfg.vocab_size, (bs, n), device="cuda")
        lens = torch.randint(n // 2, n + 1, (bs,), generator=g).to("cuda")
        pad = torch.arange(n, device="cuda")[None] >= lens[:, None]
        embeds = torch.cat([prompt.expand(bs, -1, -1), wte(ids)], 1)
        mask = torch.cat([torch.ones(bs, 50, device="cuda", dtype=torch.long), (~pad).long()], 1)
        labels = torch.cat([torch.full((bs, 50), -100, device="cuda"), ids.masked_fill(pad, -100)], 1)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(inputs_embeds=embeds, attention_mask=mask, labels=labels).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, lens, pad, embeds, mask, labels, loss


def _kv_cache_decoder(torch, d, heads, layers, vocab):
    """A decoder-only language model, hand-written in fp16 on the GPU and made in this
    order: a token embedding, per layer an attention projection, an output projection
    and a GELU MLP, then an untied head without bias (knn_lm_datastore_decode_fp16,
    medusa_tree_decode_fp16, contrastive_search_decode_fp16). Returns the head and
    forward(ids, cache, mask=None), which sends ids through the layers, appends each
    layer's keys and values to cache[i] (None before the first call) by `torch.cat`, and
    returns the last hidden states; attention is causal on the first call and under the
    boolean mask when one is given."""
    nn = torch.nn
    F = nn.functional
    hd = d // heads
    emb = nn.Embedding(vocab, d).cuda().half()
    qkv = nn.ModuleList(nn.Linear(d, 3 * d) for _ in range(layers)).cuda().half()
    proj = nn.ModuleList(nn.Linear(d, d) for _ in range(layers)).cuda().half()
    mlp = nn.ModuleList(nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d)) for _ in range(layers)).cuda().half()
    head = nn.Linear(d, vocab, bias=False).cuda().half()

    def forward(ids, cache, mask=None):
        x = emb(ids)
        for i in range(layers):
            b, n, _ = x.shape
            q, k, v = qkv[i](x).view(b, n, 3, heads, hd).permute(2, 0, 3, 1, 4)
            if cache[i] is not None:
                k, v = torch.cat([cache[i][0], k], 2), torch.cat([cache[i][1], v], 2)
            cache[i] = (k, v)
            a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=mask is None and k.shape[2] == n)
            x = x + proj[i](a.transpose(1, 2).reshape(b, n, d))
            x = x + mlp[i](x)
        return x

    return head, forward


def knn_lm_datastore_decode_fp16(torch):
    """kNN-LM decoding (Khandelwal et al.): a 6-layer, 768-wide decoder (hand-written, fp16,
    32,000 tokens) whose last hidden states over a corpus of 400,000 tokens are stored as
    an fp16 datastore with each position's next token; then 16 prompts of 32 to 256 tokens are
    each continued for 48 tokens with a KV cache, every step's hidden state searched against
    the datastore in chunks of 100,000 (`torch.cdist` and `topk`, the best 64 merged across
    chunks), the neighbours' tokens scattered into a softmax over their distances and
    interpolated with the model's own distribution; `inference_mode`."""
    torch.manual_seed(0)
    d, heads, layers, vocab, store, chunk, nk = 768, 12, 6, 32000, 400_000, 100_000, 64
    head, forward = _kv_cache_decoder(torch, d, heads, layers, vocab)

    with torch.inference_mode():
        corpus = torch.randint(0, vocab, (store + 1,), device="cuda")
        keys, values = [], corpus[1:]
        for i in range(0, store, 1024):
            keys.append(forward(corpus[None, i:i + 1024], [None] * layers)[0])
        keys = torch.cat(keys)
        g = torch.Generator().manual_seed(1)
        for _ in range(16):
            n = int(torch.randint(32, 257, (1,), generator=g))
            ids = torch.randint(0, vocab, (1, n), device="cuda")
            cache = [None] * layers
            h = forward(ids, cache)[:, -1]
            for _ in range(48):
                dist, idx = [], []
                for c in range(0, store, chunk):
                    dc, ic = torch.cdist(h.float(), keys[c:c + chunk].float()).topk(nk, largest=False)
                    dist.append(dc)
                    idx.append(ic + c)
                dist, pos = torch.cat(dist, 1).topk(nk, largest=False)
                idx = torch.cat(idx, 1).gather(1, pos)
                knn = torch.zeros(1, vocab, device="cuda").scatter_add_(1, values[idx], (-dist).softmax(-1))
                p = 0.75 * head(h).float().softmax(-1) + 0.25 * knn
                nxt = p.argmax(-1, keepdim=True)
                h = forward(nxt, cache)[:, -1]
                del dist, idx, pos, knn, p
            del ids, cache, h, nxt
        del corpus, keys, values


def bilstm_crf_ner_train(torch):
    """Named-entity tagging as a BiLSTM-CRF trains it (Lample et al.; the AllenNLP and
    pytorch-crf layers): 50,000 word embeddings of 300 (fp32), a two-layer bidirectional
    LSTM (256 a direction) over packed sentences of their own lengths (`pack_padded_sequence`,
    5 to 120 tokens, batches of 128), emissions for 17 BIO tags, and a linear-chain CRF whose
    log-partition the forward algorithm computes one time step at a time (`logsumexp` over
    17 x 17 transitions, masked past each sentence's end) against the gold path's score;
    every fourth step a held-out batch is Viterbi-decoded under `no_grad` (a backpointer
    tensor a step, the best paths followed back on the host); Adam, 24 steps."""
    nn = torch.nn
    torch.manual_seed(0)
    vocab, tags, bs = 50000, 17, 128
    emb = nn.Embedding(vocab, 300).cuda()
    lstm = nn.LSTM(300, 256, 2, bidirectional=True, batch_first=True).cuda()
    emit = nn.Linear(512, tags).cuda()
    trans = nn.Parameter(torch.randn(tags, tags, device="cuda") * 0.1)
    start = nn.Parameter(torch.zeros(tags, device="cuda"))
    params = [*emb.parameters(), *lstm.parameters(), *emit.parameters(), trans, start]
    opt = torch.optim.Adam(params, lr=1e-3)
    g = torch.Generator().manual_seed(1)

    def emissions(words, lens):
        packed = nn.utils.rnn.pack_padded_sequence(emb(words), lens, batch_first=True, enforce_sorted=False)
        out, _ = lstm(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=words.shape[1])
        return emit(out)

    def batch():
        lens = torch.randint(5, 121, (bs,), generator=g)
        n = int(lens.max())
        words = torch.randint(1, vocab, (bs, n), device="cuda")
        mask = torch.arange(n)[None] < lens[:, None]
        return words.masked_fill(~mask.cuda(), 0), lens, mask.cuda()

    for step in range(24):
        words, lens, mask = batch()
        gold = torch.randint(0, tags, words.shape, device="cuda")
        e = emissions(words, lens)
        alpha = start + e[:, 0]
        score = start[gold[:, 0]] + e[:, 0].gather(1, gold[:, :1]).squeeze(1)
        for t in range(1, words.shape[1]):
            nxt = torch.logsumexp(alpha[:, :, None] + trans + e[:, t, None], 1)
            alpha = torch.where(mask[:, t, None], nxt, alpha)
            step_score = trans[gold[:, t - 1], gold[:, t]] + e[:, t].gather(1, gold[:, t:t + 1]).squeeze(1)
            score = score + step_score * mask[:, t]
        loss = (torch.logsumexp(alpha, 1) - score).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del gold, e, alpha, score, nxt, step_score, loss
        if step % 4 == 3:
            with torch.no_grad():
                words, lens, mask = batch()
                e = emissions(words, lens)
                best, back = start + e[:, 0], []
                for t in range(1, words.shape[1]):
                    cand, arg = (best[:, :, None] + trans).max(1)
                    best = torch.where(mask[:, t, None], cand + e[:, t], best)
                    back.append(arg)
                back = torch.stack(back).cpu()
                last = best.argmax(1).cpu()
                for i, n in enumerate(lens.tolist()):
                    path = [int(last[i])]
                    for t in range(n - 2, -1, -1):
                        path.append(int(back[t, i, path[-1]]))
                del e, best, back, cand, arg
        del words, mask


def chunked_linear_attention_train_bf16(torch):
    """A linear-attention language model trained chunk by chunk, as RetNet's and
    flash-linear-attention's chunkwise form runs it without a fused kernel: 8 layers,
    1,024 wide, 8 heads, each head with its own decay; the sequence cut into chunks of 64
    whose inside is attention with a decay mask, and between chunks a 128 x 128 state per
    head carried forward in a Python loop (each chunk's state kept for the backward), a
    SwiGLU MLP; 32,000 tokens, documents of 2,048 to 8,192 tokens, a batch of 16,384 tokens
    at most, bf16 autocast, AdamW, 10 steps."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    d, heads, layers, vocab, chunk = 1024, 8, 8, 32000, 64
    hd = d // heads
    emb = nn.Embedding(vocab, d).cuda()
    qkv = nn.ModuleList(nn.Linear(d, 3 * d, bias=False) for _ in range(layers)).cuda()
    out = nn.ModuleList(nn.Linear(d, d, bias=False) for _ in range(layers)).cuda()
    up = nn.ModuleList(nn.Linear(d, 2 * 2816, bias=False) for _ in range(layers)).cuda()
    down = nn.ModuleList(nn.Linear(2816, d, bias=False) for _ in range(layers)).cuda()
    norms = nn.ModuleList(nn.RMSNorm(d) for _ in range(2 * layers)).cuda()
    head = nn.Linear(d, vocab, bias=False).cuda()
    mods = nn.ModuleList([emb, qkv, out, up, down, norms, head])
    opt = torch.optim.AdamW(mods.parameters(), lr=3e-4)
    gamma = 1 - 2.0 ** (-5 - torch.arange(heads, device="cuda", dtype=torch.float))
    pos = torch.arange(chunk, device="cuda", dtype=torch.float)
    decay = torch.where(pos[:, None] >= pos[None], gamma[:, None, None] ** (pos[:, None] - pos[None]), 0.0)
    q_scale = gamma[:, None] ** (pos + 1)[None]
    k_scale = gamma[:, None] ** (chunk - 1 - pos)[None]
    g = torch.Generator().manual_seed(1)

    def retention(x):
        b, n, _ = x.shape
        q, k, v = (t.view(b, n // chunk, chunk, heads, hd).permute(0, 3, 1, 2, 4) for t in x.chunk(3, -1))
        inner = ((q @ k.transpose(-1, -2)) * decay[:, None].to(q.dtype)) @ v
        state = torch.zeros(b, heads, hd, hd, device="cuda")
        cross = []
        for c in range(n // chunk):
            cross.append((q[:, :, c] * q_scale[..., None].to(q.dtype)) @ state.to(q.dtype))
            state = gamma[:, None, None] ** chunk * state + (k[:, :, c] * k_scale[..., None].to(k.dtype)).transpose(-1, -2).float() @ v[:, :, c].float()
        o = inner + torch.stack(cross, 2)
        return o.permute(0, 2, 3, 1, 4).reshape(b, n, d) / hd ** 0.5

    for _ in range(10):
        n = int(torch.randint(32, 129, (1,), generator=g)) * chunk
        b = max(1, 16384 // n)
        ids = torch.randint(0, vocab, (b, n + 1), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            x = emb(ids[:, :-1])
            for i in range(layers):
                x = x + out[i](retention(qkv[i](norms[2 * i](x))))
                a, gate = up[i](norms[2 * i + 1](x)).chunk(2, -1)
                x = x + down[i](F.silu(gate) * a)
            loss = F.cross_entropy(head(x).flatten(0, 1).float(), ids[:, 1:].flatten())
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del ids, x, a, gate, loss


def pointpillars_scatter_train_bf16(torch):
    """Lidar 3-D detection as PointPillars trains it (OpenPCDet, mmdet3d): each sweep of
    60,000 to 120,000 points (x, y, z, intensity) is binned into 0.16 m pillars of a 432 x
    496 grid (`unique` with `return_inverse`: a sweep's own number of pillars), each point
    decorated with its offsets from the pillar's mean and centre (`index_add_`), a
    PointNet layer (linear, batch norm, ReLU) per point, the points max-pooled into their
    pillar (`scatter_reduce` "amax") and the pillars scattered onto a 64-channel
    bird's-eye canvas; a three-stage 2-D backbone with upsampling and an anchor head
    (2 anchors a cell, 3 classes, 7 box values) under a focal and a smooth-L1 loss on
    random targets; batches of 4 sweeps, bf16 autocast, AdamW, 12 steps."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    nx, ny, size = 432, 496, 0.16
    pfn = nn.Sequential(nn.Linear(9, 64, bias=False), nn.BatchNorm1d(64), nn.ReLU()).cuda()

    def stage(i, o, n, stride):
        mods = [nn.Conv2d(i, o, 3, stride, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU()]
        for _ in range(n):
            mods += [nn.Conv2d(o, o, 3, 1, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU()]
        return nn.Sequential(*mods)

    def deblock(i, o, stride):
        return nn.Sequential(nn.ConvTranspose2d(i, o, stride, stride, bias=False), nn.BatchNorm2d(o), nn.ReLU())

    blocks = nn.ModuleList([stage(64, 64, 3, 2), stage(64, 128, 5, 2), stage(128, 256, 5, 2)]).cuda()
    ups = nn.ModuleList([deblock(64, 128, 1), deblock(128, 128, 2), deblock(256, 128, 4)]).cuda()
    cls_head = nn.Conv2d(384, 2 * 3, 1).cuda()
    box_head = nn.Conv2d(384, 2 * 7, 1).cuda()
    mods = nn.ModuleList([pfn, blocks, ups, cls_head, box_head])
    opt = torch.optim.AdamW(mods.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    for _ in range(12):
        canvases = []
        with torch.autocast("cuda", dtype=torch.bfloat16):
            for _ in range(4):
                n = int(torch.randint(60_000, 120_001, (1,), generator=g))
                pts = torch.rand(n, 4, device="cuda") * torch.tensor([69.12, 79.36, 4.0, 1.0], device="cuda")
                pts[:, 1] -= 39.68
                pts[:, 2] -= 3.0
                ix = (pts[:, 0] / size).long().clamp(0, nx - 1)
                iy = ((pts[:, 1] + 39.68) / size).long().clamp(0, ny - 1)
                cells, inv = torch.unique(iy * nx + ix, return_inverse=True)
                count = torch.zeros(len(cells), device="cuda").index_add_(0, inv, torch.ones(n, device="cuda"))
                mean = torch.zeros(len(cells), 3, device="cuda").index_add_(0, inv, pts[:, :3]) / count[:, None]
                centre = torch.stack([(ix + 0.5) * size, (iy + 0.5) * size - 39.68], 1)
                feats = torch.cat([pts, pts[:, :3] - mean[inv], pts[:, :2] - centre], 1)
                h = pfn(feats)
                pillars = torch.full((len(cells), 64), float("-inf"), device="cuda", dtype=h.dtype)
                pillars = pillars.scatter_reduce(0, inv[:, None].expand(-1, 64), h, "amax")
                canvas = torch.zeros(64, ny * nx, device="cuda", dtype=h.dtype)
                canvas = canvas.index_put((torch.arange(64, device="cuda")[:, None], cells[None]), pillars.T)
                canvases.append(canvas.view(64, ny, nx))
            x = torch.stack(canvases)
            outs = []
            for block, up in zip(blocks, ups):
                x = block(x)
                outs.append(up(x))
            f = torch.cat(outs, 1)
            cls, box = cls_head(f).float(), box_head(f).float()
        target = (torch.rand_like(cls) < 0.01).float()
        p = cls.sigmoid()
        pt = torch.where(target > 0, p, 1 - p)
        focal = (-(1 - pt) ** 2 * torch.log(pt.clamp_min(1e-6)) * torch.where(target > 0, 0.25, 0.75)).sum() / target.sum().clamp_min(1)
        loss = focal + F.smooth_l1_loss(box, torch.randn_like(box))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del canvases, pts, ix, iy, cells, inv, count, mean, centre, feats, h, pillars, canvas, x, outs, f
        del cls, box, target, p, pt, focal, loss


def medusa_tree_decode_fp16(torch):
    """Medusa decoding (Cai et al.): a 12-layer, 1,024-wide decoder (hand-written, fp16,
    32,000 tokens) with four extra heads (a residual SiLU block each, read through the
    model's own vocabulary projection) guessing the tokens 2 to 5 ahead; each step their top 4, 3, 2 and 2 tokens make a
    tree of 88 candidates, verified in one pass of the tree against the KV cache with a
    tree attention mask (each node sees the cache and its own ancestors); the longest path
    on which the model agrees with the guesses (the data decides) is accepted and its
    nodes' keys and values gathered onto the cache (`index_select`, `torch.cat`); 8 prompts
    of 64 to 512 tokens, 128 new tokens each, `inference_mode`."""
    nn = torch.nn
    torch.manual_seed(0)
    d, heads, layers, vocab = 1024, 16, 12, 32000
    topk = (4, 3, 2, 2)
    lm, forward = _kv_cache_decoder(torch, d, heads, layers, vocab)
    medusa = nn.ModuleList(nn.Sequential(nn.Linear(d, d), nn.SiLU()) for _ in topk).cuda().half()

    # the static tree: every path of choices (i1, i2, ...) among each head's top-k
    paths = [()]
    for depth, k in enumerate(topk):
        paths += [p + (i,) for p in paths if len(p) == depth for i in range(k)]
    paths = paths[1:]
    index = {p: i for i, p in enumerate(paths)}
    parent = torch.tensor([index.get(p[:-1], -1) for p in paths])
    depth = torch.tensor([len(p) - 1 for p in paths])
    anc = torch.eye(len(paths), dtype=torch.bool)
    for i, p in enumerate(paths):
        for j in range(1, len(p)):
            anc[i, index[p[:j]]] = True
    leaves = [p for p in paths if len(p) == len(topk)]
    leaf_nodes = torch.tensor([[index[p[:j + 1]] for j in range(len(p))] for p in leaves], device="cuda")
    choice = torch.tensor([p[-1] for p in paths], device="cuda")
    depth, parent, anc = depth.cuda(), parent.cuda(), anc.cuda()

    # the tree's own block of the mask: the root (the model's next token) sees itself, each
    # node the root and its ancestors
    tree_mask = torch.cat([torch.zeros(1, len(paths), dtype=torch.bool, device="cuda"), anc], 0)
    g = torch.Generator().manual_seed(1)
    with torch.inference_mode():
        for _ in range(8):
            n = int(torch.randint(64, 513, (1,), generator=g))
            ids = torch.randint(0, vocab, (1, n), device="cuda")
            cache = [None] * layers
            h = forward(ids, cache)[:, -1]
            made = 0
            while made < 128:
                nxt = lm(h).argmax(-1)
                guesses = torch.stack([lm(h + m(h)).topk(max(topk), -1).indices[0] for m in medusa])
                tokens = guesses[depth, choice]
                length = cache[0][0].shape[2]
                mask = torch.cat([torch.ones(len(paths) + 1, length + 1, dtype=torch.bool, device="cuda"), tree_mask], 1)
                tree = list(cache)
                x = forward(torch.cat([nxt, tokens])[None], tree, mask)
                pred = lm(x[0]).argmax(-1)
                # a node is right when the model, at its parent (the root for the first
                # level), predicts the node's token
                ok = pred[parent + 1] == tokens
                agree = ok[leaf_nodes].long().cumprod(1).sum(1)
                best = int(agree.argmax())
                take = int(agree[best])
                keep = torch.cat([torch.zeros(1, dtype=torch.long, device="cuda"), leaf_nodes[best, :take] + 1])
                cache = [(torch.cat([c[0], t[0][:, :, length:].index_select(2, keep)], 2),
                          torch.cat([c[1], t[1][:, :, length:].index_select(2, keep)], 2)) for c, t in zip(cache, tree)]
                h = x[:, keep[-1]]
                made += 1 + take
                del nxt, guesses, tokens, mask, x, tree, pred, ok, agree, keep
            del ids, cache, h


def contrastive_search_decode_fp16(torch):
    """Contrastive search (Su et al.; transformers' `penalty_alpha`): a 24-layer, 1,024-wide
    decoder (hand-written, fp16, 32,000 tokens) whose every step takes the top 6 tokens,
    runs all six through the model against a KV cache repeated six times
    (`repeat_interleave`), scores each by 0.4 times its probability less 0.6 times its
    hidden state's highest cosine similarity to the context's, and keeps the winner's keys and
    values (`index_select` of the repeated cache); batches of 4 prompts of 64 to 384
    tokens, 96 new tokens each, 6 batches, `inference_mode`."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    d, heads, layers, vocab, k, alpha = 1024, 16, 24, 32000, 6, 0.6
    lm, forward = _kv_cache_decoder(torch, d, heads, layers, vocab)

    g = torch.Generator().manual_seed(1)
    with torch.inference_mode():
        for _ in range(6):
            n = int(torch.randint(64, 385, (1,), generator=g))
            ids = torch.randint(0, vocab, (4, n), device="cuda")
            cache = [None] * layers
            ctx = forward(ids, cache)
            logits = lm(ctx[:, -1])
            ctx = F.normalize(ctx.float(), dim=-1)
            for _ in range(96):
                p, top = logits.float().softmax(-1).topk(k, -1)
                wide = [(c[0].repeat_interleave(k, 0), c[1].repeat_interleave(k, 0)) for c in cache]
                h = forward(top.reshape(-1, 1), wide)[:, -1]
                sim = (F.normalize(h.float(), dim=-1).view(4, k, 1, d) * ctx[:, None]).sum(-1).amax(-1)
                pick = ((1 - alpha) * p - alpha * sim).argmax(-1)
                rows = torch.arange(4, device="cuda") * k + pick
                cache = [(c[0].index_select(0, rows), c[1].index_select(0, rows)) for c in wide]
                h = h.index_select(0, rows)
                logits = lm(h)
                ctx = torch.cat([ctx, F.normalize(h.float(), dim=-1)[:, None]], 1)
                del p, top, wide, sim, pick, rows
            del ids, cache, ctx, logits, h


def gaussian_splat_densify_train(torch):
    """3D Gaussian splatting's training loop as the reference implementation runs it, its
    rasteriser written in plain PyTorch: 300,000 Gaussians to start (position, log-scale,
    rotation, opacity logit, colour, each its own parameter with its own Adam state), every
    step projects them through a random camera onto a 512 x 512 image and splats each one's
    7 x 7 pixel footprint with `index_add_`, an L1 loss against the target view; every 40
    steps `densify_and_prune`: Gaussians whose mean projected-position gradient is in the top
    tenth are cloned with jitter, those whose opacity fell below 0.005 or lie behind the
    camera too often are pruned, each parameter rebuilt by boolean indexing and `cat` and
    Adam's two moments indexed and extended with zeros to match, as the reference's
    `cat_tensors_to_optimizer` and `_prune_optimizer` do; 240 steps, fp32."""
    import math
    nn = torch.nn
    torch.manual_seed(0)
    n, hw, focal, foot = 300_000, 512, 600.0, 3
    params = {"xyz": torch.randn(n, 3, device="cuda") * 2,
              "scale": torch.full((n, 3), -3.0, device="cuda"),
              "rot": torch.randn(n, 4, device="cuda"),
              "opacity": torch.full((n, 1), -2.0, device="cuda"),
              "rgb": torch.rand(n, 3, device="cuda")}
    params = {k: nn.Parameter(v) for k, v in params.items()}
    lr = {"xyz": 1.6e-4, "scale": 5e-3, "rot": 1e-3, "opacity": 5e-2, "rgb": 2.5e-3}
    opt = torch.optim.Adam([{"params": [p], "lr": lr[k], "name": k} for k, p in params.items()], eps=1e-15)
    target = torch.rand(hw * hw, 3, device="cuda")
    dy, dx = torch.meshgrid(torch.arange(-foot, foot + 1, device="cuda"),
                            torch.arange(-foot, foot + 1, device="cuda"), indexing="ij")
    offsets = torch.stack([dx.reshape(-1), dy.reshape(-1)], -1).float()
    grad_sum = torch.zeros(n, device="cuda")
    seen = torch.zeros(n, device="cuda")

    def rebuild(keep, extra):
        # the reference's _prune_optimizer and cat_tensors_to_optimizer in one: every parameter
        # and both Adam moments indexed by keep, extra rows (new Gaussians) appended
        for group in opt.param_groups:
            old = group["params"][0]
            state = opt.state.pop(old, None)
            rows = extra[group["name"]]
            new = nn.Parameter(torch.cat([old.detach()[keep], rows]))
            if state is not None:
                for m in ("exp_avg", "exp_avg_sq"):
                    state[m] = torch.cat([state[m][keep], torch.zeros_like(rows)])
                opt.state[new] = state
            group["params"][0] = new
            params[group["name"]] = new

    g = torch.Generator().manual_seed(1)
    for step in range(240):
        angle = float(torch.rand(1, generator=g)) * 2 * math.pi
        c, s = math.cos(angle), math.sin(angle)
        rot = torch.tensor([[c, 0, s], [0, 1, 0], [-s, 0, c]], device="cuda")
        cam = params["xyz"] @ rot.T + torch.tensor([0.0, 0.0, 8.0], device="cuda")
        z = cam[:, 2:].clamp_min(0.2)
        uv = cam[:, :2] / z * focal + hw / 2
        uv.retain_grad()
        q = nn.functional.normalize(params["rot"], dim=-1)
        sigma = (params["scale"].exp() * (0.5 + q[:, 1:].square())).mean(-1, keepdim=True) / z * focal + 0.5
        alpha = params["opacity"].sigmoid()
        px = uv.detach().round()[:, None] + offsets
        d2 = (px - uv[:, None]).square().sum(-1)
        w = alpha * torch.exp(-0.5 * d2 / sigma.square())
        inside = ((px >= 0) & (px < hw)).all(-1) & (cam[:, None, 2] > 0.2)
        idx = (px[..., 1].clamp(0, hw - 1) * hw + px[..., 0].clamp(0, hw - 1)).long()
        contrib = (w * inside)[..., None] * params["rgb"].sigmoid()[:, None]
        image = torch.zeros(hw * hw, 3, device="cuda").index_add_(0, idx.reshape(-1), contrib.reshape(-1, 3))
        loss = (image - target).abs().mean()
        loss.backward()
        grad_sum += uv.grad.norm(dim=-1)
        seen += (cam[:, 2] > 0.2).float()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del cam, z, uv, q, sigma, alpha, px, d2, w, inside, idx, contrib, image, loss
        if step % 40 == 39:
            with torch.no_grad():
                mean_grad = grad_sum / seen.clamp_min(1)
                clone = mean_grad >= mean_grad.quantile(0.9)
                prune = (params["opacity"].sigmoid()[:, 0] < 0.005) | (seen < 2)
                keep = ~prune
                src = clone & keep
                extra = {k: p.detach()[src].clone() for k, p in params.items()}
                extra["xyz"] += torch.randn_like(extra["xyz"]) * extra["scale"].exp()
                rebuild(keep, extra)
                total = len(params["xyz"])
                grad_sum = torch.zeros(total, device="cuda")
                seen = torch.zeros(total, device="cuda")
                del mean_grad, clone, prune, keep, src, extra


def evoformer_pair_chunked_infer_bf16(torch):
    """AlphaFold-style structure inference as OpenFold runs it with `chunk_size` set: per
    protein of 256 to 768 residues (a length of its own), an MSA of 64 sequences x 256
    channels and a pair representation of N x N x 128 through 8 Evoformer-like blocks in
    bf16 under `inference_mode`: MSA row attention with the pair as bias (8 heads, 16
    sequences a chunk), column attention, the outer-product mean added to the pair 64 rows a
    chunk, the outgoing and incoming triangle multiplicative updates, triangle attention
    around the starting and the ending node (4 heads, 64 rows a chunk, each chunk's output
    written into a tensor made for the whole pair, as `chunk_layer` does), the pair and MSA
    transitions; a distogram head at the end; 5 proteins, each freed before the next."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    cm, cz, seqs, heads, chunk = 256, 128, 64, 8, 64

    def mlp(c):
        return nn.Sequential(nn.LayerNorm(c), nn.Linear(c, 4 * c), nn.ReLU(), nn.Linear(4 * c, c))

    def tri_mul():
        return nn.ModuleDict(dict(norm=nn.LayerNorm(cz), ab=nn.Linear(cz, 4 * cz), gate=nn.Linear(cz, cz),
                                  out_norm=nn.LayerNorm(cz), out=nn.Linear(cz, cz)))

    def tri_att():
        return nn.ModuleDict(dict(norm=nn.LayerNorm(cz), qkv=nn.Linear(cz, 3 * cz, bias=False),
                                  bias=nn.Linear(cz, 4, bias=False), out=nn.Linear(cz, cz)))

    def block():
        return nn.ModuleDict(dict(
            row_norm=nn.LayerNorm(cm), row_qkv=nn.Linear(cm, 3 * cm, bias=False),
            row_bias=nn.Sequential(nn.LayerNorm(cz), nn.Linear(cz, heads, bias=False)), row_out=nn.Linear(cm, cm),
            col_norm=nn.LayerNorm(cm), col_qkv=nn.Linear(cm, 3 * cm, bias=False), col_out=nn.Linear(cm, cm),
            msa_trans=mlp(cm), opm_norm=nn.LayerNorm(cm), opm=nn.Linear(cm, 64), opm_out=nn.Linear(32 * 32, cz),
            tri_out=tri_mul(), tri_in=tri_mul(), att_start=tri_att(), att_end=tri_att(), pair_trans=mlp(cz)))

    blocks = nn.ModuleList(block() for _ in range(8)).cuda().to(torch.bfloat16).eval()
    distogram = nn.Linear(cz, 64).cuda().to(torch.bfloat16)

    def attend(qkv, x, h, bias=None):
        q, k, v = qkv(x).unflatten(-1, (3, h, -1)).unbind(-3)
        o = F.scaled_dot_product_attention(q.transpose(-2, -3), k.transpose(-2, -3), v.transpose(-2, -3),
                                           attn_mask=bias)
        return o.transpose(-2, -3).flatten(-2)

    def triangle_multiply(t, z, outgoing):
        x = t["norm"](z)
        a, ga, b, gb = t["ab"](x).chunk(4, -1)
        a, b = a * ga.sigmoid(), b * gb.sigmoid()
        p = torch.einsum("ikc,jkc->ijc" if outgoing else "kic,kjc->ijc", a, b)
        z += t["gate"](x).sigmoid() * t["out"](t["out_norm"](p))

    def triangle_attend(t, z):
        # z may be the pair's transpose (around the ending node): written through the view
        x = t["norm"](z)
        bias = t["bias"](x).permute(2, 0, 1)[None]
        out = torch.empty_like(z)
        for i in range(0, z.shape[0], chunk):
            out[i:i + chunk] = t["out"](attend(t["qkv"], x[i:i + chunk], 4, bias))
        z += out

    g = torch.Generator().manual_seed(1)
    with torch.inference_mode():
        for _ in range(5):
            n = int(torch.randint(256, 769, (1,), generator=g))
            m = torch.randn(seqs, n, cm, device="cuda", dtype=torch.bfloat16)
            z = torch.randn(n, n, cz, device="cuda", dtype=torch.bfloat16)
            for b in blocks:
                bias = b["row_bias"](z).permute(2, 0, 1)[None]
                x = b["row_norm"](m)
                for s in range(0, seqs, 16):
                    m[s:s + 16] += b["row_out"](attend(b["row_qkv"], x[s:s + 16], heads, bias))
                x = b["col_norm"](m).transpose(0, 1)
                m += b["col_out"](attend(b["col_qkv"], x, heads)).transpose(0, 1)
                m += b["msa_trans"](m)
                left, right = b["opm"](b["opm_norm"](m)).chunk(2, -1)
                for i in range(0, n, chunk):
                    outer = torch.einsum("sic,sjd->ijcd", left[:, i:i + chunk], right) / seqs
                    z[i:i + chunk] += b["opm_out"](outer.flatten(-2))
                triangle_multiply(b["tri_out"], z, True)
                triangle_multiply(b["tri_in"], z, False)
                triangle_attend(b["att_start"], z)
                triangle_attend(b["att_end"], z.transpose(0, 1))
                for i in range(0, n, chunk):
                    z[i:i + chunk] += b["pair_trans"](z[i:i + chunk])
                del bias, x, left, right, outer
            bins = distogram(z + z.transpose(0, 1)).argmax(-1)
            del m, z, bins


def ties_merge_checkpoints_bf16(torch):
    """Model merging as mergekit's `ties` method runs it with `--cuda`: a base model shaped
    like a 1.1B-parameter Llama (22 layers, 2,048 wide, grouped-query attention, a 32,000-token
    vocabulary) and four fine-tuned checkpoints of it, merged one tensor at a time: each
    tensor of the five brought onto the GPU in bf16, the four task vectors' magnitudes ranked
    (`argsort`, as mergekit's `magnitude` sparsification does) and all but the largest 20 %
    zeroed, the sign elected by the trimmed sum, the agreeing entries averaged with weights,
    the merged tensor added to the base and copied back to the host; then the same models
    merged again by DARE (a random 70 % of each task vector dropped, the rest rescaled)."""
    torch.manual_seed(0)
    d, kv, ff, vocab, layers, models = 2048, 256, 5632, 32000, 22, 4
    shapes = [("embed_tokens", (vocab, d))]
    for i in range(layers):
        shapes += [(f"layers.{i}.{k}", s) for k, s in (
            ("q_proj", (d, d)), ("k_proj", (kv, d)), ("v_proj", (kv, d)), ("o_proj", (d, d)),
            ("gate_proj", (ff, d)), ("up_proj", (ff, d)), ("down_proj", (d, ff)),
            ("input_layernorm", (d,)), ("post_attention_layernorm", (d,)))]
    shapes += [("norm", (d,)), ("lm_head", (vocab, d))]
    weights = torch.tensor([0.4, 0.3, 0.2, 0.1], device="cuda", dtype=torch.bfloat16)

    def load(shape):
        # one tensor of the base and of each fine-tuned checkpoint, as read onto the GPU
        base = torch.randn(shape, device="cuda", dtype=torch.bfloat16)
        tuned = [base + 0.01 * torch.randn(shape, device="cuda", dtype=torch.bfloat16) for _ in range(models)]
        return base, tuned

    def ties(base, tuned):
        deltas = torch.stack([t - base for t in tuned])
        flat = deltas.view(models, -1)
        k = max(1, int(0.2 * flat.shape[1]))
        mask = torch.zeros_like(flat)
        for j in range(models):
            top = torch.argsort(flat[j].abs(), descending=True)[:k]
            mask[j][top] = 1
            del top
        deltas = deltas * mask.view_as(deltas)
        w = weights.view(-1, *([1] * base.dim()))
        sign = (deltas * w).sum(0).sign()
        agree = (deltas.sign() == sign).to(deltas.dtype) * w
        return base + (deltas * agree).sum(0) / agree.sum(0).clamp_min(1e-6)

    def dare(base, tuned):
        deltas = torch.stack([t - base for t in tuned])
        keep = torch.rand_like(deltas) >= 0.7
        deltas = torch.where(keep, deltas / 0.3, torch.zeros_like(deltas))
        w = weights.view(-1, *([1] * base.dim()))
        return base + (deltas * w).sum(0)

    for merge in (ties, dare):
        merged = {}
        for name, shape in shapes:
            base, tuned = load(shape)
            merged[name] = merge(base, tuned).cpu()
            del base, tuned
        del merged


def sam_like_auto_masks_infer_fp16(torch):
    """Segment Anything's automatic mask generator (`SamAutomaticMaskGenerator`), its model
    light: per photo of its own size (1,200 to 2,400 px a side, resized to 1,024 on the long
    side and padded) a ViT encoder (12 layers, d 768, fp16) once, then a 32 x 32 grid of
    point prompts 64 points a batch through a two-way mask decoder (three masks a point,
    256² logits), each batch's masks upsampled to the padded 1,024² and then to the photo's
    own size, filtered by predicted IoU and by a stability score (two thresholded masks'
    intersection over union), boxes taken from the kept masks, each kept mask turned into
    uncompressed RLE on the GPU (`mask_to_rle_pytorch`: transpose, flatten, diff, nonzero)
    and copied to the host; at the end the photo's boxes through `batched_nms`; 4 photos
    under `inference_mode`."""
    import torchvision
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    d = 768
    patch, enc, neck, prompt_emb, t2i, i2t, up = _sam_like_model(torch, d)
    mask_tokens = nn.Parameter(torch.randn(1, 4, 256, device="cuda", dtype=torch.float16))
    hyper = nn.Linear(256, 32).cuda().half().eval()
    iou_head = nn.Linear(256, 1).cuda().half().eval()
    grid = torch.stack(torch.meshgrid(*(torch.linspace(1 / 64, 63 / 64, 32),) * 2, indexing="xy"), -1).reshape(-1, 2)

    def mask_to_rle(masks):
        b, h, w = masks.shape
        flat = masks.permute(0, 2, 1).flatten(1)
        change = (flat[:, 1:] ^ flat[:, :-1]).nonzero()
        return [change[change[:, 0] == i, 1].cpu() for i in range(b)]

    g = torch.Generator().manual_seed(7)
    with torch.inference_mode():
        for _ in range(4):
            h, w = (int(torch.randint(1200, 2401, (1,), generator=g)) for _ in range(2))
            scale = 1024 / max(h, w)
            rh, rw = round(h * scale), round(w * scale)
            photo = torch.rand(1, 3, h, w, device="cuda", dtype=torch.float16)
            img = F.pad(F.interpolate(photo, (rh, rw), mode="bilinear"), (0, 1024 - rw, 0, 1024 - rh))
            emb = neck(enc(patch(img).flatten(2).transpose(1, 2)).transpose(1, 2).reshape(1, d, 64, 64))
            boxes, scores = [], []
            for s in range(0, len(grid), 64):
                pts = grid[s:s + 64].to("cuda", torch.float16)[:, None]
                tokens = torch.cat([mask_tokens.expand(len(pts), -1, -1), prompt_emb(pts)], 1)
                src = emb.flatten(2).transpose(1, 2).repeat_interleave(len(pts), 0)
                tokens = tokens + t2i(tokens, src, src)[0]
                src = src + i2t(src, tokens, tokens)[0]
                feats = up(src.transpose(1, 2).reshape(-1, 256, 64, 64))
                low = (hyper(tokens[:, 1:4]) @ feats.flatten(2)).view(-1, 3, 256, 256)
                iou = iou_head(tokens[:, 1:4])[..., 0].float().sigmoid()
                masks = F.interpolate(low, (1024, 1024), mode="bilinear")[..., :rh, :rw]
                masks = F.interpolate(masks, (h, w), mode="bilinear").flatten(0, 1)
                stable = (masks > 1).sum((-1, -2)).float() / (masks > -1).sum((-1, -2)).float().clamp_min(1)
                keep = (iou.flatten() > 0.5) & (stable > 0.0)
                binary = masks[keep] > 0
                rows, cols = binary.any(-1), binary.any(-2)
                ar_h, ar_w = torch.arange(h, device="cuda"), torch.arange(w, device="cuda")
                box = torch.stack([torch.where(cols, ar_w, w).amin(-1), torch.where(rows, ar_h, h).amin(-1),
                                   torch.where(cols, ar_w, 0).amax(-1), torch.where(rows, ar_h, 0).amax(-1)], -1)
                boxes.append(box.float())
                scores.append(iou.flatten()[keep])
                rle = mask_to_rle(binary)
                del pts, tokens, src, feats, low, iou, masks, stable, keep, binary, rows, cols, box, rle
            boxes, scores = torch.cat(boxes), torch.cat(scores)
            kept = torchvision.ops.batched_nms(boxes, scores, torch.zeros_like(scores, dtype=torch.long), 0.7)
            del photo, img, emb, boxes, scores, kept


def sasrec_sampled_softmax_train_bf16(torch):
    """A sequential recommender as SASRec-style retrieval trains it: an item table of
    2,000,000 items x 64 (fp32, dense gradients, Adam), users' histories of 20 to 200 items
    (a batch padded to its longest), a 2-layer causal transformer, and at every position a
    sampled softmax over the next item and 2,048 negatives drawn each step by popularity
    (`torch.multinomial` over all two million, shared by the batch) with the logQ
    correction; bf16 autocast, 40 steps of 256 users; every 10 steps a retrieval
    evaluation: 1,024 users' last states scored against the whole catalogue (in bf16) and
    the top 100 items taken."""
    nn = torch.nn
    F = nn.functional
    torch.manual_seed(0)
    items, d, negs, bs = 2_000_000, 64, 2048, 256
    table = nn.Embedding(items, d, padding_idx=0).cuda()
    pos_emb = nn.Embedding(200, d).cuda()
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 2, 4 * d, dropout=0.1, batch_first=True, norm_first=True),
                                2, enable_nested_tensor=False).cuda()
    opt = torch.optim.Adam([*table.parameters(), *pos_emb.parameters(), *enc.parameters()], lr=1e-3)
    popularity = torch.arange(1, items + 1, device="cuda", dtype=torch.float).pow(-0.8)
    popularity[0] = 0
    logq = (popularity / popularity.sum()).clamp_min(1e-30).log()
    g = torch.Generator().manual_seed(8)

    def encode(hist):
        n = hist.shape[1]
        x = table(hist) + pos_emb(torch.arange(n, device="cuda"))
        mask = torch.ones(n, n, dtype=torch.bool, device="cuda").triu(1)
        return enc(x, mask=mask, src_key_padding_mask=hist == 0)

    for step in range(40):
        lens = torch.randint(20, 201, (bs,), generator=g)
        n = int(lens.max())
        hist = torch.randint(1, items, (bs, n + 1), device="cuda")
        hist[torch.arange(n + 1, device="cuda")[None] > lens.cuda()[:, None]] = 0
        inputs, nxt = hist[:, :-1], hist[:, 1:]
        neg = torch.multinomial(popularity, negs, replacement=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = encode(inputs)
            pos_logit = (h * table(nxt)).sum(-1, keepdim=True) - logq[nxt][..., None]
            neg_logit = h @ table(neg).T - logq[neg]
            logits = torch.cat([pos_logit, neg_logit], -1).float()
        valid = nxt != 0
        loss = F.cross_entropy(logits[valid], torch.zeros(int(valid.sum()), dtype=torch.long, device="cuda"))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del hist, inputs, nxt, neg, h, pos_logit, neg_logit, logits, valid, loss
        if step % 10 == 9:
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
                enc.eval()
                lens = torch.randint(20, 201, (1024,), generator=g)
                hist = torch.randint(1, items, (1024, int(lens.max())), device="cuda")
                lens = lens.cuda()
                hist[torch.arange(hist.shape[1], device="cuda")[None] >= lens[:, None]] = 0
                last = encode(hist)[torch.arange(1024, device="cuda"), lens - 1]
                top = (last @ table.weight.T.to(torch.bfloat16)).topk(100, -1).indices.cpu()
                enc.train()
                del hist, last, top


PROGRAMS = {f.__name__: f for f in (transformer_varlen_infer, lstm_train, unet_train_bf16,
                                    gpt2_generate, phases_empty_cache, prefetch_side_stream,
                                    compile_train, compile_reduce_overhead_infer, graph_shared_pool,
                                    mempool_kv_cache, fsdp2_train,
                                    llama_generate, bert_encode, vit_train_bf16,
                                    opt_generate, gpt2_generate_padded, bert_encode_base,
                                    gpt2_generate_large, gpt2_generate_12l, gpt2_generate_sample,
                                    gpt2_generate_beam, gpt2_generate_fp16, gpt2_generate_batches,
                                    llama_generate_gqa_fp16, qwen2_generate_bf16,
                                    mistral_generate_bf16, opt_generate_fp16,
                                    distilgpt2_generate_long, gpt2_generate_12l_long,
                                    gpt2_generate_sample_bs1, llama_generate_small, opt_generate_125m,
                                    gpt2_medium_generate_fp16, llama_generate_deep_fp16,
                                    gpt2_score_generate_bs1, distilgpt2_score_generate_bs1,
                                    gpt2_sample_score_generate_bs1, gpt2_fp16_score_generate,
                                    opt125m_score_generate_bs1, llama2l_score_generate_bs1,
                                    gpt2_bucketed_train, llama_lora_train_bf16,
                                    efficientnet_channels_last_amp, serve_continuous_batching,
                                    compile_dynamic_train, offload_checkpoint_train,
                                    fasterrcnn_varsize_infer, dlrm_sparse_train, t5_beam_generate,
                                    moe_train_bf16, nested_jagged_encode,
                                    pyg_sage_train, clip_contrastive_train_fp16,
                                    timm_convnext_accum_ema_train, deeplab_varsize_train_bf16,
                                    paged_kv_serve_fp16, hf_trainer_gpt2_accum, r3d_video_train_bf16,
                                    bart_seq2seq_train_bf16, diffusion_cfg_sample_fp16, vitmae_pretrain_bf16, ppo_rollout_train,
                                    embedding_index_build, dpo_pairs_train_bf16, distill_resnet_train_bf16,
                                    int8_weight_only_decode_bf16,
                                    bert_train_eval_interleaved_bf16, mamba_scan_train_bf16,
                                    swin_varres_train_bf16, nerf_rays_train,
                                    simclr_two_views_train_bf16, cpu_offload_adam_train,
                                    chunked_ce_lm_train_bf16, gpt2_sliding_ppl_eval_fp16,
                                    prefix_cache_serve_fp16, gradcache_contrastive_train,
                                    maml_second_order_train, longctx_ckpt_train_bf16,
                                    vae_tiled_decode_fp16, speculative_decode_fp16,
                                    bert_token_budget_serve_fp16, fp8_scaled_mm_train,
                                    gru_packed_seq_train, resnet_dynamic_batch_serve_fp16,
                                    dqn_replay_train, qat_resnet18_train, prune_masks_finetune_bf16,
                                    layer_offload_infer_fp16, sam_like_prompt_decode_fp16,
                                    gpt2_topp_sample_generate_fp16,
                                    diffusion_unet_ema_train_bf16, llama_packed_pretrain_bf16,
                                    llava_like_projector_train_bf16, swa_resnet_train,
                                    vit_mixup_cutmix_train_bf16, kv_int8_cache_decode_fp16,
                                    whisper_greedy_decode_fp16, bert_mlm_dynamic_mask_bf16,
                                    pointnet_knn_train, conformer_ctc_train_bf16,
                                    reward_model_pairwise_train_bf16,
                                    vmap_ensemble_train, muon_optimizer_train_bf16, patch_forecast_train,
                                    unet3d_sliding_window_infer_fp16, gptq_calibrate_quantize,
                                    sparse24_mlp_infer_fp16,
                                    galore_projected_adam_train_bf16, vqvae_codebook_train,
                                    selective_ckpt_train_bf16, multi_lora_serve_fp16,
                                    adam8bit_blockwise_train,
                                    grpo_group_rollout_train_bf16, adafactor_t5_train, dit_cfg_sample_bf16,
                                    parametrized_norms_train, realnvp_flow_train, dino_multicrop_train_bf16,
                                    ddp_accum_train_bf16, optimizer_in_backward_train,
                                    gcn_sparse_full_batch_train, sharpness_aware_resnet_train_bf16,
                                    llama_chunked_prefill_generate_fp16,
                                    checkpoint_resume_train_bf16, meta_init_shard_load_generate_bf16,
                                    vocoder_varlen_infer_fp16, kd_llm_logits_train_bf16, pinn_burgers_train,
                                    qlora_nf4_train_bf16, hparam_sweep_sequential_train,
                                    trainer_eval_gather_logits_bf16, moco_queue_train_bf16,
                                    multiscale_detector_train_bf16, llama_hidden_states_probe_bf16,
                                    llama_generate_scores_bf16, oom_batch_halving_train_bf16,
                                    oom_split_batch_serve_fp16, oom_fragmented_cache_serve_fp16,
                                    resnet_cudnn_benchmark_train_bf16, bit_stdconv_cudnn_benchmark_train_bf16,
                                    compile_cold_train_bf16, flex_attention_docmask_train_bf16,
                                    triton_autotune_rmsnorm_train_bf16,
                                    compile_reduce_overhead_train_bf16, grouped_mm_moe_train_bf16,
                                    two_stream_towers_infer_fp16, fp8_saved_activations_train_bf16,
                                    shampoo_eigh_train, fno_fft_train, lbfgs_full_batch_train,
                                    gpu_augment_varres_train_bf16, mixture_of_depths_train_bf16,
                                    deterministic_index_add_train, minhash_lsh_dedup, cudnn_sdpa_train_bf16,
                                    bf16_master_weights_train, neural_ode_rk4_train, graphed_callables_train,
                                    vit_gpt2_caption_beam_generate_fp16, wgan_gp_train, alphazero_selfplay_infer,
                                    async_activation_offload_train_bf16, multistream_serve_fp16,
                                    fsdp2_mixed_precision_ckpt_train_bf16, vit_token_merging_infer_fp16,
                                    ddp_powersgd_train_bf16, seq_len_warmup_train_bf16,
                                    feature_hook_leak_train_bf16, reversible_transformer_train_bf16,
                                    transformer_xl_recurrence_train_bf16, fedavg_clients_train,
                                    early_exit_encoder_infer_fp16, layerdrop_train_bf16,
                                    deq_fixed_point_train, mc_dropout_uncertainty_infer,
                                    pcgrad_multitask_train_bf16, eval_graph_leak_train_bf16,
                                    pgd_adversarial_train_bf16, raft_corr_volume_train,
                                    stft_loss_vocoder_train_bf16, deform_conv_detector_train_bf16,
                                    torchscript_resnet_serve_fp16, sparse_embedding_transe_train,
                                    gat_edge_softmax_train, perceiver_io_train_bf16,
                                    lstmcell_attention_decoder_train, attention_slicing_unet_sample_fp16,
                                    hf_bert_reentrant_ckpt_train_fp16, gp_exact_cholesky_train,
                                    dreamer_rssm_imagine_train, streaming_conv_state_asr_infer_fp16,
                                    detr_hungarian_train_bf16, rnnt_joint_loss_train_bf16,
                                    pyhessian_eigen_trace_resnet, tta_multiscale_flip_seg_infer_fp16,
                                    fixmatch_pseudo_label_train_bf16, perceptual_sr_gan_train_bf16,
                                    sinkhorn_ot_unrolled_train, ohem_topk_seg_train_bf16,
                                    hard_negative_retrieval_train_fp16, blockwise_attention_train_bf16,
                                    kmeans_chunked_assign, crnn_ocr_ctc_varwidth_train,
                                    siamese_tracker_xcorr_infer_fp16, gpt2_prompt_tuning_train_bf16,
                                    knn_lm_datastore_decode_fp16, bilstm_crf_ner_train,
                                    chunked_linear_attention_train_bf16, pointpillars_scatter_train_bf16,
                                    medusa_tree_decode_fp16, contrastive_search_decode_fp16,
                                    gaussian_splat_densify_train, evoformer_pair_chunked_infer_bf16,
                                    ties_merge_checkpoints_bf16, sam_like_auto_masks_infer_fp16,
                                    sasrec_sampled_softmax_train_bf16)}

# BENCH_PROGRAMS are recorded only by name (--program NAME): inputs of benchmarks, not
# part of any reference folder's five settings.
BENCH_PROGRAMS = {f.__name__: f for f in (gpt2_train_big,)}
# UNSHIPPED programs are recorded only by name too: recorded with the last programs of
# reference/programs-2.11 and not shipped (its README says why).
UNSHIPPED = {f.__name__: f for f in (gpt2_assisted_generate_fp16, llama_static_cache_generate_bf16,
                                      lightning_bert_train_bf16, wav2vec2_ctc_train_fp16,
                                      fasterrcnn_varsize_train, whisper_train_fp16,
                                      gan_train_fp16, dpsgd_per_sample_grads, moe_generate_bf16,
                                      streaming_sink_kv_decode_fp16, offloaded_cache_generate_fp16)}
# UNRECORDED programs are written and not yet recorded on a GPU: recorded by name (--programs)
# and moved into PROGRAMS once their recordings ship (none now).
UNRECORDED = {}

# Programs that run torch.compile: recorded on a warm compile cache (see the docstring).
COMPILED = {"compile_train", "compile_reduce_overhead_infer", "compile_dynamic_train",
            "flex_attention_docmask_train_bf16", "compile_reduce_overhead_train_bf16"}
# Programs that run torch.compile from a cold start: every run on an empty compile cache
# of its own, so that each compiles (and benchmarks its kernels) as a job's first run does.
COLD = {"compile_cold_train_bf16"}


# ---------------------------------------------------------------- one run
# start_recording, write_run, capped_fraction and record_settings are shared with
# record_ranks.py (one home for the settings loop and the facts files).

def start_recording(torch, frac, stacks):
    """Cap the process at frac of the device (None: no cap) and record the allocator's
    history from here on, with Python frames when stacks ("all": Python and C++ frames,
    as `_record_memory_history()` records by default)."""
    if frac:
        torch.cuda.set_per_process_memory_fraction(frac)
    if stacks == "all":
        torch.cuda.memory._record_memory_history(enabled="all", context="all", stacks="all",
                                                 max_entries=10_000_000)
    elif stacks:
        torch.cuda.memory._record_memory_history(enabled="all", context="all", stacks="python",
                                                 max_entries=10_000_000)
    else:
        torch.cuda.memory._record_memory_history(enabled="all", context=None, max_entries=10_000_000)


def write_run(torch, base, head, oom, wall, recorder, label):
    """Dump the snapshot to BASE.pickle, stop recording and write BASE.facts.json: head
    (workload, conf, frac, ...) and what PyTorch measured; print one line, label first."""
    torch.cuda.memory._dump_snapshot(base + ".pickle")
    segments = torch.cuda.memory_snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    stats = torch.cuda.memory_stats()
    _, total = torch.cuda.mem_get_info()
    frac = head.get("frac")
    facts = dict(head) | {
        "allowed_bytes": int(frac * total) if frac else None,
        "torch": torch.__version__, "device": torch.cuda.get_device_name(), "total_memory": total,
        "max_memory_allocated": torch.cuda.max_memory_allocated(),
        "max_memory_reserved": torch.cuda.max_memory_reserved(),
        "memory_allocated": torch.cuda.memory_allocated(),
        "memory_reserved": torch.cuda.memory_reserved(),
        "oom": oom, "wall_s": round(wall, 3),
        "memory_stats": dict(stats),
        "memory_summary": torch.cuda.memory_summary(),
        "segments": segment_facts(segments),
        "marks": MARKS,
        "recorded_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
        "recorder": recorder,
    }
    with open(base + ".facts.json", "w") as f:
        json.dump(facts, f, indent=0)
    print(f"{label}: peak allocated {facts['max_memory_allocated']}, peak reserved "
          f"{facts['max_memory_reserved']}, device allocs {stats.get('num_device_alloc')}, "
          f"retries {stats.get('num_alloc_retries')}, oom {bool(oom)}, {wall:.1f}s", flush=True)
    return facts


def capped_fraction(conf, default_facts):
    """The memory fraction setting conf runs under: CAPPED[conf] x the default run's peak
    allocated / the device's memory, at most 1 (a default run that filled the device
    runs capped at all of it), or None for an uncapped setting."""
    if conf not in CAPPED:
        return None
    return min(1.0, round(CAPPED[conf] * default_facts["max_memory_allocated"] / default_facts["total_memory"], 6))


def record_settings(run_one):
    """Call run_one(conf) for every setting, the default first (the others are capped
    from its facts), stopping when the default fails (run_one returns False)."""
    for conf in SETTINGS:
        if not run_one(conf) and conf == "":
            return False
    return True


def run(name, conf, frac, out, stacks):
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = conf
    import torch
    torch.cuda.init()
    start_recording(torch, frac, stacks)
    t0, oom = time.time(), None
    try:
        (PROGRAMS | BENCH_PROGRAMS | UNSHIPPED | UNRECORDED)[name](torch)
    except torch.OutOfMemoryError as e:
        oom = str(e)
    wall = time.time() - t0
    write_run(torch, os.path.join(out, f"{name}__{tag(conf)}"),
              {"workload": name, "conf": conf, "frac": frac,
               "compile_cache": os.environ.get("TORCHINDUCTOR_CACHE_DIR")},
              oom, wall, "memlab scripts/record/record_programs.py", f"{name} [{conf or 'default'}]")


class CardShare:
    """Runs of several programs share the card, except a run under a setting in ALONE,
    which waits until no other run is on the card and keeps it to itself while it runs."""

    def __init__(self):
        self.cond = threading.Condition()
        self.running = 0
        self.alone = False
        self.waiting = 0  # runs waiting to be alone: no other run starts before them

    @contextlib.contextmanager
    def run(self, conf):
        alone = conf in ALONE
        with self.cond:
            if alone:
                self.waiting += 1
                self.cond.wait_for(lambda: self.running == 0)
                self.waiting -= 1
            else:
                self.cond.wait_for(lambda: not self.alone and self.waiting == 0)
            self.running += 1
            self.alone = alone
        try:
            yield
        finally:
            with self.cond:
                self.running -= 1
                self.alone = False
                self.cond.notify_all()


CARD = CardShare()


# the figures a rerun of the default setting is compared on
RERUN_KEYS = ["max_memory_allocated", "max_memory_reserved", "memory_allocated", "memory_reserved"]


def record_program(name, out, stacks_all, rerun, cache, timeout, repeat=0, only=None):
    """Record one program under every setting (the default first, with Python frames),
    each in a fresh process; a compiled program on a warm compile cache. Returns its log.
    repeat K > 0 records every setting (or those whose tags are in only) again, without
    frames, into OUT/repeats/K/, the capped one under the fraction of OUT's default run."""
    log = []
    env = dict(os.environ)
    if name in COMPILED:
        d = os.path.abspath(os.path.join(cache, name))
        env.update(TORCHINDUCTOR_CACHE_DIR=d, TRITON_CACHE_DIR=os.path.join(d, "triton"),
                   TORCHINDUCTOR_FX_GRAPH_CACHE="1", TORCHINDUCTOR_AUTOGRAD_CACHE="1")

    def sub(conf, frac, stacks, where):
        os.makedirs(where, exist_ok=True)
        run_env = env
        if name in COLD:
            os.makedirs(cache, exist_ok=True)
            d = tempfile.mkdtemp(prefix=f"{name}-", dir=os.path.abspath(cache))
            run_env = env | dict(TORCHINDUCTOR_CACHE_DIR=d, TRITON_CACHE_DIR=os.path.join(d, "triton"))
        cmd = [sys.executable, os.path.abspath(__file__), "--program", name, "--conf", conf, "--out", where]
        if frac:
            cmd += ["--frac", repr(frac)]
        if stacks:
            cmd += ["--stacks"]
        try:
            with CARD.run(conf):
                p = subprocess.run(cmd, capture_output=True, text=True, env=run_env, timeout=timeout)
        except subprocess.TimeoutExpired:
            log.append(f"{name} [{conf or 'default'}]: TIMEOUT after {timeout}s")
            return False
        warm = "warm-up, unrecorded: " if where.startswith(os.path.join(cache, name)) else ""
        log.append(warm + p.stdout.strip() if p.returncode == 0 else
                   f"{name} [{conf or 'default'}]: FAILED rc {p.returncode}\n{p.stderr.strip()[-4000:]}")
        if p.returncode == 0 and p.stderr.strip():
            with open(os.path.join(where, f"{name}__{tag(conf)}.stderr.txt"), "w") as f:
                f.write(p.stderr[-20000:])
        return p.returncode == 0

    def default_facts():
        with open(os.path.join(out, f"{name}__default.facts.json")) as f:
            return json.load(f)

    warm = os.path.join(cache, name, "warm-run")
    if repeat:
        d = default_facts()
        if name in COMPILED and not os.path.exists(os.path.join(warm, f"{name}__default.facts.json")) \
                and not sub("", None, False, warm):
            return log
        for conf in SETTINGS:
            if only is None or tag(conf) in only:
                sub(conf, capped_fraction(conf, d), False, os.path.join(out, "repeats", str(repeat)))
        log[:] = [f"repeat {repeat}: {line}" for line in log]
        return log
    if name in COMPILED and not sub("", None, False, warm):
        return log
    if not record_settings(lambda conf: sub(conf, capped_fraction(conf, default_facts()) if conf else None,
                                            conf == "" or stacks_all, out)):
        return log
    d = default_facts()
    if rerun and sub("", None, True, os.path.join(out, "rerun")):
        with open(os.path.join(out, "rerun", f"{name}__default.facts.json")) as f:
            d2 = json.load(f)
        diff = [k for k in RERUN_KEYS if d[k] != d2[k]]
        diff += [k for k in sorted(set(d["memory_stats"]) | set(d2["memory_stats"]))
                 if d["memory_stats"].get(k) != d2["memory_stats"].get(k)]
        log.append(f"{name}: default recorded twice: " +
                   ("same figures, every memory_stats key" if not diff else "DIFFER in " + ", ".join(
                       f"{k} {d.get(k, d['memory_stats'].get(k))} vs {d2.get(k, d2['memory_stats'].get(k))}"
                       for k in diff)))
    return log


def record_all(out, names, stacks_all, rerun=False, cache="compile-cache", jobs=1, timeout=None, repeats=0,
               only=None):
    """Record the programs (those whose default facts are in OUT already only when
    repeats > 0), then each program's settings (those whose tags are in only, if given)
    `repeats` times again."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        futs = [ex.submit(record_program, n, out, stacks_all, rerun, cache, timeout) for n in names
                if not (repeats and os.path.exists(os.path.join(out, f"{n}__default.facts.json")))]
        for fu in futs:
            print("\n".join(fu.result()), flush=True)
        futs = [ex.submit(record_program, n, out, stacks_all, False, cache, timeout, k, only)
                for k in range(1, repeats + 1) for n in names]
        for fu in futs:
            print("\n".join(fu.result()), flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--programs")
    ap.add_argument("--program")
    ap.add_argument("--conf", default="")
    ap.add_argument("--frac", type=float)
    ap.add_argument("--stacks", action="store_true")
    ap.add_argument("--cpp-stacks", action="store_true",
                    help="with --program: record Python and C++ frames (stacks=\"all\", the default of "
                         "_record_memory_history), as a practitioner's snapshot has them")
    ap.add_argument("--stacks-all", action="store_true",
                    help="record Python frames under every setting, not only the default")
    ap.add_argument("--out", default="recorded")
    ap.add_argument("--rerun", action="store_true",
                    help="record the default setting again into OUT/rerun and compare the figures")
    ap.add_argument("--cache", default="compile-cache",
                    help="folder of the compiled programs' persistent compile caches")
    ap.add_argument("--jobs", type=int, default=1, help="programs recorded at once")
    ap.add_argument("--timeout", type=float, help="seconds one recording process may run")
    ap.add_argument("--repeats", type=int, default=0,
                    help="record every setting N times more into OUT/repeats/1..N (programs whose "
                         "default facts are in OUT already are not recorded again first)")
    ap.add_argument("--settings",
                    help="with --repeats: repeat only the settings of these tags (comma-separated, "
                         "e.g. roundup_power2_divisions_4)")
    a = ap.parse_args()
    only = set(a.settings.split(",")) if a.settings else None
    if only and not a.repeats:
        ap.error("--settings limits --repeats: give --repeats N with it")
    if only and not only <= {tag(c) for c in SETTINGS}:
        ap.error(f"--settings: unknown tags {sorted(only - {tag(c) for c in SETTINGS})}; "
                 f"the settings are {[tag(c) for c in SETTINGS]}")
    if a.list:
        print("\n".join(PROGRAMS))
        sys.exit(0)
    os.makedirs(a.out, exist_ok=True)
    if a.program:
        run(a.program, a.conf, a.frac, a.out, "all" if a.cpp_stacks else a.stacks)
    else:
        record_all(a.out, a.programs.split(",") if a.programs else list(PROGRAMS), a.stacks_all,
                   a.rerun, a.cache, a.jobs, a.timeout, a.repeats, only)
