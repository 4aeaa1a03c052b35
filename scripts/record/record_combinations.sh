#!/bin/bash
# record_combinations.sh OUT: records shipped programs of reference/programs-2.11 under
# allocator settings combined (expandable segments with max_split_size_mb or with
# roundup_power2_divisions, and those two together), one fresh process per run and
# eight at a time, with record_programs.py --program P --conf C (no Python frames).
# Their default runs are the shipped ones: the what-if replays those under each
# combination (whatif's TestPredictsPractitionerPrograms reads every P__S.facts.json).
# OUT gets P__S.{facts.json,pickle}, a log per run and gpu.txt.
set -eu
out=$(realpath "${1:?usage: record_combinations.sh OUT}")
mkdir -p "$out"
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$out/gpu.txt"
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)" >> "$out/gpu.txt"
programs="pyg_sage_train hf_trainer_gpt2_accum timm_convnext_accum_ema_train llama_lora_train_bf16 moe_train_bf16 t5_beam_generate serve_continuous_batching gpt2_bucketed_train"
combinations="expandable_segments:True,max_split_size_mb:128 expandable_segments:True,roundup_power2_divisions:4 max_split_size_mb:128,roundup_power2_divisions:4"
for p in $programs; do
	for c in $combinations; do
		echo "$p $c"
	done
done | OUT="$out" xargs -P 8 -L 1 bash -c 'PYTHONUNBUFFERED=1 timeout 240 python3 record_programs.py --program "$0" --conf "$1" --out "$OUT" > "$OUT/$0__${1//[:,.]/_}.log" 2>&1; echo "$0 [$1] exit $?"'
