#!/usr/bin/env python3
"""Records what PyTorch prints for every case of TestStringMatchesPyTorch
(tensor/print_test.go).

Each case's name is the Python expression it mirrors, evaluated with the
tensor factories on cuda:0 (so the device suffix is printed) and the dtypes and
nan/inf as bare names. str() of the result, or the error, goes to
pytorch-print.json beside this script; TestStringCasesAgreeWithPyTorch checks
the Go table against it.

    python3 tensor/testdata/pytorch_print.py [OUT.json]   # needs torch and a CUDA GPU
"""
import json, os, re, sys
import torch

here = os.path.dirname(os.path.abspath(__file__))
src = open(os.path.join(here, "..", "print_test.go")).read()
body = src[src.index("func TestStringMatchesPyTorch"):]
body = body[: body.index("\n}\n")]
names = re.findall(r'^\t\t\{"((?:[^"\\]|\\.)*)",', body, re.M)

dev = "cuda:0"
def on_dev(f):
    return lambda *a, **k: f(*a, device=dev, **k)
ns = {"torch": torch, "nan": float("nan"), "inf": float("inf")}
for f in ("tensor", "zeros", "ones", "empty", "arange", "full"):
    ns[f] = on_dev(getattr(torch, f))
for d in ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"):
    ns[d] = getattr(torch, d)
out = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "cases": {}}
for name in names:
    try:
        out["cases"][name] = {"str": str(eval(name, ns))}
    except Exception as e:
        out["cases"][name] = {"error": f"{type(e).__name__}: {e}".split("\n")[0]}
path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "pytorch-print.json")
with open(path, "w") as f:
    json.dump(out, f, indent=1, sort_keys=True)
print(f"{len(names)} printed tensors recorded with torch {torch.__version__} -> {path}")
