"""CPython's pickle as the oracle of memlab's snapshot decoder (snapshot/diff_test.go).

    python3 pyoracle.py corpus SEED N   # a seeded random corpus, with Python's answers
    python3 pyoracle.py oracle          # answers for base64 pickles read line by line

Every answer is one JSON line: {"name", "data" (base64), "ok", "value", "error",
"noverdict"}. "value" is the canonical form of what pickle.load returned, which the Go
test builds from memlab's decoding the same way: ["N"], ["b", 0|1], ["i", "decimal"],
["f", "16 hex digits of the bits" | "nan"], ["s", "hex of the UTF-8 bytes"],
["y", "hex"], ["l" | "t", [items]], ["d", [[key, value], ...]], ["S" | "F", [elements,
sorted by their JSON]] for sets and frozensets, and ["r", k] for a container that is
its own k-th enclosing container (a cycle). A pickle is rejected when pickle.load
raises or when bytes follow its STOP opcode. Nothing is ever imported or called:
find_class raises, so GLOBAL, STACK_GLOBAL, INST and EXT* are rejected.
"""
import base64
import io
import json
import math
import pickle
import pickletools
import random
import resource
import struct
import sys


class Refusing(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("refused: find_class %s.%s" % (module, name))


MAX_NODES = 200000


class TooLarge(Exception):
    """A value of more than MAX_NODES nodes (shared containers counted each time)."""


def canon(v):
    nodes = [0]

    def c(v, path):
        nodes[0] += 1
        if nodes[0] > MAX_NODES:
            raise TooLarge("more than %d nodes" % MAX_NODES)
        if v is None:
            return ["N"]
        if v is True or v is False:
            return ["b", int(v)]
        if isinstance(v, int):
            return ["i", str(v)]
        if isinstance(v, float):
            if math.isnan(v):
                return ["f", "nan"]
            return ["f", "%016x" % struct.unpack("<Q", struct.pack("<d", v))[0]]
        if isinstance(v, str):
            return ["s", v.encode("utf-8", "surrogatepass").hex()]
        if isinstance(v, (bytes, bytearray)):
            return ["y", bytes(v).hex()]
        if id(v) in path:
            return ["r", len(path) - path.index(id(v))]
        path.append(id(v))
        try:
            if isinstance(v, list):
                return ["l", [c(x, path) for x in v]]
            if isinstance(v, tuple):
                return ["t", [c(x, path) for x in v]]
            if isinstance(v, dict):
                return ["d", [[c(k, path), c(x, path)] for k, x in v.items()]]
            if isinstance(v, (set, frozenset)):
                items = sorted((c(x, path) for x in v), key=lambda e: json.dumps(e, separators=(",", ":")))
                return ["F" if isinstance(v, frozenset) else "S", items]
        finally:
            path.pop()
        raise TypeError("unexpected type %s" % type(v).__name__)

    return c(v, [])


def answer(name, data):
    out = {"name": name, "data": base64.b64encode(data).decode(), "ok": False,
           "value": None, "error": "", "noverdict": False}
    f = io.BytesIO(data)
    try:
        # pickle.load(f), as a snapshot is read, but refusing every import. From a
        # file (not pickle.loads), an opcode must not straddle the end of a frame.
        v = Refusing(f).load()
        if f.tell() != len(data):
            out["error"] = "%d bytes follow STOP" % (len(data) - f.tell())
            return out
        out["value"] = canon(v)
        out["ok"] = True
    except (MemoryError, RecursionError, TooLarge) as e:
        out["noverdict"] = True
        out["error"] = "%s: %s" % (type(e).__name__, e)
    except Exception as e:  # every other exception is a rejection
        out["error"] = "%s: %s" % (type(e).__name__, e)
    return out


# ---- the random corpus ----

def rand_str(r):
    k = r.random()
    if k < 0.3:
        return r.choice(["", "a", "size", "frames", "action", "alloc"])
    if k < 0.6:
        return "".join(r.choice("abcxyz_0123") for _ in range(r.randrange(0, 12)))
    if k < 0.8:
        return "".join(chr(r.choice([0xe9, 0x3b1, 0x2713, 0x1f600, 0x0, 0x7f, 0xd800 + r.randrange(4)])) for _ in range(r.randrange(1, 5)))
    return "x" * r.choice([255, 256, 300])


def rand_int(r):
    k = r.random()
    if k < 0.4:
        return r.randrange(-300, 300)
    if k < 0.7:
        return r.choice([255, 256, 65535, 65536, 2**31 - 1, -2**31, 2**31, 2**32, 2**63 - 1, -2**63, 2**63, 2**64 - 1, 2**64, -2**64 - 1])
    return r.randrange(-2**(8 * r.randrange(1, 300)), 2**(8 * r.randrange(1, 300)))


def rand_float(r):
    return r.choice([0.0, -0.0, 1.0, 1.5, -2.25, 1e100, -1e-300, 5e-324, float("inf"), float("-inf"), float("nan"), r.random() * 1e6, 3.0])


def rand_key(r, depth, pool, proto):
    k = r.random()
    if k < 0.5:
        return rand_str(r)
    if k < 0.7:
        return rand_int(r)
    if k < 0.75:
        return r.choice([True, False, None, 1.0, 0.0])
    if k < 0.8:
        return rand_float(r)
    if k < 0.9:
        return tuple(rand_key(r, depth + 1, pool, proto) for _ in range(r.randrange(0, 4)))
    if k < 0.95 and pool:
        ks = [x for x in pool if isinstance(x, (tuple, str, int))]
        try:
            if ks:
                x = r.choice(ks)
                hash(x)
                return x
        except TypeError:
            pass
    if proto >= 3:
        return r.randbytes(r.randrange(0, 5))
    return rand_str(r)


def rand_value(r, depth, pool, proto):
    k = r.random()
    if pool and k < 0.15:
        return r.choice(pool)  # shared: a memo reference
    if depth > 3 or k < 0.45:
        kinds = [rand_int, rand_str, rand_float, lambda r: r.choice([True, False, None])]
        if proto >= 3:  # older protocols write bytes as a call (_codecs.encode)
            kinds.append(lambda r: r.randbytes(r.randrange(0, 300)))
        return r.choice(kinds)(r)
    n = r.choice([0, 1, 2, 3, 4, 5, 20, 300]) if depth == 0 else r.choice([0, 1, 2, 3, 5])
    t = r.random()
    if t < 0.3:
        v = [rand_value(r, depth + 1, pool, proto) for _ in range(n)]
        if r.random() < 0.05:
            v.append(v)  # a cycle
    elif t < 0.5:
        v = tuple(rand_value(r, depth + 1, pool, proto) for _ in range(n))
    elif t < 0.85:
        v = {}
        for _ in range(n):
            v[rand_key(r, depth, pool, proto)] = rand_value(r, depth + 1, pool, proto)
        if r.random() < 0.05:
            v["self"] = v
    elif proto < 4:  # older protocols write sets as a call (builtins.set)
        v = [rand_key(r, depth, pool, proto) for _ in range(n)]
    elif t < 0.95:
        v = set(rand_key(r, depth, pool, proto) for _ in range(n))
    else:
        v = frozenset(rand_key(r, depth, pool, proto) for _ in range(n))
    pool.append(v)
    return v


def mutate(r, data):
    data = bytearray(data)
    k = r.random()
    if not data:
        return bytes(data)
    i = r.randrange(len(data))
    if k < 0.25:
        return bytes(data[:i])  # truncated
    if k < 0.5:
        data[i] = r.randrange(256)
    elif k < 0.6:
        data[i] ^= 1 << r.randrange(8)
    elif k < 0.7:
        del data[i]
    elif k < 0.8:
        data.insert(i, r.choice(b"(.012FIJKLMNSTUVXabdegjhlpqrstu}])\x85\x86\x87\x88\x89\x8a\x8c\x8f\x90\x91\x94\x95"))
    elif k < 0.9:
        j = r.randrange(i, min(len(data), i + 16) + 1)
        data[i:i] = data[i:j]
    else:
        # a memo index moved
        for j in range(i, len(data) - 1):
            if data[j] in b"qhj":
                data[j + 1] = r.randrange(8)
                break
    return bytes(data)


def memo_cases():
    """Hand-made memo edge cases (and a few others) that pickle.dumps never writes."""
    c = {}
    # MEMOIZE after sparse BINPUTs and overwrites: 13 goes to index len(memo) = 2.
    c["memoize after sparse binput"] = b"\x80\x04K\x0aq\x010K\x0bq\x000K\x0cq\x010K\x0d\x940h\x02."
    c["memoize after sparse binput, get 3"] = b"\x80\x04K\x0aq\x010K\x0bq\x000K\x0cq\x010K\x0d\x940h\x03."
    c["memoize after one sparse put"] = b"\x80\x04K\x05q\x070K\x06\x940h\x01."
    c["memoize counts overwrites once"] = b"\x80\x04K\x01\x94K\x02q\x000\x94(h\x00h\x01l."
    c["put then memoize"] = b"\x80\x04K\x01p0\n0K\x02\x94(g0\nh\x01l."
    c["text put and get"] = b"(K\x01p5\n0g5\ng5\nl."
    c["text put with spaces"] = b"K\x01p 5\n0g5\n."
    c["text put negative"] = b"K\x01p-1\n."
    c["long_binput big index"] = b"\x80\x04K\x07r\x70\x11\x01\x000j\x70\x11\x01\x00."
    c["long_binput then memoize"] = b"\x80\x04K\x07r\x70\x11\x01\x000K\x08\x940h\x01."
    c["binget never stored"] = b"\x80\x04h\x03."
    c["memoize on empty stack"] = b"\x80\x04\x94N."
    c["binput above a mark"] = b"\x80\x04N(q\x00."
    c["memoize above a mark"] = b"\x80\x04N(\x94t."
    c["binput overwrite"] = b"\x80\x04K\x01q\x000K\x02q\x000h\x00."
    c["shared tuple twice as a key"] = b"\x80\x04}(K\x01K\x02\x86q\x00K\x03h\x00K\x04u."
    c["shared list in two places"] = b"\x80\x04](]q\x00h\x00e."
    c["appending to a shared list"] = b"\x80\x04](]q\x00K\x01ah\x00K\x02ae."
    c["recursive dict"] = b"\x80\x04}q\x00X\x01\x00\x00\x00ah\x00s."
    c["recursive list via memoize"] = b"\x80\x04]\x94h\x00a."
    c["tuple holding its list"] = b"\x80\x04]q\x00h\x00\x85a."
    c["duplicate keys 1 1.0 True"] = b"\x80\x04}(K\x01K\x0aG?\xf0\x00\x00\x00\x00\x00\x00K\x0b\x88K\x0cu."
    c["set with duplicates"] = b"\x80\x04\x8f(K\x01K\x01\x88G?\xf0\x00\x00\x00\x00\x00\x00\x90."
    c["frozenset with duplicates"] = b"\x80\x04(K\x02K\x02\x91."
    c["set with a list"] = b"\x80\x04\x8f(]\x90."
    c["dict key list"] = b"\x80\x04}]Ns."
    c["dup then tuple2"] = b"\x80\x04K\x01\x852\x86."
    c["two values at stop"] = b"\x80\x04NN."
    c["trailing bytes"] = b"\x80\x04N.N"
    c["frame longer than the data"] = b"\x80\x04\x95\xff\x00\x00\x00\x00\x00\x00\x00N."
    c["empty frame"] = b"\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00N."
    c["int base 0"] = b"I0x10\n."
    c["int octal"] = b"I010\n."
    c["int bool"] = b"I01\n."
    c["int plus one bool"] = b"I+1\n."
    c["long"] = b"L12345678901234567890L\n."
    c["long leading zero"] = b"L010L\n."
    c["float text"] = b"F1.5\n."
    c["float text space"] = b"F1.5 \n."
    c["float hex"] = b"F0x1p-2\n."
    c["string non-ascii"] = b"S'\xc3\xa9'\n."
    c["binstring non-ascii"] = b"U\x02\xc3\xa9."
    c["binunicode invalid utf8"] = b"\x80\x04\x8c\x01\xff."
    c["binunicode surrogate"] = b"\x80\x04\x8c\x03\xed\xa0\x80."
    c["pop mark"] = b"\x80\x04N(N1."
    c["pop of a mark"] = b"\x80\x04N(0."
    return c


def corpus(seed, n):
    r = random.Random(seed)
    for name, data in memo_cases().items():
        yield name, data
    for i in range(n):
        proto = r.randrange(0, 6)
        pool = []
        v = rand_value(r, 0, pool, proto)
        try:
            data = pickle.dumps(v, protocol=proto)
        except Exception:
            continue
        if r.random() < 0.3:
            data = pickletools.optimize(data)  # drops unused PUTs: sparse memo indices
        yield "random %d (protocol %d)" % (i, proto), data
        for j in range(3):
            m = data
            for _ in range(r.randrange(1, 3)):
                m = mutate(r, m)
            yield "random %d (protocol %d) mutation %d" % (i, proto, j), m


def main():
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    sys.setrecursionlimit(10000)
    if sys.argv[1] == "corpus":
        for name, data in corpus(int(sys.argv[2]), int(sys.argv[3])):
            print(json.dumps(answer(name, data), separators=(",", ":")))
    elif sys.argv[1] == "oracle":
        for line in sys.stdin:
            data = base64.b64decode(line.strip())
            print(json.dumps(answer("", data), separators=(",", ":")), flush=True)
    else:
        sys.exit("usage: pyoracle.py corpus SEED N | oracle")


if __name__ == "__main__":
    main()
