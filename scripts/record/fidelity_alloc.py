#!/usr/bin/env python3
"""Random allocation traces under random allocator settings, through PyTorch's CUDA
caching allocator, with its state after every op and its final memory_summary().

Part of memlab's randomized differential suite (issue 22; scripts/record/fidelity.sh
runs every recorder). Each trace draws its settings at random (max_split_size_mb,
roundup_power2_divisions as a number or a list, expandable_segments,
garbage_collection_threshold) and a cap (set_per_process_memory_fraction, so that
out-of-memory errors happen, and the same way on any GPU), then random ops: allocations
of small, medium, large and huge sizes, frees, empty_cache, reset_peak_memory_stats and
changes of the fraction; the last ones (--stream-traces) also allocate on side
streams and call record_stream, so that frees wait on other streams. Every op is
followed by torch.cuda.synchronize(): a replay takes each op's work as done. Each
trace runs in a child forked before CUDA starts, with
PYTORCH_CUDA_ALLOC_CONF set, as a user sets it.

The lines of one trace are those replay reads (replay/trace.go; the format of
reference/torch-2.11/README.md): a header with the ops, conf and cap, the baseline
state, one state per op (memory_allocated/reserved and their peaks, memory_stats()
keys, every segment with its blocks, the device allocations made and released, the
pointer or the OOM message of an allocation), then the footer. The output file holds a
suite header, then one {"kind": "trace", "id", "lines": [...], "summary": ...} a line;
replay/fidelity_test.go checks every trace with replay.Check.

    python3 scripts/record/fidelity_alloc.py OUT.jsonl.gz [--traces N] [--stream-traces M] [--seed S] [--seconds T]

It needs torch and a CUDA GPU.
"""
import argparse
import gzip
import json
import multiprocessing as mp
import os
import random
import time

import torch

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

STAT_KEYS = [
    "allocated_bytes.all.current", "allocated_bytes.all.peak",
    "reserved_bytes.all.current", "reserved_bytes.all.peak",
    "active_bytes.all.current", "requested_bytes.all.current",
    "inactive_split_bytes.all.current", "inactive_split.all.current",
    "allocation.all.current", "active.all.current",
    "segment.all.current", "segment.large_pool.current",
    "segment.small_pool.current",
    "reserved_bytes.large_pool.current", "reserved_bytes.small_pool.current",
    "allocated_bytes.large_pool.current", "allocated_bytes.small_pool.current",
    "inactive_split_bytes.large_pool.current",
    "inactive_split_bytes.small_pool.current",
    "num_alloc_retries", "num_ooms", "num_sync_all_streams",
    "num_device_alloc", "num_device_free",
    "oversize_allocations.current", "oversize_segments.current",
    "max_split_size",
]
STATE_CODE = {"active_allocated": "A", "active_pending_free": "P", "inactive": "I"}


def rand_conf(rng):
    items = []
    if rng.random() < 0.4:
        items.append(f"max_split_size_mb:{rng.choice([20, 32, 64, 100, 128, 200, 512])}")
    if rng.random() < 0.35:
        if rng.random() < 0.5:
            items.append(f"roundup_power2_divisions:{rng.choice([1, 2, 4, 8, 16])}")
        else:
            ks = sorted(rng.sample([1, 2, 4, 64, 128, 256, 512, 1024, 2048], rng.randint(1, 3)))
            lst = [f"{k}:{rng.choice([0, 1, 2, 4, 8])}" for k in ks]
            if rng.random() < 0.6:
                lst.append(f">:{rng.choice([0, 2, 4, 8])}")
            items.append("roundup_power2_divisions:[" + ",".join(lst) + "]")
    if rng.random() < 0.3:
        items.append("expandable_segments:True")
    if rng.random() < 0.35:
        items.append(f"garbage_collection_threshold:{rng.choice([0.3, 0.5, 0.6, 0.8, 0.95])}")
    rng.shuffle(items)
    return ",".join(items)


def rand_size(rng):
    r = rng.random()
    if r < 0.35:
        return max(1, int(round(2 ** rng.uniform(0, 20))))  # 1 B .. 1 MiB
    if r < 0.45:
        return rng.choice([0, 1, 512, 513, MiB, MiB + 1, 2 * MiB, 10 * MiB, 10 * MiB + 1,
                           20 * MiB, 64 * MiB])
    if r < 0.75:
        return rng.randint(MiB + 1, 12 * MiB)
    if r < 0.95:
        return int(round(2 ** rng.uniform(23.3, 28.3)))  # 10 .. 320 MiB
    return rng.randint(300 * MiB, 1200 * MiB)


