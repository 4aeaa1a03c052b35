#!/usr/bin/env python3
"""Run record_programs.py's programs on the CPU, before a GPU is lent, to catch their bugs.

  python3 cpu_smoke.py PROGRAM [PROGRAM ...]

Needs PyTorch (a CPU wheel is enough), and transformers and torchvision for the programs
whose docstrings name them. Nothing is recorded: the programs' CUDA calls are turned into
CPU ones (device="cuda" and .cuda() into the CPU, streams and their waits into no-ops,
record_stream, synchronize and the allocator's statistics into stand-ins,
sdpa_kernel's backend choice and make_graphed_callables into the plain calls, a process
group of one rank onto gloo), and each
program runs once at its own sizes, so a shape error, a wrong import or an API that
PyTorch 2.11 does not have shows here rather than on the device. A program that passes
here can still fail on a GPU (a cuDNN kernel that refuses a shape, an OOM); one that fails
here would fail there. Prints "NAME OK Ns" or "NAME FAILED ..." with the traceback, and
exits 1 if any failed.
"""
import contextlib
import os
import sys
import time
import traceback

import torch


class _Stream:
    """A CUDA stream that does nothing: the CPU runs every op in order."""

    def __init__(self, *args, **kwargs):
        pass

    def wait_stream(self, other):
        pass

    def wait_event(self, event):
        pass

    def synchronize(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _cpu_source(path):
    """record_programs.py with its CUDA devices turned into the CPU and its main block off."""
    with open(path) as f:
        src = f.read()
    src = src.replace('device="cuda"', 'device="cpu"').replace(".cuda()", ".cpu()").replace('"cuda"', '"cpu"')
    # one rank on gloo: NCCL and a device id need a GPU, and DDP takes no device_ids on the CPU
    src = src.replace('dist.init_process_group("nccl"', 'dist.init_process_group("gloo"')
    src = src.replace('device_id=torch.device("cpu", 0)', "device_id=None").replace("device_ids=[0]", "device_ids=None")
    return src.replace('if __name__ == "__main__":', "if False:")


def _stand_ins():
    """Replace the CUDA calls a program makes that have no CPU meaning."""
    import torch._inductor.config  # noqa: F401  (imported before sdpa_kernel is replaced: dynamo reads it)
    import torch.nn.attention

    torch.cuda.Stream = _Stream
    torch.cuda.current_stream = lambda *a, **k: _Stream()
    torch.cuda.default_stream = lambda *a, **k: _Stream()
    torch.cuda.stream = lambda s: contextlib.nullcontext()
    torch.cuda.synchronize = lambda *a, **k: None
    torch.cuda.memory_stats = lambda *a, **k: {}
    torch.cuda.memory_snapshot = lambda *a, **k: []
    torch.cuda.make_graphed_callables = lambda callables, sample_args, **k: callables
    torch.Tensor.record_stream = lambda self, stream: None
    torch.nn.attention.sdpa_kernel = lambda *a, **k: contextlib.nullcontext()


def main(names):
    if not names:
        sys.exit(__doc__)
    _stand_ins()
    here = os.path.dirname(os.path.abspath(__file__))
    g = {"__name__": "record_programs_on_cpu"}
    exec(compile(_cpu_source(os.path.join(here, "record_programs.py")), "record_programs.py", "exec"), g)
    programs = g["PROGRAMS"] | g["BENCH_PROGRAMS"] | g["UNSHIPPED"] | g["UNRECORDED"]
    unknown = [n for n in names if n not in programs]
    if unknown:
        sys.exit(f"cpu_smoke: no program named {', '.join(unknown)} in record_programs.py (--list there names them)")
    failed = 0
    for name in names:
        t0 = time.time()
        try:
            programs[name](torch)
            print(f"{name} OK {time.time() - t0:.1f}s", flush=True)
        except Exception as e:  # every failure is reported, the next program still runs
            traceback.print_exc()
            print(f"{name} FAILED {e!r:.300}", flush=True)
            failed += 1
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main(sys.argv[1:])
