"""Measure where the CUDA driver places cudaMalloc allocations.

For each recorded sequence of PyTorch segment allocations and frees (segment_alloc /
segment_free of a snapshot, in seqs.json: {"name": [["a"|"f", recorded_addr, size], ...]}),
replay the same cudaMalloc/cudaFree calls in a fresh process and print the addresses the
driver returns, relative to the first one, next to the recorded ones (also relative).
Modes: "bare" (libcudart only, a fresh context) and "torch" (after torch initialised
CUDA and its libraries, as in the recorded runs). Plain ctypes; no PyTorch allocator.

usage: python3 measure.py seqs.json OUT.json
"""
import ctypes, json, subprocess, sys

def run_one(seq, mode):
    if mode == "torch":
        import torch
        torch.cuda.init()
        torch.zeros(1, device="cuda")
        torch.cuda.synchronize()
    rt = ctypes.CDLL("libcudart.so.13")
    rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
    rt.cudaFree.argtypes = [ctypes.c_void_p]
    rt.cudaFree(None)  # create the context
    mapping = {}
    got = []
    for act, addr, size in seq:
        if act == "a":
            p = ctypes.c_void_p()
            err = rt.cudaMalloc(ctypes.byref(p), size)
            if err:
                raise SystemExit(f"cudaMalloc({size}) failed: {err}")
            mapping[addr] = p.value
            got.append(p.value)
        else:
            err = rt.cudaFree(ctypes.c_void_p(mapping.pop(addr)))
            if err:
                raise SystemExit(f"cudaFree failed: {err}")
    return got

def main():
    if len(sys.argv) == 4:  # child: name mode
        seqs = json.load(open(sys.argv[1]))
        print(json.dumps(run_one(seqs[sys.argv[2]], sys.argv[3])))
        return
    seqs = json.load(open(sys.argv[1]))
    out = {}
    for name, seq in seqs.items():
        rec = [a for act, a, _ in seq if act == "a"]
        sizes = [s for act, _, s in seq if act == "a"]
        row = {"recorded": [a - rec[0] for a in rec], "sizes": sizes}
        for mode in ("bare", "torch"):
            r = subprocess.run([sys.executable, sys.argv[0], sys.argv[1], name, mode], capture_output=True, text=True)
            if r.returncode:
                row[mode] = r.stderr[-500:]
                continue
            got = json.loads(r.stdout.strip().splitlines()[-1])
            row[mode] = [a - got[0] for a in got]
            same = sum(1 for x, y in zip(row[mode], row["recorded"]) if x == y)
            print(f"{name} {mode}: {same}/{len(rec)} relative addresses as recorded", flush=True)
        out[name] = row
    json.dump(out, open(sys.argv[2], "w"))

main()
