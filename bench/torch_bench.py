#!/usr/bin/env python3
"""PyTorch's half of `memlab bench`: the same work as bench/bench.go, timed the
same way (CUDA events around 5 back-to-back runs after 3 warm-ups, median over
ITERS such samples),
printed as one JSON line {"torch", "device", "rows": {key: figure}} whose keys
and units match the Go side: µs for allocations, GB/s (bytes read + written)
for memory-bound kernels, TFLOP/s for matmul. TF32 is off.

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
    """Median seconds per run of fn(): REPS runs between two CUDA events per
    sample, `iters` samples, after warm-up."""
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
    return statistics.median(times)


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


def gbps(nbytes, sec):
    return nbytes / sec / 1e9


def kernels(rows, iters):
    for dt, name in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
        n = (1 << 26) * (4 // torch.tensor([], dtype=dt).element_size())
        es = torch.tensor([], dtype=dt).element_size()
        a = torch.rand(n, device="cuda", dtype=dt) * 2 - 1
        b = torch.rand(n, device="cuda", dtype=dt) * 2 - 1
        o = torch.empty_like(a)
        nb = n * es
        rows["copy_" + name] = gbps(2 * nb, gpu_time(lambda: o.copy_(a), iters))
        rows["relu_" + name] = gbps(2 * nb, gpu_time(lambda: torch.relu(a), iters))
        rows["relu__" + name] = gbps(2 * nb, gpu_time(lambda: o.relu_(), iters))
        rows["add_" + name] = gbps(3 * nb, gpu_time(lambda: torch.add(a, b, out=o), iters))
        rows["add__" + name] = gbps(3 * nb, gpu_time(lambda: o.add_(b), iters))
        del a, b, o

    s = 8192
    a = torch.rand(s, s, device="cuda")
    o = torch.empty(s, s, device="cuda")
    rows["transpose_f32"] = gbps(2 * s * s * 4, gpu_time(lambda: o.copy_(a.t()), iters))
    del a, o

    s = 4096
    x = torch.rand(s, s, device="cuda") * 2 - 1
    w = torch.rand(s, device="cuda") * 2 - 1
    bias = torch.rand(s, device="cuda") * 2 - 1
    rows["layernorm_f32"] = gbps((2 * s * s + 2 * s) * 4, gpu_time(lambda: F.layer_norm(x, (s,), w, bias, 1e-5), iters))
    rows["softmax_f32"] = gbps(2 * s * s * 4, gpu_time(lambda: torch.softmax(x, -1), iters))
    del x, w, bias

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    for dt, name in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
        a = (torch.rand(s, s, device="cuda") * 2 - 1).to(dt)
        b = (torch.rand(s, s, device="cuda") * 2 - 1).to(dt)
        c = torch.empty(s, s, device="cuda", dtype=dt)
        sec = gpu_time(lambda: torch.mm(a, b, out=c), iters)
        rows["matmul_" + name] = 2 * s**3 / sec / 1e12
        del a, b, c


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--json", action="store_true", help="print one JSON line (for memlab bench)")
    ap.add_argument("--iters", type=int, default=20)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch_bench: no CUDA device", file=sys.stderr)
        sys.exit(1)
    rows = {}
    allocs(rows)
    kernels(rows, args.iters)
    out = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "rows": rows}
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in rows.items():
            print(f"{k:24s} {v:12.2f}")


if __name__ == "__main__":
    main()
