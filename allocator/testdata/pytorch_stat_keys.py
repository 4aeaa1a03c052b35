#!/usr/bin/env python3
"""Records the keys of torch.cuda.memory_stats() (after one allocation) and
the device they were read on, to pytorch-stat-keys.json beside this script;
TestStatKeysMatchPyTorch checks allocator.StatKeys against it.

    python3 allocator/testdata/pytorch_stat_keys.py [OUT.json]   # needs torch and a CUDA GPU
"""
import json, os, sys
import torch

x = torch.empty(1 << 20, device="cuda")
keys = sorted(torch.cuda.memory_stats().keys())
out = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "keys": keys}
path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "pytorch-stat-keys.json")
with open(path, "w") as f:
    json.dump(out, f, indent=1)
print(f"{len(keys)} memory_stats keys recorded with torch {torch.__version__} on {out['device']} -> {path}")
