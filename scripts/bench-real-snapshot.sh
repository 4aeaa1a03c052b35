#!/usr/bin/env bash
# bench-real-snapshot.sh SNAPSHOT [REPEATS]: memlab beside CPython's pickle.load and
# PyTorch's own torch/cuda/_memory_viz.py on one snapshot PyTorch wrote, all at the same
# load, each run REPEATS times, interleaved (default 2; the table gives the lowest, highest
# and middle).
# Rows: pickle.load alone; _memory_viz's `stats` and `trace_plot` (what a practitioner
# runs to look at a snapshot: both read it with pickle.load, trace_plot then writes the
# HTML page); memlab's reading alone (bigsnapshot -read, what memlab whatif does first);
# memlab whatif under the snapshot's own setting, and under four settings.
# _memory_viz.py is taken from the installed torch, or from MEMORY_VIZ (a path: the file
# needs no torch); without either its rows are left out, and the header says so.
# MEMLAB and BIGSNAPSHOT name built binaries (the GPU machine has no Go); else they are
# built here. Prints a Markdown table for BENCHMARKS.md with the command, date and machine.
set -euo pipefail
cd "$(dirname "$0")/.."
snap=${1:?usage: scripts/bench-real-snapshot.sh SNAPSHOT [REPEATS]}
repeats=${2:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
memlab=${MEMLAB:-}
bigsnapshot=${BIGSNAPSHOT:-}
if [ -z "$memlab" ]; then go build -o "$tmp/memlab" ./cmd/memlab && memlab=$tmp/memlab; fi
if [ -z "$bigsnapshot" ]; then go build -o "$tmp/bigsnapshot" ./scripts/bigsnapshot && bigsnapshot=$tmp/bigsnapshot; fi
viz=${MEMORY_VIZ:-$(python3 -c 'import torch.cuda._memory_viz as m; print(m.__file__)' 2>/dev/null || true)}
torch=$(python3 -c 'import torch; print("torch " + torch.__version__)' 2>/dev/null || echo "no torch")
confs=(--conf "" --conf expandable_segments:True --conf max_split_size_mb:128 --conf roundup_power2_divisions:4)
size=$(stat -c %s "$snap")

# Rows are run interleaved: each round runs every row once, so that a change of the
# machine's load falls on all of them alike. add LABEL CMD... declares a row.
labels=()
add() {
	labels+=("$1")
	shift
	printf '%q ' "$@" >"$tmp/cmd${#labels[@]}"
}
# summary N: row N's runs as "lowest–highest (middle)" wall, CPU and peak resident.
summary() {
	python3 - "${labels[$1 - 1]}" "$size" "$tmp/runs$1" <<'PY'
import statistics, sys
label, size, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
runs = [list(map(float, l.split())) for l in open(path) if l.strip()]
def span(xs, fmt, middle=False):
    lo, hi = fmt % min(xs), fmt % max(xs)
    s = lo if lo == hi else f"{lo}–{hi}"
    return f"{s} (middle {fmt % statistics.median(xs)})" if middle and lo != hi else s
wall, cpu, rss = ([r[i] for r in runs] for i in range(3))
print(f"| {label} | {span(wall, '%.2f', True)} s | {span(cpu, '%.2f')} s | {span([k / 1024 for k in rss], '%.0f')} MiB | {span([k * 1024 / size for k in rss], '%.2f')}× |")
PY
}
echo "Measured by \`scripts/bench-real-snapshot.sh $(basename "$snap") $repeats\` on $(date -u '+%Y-%m-%d %H:%M UTC') ($(nproc) cores, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), load average $(cut -d' ' -f1 /proc/loadavg) at the start; $(python3 --version), $torch; _memory_viz.py: ${viz:-not found, its rows left out}); the snapshot: $(awk -v n="$size" 'BEGIN { printf "%.1f MiB (%d bytes)", n / 1048576, n }'), $("$bigsnapshot" -read "$snap" 2>&1 | head -1 | sed "s/.*: //"):"
echo
echo "| run | wall time | CPU time | peak resident | resident / file |"
echo "|---|---|---|---|---|"
add "\`pickle.load\` alone" python3 -c 'import pickle, sys; pickle.load(open(sys.argv[1], "rb"))' "$snap"
if [ -n "$viz" ]; then
	add "\`_memory_viz.py stats\`" python3 "$viz" stats "$snap"
	add "\`_memory_viz.py trace_plot\` (writes the HTML page)" python3 "$viz" trace_plot "$snap" -o "$tmp/trace.html"
fi
add "memlab reading alone (\`bigsnapshot -read\`)" "$bigsnapshot" -read "$snap"
add "\`memlab whatif\`, the snapshot's own setting" "$memlab" whatif "$snap"
add "\`memlab whatif\`, four settings" "$memlab" whatif "$snap" "${confs[@]}"
for _ in $(seq "$repeats"); do
	for i in $(seq ${#labels[@]}); do
		eval "python3 scripts/measure_run.py $(cat "$tmp/cmd$i")" >>"$tmp/runs$i"
	done
done
for i in $(seq ${#labels[@]}); do summary "$i"; done
