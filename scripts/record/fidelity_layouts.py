#!/usr/bin/env python3
"""Random chains of view operations, and what PyTorch answers at every step.

Part of memlab's randomized differential suite (issue 22; scripts/record/fidelity.sh
runs every recorder). Each chain starts from a strided layout over a large storage
(contiguous, or torch.as_strided with random strides: zero, one and huge sizes and
strides included) and applies random view operations with random, often wrong,
arguments (negative and out-of-range dimensions, -1 and bad sizes). At every step
PyTorch's result is recorded: shape, strides, storage offset, is_contiguous, whether
the result shares the input's storage (a view) or not (a copy), or the exception's
type and first line. After an error the chain goes on from the tensor before it.

Output: gzip'd JSON lines, a header {"kind": "header", "torch": ..., "seed": ...,
"chains": N} then one {"kind": "chain", "id", "start", "steps"} a line, each step
{"op", "args", "expr"} and either {"shape", "strides", "offset", "contiguous",
"view"} or {"error", "type"}. tensor/fidelity_test.go replays every chain through
tensor.Layout.

    python3 scripts/record/fidelity_layouts.py OUT.jsonl.gz [--chains N] [--seed S]

It needs only torch; a CUDA device is used when there is one (layouts do not depend
on it).
"""
import argparse
import gzip
import json
import random

import torch

STORAGE = 1 << 24  # elements (uint8) of the storage every chain lives in


def rand_shape(rng, ndim=None):
    if ndim is None:
        ndim = rng.choice([0, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 5])
    return [rng.choice([0, 1, 1, 1, 2, 2, 3, 3, 4, 5, 6, 7, 8]) if rng.random() < 0.93
            else rng.choice([0, 1, 16, 31]) for _ in range(ndim)]


def start_layout(rng):
    """A starting (shape, strides, offset) that fits in STORAGE."""
    shape = rand_shape(rng)
    r = rng.random()
    if r < 0.45:  # contiguous
        strides, z = [0] * len(shape), 1
        for d in range(len(shape) - 1, -1, -1):
            strides[d] = z
            z *= max(shape[d], 1)
        return shape, strides, 0
    strides = []
    for _ in shape:
        c = rng.random()
        if c < 0.15:
            strides.append(0)
        elif c < 0.25:
            strides.append(rng.choice([1 << 16, 1 << 18, 100003]))
        else:
            strides.append(rng.randint(1, 40))
    offset = rng.choice([0, 0, rng.randint(0, 50), rng.randint(0, 1 << 20)])
    span = offset + sum((s - 1) * st for s, st in zip(shape, strides) if s > 0) + 1
    if span > STORAGE:
        return start_layout(rng)
    return shape, strides, offset


def rand_dim(rng, n, extra=0):
    """A dimension argument for an n-D tensor: mostly valid, sometimes negative,
    now and then out of range."""
    m = max(n + extra, 1)
    r = rng.random()
    if r < 0.08:
        return rng.choice([m, -m - 1, m + 2])
    d = rng.randrange(m)
    return d - m if rng.random() < 0.35 else d


def factor_shape(rng, numel):
    """A shape with numel elements (sizes 1 inserted now and then), or a wrong one."""
    out = []
    n = numel
    if n == 0:
        out = [rng.choice([0, 1, 2, 3]) for _ in range(rng.randint(1, 3))]
        if 0 not in out:
            out[rng.randrange(len(out))] = 0
    else:
        while n > 1 and len(out) < 5:
            divs = [d for d in range(2, n + 1) if n % d == 0]
            d = rng.choice(divs)
            out.append(d)
            n //= d
        if n != 1:
            out.append(n)
        for _ in range(rng.choice([0, 0, 1, 2])):
            out.insert(rng.randint(0, len(out)), 1)
        rng.shuffle(out)
    r = rng.random()
    if r < 0.25 and out:
        out[rng.randrange(len(out))] = -1
    elif r < 0.30 and len(out) >= 2:
        out[0] = -1
        out[1] = -1
    elif r < 0.36 and out:
        out[rng.randrange(len(out))] += rng.choice([1, -2, 2])
    elif r < 0.38:
        out = out + [rng.choice([-2, 0, 3])]
    return out


def expand_sizes(rng, shape):
    n = len(shape)
    lead = rng.choice([0, 0, 1, 2]) if n < 6 else 0
    out = [rng.choice([1, 2, 3, 0]) for _ in range(lead)]
    for s in shape:
        r = rng.random()
        if s == 1 and r < 0.5:
            out.append(rng.choice([0, 2, 3, 5]))
        elif r < 0.25:
            out.append(-1)
        elif r < 0.30:
            out.append(s + 1)
        else:
            out.append(s)
    if rng.random() < 0.05 and out:
        out[0] = -1
    if rng.random() < 0.04 and out:
        out.pop()
    return out


OPS = ["view", "reshape", "transpose", "t", "permute", "narrow", "slice", "select",
       "squeeze", "unsqueeze", "expand", "contiguous", "clone", "flatten"]


