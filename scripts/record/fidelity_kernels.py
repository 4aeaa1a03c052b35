#!/usr/bin/env python3
"""memlab's kernels on odd layouts, and PyTorch's values for the same inputs.

Part of memlab's randomized differential suite (issue 22; scripts/record/fidelity.sh
runs every recorder). Each case builds its inputs from float32 base tensors whose
element i is base_value(i) (exact in float32), turned into odd layouts by a chain of
view operations memlab has too: transposes, permutes, slices with steps, narrows,
selects, unsqueezes and expands (stride 0), zero sizes included. It then runs one
operation memlab implements (relu, gelu (tanh), exp, neg, mul by a scalar, add, sub,
mul, div with broadcasting, sum and max along a dim, softmax, layer_norm, matmul,
clone, contiguous, cat) and records the output's shape, strides and values, or the
error.

Output: gzip'd JSON lines, a header then one {"id", "op", "args", "inputs":
[{"shape", "views": [[op, args...], ...]}], "shape", "strides", "values"} or
{..., "error", "type"} a line. tensor/fidelity_kernels_test.go runs every case on
memlab's device.

    python3 scripts/record/fidelity_kernels.py OUT.jsonl.gz [--cases N] [--seed S]
"""
import argparse
import gzip
import json
import math
import random

import torch


def base_value(i):
    """Element i of every base tensor: multiples of 1/16 in [-3, 3.25]."""
    return float(((i * 37) % 101) - 48) / 16.0


def base(shape, dev):
    n = 1
    for s in shape:
        n *= s
    return torch.tensor([base_value(i) for i in range(n)], dtype=torch.float32,
                        device=dev).reshape(shape)


def rand_shape(rng, lo=1, hi=4):
    return [rng.choice([0, 1, 1, 2, 3, 4, 5, 7]) if rng.random() < 0.9 else
            rng.choice([0, 1]) for _ in range(rng.randint(lo, hi))]


def apply_view(x, v):
    op, a = v[0], v[1:]
    if op == "transpose":
        return x.transpose(a[0], a[1])
    if op == "permute":
        return x.permute(*a)
    if op == "slice":
        return x[(slice(None),) * a[0] + (slice(a[1], a[2], a[3]),)]
    if op == "narrow":
        return x.narrow(a[0], a[1], a[2])
    if op == "select":
        return x.select(a[0], a[1])
    if op == "unsqueeze":
        return x.unsqueeze(a[0])
    if op == "expand":
        return x.expand(*a)
    raise AssertionError(op)


def rand_views(rng, shape, target_dim=None):
    """A chain of views that makes an odd layout of a tensor of shape; with
    target_dim, it ends with that many dimensions (when it can)."""
    views = []
    x = torch.empty(shape, device="meta")
    for _ in range(rng.randint(0, 3)):
        n = x.dim()
        r = rng.random()
        if n >= 2 and r < 0.3:
            v = ["transpose", rng.randrange(n), rng.randrange(n)]
        elif n >= 2 and r < 0.4:
            p = list(range(n))
            rng.shuffle(p)
            v = ["permute"] + p
        elif n >= 1 and r < 0.65:
            d = rng.randrange(n)
            size = x.shape[d]
            v = ["slice", d, rng.randint(0, max(size - 1, 0)), size, rng.choice([1, 2, 2, 3])]
        elif n >= 1 and r < 0.75:
            d = rng.randrange(n)
            size = x.shape[d]
            st = rng.randint(0, size)
            v = ["narrow", d, st, rng.randint(0, size - st)]
        elif n >= 2 and r < 0.82 and 0 not in x.shape:
            d = rng.randrange(n)
            v = ["select", d, rng.randrange(x.shape[d])]
        elif r < 0.9:
            v = ["unsqueeze", rng.randint(0, n)]
        else:
            sizes = [s if s != 1 else rng.choice([1, 2, 3]) for s in x.shape]
            if rng.random() < 0.5:
                sizes = [rng.choice([2, 3])] + sizes
            v = ["expand"] + sizes
        x = apply_view(x, v)
        views.append(v)
    if target_dim is not None:
        while x.dim() < target_dim:
            v = ["unsqueeze", 0]
            x = apply_view(x, v)
            views.append(v)
    return views, list(x.shape)


def make_input(rng, shape, dim=None):
    views, out = rand_views(rng, shape, dim)
    return {"shape": shape, "views": views}, out


def broadcast_partner(rng, shape):
    """A shape that broadcasts with shape (sizes 1 and fewer dims), or a wrong one."""
    s = [d if rng.random() < 0.6 else 1 for d in shape]
    if s and rng.random() < 0.3:
        s = s[rng.randint(1, len(s)):]
    if s and rng.random() < 0.05:
        s[-1] += 1
    return s


UNARY = ["relu", "gelu", "exp", "neg", "scale"]
BINARY = ["add", "sub", "mul", "div"]
OPS = UNARY + BINARY + ["sum", "max", "softmax", "layer_norm", "matmul", "clone",
                        "contiguous", "cat"]


