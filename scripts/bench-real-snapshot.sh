#!/usr/bin/env bash
# bench-real-snapshot.sh SNAPSHOT [REPEATS]: memlab beside CPython's pickle.load and
# PyTorch's own torch/cuda/_memory_viz.py on one snapshot PyTorch wrote, all at the same
# load, each run REPEATS times (default 2; the table gives the lowest and highest).
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

# row LABEL CMD...: REPEATS runs; wall, CPU and peak resident as "lowest–highest".
row() {
	local label=$1
	shift
	for _ in $(seq "$repeats"); do python3 scripts/measure_run.py "$@"; done >"$tmp/runs"
	awk -v label="$label" -v size="$size" '
		function span(lo, hi, fmt) { return (sprintf(fmt, lo) == sprintf(fmt, hi)) ? sprintf(fmt, lo) : sprintf(fmt "–" fmt, lo, hi) }
		NR == 1 { wl = wh = $1; cl = ch = $2; rl = rh = $3 }
		{ if ($1 < wl) wl = $1; if ($1 > wh) wh = $1; if ($2 < cl) cl = $2; if ($2 > ch) ch = $2; if ($3 < rl) rl = $3; if ($3 > rh) rh = $3 }
		END { printf "| %s | %s s | %s s | %s MiB | %s× |\n", label, span(wl, wh, "%.2f"), span(cl, ch, "%.2f"), span(rl / 1024, rh / 1024, "%.0f"), span(rl * 1024 / size, rh * 1024 / size, "%.2f") }' "$tmp/runs"
}

echo "Measured by \`scripts/bench-real-snapshot.sh $(basename "$snap") $repeats\` on $(date -u '+%Y-%m-%d %H:%M UTC') ($(nproc) cores, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), load average $(cut -d' ' -f1 /proc/loadavg) at the start; $(python3 --version), $torch; _memory_viz.py: ${viz:-not found, its rows left out}); the snapshot: $(awk -v n="$size" 'BEGIN { printf "%.1f MiB (%d bytes)", n / 1048576, n }'), $("$bigsnapshot" -read "$snap" 2>&1 | head -1 | sed "s/.*: //"):"
echo
echo "| run | wall time | CPU time | peak resident | resident / file |"
echo "|---|---|---|---|---|"
row "\`pickle.load\` alone" python3 -c 'import pickle, sys; pickle.load(open(sys.argv[1], "rb"))' "$snap"
if [ -n "$viz" ]; then
	row "\`_memory_viz.py stats\`" python3 "$viz" stats "$snap"
	row "\`_memory_viz.py trace_plot\` (writes the HTML page)" python3 "$viz" trace_plot "$snap" -o "$tmp/trace.html"
fi
row "memlab reading alone (\`bigsnapshot -read\`)" "$bigsnapshot" -read "$snap"
row "\`memlab whatif\`, the snapshot's own setting" "$memlab" whatif "$snap"
row "\`memlab whatif\`, four settings" "$memlab" whatif "$snap" "${confs[@]}"
