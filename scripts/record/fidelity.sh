#!/usr/bin/env bash
# Records the ground truth of memlab's randomized differential suites (issue 22)
# with the PyTorch installed here, on the first CUDA GPU:
#
#   bash scripts/record/fidelity.sh [OUTDIR]     # default: reference/fidelity-2.11
#   make fidelity-record                          # the same
#
# It writes OUTDIR/{layouts,kernels,settings,allocator}.jsonl.gz (gzip'd JSON lines,
# each with the PyTorch version in its header) and OUTDIR/RECORDED.txt (the machine,
# the versions and what every recorder printed). Each recorder has a time limit, so
# that one stuck part leaves the others' files. Seeds are fixed: the same PyTorch
# gives the same files. `go test ./tensor/ ./allocator/ ./replay/` then checks memlab
# against them.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-$here/../../reference/fidelity-2.11}"
py="${PYTHON:-python3}"
mkdir -p "$out"
log="$out/RECORDED.txt"
{
  echo "# scripts/record/fidelity.sh, $(date -u '+%Y-%m-%d %H:%M UTC')"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1
  "$py" -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)'
} >"$log" 2>&1
run() { # name limit-seconds args...
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout "$limit" "$py" "$here/fidelity_$name.py" "$@" >>"$log" 2>&1
  local rc=$?
  echo "$name: rc $rc, $((SECONDS - t0)) s" >>"$log"
  return $rc
}
rc=0
run layouts 45 "$out/layouts.jsonl.gz" || rc=1
run kernels 45 "$out/kernels.jsonl.gz" || rc=1
run settings 130 "$out/settings.jsonl.gz" || rc=1
run alloc 240 "$out/allocator.jsonl.gz" --seconds "${FIDELITY_ALLOC_SECONDS:-210}" || rc=1
grep -v "Warning\|_conversion_method_template" "$log"
exit $rc
