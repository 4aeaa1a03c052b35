"""Print, per recorded run, how far a fresh process's cudaMalloc addresses follow the
recorded run's (results/driver-va.json, written by measure.py on the H200)."""
import json, sys
d = json.load(open(sys.argv[1] if len(sys.argv) > 1 else "results/driver-va.json"))
print("| recorded run | segments | bare: same prefix | bare: same anywhere | after torch init: same prefix |")
print("|---|---|---|---|---|")
for name, r in sorted(d.items()):
    def prefix(mode):
        n = 0
        for x, y in zip(r[mode], r["recorded"]):
            if x != y:
                break
            n += 1
        return n
    same = sum(1 for x, y in zip(r["bare"], r["recorded"]) if x == y)
    print(f"| {name.removesuffix('.pickle')} | {len(r['recorded'])} | {prefix('bare')} | {same} | {prefix('torch')} |")
