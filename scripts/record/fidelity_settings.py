#!/usr/bin/env python3
"""Random PYTORCH_CUDA_ALLOC_CONF strings, and what PyTorch does with each.

Part of memlab's randomized differential suite (issue 22; scripts/record/fidelity.sh
runs every recorder). The strings come from the grammar of PyTorch's allocator
configuration (every key, well-formed and bad values, roundup lists) and near it:
spaces, case, doubled and stray commas and colons, brackets left open, characters
dropped or inserted.

Each string is given to PyTorch the way a user gives it, in the environment: a child
forked before CUDA starts sets PYTORCH_CUDA_ALLOC_CONF, initialises CUDA and
allocates one byte (PyTorch parses the variable then) and reports the exception (type
and message), or the allocator_settings of a memory snapshot. A second child, without
the variable, passes the same string to torch.cuda.memory._set_allocator_settings, so
that the record shows whether that entry point parses as the variable does ("set").

Output: gzip'd JSON lines, a header then one {"id", "conf", "env": {...}, "set":
{...}} a line, each answer {"ok": true, "settings": ...} or {"error", "type"}.
allocator/fidelity_test.go checks memlab's ParseConfig against the "env" answers.

    python3 scripts/record/fidelity_settings.py OUT.jsonl.gz [--n N] [--seed S]
                                         [--jobs J] [--no-env]

--no-env records only the _set_allocator_settings answers (a machine without a GPU).
"""
import argparse
import gzip
import json
import multiprocessing as mp
import os
import random

import torch

MB_KEYS = ["max_split_size_mb", "max_non_split_rounding_mb", "large_segment_size_mb",
           "pinned_reserve_segment_size_mb"]
BOOL_KEYS = ["expandable_segments", "release_lock_on_cudamalloc",
             "pinned_use_cuda_host_register", "pinned_use_background_threads",
             "graph_capture_record_stream_reuse"]
FLOAT_KEYS = ["garbage_collection_threshold", "per_process_memory_fraction"]
KEYS = MB_KEYS + BOOL_KEYS + FLOAT_KEYS + ["roundup_power2_divisions", "backend",
                                           "pinned_num_register_threads"]
TYPOS = ["max_split_size", "expandable_segment", "foo", "roundup_power2_division",
         "garbage_collection", "MAX_SPLIT_SIZE_MB", "Expandable_Segments", "max-split-size-mb"]


def mb_value(rng):
    if rng.random() < 0.5:
        return rng.choice(["20", "32", "64", "128", "256", "1024"])
    return rng.choice(["0", "1", "10", "11", "19", "20", "21", "24", "32", "40", "64", "128",
                       "200", "1024", "99999999999", "-1", "128.5", "1.5", "abc", "1e3",
                       "0x40", "007", "+64", "64MB", "99999999999999999999999"])


def float_value(rng):
    if rng.random() < 0.5:
        return rng.choice(["0.6", "0.5", "0.8", "0.25"])
    return rng.choice(["0.6", "0.5", "0", "0.0", "1", "1.0", "0.999", "1e-3", ".5", "0.5x",
                       "-0.1", "1.5", "abc", "nan", "inf", "0,5"])


def bool_value(rng):
    return rng.choice(["True", "False", "True", "False", "true", "false", "1", "0", "yes",
                       "TRUE", "Tru", "True "])


def roundup_value(rng):
    if rng.random() < 0.2:
        return rng.choice(["1", "2", "4", "8", "16", "[256:1,512:2,1024:4,>:8]", "[>:4]", "[64:8,256:0]"])
    if rng.random() < 0.4:
        return rng.choice(["0", "1", "2", "3", "4", "8", "16", "32", "5", "-4", "abc", "2.0"])
    items = []
    for _ in range(rng.randint(0, 4)):
        k = rng.choice(["1", "2", "3", "32", "64", "256", "512", "1024", "4096", ">", ">", "x",
                        "1025", "65536"])
        v = rng.choice(["0", "1", "2", "3", "4", "8", "16", "-1", ""])
        items.append(f"{k}:{v}")
    inner = ",".join(items)
    r = rng.random()
    if r < 0.08:
        return "[" + inner
    if r < 0.12:
        return "[" + inner + ",]"
    if r < 0.15:
        return inner + "]"
    return "[" + inner + "]"


def value_for(rng, key):
    k = key.lower()
    if k in MB_KEYS:
        return mb_value(rng)
    if k in BOOL_KEYS:
        return bool_value(rng)
    if k in FLOAT_KEYS:
        return float_value(rng)
    if k == "roundup_power2_divisions":
        return roundup_value(rng)
    if k == "backend":
        return rng.choice(["native", "native", "foo", "Native"])
    if k == "pinned_num_register_threads":
        return rng.choice(["1", "2", "3", "8", "128", "256", "0"])
    return rng.choice([mb_value(rng), bool_value(rng), "1"])


