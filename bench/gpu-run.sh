#!/usr/bin/env bash
# gpu-run.sh: everything memlab runs on the GPU machine, from binaries built
# elsewhere ("make -f Makefile.gpu gpu-binaries"). Usage, in the repo root:
#   bash bin/gpu/gpu-run.sh [tests|sanitize|bench|all]   (default all)
# Logs go to $OUT (or bin/gpu/logs). Prints a short summary last.
set -u
B=$(dirname "$0")
LOG=${OUT:-$B/logs}
mkdir -p "$LOG"
what=${1:-all}
summary=()
step() { # name, command...
	local name=$1; shift
	local t0=$(date +%s)
	"$@" >"$LOG/$name.log" 2>&1
	local rc=$?
	summary+=("$(printf '%-28s rc=%-3s %4ss' "$name" "$rc" $(( $(date +%s) - t0 )))")
	tail -n 25 "$LOG/$name.log"
	return $rc
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$LOG/gpu.txt"
if [[ $what == all || $what == tests ]]; then
	step device-cuda-purego "$B/device-cuda.test" -test.v -test.count=1
	step device-cuda-cu "$B/device-cuda-cu.test" -test.v -test.count=1
	step device-cuda-race "$B/device-cuda-race.test" -test.count=1 -test.run 'TestConcurrentUse|TestClosedDevice|TestConformance/(Memory|VirtualMemory|Time)'
	step device "$B/device.test" -test.count=1
	step tensor env MEMLAB_DEVICE=cuda "$B/tensor.test" -test.count=1
	step tensor-cu env MEMLAB_DEVICE=cuda "$B/tensor-cu.test" -test.count=1
	step allocator env MEMLAB_DEVICE=cuda "$B/allocator.test" -test.count=1
fi
if [[ $what == all || $what == sanitize ]]; then
	step memcheck compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 \
		"$B/device-cuda.test" -test.run 'TestConformance/(Kernels|BadInput)|TestTiledMatmul' -test.count=1
fi
if [[ $what == all || $what == bench ]]; then
	step bench "$B/memlab" bench -device cuda -torch "$B/torch_bench.py" -json "$LOG/bench.json"
	cat "$LOG/bench.log"
fi
echo
echo "== summary"
printf '%s\n' "${summary[@]}"
grep -h -E "^(--- FAIL|FAIL|ok|PASS)" "$LOG"/*.log | sort | uniq -c | head -40
