#!/usr/bin/env python3
"""PyTorch's copy and elementwise rows of `memlab bench`, timed as bench/torch_bench.py
times them (CUDA events around 5 back-to-back runs after 3 warm-ups, 20 samples), printed
with the median and the slowest and fastest sample, in GB/s (bytes read + written)."""
import statistics
import sys

import torch

REPS, ITERS = 5, 20


def samples(fn):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    t = []
    for _ in range(ITERS):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(REPS):
            fn()
        e.record()
        e.synchronize()
        t.append(s.elapsed_time(e) / 1e3 / REPS)
    return t


def row(name, nbytes, fn):
    t = samples(fn)
    print(f"{name:11s} torch {nbytes / statistics.median(t) / 1e9:7.0f} GB/s  "
          f"[{nbytes / max(t) / 1e9:5.0f} .. {nbytes / min(t) / 1e9:5.0f}]", flush=True)


def main():
    print("torch", torch.__version__, torch.cuda.get_device_name(0))
    # warm the card as memlab bench does
    a = torch.empty(1 << 26, device="cuda")
    o = torch.empty_like(a)
    torch.cuda.synchronize()
    for _ in range(2000):
        o.copy_(a)
    torch.cuda.synchronize()
    for rnd in range(int(sys.argv[1]) if len(sys.argv) > 1 else 1):
        for dt, name in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
            es = torch.tensor([], dtype=dt).element_size()
            n = (256 << 20) // es
            a = torch.rand(n, device="cuda", dtype=dt) * 2 - 1
            b = torch.rand(n, device="cuda", dtype=dt) * 2 - 1
            o = torch.empty_like(a)
            nb = n * es
            row("copy_" + name, 2 * nb, lambda: o.copy_(a))
            row("relu_" + name, 2 * nb, lambda: torch.relu(a))
            row("relu__" + name, 2 * nb, lambda: o.relu_())
            row("add_" + name, 3 * nb, lambda: torch.add(a, b, out=o))
            row("add__" + name, 3 * nb, lambda: o.add_(b))
            del a, b, o


if __name__ == "__main__":
    main()
