#!/usr/bin/env python3
"""Summarises what variants.cu, torch_rows.py and `memlab bench -json` wrote.

Usage: summary.py FILE...   (variants CSVs, torch_rows logs, bench JSONs)

Prints, computed from those files only:
  - per row, memlab's PTX kernels (before and after issue 13) with their grids;
  - per row, the fastest candidate of each loop shape (MODE) and vectors per
    thread (U), over hints and block sizes, and the hint, block-size and
    resident-blocks sweeps of the one-vector-per-thread shape;
  - the per-kernel fixed cost fitted to the size sweep (t = t0 + bytes / rate);
  - PyTorch's rows from torch_rows.py;
  - for bench JSONs, memlab against PyTorch on every kernel row, run by run;
  - for an ncu CSV (ncu.sh), per kernel: time, DRAM bytes, achieved
    occupancy, waves, and how unevenly the SMs were busy (active cycles of
    the least and most busy SM).
"""
import json
import re
import sys
from collections import defaultdict


def read_csv(path):
    """Rows of a variants CSV; a variant name may hold commas (the first
    diagnostic run's did), so the fixed fields are taken from the right."""
    out = []
    with open(path) as f:
        next(f)
        for line in f:
            p = line.rstrip("\n").split(",")
            if len(p) < 10:
                continue
            row, variant, rest = p[0], ",".join(p[1:-8]), p[-8:]
            out.append({"row": row, "variant": variant, "regs": int(rest[0]), "occ": int(rest[1]),
                        "grid": int(rest[2]), "block": int(rest[3]), "med": float(rest[4]),
                        "slow": float(rest[5]), "fast": float(rest[6]), "check": rest[7]})
    return out


def fmt(r):
    return f"{r['med']:6.0f} GB/s [{r['slow']:5.0f} .. {r['fast']:5.0f}]"


CAND = re.compile(r"M(\d) U(\d) H(\d) B(\d+)(.*)")


def variants(path):
    rows = defaultdict(list)
    for r in read_csv(path):
        rows[r["row"]].append(r)
    bad = [(r["row"], r["variant"]) for rs in rows.values() for r in rs if r["check"] not in ("ok", "-")]
    print(f"== {path}")
    if bad:
        print("FAILED CHECKS:", bad)
    print("-- memlab's PTX kernels (regs/thread, resident 256-thread blocks per SM, grid)")
    for name, rs in rows.items():
        for r in rs:
            if "PTX" in r["variant"] or "Memcpy" in r["variant"]:
                print(f"{name:11s} {r['variant']:50s} {r['regs']:3d} regs {r['occ']:2d}/SM grid {r['grid']:7d}  {fmt(r)}")
    cands = defaultdict(list)
    for name, rs in rows.items():
        for r in rs:
            m = CAND.match(r["variant"])
            if m and r["check"] == "ok":
                cands[name].append((m, r))
    if cands:
        print("-- fastest candidate per loop shape and vectors per thread (over hints, blocks, grids)")
        for name, cs in cands.items():
            best = {}
            for m, r in cs:
                k = (m.group(1), m.group(2))
                if k not in best or r["med"] > best[k][1]["med"]:
                    best[k] = (m, r)
            print(f"{name:11s} " + "  ".join(f"M{k[0]}U{k[1]} {best[k][1]['med']:4.0f}" for k in sorted(best)))
        print("-- one vector per thread (M1 U1): by hint (best over blocks), by block (H0), by resident blocks (H0, B256)")
        for name, cs in cands.items():
            byh, byb, byk = {}, {}, {}
            for m, r in cs:
                if m.group(1) != "1" or m.group(2) != "1":
                    continue
                h, b, tail = m.group(3), int(m.group(4)), m.group(5)
                byh[h] = max(byh.get(h, 0), r["med"])
                if h == "0" and "smem" not in tail:
                    byb[b] = max(byb.get(b, 0), r["med"])
                if h == "0" and b == 256:
                    byk[r["occ"]] = max(byk.get(r["occ"], 0), r["med"])
            print(f"{name:11s} hint " + " ".join(f"H{h}:{v:.0f}" for h, v in sorted(byh.items())) +
                  " | block " + " ".join(f"{b}:{v:.0f}" for b, v in sorted(byb.items())) +
                  " | blocks/SM " + " ".join(f"{k}:{v:.0f}" for k, v in sorted(byk.items())))
    sizes = defaultdict(list)
    for name, rs in rows.items():
        for r in rs:
            m = re.match(r"size (\d+) MiB", r["variant"])
            if m:
                sizes[name].append((int(m.group(1)) << 20, r["med"]))
    if sizes:
        print("-- per-kernel fixed cost, t = t0 + moved/rate fitted to the smallest and largest size")
        for name, pts in sizes.items():
            ops = 2 if name == "copy" else 3
            pts.sort()
            (s0, g0), (s1, g1) = pts[0], pts[-1]
            t0s, t1s = ops * s0 / (g0 * 1e9), ops * s1 / (g1 * 1e9)
            rate = (ops * s1 - ops * s0) / (t1s - t0s)
            fixed = t0s - ops * s0 / rate
            at256 = [g for s, g in pts if s == 256 << 20]
            t256 = ops * (256 << 20) / (at256[0] * 1e9) if at256 else float("nan")
            print(f"{name:11s} " + " ".join(f"{s >> 20} MiB:{g:.0f}" for s, g in pts) +
                  f"  -> rate {rate / 1e9:.0f} GB/s, t0 {fixed * 1e6:.1f} µs per kernel"
                  f" ({fixed / t256 * 100:.1f}% of a 256 MiB kernel)")


