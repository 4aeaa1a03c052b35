"""Why the usable memory a run's OOMs give falls during the run (reference/programs-2.11/
README.md, "A program that runs out of device memory and catches it").

  python3 usable_fall.py ooms SNAPSHOT.pickle...
      each recorded OOM's usable memory (the run's reserved memory there, from the
      trace's segment events, plus the OOM entry's device_free), in MiB from the first's
  python3 usable_fall.py matmul
      what the driver takes outside PyTorch's cache (torch.cuda.mem_get_info's free
      bytes, before and after) at a program's first embedding lookup and its first
      matmul, where cuBLAS initialises; run it under CUDA_MODULE_LOADING=LAZY (CUDA's
      default) and =EAGER

Memory taken outside the cache lowers what the next OOM says is usable: a serving
program whose first OOM came in its first forward's embeddings, before any matmul, lost
what cuBLAS took when its first matmul ran.
"""
import os
import pickle
import sys


def usable(path):
    """(entry, reserved, device_free, usable) of every OOM entry of device 0's trace."""
    with open(path, "rb") as f:
        s = pickle.load(f)
    reserved, out = 0, []
    for i, e in enumerate(s["device_traces"][0]):
        a = e["action"]
        if a in ("segment_alloc", "segment_map"):
            reserved += e["size"]
        elif a in ("segment_free", "segment_unmap"):
            reserved -= e["size"]
        elif a == "oom":
            out.append((i, reserved, e["device_free"], reserved + e["device_free"]))
    return out


def ooms(paths):
    for p in paths:
        u = usable(p)
        if not u:
            print(p, "no OOM")
            continue
        first = u[0][3]
        print(p, len(u), "OOMs; usable (MiB from the first):", [round((x[3] - first) / 2**20, 1) for x in u])
        print("  the first at entry", u[0][0], "usable", first)


def matmul():
    import torch
    torch.cuda.init()

    def free():
        torch.cuda.synchronize()
        return torch.cuda.mem_get_info()[0]

    f0 = free()
    emb = torch.nn.Embedding(30000, 768).cuda().half()
    x = emb(torch.randint(0, 30000, (8, 128), device="cuda"))
    f1 = free()
    y = x @ x.transpose(1, 2)  # the first matmul: cuBLAS initialises here
    f2 = free()
    torch.nn.functional.softmax(y.float(), -1)
    f3 = free()
    print(f"CUDA_MODULE_LOADING={os.environ.get('CUDA_MODULE_LOADING', '(unset: LAZY)')} on {torch.cuda.get_device_name()}: "
          f"the driver's use grew {(f0 - f1) / 2**20:.0f} MiB at the first embedding (PyTorch reserved "
          f"{torch.cuda.memory_reserved() / 2**20:.0f} MiB of it), {(f1 - f2) / 2**20:.0f} MiB at the first matmul, "
          f"{(f2 - f3) / 2**20:.0f} MiB at the first softmax")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "ooms":
        ooms(sys.argv[2:])
    elif sys.argv[1:] == ["matmul"]:
        matmul()
    else:
        sys.exit(__doc__)
