#!/usr/bin/env python3
"""Records what PyTorch does with every PYTORCH_CUDA_ALLOC_CONF string of
allocator/config_torch_test.go (the conf: `...` fields of configCases).

Each string is tried in a fresh process forked before CUDA starts: the variable
is set, CUDA is initialised and one tensor allocated (PyTorch parses the
variable then), and the allocator_settings of a memory snapshot are kept; or
the exception, its type and message. The result goes to pytorch-config.json
beside this script; TestConfigCasesAgreeWithPyTorch checks the Go table
against it and TestConfigCases checks memlab's parser.

    python3 allocator/testdata/pytorch_config.py [OUT.json]   # needs torch and a CUDA GPU
"""
import json, multiprocessing as mp, os, re, sys
import torch

here = os.path.dirname(os.path.abspath(__file__))
src = open(os.path.join(here, "..", "config_torch_test.go")).read()
confs = list(dict.fromkeys(re.findall(r"conf: `([^`]*)`", src)))


def one(conf, conn):
    for k in ("PYTORCH_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF"):
        os.environ.pop(k, None)
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = conf
    out = {}
    try:
        torch.cuda.init()
        torch.empty(1, device="cuda")
    except BaseException as e:  # the parse error surfaces here
        msg = " | ".join(l.strip() for l in str(e).splitlines() if l.strip())
        out = {"error": msg[:600], "type": type(e).__name__}
    else:
        try:
            out = {"settings": torch.cuda.memory._snapshot().get("allocator_settings")}
        except BaseException as e:
            out = {"settings": None, "snapshot_error": f"{type(e).__name__}: {e}"[:300]}
    conn.send(out)
    conn.close()


def main():
    ctx = mp.get_context("fork")
    cases, running = {}, []
    todo = list(confs)
    while todo or running:
        while todo and len(running) < 8:
            conf = todo.pop(0)
            a, b = ctx.Pipe(False)
            p = ctx.Process(target=one, args=(conf, b))
            p.start()
            running.append((conf, p, a))
        conf, p, a = running.pop(0)
        if a.poll(60):
            cases[conf] = a.recv()
        else:
            cases[conf] = {"error": "no answer in 60 s", "type": "Timeout"}
        p.join(5)
    out = {"torch": torch.__version__, "cases": cases}
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "pytorch-config.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
    print(f"{len(cases)} configurations recorded with torch {torch.__version__} -> {path}")


if __name__ == "__main__":
    main()