def rand_stream_trace(rng):
    """(ops, cap_gib) for one trace across streams: allocations on side streams
    1..3 ("as"), record_stream of live tensors on other streams ("rs"), so that
    frees wait for other streams (active_pending_free until the next malloc)."""
    n_ops = rng.randint(20, 80)
    cap = rng.choice([0.5, 1, 2, 4])
    ops, live, next_id = [], [], 0
    while len(ops) < n_ops:
        r = rng.random()
        if r < 0.03:
            ops.append(["e"])
        elif live and r < 0.15:
            ops.append(["rs", rng.choice(live), rng.choice([0, 1, 2, 3])])
        elif live and r < 0.45:
            i = rng.randrange(len(live)) if rng.random() < 0.7 else len(live) - 1
            ops.append(["f", live.pop(i)])
        else:
            s = rng.choice([0, 0, 1, 1, 2, 3])
            ops.append(["a", rand_size(rng)] if s == 0 else ["as", rand_size(rng), s])
            live.append(next_id)
            next_id += 1
    return ops, cap


def rand_trace(rng):
    """(ops, cap_gib) for one trace."""
    n_ops = rng.randint(20, 90)
    cap = rng.choice([0.5, 1, 1.5, 2, 3, 4, 6])
    ops, live, next_id = [], [], 0
    while len(ops) < n_ops:
        r = rng.random()
        if r < 0.03:
            ops.append(["e"])
        elif r < 0.045:
            ops.append(["r"])
        elif r < 0.055:
            ops.append(["frac", round(min(1.0, rng.choice([0.5, 1, 2, 4, 8]) * GiB / 150109880320), 6)])
        elif live and r < 0.42:
            i = rng.randrange(len(live)) if rng.random() < 0.7 else len(live) - 1
            ops.append(["f", live.pop(i)])
        elif r < 0.44 and next_id:
            ops.append(["f", rng.randrange(next_id)])  # maybe already freed: a no-op
        else:
            ops.append(["a", rand_size(rng)])
            live.append(next_id)
            next_id += 1
    return ops, cap


def child(idx, ops, conf, cap_gib, conn):
    import warnings
    warnings.filterwarnings("ignore")
    for k in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF"):
        os.environ.pop(k, None)
    if conf:
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = conf
    try:
        conn.send(run_trace(idx, ops, conf, cap_gib))
    except BaseException as e:
        conn.send({"error": f"{type(e).__name__}: {e}"[:1000]})
    conn.close()