def rand_case(rng):
    op = rng.choice(OPS)
    if op in UNARY or op in ("clone", "contiguous"):
        a, _ = make_input(rng, rand_shape(rng))
        args = [rng.choice([0.5, -2.0, 3.0])] if op == "scale" else []
        return op, args, [a]
    if op in BINARY:
        a, sa = make_input(rng, rand_shape(rng))
        # the second input's chain must end with a shape that broadcasts with sa
        bshape = broadcast_partner(rng, sa)
        b = {"shape": bshape, "views": []}
        if rng.random() < 0.5 and len(bshape) >= 2:
            b = {"shape": [bshape[1], bshape[0]] + bshape[2:], "views": [["transpose", 0, 1]]}
        if rng.random() < 0.3:
            a, b = b, a
        return op, [], [a, b]
    if op in ("sum", "max", "softmax"):
        a, sa = make_input(rng, rand_shape(rng))
        n = max(len(sa), 1)
        d = rng.randrange(-n, n)
        return op, ([d, rng.random() < 0.5] if op != "softmax" else [d]), [a]
    if op == "layer_norm":
        a, sa = make_input(rng, rand_shape(rng))
        n = sa[-1] if sa else 1
        return op, [1e-5], [a, {"shape": [n], "views": []}, {"shape": [n], "views": []}]
    if op == "matmul":
        m, k, n = rng.randint(0, 5), rng.randint(0, 6), rng.randint(0, 5)
        batch = [rng.choice([1, 2, 3])] if rng.random() < 0.4 else []
        if rng.random() < 0.5:  # a transposed left operand
            a = {"shape": batch + [k, m], "views": [["transpose", len(batch), len(batch) + 1]]}
        else:
            a = {"shape": batch + [m, k], "views": []}
        b = {"shape": [n, k], "views": [["transpose", 0, 1]]} if rng.random() < 0.5 else \
            {"shape": [k, n], "views": []}
        if rng.random() < 0.1:
            b = {"shape": [k + 1, n], "views": []}
        return op, [], [a, b]
    if op == "cat":
        a, sa = make_input(rng, rand_shape(rng, 1, 3))
        n = len(sa)
        d = rng.randrange(n) if n else 0
        other = list(sa)
        if other:
            other[d] = rng.choice([0, 1, 2])
        b = {"shape": other, "views": []}
        if len(other) >= 2 and rng.random() < 0.5:
            b = {"shape": [other[1], other[0]] + other[2:], "views": [["transpose", 0, 1]]}
        return op, [d], [a, b]
    raise AssertionError(op)


def run(op, args, xs):
    if op == "relu":
        return torch.relu(xs[0])
    if op == "gelu":
        return torch.nn.functional.gelu(xs[0], approximate="tanh")
    if op == "exp":
        return torch.exp(xs[0])
    if op == "neg":
        return torch.neg(xs[0])
    if op == "scale":
        return xs[0] * args[0]
    if op in BINARY:
        return getattr(torch, op)(xs[0], xs[1])
    if op == "sum":
        return xs[0].sum(args[0], keepdim=args[1])
    if op == "max":
        return xs[0].max(args[0], keepdim=args[1]).values
    if op == "softmax":
        return torch.softmax(xs[0], args[0])
    if op == "layer_norm":
        return torch.nn.functional.layer_norm(xs[0], xs[1].shape, xs[1], xs[2], args[0])
    if op == "matmul":
        return torch.matmul(xs[0], xs[1])
    if op == "clone":
        return xs[0].clone()
    if op == "contiguous":
        return xs[0].contiguous()
    if op == "cat":
        return torch.cat([xs[0], xs[1]], args[0])
    raise AssertionError(op)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--cases", type=int, default=1500)
    ap.add_argument("--seed", type=int, default=22)
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    rng = random.Random(a.seed)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    errors = 0
    with gzip.open(a.out, "wt", encoding="utf-8") as f:
        f.write(json.dumps({"kind": "header", "suite": "kernels", "torch": torch.__version__,
                            "device": torch.cuda.get_device_name() if dev == "cuda" else "cpu",
                            "seed": a.seed, "cases": a.cases}) + "\n")
        for cid in range(a.cases):
            op, args, ins = rand_case(rng)
            rec = {"id": cid, "op": op, "args": args, "inputs": ins}
            try:
                xs = []
                for inp in ins:
                    x = base(inp["shape"], dev)
                    for v in inp["views"]:
                        x = apply_view(x, v)
                    xs.append(x)
                y = run(op, args, xs)
            except Exception as e:
                rec["error"] = str(e).split("\n")[0]
                rec["type"] = type(e).__name__
                errors += 1
            else:
                vals = y.detach().float().cpu().reshape(-1).tolist()
                rec.update(shape=list(y.shape), strides=list(y.stride()),
                           values=[v if math.isfinite(v) else str(v) for v in vals])
            f.write(json.dumps(rec, separators=(",", ":")) + "\n")
    print(f"kernels: {a.cases} cases ({errors} errors) recorded with torch {torch.__version__} "
          f"on {dev} -> {a.out}")


if __name__ == "__main__":
    main()
