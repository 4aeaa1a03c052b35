#!/usr/bin/env python3
"""Records what PyTorch answers for every case of tensor/layout_torch_test.go.

Each case's name is the Python expression it mirrors (t = torch.empty(shape)).
This script evaluates every name with real PyTorch and writes, for each, the
resulting shape, strides and storage offset, or the error message, to
pytorch-layouts.json beside it. TestLayoutCasesAgreeWithPyTorch then checks the
Go table against that record, so the table's expectations come from PyTorch.

    python3 tensor/testdata/pytorch_layouts.py   # needs only torch (CPU is enough)
"""
import json, os, re, sys
import torch

here = os.path.dirname(os.path.abspath(__file__))
src = open(os.path.join(here, "..", "layout_torch_test.go")).read()
names = re.findall(r'name: "((?:[^"\\]|\\.)*)"', src)
ns = {"empty": lambda *s: torch.empty(*s), "tensor": torch.tensor, "torch": torch}
out = {"torch": torch.__version__, "cases": {}}
for name in names:
    try:
        t = eval(name, ns)
    except (RuntimeError, IndexError, ValueError, TypeError) as e:
        out["cases"][name] = {"error": str(e).split("\n")[0], "type": type(e).__name__}
        continue
    except Exception as e:  # not an expression PyTorch accepts at all
        out["cases"][name] = {"skip": f"{type(e).__name__}: {e}"}
        continue
    out["cases"][name] = {"shape": list(t.shape), "strides": list(t.stride()), "offset": t.storage_offset()}
path = os.path.join(here, "pytorch-layouts.json")
if len(sys.argv) > 1:
    path = sys.argv[1]
with open(path, "w") as f:
    json.dump(out, f, indent=1, sort_keys=True)
print(f"{len(names)} cases recorded with torch {torch.__version__} -> {path}")