def run_trace(idx, ops, conf, cap_gib):
    torch.cuda.init()
    dev = torch.device("cuda", 0)
    total = int(torch.cuda.get_device_properties(0).total_memory)
    oom_types = (torch.OutOfMemoryError,)

    def stats():
        s = torch.cuda.memory_stats(0)
        return {k: int(s.get(k, 0)) for k in STAT_KEYS}

    def layout():
        segs = [s for s in torch.cuda.memory_snapshot() if int(s.get("device", 0)) == 0]
        segs.sort(key=lambda s: int(s["address"]))
        return [{"addr": int(s["address"]), "total": int(s["total_size"]),
                 "type": "L" if s.get("segment_type") == "large" else "S",
                 "exp": bool(s.get("is_expandable", False)),
                 "blocks": [[int(b["size"]), STATE_CODE.get(b["state"], b["state"]),
                             int(b.get("requested_size", 0))] for b in s["blocks"]]}
                for s in segs]

    def state(prev):
        segs = layout()
        rec = {"memory_allocated": int(torch.cuda.memory_allocated(0)),
               "memory_reserved": int(torch.cuda.memory_reserved(0)),
               "max_memory_allocated": int(torch.cuda.max_memory_allocated(0)),
               "max_memory_reserved": int(torch.cuda.max_memory_reserved(0)),
               "stats": stats(), "seg_sizes": [s["total"] for s in segs], "segments": segs}
        before = {(s["addr"], s["total"]) for s in prev}
        after = {(s["addr"], s["total"]) for s in segs}
        rec["new_segs"] = sorted([list(x) for x in after - before])
        rec["gone_segs"] = sorted([list(x) for x in before - after])
        return rec, segs

    # Streams first: each takes driver memory, which the OOM message counts in
    # "this process has … in use" and a replay takes from mem_get_info below.
    streams = {0: torch.cuda.default_stream(0)}
    if any(op[0] in ("as", "rs") for op in ops):
        for k in (1, 2, 3):
            streams[k] = torch.cuda.Stream(0)
    settings = torch.cuda.memory._snapshot().get("allocator_settings")
    frac = min(1.0, cap_gib * GiB / total)
    torch.cuda.set_per_process_memory_fraction(frac, 0)
    allowed = int(frac * float(total)) if frac < 1.0 else None
    torch.cuda.reset_peak_memory_stats(0)
    torch.cuda.reset_accumulated_memory_stats(0)
    lines = [{"kind": "header", "trace": f"fidelity-{idx}", "conf": conf,
              "env_var": "PYTORCH_CUDA_ALLOC_CONF" if conf else None,
              "cap_gib": cap_gib, "allowed_bytes": allowed, "torch": torch.__version__,
              "cuda": torch.version.cuda, "device": 0,
              "device_name": torch.cuda.get_device_name(0), "total_memory": total,
              "mem_get_info": list(torch.cuda.mem_get_info(0)),
              "allocator_settings": settings, "n_ops": len(ops), "ops": ops}]
    rec, segs = state([])
    rec["kind"] = "baseline"
    lines.append(rec)
    tensors, next_id = {}, 0
    for i, op in enumerate(ops):
        line = {"kind": "op", "i": i, "op": op}
        if op[0] in ("a", "as"):
            aid = next_id
            next_id += 1
            line["id"] = aid
            try:
                with torch.cuda.stream(streams[int(op[2]) if op[0] == "as" else 0]):
                    tensors[aid] = torch.empty(int(op[1]), dtype=torch.uint8, device=dev)
                line["ptr"] = int(tensors[aid].data_ptr())
            except oom_types as e:
                line["oom"] = True
                line["msg"] = str(e).splitlines()[0]
        elif op[0] == "f":
            line["id"] = int(op[1])
            if tensors.pop(int(op[1]), None) is None:
                line["noop"] = True
        elif op[0] == "rs":
            line["id"] = int(op[1])
            if int(op[1]) in tensors:
                tensors[int(op[1])].record_stream(streams[int(op[2])])
            else:
                line["noop"] = True
        elif op[0] == "e":
            torch.cuda.empty_cache()
        elif op[0] == "r":
            torch.cuda.reset_peak_memory_stats(0)
        elif op[0] == "frac":
            torch.cuda.set_per_process_memory_fraction(float(op[1]), 0)
        torch.cuda.synchronize()  # every op's work done: a replay assumes it
        rec, segs = state(segs)
        line.update(rec)
        if "ptr" in line:
            for j, s in enumerate(segs):
                if s["addr"] <= line["ptr"] < s["addr"] + s["total"]:
                    line["seg_index"], line["offset"] = j, line["ptr"] - s["addr"]
                    break
        lines.append(line)
    lines.append({"kind": "footer", "live_tensors": len(tensors)})
    return {"lines": lines, "summary": torch.cuda.memory_summary(0)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--traces", type=int, default=200)
    ap.add_argument("--stream-traces", type=int, default=100,
                    help="traces across streams, after the --traces others")
    ap.add_argument("--seed", type=int, default=22)
    ap.add_argument("--seconds", type=float, default=0,
                    help="start no trace after this many seconds (0: no limit)")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    plans = []
    for i in range(a.traces):
        conf = rand_conf(rng)
        ops, cap = rand_trace(rng)
        plans.append((i, ops, conf, cap))
    srng = random.Random(a.seed + 1)  # the traces above stay as they were
    for i in range(a.traces, a.traces + a.stream_traces):
        conf = rand_conf(srng)
        ops, cap = rand_stream_trace(srng)
        plans.append((i, ops, conf, cap))
    ctx = mp.get_context("fork")
    ok = ops_total = ooms = 0
    t0 = time.time()
    with gzip.open(a.out, "wt", encoding="utf-8") as f:
        f.write(json.dumps({"kind": "header", "suite": "allocator", "torch": torch.__version__,
                            "device": "the first CUDA GPU", "seed": a.seed,
                            "traces": len(plans)}) + "\n")
        # One trace at a time: an OOM message names the device's free memory, which
        # another process running at the same time would change.
        for i, ops, conf, cap in plans:
            if a.seconds and time.time() - t0 > a.seconds:
                print(f"allocator: stopped after {i} traces, at the --seconds limit", flush=True)
                break
            r, w = ctx.Pipe(False)
            p = ctx.Process(target=child, args=(i, ops, conf, cap, w))
            p.start()
            w.close()
            try:
                res = r.recv() if r.poll(120) else {"error": "no answer in 120 s"}
            except EOFError:
                res = {"error": f"child died (exit {p.exitcode})"}
            p.join(10)
            if p.is_alive():
                p.kill()
            if "error" in res:
                print(f"trace {i} ({conf!r}, cap {cap} GiB) failed: {res['error']}", flush=True)
                f.write(json.dumps({"kind": "trace", "id": i, "conf": conf, "error": res["error"]}) + "\n")
                continue
            ok += 1
            ops_total += len(ops)
            ooms += sum(1 for l in res["lines"] if l.get("oom"))
            f.write(json.dumps({"kind": "trace", "id": i, "conf": conf, "lines": res["lines"],
                                "summary": res["summary"]}, separators=(",", ":")) + "\n")
            f.flush()
    print(f"allocator: {ok} of {len(plans)} traces, {ops_total} ops ({ooms} OOMs) recorded "
          f"with torch {torch.__version__} -> {a.out}")


if __name__ == "__main__":
    main()
