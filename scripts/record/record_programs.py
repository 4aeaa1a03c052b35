#!/usr/bin/env python3
"""Record PyTorch programs' GPU memory history under several allocator settings.

memlab's own recorder (GPU machine; PyTorch with CUDA, transformers for gpt2_generate).
For each program and setting it starts a fresh Python process with
PYTORCH_CUDA_ALLOC_CONF set before torch is imported, records the allocator's history
from before the program's first CUDA allocation, runs the program and writes

  OUT/PROGRAM__TAG.pickle      torch.cuda.memory._dump_snapshot()
  OUT/PROGRAM__TAG.facts.json  what PyTorch measured: peaks, memory_stats(), summary, OOM

in the shape `memlab whatif` and its tests read (reference/workloads-2.11/README.md).
The default setting is recorded first, with Python stack frames; it is the input of a
what-if replay, the others are what the replay must predict. The capped setting runs
under set_per_process_memory_fraction(1.15 x the default run's peak allocated / total).

  python3 record_programs.py --out DIR [--programs a,b] [--stacks-all]
                                        every program (or those), every setting
  python3 record_programs.py --list
"""
import argparse
import json
import os
import subprocess
import sys
import time

SETTINGS = [
    "",
    "expandable_segments:True",
    "max_split_size_mb:128",
    "roundup_power2_divisions:4",
    "max_split_size_mb:64,garbage_collection_threshold:0.6",
]
CAPPED = {"max_split_size_mb:64,garbage_collection_threshold:0.6": 1.15}


def tag(conf):
    if not conf:
        return "default"
    return conf.replace(":", "_").replace(",", "__").replace(".", "p")


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


PROGRAMS = {f.__name__: f for f in (transformer_varlen_infer, lstm_train, unet_train_bf16,
                                    gpt2_generate, phases_empty_cache, prefetch_side_stream)}


# ---------------------------------------------------------------- one run
def run(name, conf, frac, out, stacks):
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = conf
    import torch
    torch.cuda.init()
    if frac:
        torch.cuda.set_per_process_memory_fraction(frac)
    if stacks:
        torch.cuda.memory._record_memory_history(enabled="all", context="all", stacks="python",
                                                 max_entries=10_000_000)
    else:
        torch.cuda.memory._record_memory_history(enabled="all", context=None, max_entries=10_000_000)
    t0, oom = time.time(), None
    try:
        PROGRAMS[name](torch)
    except torch.OutOfMemoryError as e:
        oom = str(e)
    wall = time.time() - t0
    base = os.path.join(out, f"{name}__{tag(conf)}")
    torch.cuda.memory._dump_snapshot(base + ".pickle")
    torch.cuda.memory._record_memory_history(enabled=None)
    stats = torch.cuda.memory_stats()
    _, total = torch.cuda.mem_get_info()
    facts = {
        "workload": name, "conf": conf, "frac": frac,
        "allowed_bytes": int(frac * total) if frac else None,
        "torch": torch.__version__, "device": torch.cuda.get_device_name(), "total_memory": total,
        "max_memory_allocated": torch.cuda.max_memory_allocated(),
        "max_memory_reserved": torch.cuda.max_memory_reserved(),
        "memory_allocated": torch.cuda.memory_allocated(),
        "memory_reserved": torch.cuda.memory_reserved(),
        "oom": oom, "wall_s": round(wall, 3),
        "memory_stats": dict(stats),
        "memory_summary": torch.cuda.memory_summary(),
        "recorder": "memlab scripts/record/record_programs.py",
    }
    with open(base + ".facts.json", "w") as f:
        json.dump(facts, f, indent=0)
    print(f"{name} [{conf or 'default'}]: peak allocated {facts['max_memory_allocated']}, peak reserved "
          f"{facts['max_memory_reserved']}, device allocs {stats.get('num_device_alloc')}, "
          f"retries {stats.get('num_alloc_retries')}, oom {bool(oom)}, {wall:.1f}s", flush=True)


def record_all(out, names, stacks_all):
    for name in names:
        def sub(conf, frac, stacks):
            cmd = [sys.executable, __file__, "--program", name, "--conf", conf, "--out", out]
            if frac:
                cmd += ["--frac", repr(frac)]
            if stacks:
                cmd += ["--stacks"]
            p = subprocess.run(cmd, capture_output=True, text=True)
            print(p.stdout.strip() or p.stderr.strip()[-3000:], flush=True)
        sub("", None, True)
        with open(os.path.join(out, f"{name}__default.facts.json")) as f:
            d = json.load(f)
        for conf in SETTINGS[1:]:
            frac = None
            if conf in CAPPED:
                frac = round(CAPPED[conf] * d["max_memory_allocated"] / d["total_memory"], 6)
            sub(conf, frac, stacks_all)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--programs")
    ap.add_argument("--program")
    ap.add_argument("--conf", default="")
    ap.add_argument("--frac", type=float)
    ap.add_argument("--stacks", action="store_true")
    ap.add_argument("--stacks-all", action="store_true",
                    help="record Python frames under every setting, not only the default")
    ap.add_argument("--out", default="recorded")
    a = ap.parse_args()
    if a.list:
        print("\n".join(PROGRAMS))
        sys.exit(0)
    os.makedirs(a.out, exist_ok=True)
    if a.program:
        run(a.program, a.conf, a.frac, a.out, a.stacks)
    else:
        record_all(a.out, a.programs.split(",") if a.programs else list(PROGRAMS), a.stacks_all)
