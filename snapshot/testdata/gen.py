"""Writes the snapshot package's test data (run from this directory: python3 gen.py).

The tests never run Python: this script documents where the committed bytes and
numbers come from. Nothing here unpickles untrusted input; the reference pickles
are PyTorch's own, recorded for this repository.
"""
import collections
import glob
import gzip
import json
import os
import pickle


class Evil:
    """Unpickling this runs os.system: the decoder must refuse it."""

    def __reduce__(self):
        return (os.system, ("echo memlab-was-exploited > /tmp/memlab-exploited",))


def snapshot_with(payload):
    return {
        "segments": [],
        "device_traces": [[{"action": "alloc", "addr": 0, "size": payload, "stream": 0}]],
    }


def write(name, data):
    with open(name, "wb") as f:
        f.write(data)


# Malicious pickles: GLOBAL + REDUCE (protocols 0 and 2), STACK_GLOBAL + REDUCE
# (protocol 4), each nested where a snapshot's value would be.
write("evil_global_p0.pickle", pickle.dumps(snapshot_with(Evil()), protocol=0))
write("evil_global_p2.pickle", pickle.dumps(snapshot_with(Evil()), protocol=2))
write("evil_stack_global_p4.pickle", pickle.dumps(snapshot_with(Evil()), protocol=4))
write("evil_top_p5.pickle", pickle.dumps(Evil(), protocol=5))

# Plain values in every protocol, with Python's repr of them.
shared = ["shared", 1]
rec = []
rec.append(rec)
values = {
    "ints": [0, 1, -1, 255, 256, 65535, 65536, -65536, 2**31 - 1, -(2**31), 2**31,
             2**63 - 1, -(2**63), 2**63, 2**64 - 1, 2**64, -(2**70), 10**30],
    "floats": [0.0, 1.5, -0.25, 1e100, float("inf")],
    "strs": ["", "plain", "ünïcödé ✓", "x" * 300, "line\nbreak"],
    "bytes": [b"", b"abc", b"\x00\xff"],
    "bools": [True, False, None],
    "tuples": [(), (1,), (1, 2), (1, 2, 3), (1, 2, 3, 4)],
    "nested": {"a": [shared, shared], "b": {"c": ()}},
    "recursive": rec,
    "set": {1},
    "frozenset": frozenset({"f"}),
    "intkeys": {1: "one", (2, 3): "tuple", None: "none", True: "true?"},
}
# Python writes bytes before protocol 3, and sets before protocol 4, as calls
# (GLOBAL + REDUCE), which the decoder refuses like any call: leave them out there.
for proto in range(6):
    v = dict(values)
    if proto < 3:
        del v["bytes"]
    if proto < 4:
        del v["set"], v["frozenset"]
    write(f"values_p{proto}.pickle", pickle.dumps(v, protocol=proto))
    with open(f"values_p{proto}.repr", "w") as f:
        f.write(repr(v) + "\n")

# Facts about the reference snapshots, counted by pickle.load for the tests.
facts = {}
for path in sorted(glob.glob("../../reference/torch-2.11/snapshot_*.pickle")
                   + glob.glob("../../reference/workloads-2.11/*.pickle")
                   + glob.glob("../../reference/workloads-2.11/*.pickle.gz")):
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        s = pickle.load(f)
    streams = set()
    actions = collections.Counter()
    alloc_bytes = 0
    frames = 0
    traces = []
    for t in s["device_traces"]:
        traces.append(len(t))
        for e in t:
            actions[e["action"]] += 1
            streams.add(e.get("stream", 0))
            if e["action"] == "alloc":
                alloc_bytes += e["size"]
            frames += len(e.get("frames", []))
    blocks = collections.Counter()
    for seg in s["segments"]:
        streams.add(seg["stream"])
        for b in seg["blocks"]:
            blocks[b["state"]] += 1
    facts[os.path.relpath(path, "../../reference")] = {
        "segments": len(s["segments"]),
        "reserved": sum(seg["total_size"] for seg in s["segments"]),
        "allocated": sum(seg["allocated_size"] for seg in s["segments"]),
        "blocks": dict(blocks),
        "traces": traces,
        "actions": dict(actions),
        "alloc_bytes": alloc_bytes,
        "trace_frames": frames,
        "streams": len(streams),
        "annotations": len(s.get("external_annotations", [])),
        "conf": s["allocator_settings"]["PYTORCH_CUDA_ALLOC_CONF"],
        "max_split_size": s["allocator_settings"]["max_split_size"],
    }
with open("reference_facts.json", "w") as f:
    json.dump(facts, f, indent=1, sort_keys=True)
    f.write("\n")
