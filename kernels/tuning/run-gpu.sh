#!/usr/bin/env bash
# run-gpu.sh: issue 13's runs on the GPU machine, in one call. DIR holds, built
# on a development machine (see NOTES.md, "Reproducing"): gpu.tar.xz (memlab,
# device-cuda.test, device-cuda-cu.test, tensor.test, torch_bench.py,
# variants-jit80), old-elementwise.ptx (kernels/elementwise.ptx at 3c2113e),
# new-elementwise.ptx (the committed one), torch_rows.py and summary.py.
# Usage, from the repository root: bash DIR/run-gpu.sh DIR
# Everything it prints is also in $OUT/logs.tgz; the summary is printed last.
set -u
H=$(cd "${1:-$(dirname "$0")}" && pwd)
O=${OUT:-/tmp/out}; mkdir -p $O/logs
L=$O/logs
K=/tmp/k; mkdir -p $K && tar -xJf $H/gpu.tar.xz -C $K
sum=()
step() { # name, timeout, command...
	local name=$1 t=$2; shift 2
	local t0=$(date +%s)
	timeout $t "$@" > $L/$name.log 2>&1
	local rc=$?
	sum+=("$(printf '%-14s rc=%-3s %4ss' $name $rc $(( $(date +%s) - t0 )))")
}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv | tee $L/gpu.txt
date -u +"start %Y-%m-%d %H:%M:%S UTC" | tee -a $L/gpu.txt
step bench1 200 $K/memlab bench -device cuda -torch $K/torch_bench.py -json $L/bench1.json
step conformance 150 $K/device-cuda.test -test.v -test.count=1
step conformance-cu 120 $K/device-cuda-cu.test -test.v -test.count=1
step tensor 120 env MEMLAB_DEVICE=cuda $K/tensor.test -test.count=1
step memcheck 240 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 $K/device-cuda.test -test.run 'TestConformance/(Kernels|BadInput)|TestTiledMatmul' -test.count=1
step bench2 200 $K/memlab bench -device cuda -torch $K/torch_bench.py -json $L/bench2.json
( ptxas -arch=sm_90 -v $H/new-elementwise.ptx -o /tmp/e.cubin 2>&1 | grep -A2 "contig" | grep -o "entry function '[a-z0-9_]*'\|Used [0-9]* registers" | paste - - ; ptxas --version | tail -1 ) > $L/ptxas13.txt 2>&1
step variants 150 $K/variants-jit80 $H/old-elementwise.ptx $H/new-elementwise.ptx $L/variants.csv quick
step torchrows 60 env PYTHONUNBUFFERED=1 python3 $H/torch_rows.py 1
step bench3 200 $K/memlab bench -device cuda -torch $K/torch_bench.py -json $L/bench3.json
step extra 150 $K/variants-jit80 $H/old-elementwise.ptx $H/new-elementwise.ptx $L/extra.csv extra
date -u +"end %Y-%m-%d %H:%M:%S UTC" | tee -a $L/gpu.txt
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader | tee -a $L/gpu.txt
printf '%s\n' "${sum[@]}" > $L/steps.txt
python3 $H/summary.py $L/variants.csv $L/extra.csv $L/torchrows.log $L/bench1.json $L/bench2.json $L/bench3.json > $L/summary.txt 2>&1
tar -czf $O/logs.tgz -C $O logs
cp $L/bench1.log $L/summary.txt $O/ 2>/dev/null
echo "== steps"; cat $L/steps.txt
grep -h -E "^(--- FAIL|FAIL|ok|PASS)|ERROR SUMMARY" $L/*.log | sort | uniq -c | head -20
cat $L/ptxas13.txt
grep -A20 "memlab bench runs" $L/summary.txt