def sp(rng):
    return rng.choice(["", "", "", "", " ", "  ", "\t"])


def mutate(rng, s):
    r = rng.random()
    if not s:
        return rng.choice([",", ":", "[", "]", " "])
    i = rng.randrange(len(s))
    if r < 0.4:
        return s[:i] + s[i + 1:]
    if r < 0.8:
        return s[:i] + rng.choice([",", ":", "[", "]", " ", "x", "1", ";", "="]) + s[i:]
    return s[:i] + s[i:].upper()


def conf_string(rng):
    items = []
    for _ in range(rng.choice([0, 1, 1, 1, 2, 2, 3])):
        key = rng.choice(KEYS) if rng.random() < 0.9 else rng.choice(TYPOS)
        if rng.random() < 0.03:
            key = key.upper()
        value = value_for(rng, key)
        colon = ":" if rng.random() < 0.95 else rng.choice(["", "=", "::"])
        if rng.random() < 0.03:
            value = ""
        items.append(sp(rng) + key + sp(rng) + colon + sp(rng) + value + sp(rng))
    sep = "," if rng.random() < 0.9 else rng.choice([",,", ";", ", "])
    s = sep.join(items)
    r = rng.random()
    if r < 0.05:
        s = "," + s
    elif r < 0.10:
        s = s + ","
    if rng.random() < 0.15:
        s = mutate(rng, s)
    return s


def answer_of(e):
    msg = " | ".join(l.strip() for l in str(e).splitlines() if l.strip())
    return {"error": msg[:600], "type": type(e).__name__}


def quiet():
    import warnings
    warnings.filterwarnings("ignore")


def env_child(conf, conn):
    quiet()
    for k in ("PYTORCH_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF"):
        os.environ.pop(k, None)
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = conf
    out = {}
    try:
        torch.cuda.init()
        torch.empty(1, device="cuda")
    except torch.OutOfMemoryError as e:  # accepted, but a cap of 0 lets nothing in
        out = {"ok": True, "oom": str(e).splitlines()[0][:200]}
    except BaseException as e:  # the parse error surfaces here
        out = answer_of(e)
    else:
        out = {"ok": True}
    if out.get("ok"):
        try:
            out["settings"] = torch.cuda.memory._snapshot().get("allocator_settings")
        except BaseException as e:
            out["settings_error"] = f"{type(e).__name__}: {e}"[:300]
    conn.send(out)
    conn.close()


def set_child(conf, conn):
    quiet()
    for k in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF"):
        os.environ.pop(k, None)
    try:
        torch.cuda.memory._set_allocator_settings(conf)
        out = {"ok": True}
    except BaseException as e:
        out = answer_of(e)
    conn.send(out)
    conn.close()


def run_all(fn, confs, jobs):
    ctx = mp.get_context("fork")
    res = [None] * len(confs)
    todo = list(range(len(confs)))
    running = []
    while todo or running:
        while todo and len(running) < jobs:
            i = todo.pop(0)
            a, b = ctx.Pipe(False)
            p = ctx.Process(target=fn, args=(confs[i], b))
            p.start()
            b.close()
            running.append((i, p, a))
        i, p, a = running.pop(0)
        try:
            res[i] = a.recv() if a.poll(90) else {"error": "no answer in 90 s", "type": "Timeout"}
        except EOFError:
            res[i] = {"error": f"child died (exit {p.exitcode})", "type": "Crash"}
        p.join(10)
        if p.is_alive():
            p.kill()
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--n", type=int, default=600)
    ap.add_argument("--seed", type=int, default=22)
    ap.add_argument("--jobs", type=int, default=16)
    ap.add_argument("--no-env", action="store_true")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    confs = list(dict.fromkeys(conf_string(rng) for _ in range(a.n)))
    env = [None] * len(confs) if a.no_env else run_all(env_child, confs, a.jobs)
    sets = run_all(set_child, confs, a.jobs)
    dev = torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"
    same = 0
    with gzip.open(a.out, "wt", encoding="utf-8") as f:
        f.write(json.dumps({"kind": "header", "suite": "settings", "torch": torch.__version__,
                            "device": dev, "seed": a.seed, "strings": len(confs),
                            "env_recorded": not a.no_env}) + "\n")
        for i, c in enumerate(confs):
            if env[i] is not None and (env[i].get("ok") == sets[i].get("ok")) and \
                    env[i].get("error") == sets[i].get("error"):
                same += 1
            f.write(json.dumps({"id": i, "conf": c, "env": env[i], "set": sets[i]},
                               separators=(",", ":")) + "\n")
    print(f"settings: {len(confs)} strings recorded with torch {torch.__version__} on {dev} "
          f"-> {a.out}; _set_allocator_settings answered as the variable did for {same}")


if __name__ == "__main__":
    main()
