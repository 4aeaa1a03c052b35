#!/usr/bin/env python3
"""Record multi-GPU PyTorch programs' memory history, one snapshot and one facts file per rank.

memlab's recorder for jobs on several GPUs (GPU machine; PyTorch with CUDA and NCCL). It
is record_programs.py for torchrun: for each program and each of the recorder's five
settings (record_programs.SETTINGS) it starts a fresh job,

  python3 -m torch.distributed.run --standalone --nproc-per-node N record_ranks.py --program P ...

with PYTORCH_CUDA_ALLOC_CONF set before torch is imported, and every rank records its
allocator's history from before its first CUDA allocation, runs the program and writes

  OUT/PROGRAM__TAG.rankR.pickle      torch.cuda.memory._dump_snapshot() on rank R
  OUT/PROGRAM__TAG.rankR.facts.json  what PyTorch measured on rank R (record_programs.py's
                                     facts, with "rank", "world_size" and "local_rank")

`memlab whatif OUT/PROGRAM__default.rank*.pickle` replays them as one job's ranks. The
default setting runs first, with Python stack frames; the capped setting runs each rank
under set_per_process_memory_fraction(1.15 x that rank's default peak allocated / total).

  python3 record_ranks.py --out DIR [--programs a,b] [--nproc N] [--timeout S]
  python3 record_ranks.py --list

--nproc defaults to the GPUs torch sees; 1 runs each program as a one-rank job (NCCL,
world size 1), which checks the program and the files on a machine with one GPU. What
several ranks add to each rank's allocator: the collectives' buffers (NCCL's own memory is
not the caching allocator's, but the tensors it reads and writes are), the communication
streams (FSDP2's all-gather and reduce-scatter streams, DDP's gradient buckets), and
uneven shards (a dimension the world size does not divide).

NVLink multicast stays off (NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1,
NVSHMEM_DISABLE_NVLS=1): it can put a shared host's GPUs out of service.
"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import record_programs as rp  # noqa: E402  (SETTINGS, CAPPED, tag, segment_facts, mark)

NO_MULTICAST = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}


# ---------------------------------------------------------------- programs
# Each takes torch and torch.distributed (its process group initialised, the rank's
# device current). Weights and inputs are seeded per rank, so every setting sees the
# same requests.

def _mlp(torch, d, hidden, n):
    nn = torch.nn
    return nn.Sequential(*[nn.Sequential(nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, d)) for _ in range(n)])


def fsdp2_train_ranks(torch, dist):
    """FSDP2 (fully_shard) training of 4 MLP blocks (1000 -> 3000 -> 1000: dimensions that
    two, four or eight ranks do not divide evenly, so the last rank's shards are smaller)
    and a head of 1000 -> 777; AdamW, 4 steps at batch 24, 48, 24, 40 of 256 tokens, each
    rank its own batch. All-gathers and reduce-scatters run on FSDP's own streams."""
    from torch.distributed.fsdp import fully_shard
    torch.manual_seed(0)
    nn = torch.nn
    model = nn.Sequential(*_mlp(torch, 1000, 3000, 4), nn.Linear(1000, 777)).cuda()
    for blk in list(model)[:-1]:
        fully_shard(blk)
    fully_shard(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    g = torch.Generator(device="cuda").manual_seed(1 + dist.get_rank())
    for bs in (24, 48, 24, 40):
        x = torch.randn(bs, 256, 1000, device="cuda", generator=g)
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, loss
    torch.cuda.synchronize()
    rp.mark(torch, "after training")
    del model, opt


def ddp_train(torch, dist):
    """DistributedDataParallel training of 4 MLP blocks (1024 -> 4096 -> 1024) and a head
    of 1024 -> 1000 with 25 MiB gradient buckets (DDP's default: all-reduced on NCCL's
    stream while backward runs); SGD with momentum, 5 steps at batch 16, 32, 8, 32, 24 of
    256 tokens, the batch of rank R being that plus 4R (ranks with uneven inputs)."""
    from torch.nn.parallel import DistributedDataParallel as DDP
    torch.manual_seed(0)
    nn = torch.nn
    net = nn.Sequential(*_mlp(torch, 1024, 4096, 4), nn.Linear(1024, 1000)).cuda()
    model = DDP(net, device_ids=[torch.cuda.current_device()], bucket_cap_mb=25)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    g = torch.Generator(device="cuda").manual_seed(1 + dist.get_rank())
    for bs in (16, 32, 8, 32, 24):
        x = torch.randn(bs + 4 * dist.get_rank(), 256, 1024, device="cuda", generator=g)
        target = torch.randint(0, 1000, (x.shape[0] * 256,), device="cuda", generator=g)
        loss = nn.functional.cross_entropy(model(x).reshape(-1, 1000), target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        del x, target, loss
    torch.cuda.synchronize()
    rp.mark(torch, "after training")
    del model, net, opt


PROGRAMS = {f.__name__: f for f in (fsdp2_train_ranks, ddp_train)}


def base_name(out, name, conf, rank):
    return os.path.join(out, f"{name}__{rp.tag(conf)}.rank{rank}")


# ---------------------------------------------------------------- one rank
def run_rank(name, conf, capped, out, stacks):
    """One rank of a torchrun job: record, run, dump, write the facts."""
    rank, world, local = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ["LOCAL_RANK"])
    for k, v in NO_MULTICAST.items():
        os.environ[k] = v
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = conf
    import torch
    import torch.distributed as dist
    torch.cuda.set_device(local)
    torch.cuda.init()
    frac = None
    if capped:
        with open(base_name(out, name, "", rank) + ".facts.json") as f:
            frac = rp.capped_fraction(conf, json.load(f))
    rp.start_recording(torch, frac, stacks)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", local))
    t0, oom = time.time(), None
    try:
        PROGRAMS[name](torch, dist)
    except torch.OutOfMemoryError as e:
        oom = str(e)
    wall = time.time() - t0
    rp.write_run(torch, base_name(out, name, conf, rank),
                 {"workload": name, "conf": conf, "frac": frac, "rank": rank, "world_size": world, "local_rank": local},
                 oom, wall, "memlab scripts/record/record_ranks.py", f"{name} [{conf or 'default'}] rank {rank}/{world}")
    # An OOM on one rank leaves the others waiting in a collective: the job's timeout
    # (--timeout) ends them; destroy only after a run that finished.
    if oom is None:
        dist.destroy_process_group()


# ---------------------------------------------------------------- one job per setting
def job(name, conf, out, nproc):
    """The torchrun command line that records PROGRAM under one setting."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={nproc}",
           os.path.abspath(__file__), "--program", name, "--conf", conf, "--out", out]
    if conf == "":
        cmd.append("--stacks")
    if conf in rp.CAPPED:
        cmd.append("--capped")
    return cmd


def record_program(name, out, nproc, timeout, dry_run=False):
    """Record one program under every setting (rp.record_settings: the default first,
    with Python frames), each as a fresh torchrun job of nproc ranks. Returns its log;
    with dry_run, the commands it would run."""
    log = []
    env = dict(os.environ) | NO_MULTICAST

    def run_one(conf):
        cmd = job(name, conf, out, nproc)
        if dry_run:
            log.append(f"PYTORCH_CUDA_ALLOC_CONF={conf!r} " + " ".join(cmd))
            return True
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, env=env | {"PYTORCH_CUDA_ALLOC_CONF": conf},
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            log.append(f"{name} [{conf or 'default'}]: TIMEOUT after {timeout}s")
            return False
        if p.returncode == 0:
            log.extend(ln for ln in p.stdout.splitlines() if ln.startswith(name + " ["))
        else:
            log.append(f"{name} [{conf or 'default'}]: FAILED rc {p.returncode}\n{p.stderr.strip()[-4000:]}")
        return p.returncode == 0

    rp.record_settings(run_one)
    return log


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--programs")
    ap.add_argument("--program", help="run one rank of PROGRAM (as torchrun starts it)")
    ap.add_argument("--conf", default="")
    ap.add_argument("--capped", action="store_true", help="cap as record_programs.CAPPED says, from this rank's default facts")
    ap.add_argument("--stacks", action="store_true")
    ap.add_argument("--out", default="recorded-ranks")
    ap.add_argument("--nproc", type=int, help="ranks (GPUs) per job; default: every GPU torch sees")
    ap.add_argument("--timeout", type=float, default=600, help="seconds one job may run")
    ap.add_argument("--dry-run", action="store_true", help="print the jobs' command lines, run nothing")
    a = ap.parse_args()
    if a.list:
        print("\n".join(PROGRAMS))
        sys.exit(0)
    os.makedirs(a.out, exist_ok=True)
    if a.program:
        run_rank(a.program, a.conf, a.capped, a.out, a.stacks)
        sys.exit(0)
    nproc = a.nproc
    if not nproc and a.dry_run:
        nproc = 1
    if not nproc:
        import torch
        nproc = torch.cuda.device_count()
    for n in (a.programs.split(",") if a.programs else list(PROGRAMS)):
        print("\n".join(record_program(n, os.path.abspath(a.out), nproc, a.timeout, a.dry_run)), flush=True)
