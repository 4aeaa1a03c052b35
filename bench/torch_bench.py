#!/usr/bin/env python3
"""PyTorch's half of `memlab bench`: the same work as bench/bench.go, timed the
same way (CUDA events around 5 back-to-back runs after 3 warm-ups, median over
ITERS such samples),
printed as one JSON line {"torch", "device", "rows": {key: figure},
"spread": {key: [slowest, fastest]}} whose keys and units match the Go side:
µs for allocations, GB/s (bytes read + written) for memory-bound kernels,
TFLOP/s for matmul; spread gives the figures of the slowest and fastest
sample of each kernel row. TF32 is off.

Usage: python3 torch_bench.py [--json] [--iters N]
"""
import argparse
import ctypes
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F

ALLOC_SIZES = [("512B", 512), ("1MiB", 1 << 20), ("20MiB", 20 << 20), ("256MiB", 256 << 20)]


REPS = 5  # runs per pair of events, as bench.Reps on the Go side


def gpu_time(fn, iters):
    """Seconds per run of fn() in each sample, sorted: REPS runs between two
    CUDA events per sample, `iters` samples, after warm-up."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(REPS):
            fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) / 1e3 / REPS)
    return sorted(times)


def wall_us(fn, groups, per):
    """Median microseconds per call of fn over `groups` groups of `per` calls."""
    ts = []
    for _ in range(groups):
        t0 = time.perf_counter()
        for _ in range(per):
            fn()
        ts.append((time.perf_counter() - t0) / per * 1e6)
    return statistics.median(ts)


def allocs(rows):
    torch.cuda.init()
    torch.empty(1, device="cuda")  # primary context current on this thread
    cuda = ctypes.CDLL("libcuda.so.1")
    alloc, free = cuda.cuMemAlloc_v2, cuda.cuMemFree_v2
    alloc.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
    free.argtypes = [ctypes.c_uint64]
    p = ctypes.c_uint64()

    for key, size in ALLOC_SIZES:
        def raw():
            if alloc(ctypes.byref(p), size) != 0 or free(p.value) != 0:
                raise RuntimeError("cuMemAlloc_v2/cuMemFree_v2 failed")
        rows["alloc_raw_" + key] = wall_us(raw, 20, 10)

        def cached():
            t = torch.empty(size, dtype=torch.uint8, device="cuda")
            del t
        cached()
        rows["alloc_cached_" + key] = wall_us(cached, 200, 100)


def timed(rows, spread, key, work, fn, iters, scale=1e9):
    """Times fn and records work per second / scale: the median sample in
    rows[key], the slowest and fastest in spread[key]."""
    t = gpu_time(fn, iters)
    rows[key] = work / statistics.median(t) / scale
    spread[key] = [work / t[-1] / scale, work / t[0] / scale]


def kernels(rows, spread, iters):
    def gbps(key, nbytes, fn):
        timed(rows, spread, key, nbytes, fn, iters)

    for dt, name in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
        n = (1 << 26) * (4 // torch.tensor([], dtype=dt).element_size())
        es = torch.tensor([], dtype=dt).element_size()
        a = torch.rand(n, device="cuda", dtype=dt) * 2 - 1
        b = torch.rand(n, device="cuda", dtype=dt) * 2 - 1
        o = torch.empty_like(a)
        nb = n * es
        gbps("copy_" + name, 2 * nb, lambda: o.copy_(a))
        gbps("relu_" + name, 2 * nb, lambda: torch.relu(a))
        gbps("relu__" + name, 2 * nb, lambda: o.relu_())
        gbps("add_" + name, 3 * nb, lambda: torch.add(a, b, out=o))
        gbps("add__" + name, 3 * nb, lambda: o.add_(b))
        del a, b, o

    s = 8192
    a = torch.rand(s, s, device="cuda")
    o = torch.empty(s, s, device="cuda")
    gbps("transpose_f32", 2 * s * s * 4, lambda: o.copy_(a.t()))
    del a, o

    s = 4096
    x = torch.rand(s, s, device="cuda") * 2 - 1
    w = torch.rand(s, device="cuda") * 2 - 1
    bias = torch.rand(s, device="cuda") * 2 - 1
    gbps("layernorm_f32", (2 * s * s + 2 * s) * 4, lambda: F.layer_norm(x, (s,), w, bias, 1e-5))
    gbps("softmax_f32", 2 * s * s * 4, lambda: torch.softmax(x, -1))
    del x, w, bias

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    for dt, name in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
        a = (torch.rand(s, s, device="cuda") * 2 - 1).to(dt)
        b = (torch.rand(s, s, device="cuda") * 2 - 1).to(dt)
        c = torch.empty(s, s, device="cuda", dtype=dt)
        timed(rows, spread, "matmul_" + name, 2 * s**3, lambda: torch.mm(a, b, out=c), iters, 1e12)
        del a, b, c


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--json", action="store_true", help="print one JSON line (for memlab bench)")
    ap.add_argument("--iters", type=int, default=20)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch_bench: no CUDA device", file=sys.stderr)
        sys.exit(1)
    rows, spread = {}, {}
    allocs(rows)
    kernels(rows, spread, args.iters)
    out = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "rows": rows, "spread": spread}
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in rows.items():
            print(f"{k:24s} {v:12.2f}")


if __name__ == "__main__":
    main()