def ncu(path):
    import csv
    rows = list(csv.DictReader(l for l in open(path) if l.startswith('"')))
    by = {}
    for r in rows:
        by.setdefault(int(r["ID"]), (r["Kernel Name"], r["Grid Size"] if "Grid Size" in r else "", {}))[2][
            r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
    print(f"== {path}")
    print(f"{'id':>2s} {'kernel':34s} {'grid':>6s} {'waves':>6s} {'regs':>4s} {'time µs':>8s} {'DRAM rd MB':>10s} "
          f"{'wr MB':>6s} {'occ %':>6s} {'SM busy min/max':>16s}")
    for i in sorted(by):
        name, _, m = by[i]
        name = name.replace("(uint4 *, const uint4 *, const uint4 *, long long)", "").replace("void ", "")
        lo, hi = m["sm__cycles_active.min"], m["sm__cycles_active.max"]
        print(f"{i:2d} {name[:34]:34s} {m['launch__grid_size']:6.0f} {m['launch__waves_per_multiprocessor']:6.2f} "
              f"{m['launch__registers_per_thread']:4.0f} {m['gpu__time_duration.sum'] / 1e3:8.1f} "
              f"{m['dram__bytes_read.sum'] / 1e6:10.1f} {m['dram__bytes_write.sum'] / 1e6:6.1f} "
              f"{m['sm__warps_active.avg.pct_of_peak_sustained_active']:6.1f} {lo / hi * 100:15.1f}%")


def bench(paths):
    reps = [(p, json.load(open(p))) for p in paths]
    print("== memlab bench runs: memlab / PyTorch (median of the samples), each kernel row")
    keys = [r["key"] for r in reps[0][1]["rows"] if r["unit"] != "µs"]
    print(f"{'row':16s} " + " ".join(f"{p.split('/')[-1]:>24s}" for p, _ in reps) + "   lowest")
    for k in keys:
        cells, ratios = [], []
        for _, rep in reps:
            r = next((x for x in rep["rows"] if x["key"] == k), None)
            if r is None or not r.get("torch"):
                cells.append(f"{'—':>24s}")
                continue
            ratio = r["memlab"] / r["torch"]
            ratios.append(ratio)
            cells.append(f"{r['memlab']:7.0f} /{r['torch']:7.0f} {ratio:5.3f}×")
        low = f"{min(ratios):.3f}×" if ratios else ""
        print(f"{k:16s} " + " ".join(cells) + f"   {low}")


def main():
    js = [p for p in sys.argv[1:] if p.endswith(".json")]
    for p in sys.argv[1:]:
        if p.endswith(".csv") and any(l.startswith('"ID"') for l in open(p)):
            ncu(p)
        elif p.endswith(".csv"):
            variants(p)
        elif p.endswith(".log") or p.endswith(".txt"):
            print(f"== {p}")
            print(open(p).read().strip())
    if js:
        bench(js)


if __name__ == "__main__":
    main()
