#!/usr/bin/env bash
# ncu.sh: one launch of each kernel shape (variants.cu "profile" mode) under Nsight
# Compute: time, DRAM bytes, occupancy, waves and SM-busy balance. Run on the
# GPU machine from a folder holding variants-jit80, old- and new-elementwise.ptx
# and summary.py.
set -u
cd "$(dirname "$0")"
O=${OUT:-/tmp/out}; mkdir -p $O
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__cycles_active.avg,sm__cycles_active.min,sm__cycles_active.max,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__waves_per_multiprocessor,launch__grid_size,dram__throughput.avg.pct_of_peak_sustained_elapsed
date -u +"start %Y-%m-%d %H:%M:%S UTC" | tee $O/gpu.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee -a $O/gpu.txt
timeout 200 ncu --clock-control none --kernel-name regex:"copy_contig_vec16|binary_contig_f32|cand" --metrics $M --csv --print-units base \
  ./variants-jit80 old-elementwise.ptx new-elementwise.ptx /dev/null profile > $O/ncu.csv 2> $O/ncu.err; echo "ncu rc=$?"
tail -3 $O/ncu.err
python3 summary.py $O/ncu.csv