def rand_op(rng, shape):
    n = len(shape)
    op = rng.choice(OPS)
    numel = 1
    for s in shape:
        numel *= s
    if op in ("view", "reshape"):
        return op, factor_shape(rng, numel)
    if op == "transpose":
        return op, [rand_dim(rng, n), rand_dim(rng, n)]
    if op in ("t", "contiguous", "clone"):
        return op, []
    if op == "permute":
        p = list(range(n))
        rng.shuffle(p)
        p = [d - n if rng.random() < 0.3 else d for d in p]
        r = rng.random()
        if r < 0.06 and p:
            p[0] = p[-1]
        elif r < 0.10:
            p = p[:-1] if p else [0]
        return op, p
    if op == "narrow":
        d = rand_dim(rng, n)
        size = shape[d] if -n <= d < n else 3
        start = rng.randint(-size - 1, size + 1)
        length = rng.randint(-1, size + 1) if rng.random() < 0.2 else rng.randint(0, max(size - max(start, 0), 0))
        return op, [d, start, length]
    if op == "slice":
        d = rand_dim(rng, n)
        size = shape[d] if -n <= d < n else 3
        start = rng.randint(-size - 2, size + 2)
        end = rng.randint(-size - 2, size + 2)
        r = rng.random()
        step = 0 if r < 0.03 else -1 if r < 0.06 else rng.choice([1, 1, 1, 2, 3, 5, 1 << 40])
        return op, [d, start, end, step]
    if op == "select":
        d = rand_dim(rng, n)
        size = shape[d] if -n <= d < n else 3
        return op, [d, rng.randint(-size - 1, size)]
    if op == "squeeze":
        r = rng.random()
        if r < 0.3:
            return op, []
        if r < 0.6:
            return op, [rand_dim(rng, n)]
        return op, [rand_dim(rng, n) for _ in range(rng.randint(2, max(n, 2)))]
    if op == "unsqueeze":
        return op, [rand_dim(rng, n, extra=1)]
    if op == "expand":
        return op, expand_sizes(rng, shape)
    if op == "flatten":
        return op, [rand_dim(rng, n), rand_dim(rng, n)]
    raise AssertionError(op)


def expr(op, args, ndim):
    """The Python expression of a step, applied to x (of ndim dimensions).
    A slice of a dimension that exists is Python indexing (x[:, a:b:s], what
    memlab's Slice mirrors); of one that does not, torch.ops.aten.slice."""
    if op in ("view", "reshape", "expand", "permute"):
        return f"x.{op}({tuple(args)!r})"
    if op == "slice":
        d, a, b, s = args
        if -ndim <= d < ndim:
            return f"x[(slice(None),)*{d % ndim} + (slice({a}, {b}, {s}),)]"
        return f"torch.ops.aten.slice(x, {d}, {a}, {b}, {s})"
    if op == "squeeze":
        if len(args) == 0:
            return "x.squeeze()"
        if len(args) == 1:
            return f"x.squeeze({args[0]})"
        return f"x.squeeze({tuple(args)!r})"
    return f"x.{op}({', '.join(str(a) for a in args)})"


def sid(t):
    return t.untyped_storage()._cdata


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--chains", type=int, default=3600)
    ap.add_argument("--seed", type=int, default=22)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    base = torch.empty(STORAGE, dtype=torch.uint8, device=dev)
    steps_total = errors = 0
    with gzip.open(a.out, "wt", encoding="utf-8") as f:
        f.write(json.dumps({"kind": "header", "suite": "layouts", "torch": torch.__version__,
                            "device": torch.cuda.get_device_name() if dev == "cuda" else "cpu",
                            "seed": a.seed, "chains": a.chains}) + "\n")
        for cid in range(a.chains):
            shape, strides, offset = start_layout(rng)
            x = base.as_strided(shape, strides, offset)
            steps = []
            for _ in range(rng.choice([1, 2, 3, 3, 4, 4, 5, 6])):
                op, args = rand_op(rng, list(x.shape))
                e = expr(op, args, x.dim())
                st = {"op": op, "args": args, "expr": e}
                try:
                    y = eval(e, {"x": x, "torch": torch})
                except Exception as ex:  # the error is the answer
                    st["error"] = str(ex).split("\n")[0]
                    st["type"] = type(ex).__name__
                    errors += 1
                else:
                    st.update(shape=list(y.shape), strides=list(y.stride()),
                              offset=y.storage_offset(), contiguous=y.is_contiguous(),
                              view=sid(y) == sid(x))
                    x = y
                steps.append(st)
            steps_total += len(steps)
            f.write(json.dumps({"kind": "chain", "id": cid, "start": {
                "shape": shape, "strides": strides, "offset": offset}, "steps": steps},
                separators=(",", ":")) + "\n")
    print(f"layouts: {a.chains} chains, {steps_total} steps ({errors} errors) recorded "
          f"with torch {torch.__version__} on {dev} -> {a.out}")


if __name__ == "__main__":
    main()
