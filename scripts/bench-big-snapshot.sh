#!/usr/bin/env bash
# bench-big-snapshot.sh [SIZE...]: memlab beside CPython's pickle.load on big snapshots
# (default 80MiB 300MiB), made by scripts/bigsnapshot from a real H200 snapshot by
# repeating its history and written as PyTorch's pickler writes one: each size twice,
# with distinct stacks (each repetition's own lines) and with the recorded stacks
# repeated (-same-stacks: denser, fewer bytes per entry, as a real file of a
# repetitive program). Rows: memlab's reading alone (bigsnapshot -read, what
# memlab whatif does first) beside pickle.load alone, memlab whatif under one
# setting and under four, with GOMEMLIMIT=off, and on the same snapshot gzipped
# (gzip -6; its "file" and "resident / file" are the pickle's, decompressed).
# Prints a Markdown table of wall time and peak resident memory (scripts/measure_run.py) for
# BENCHMARKS.md, with the command, date and machine. The snapshots go to a temporary
# folder, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(80MiB 300MiB)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/memlab" ./cmd/memlab
go build -o "$tmp/bigsnapshot" ./scripts/bigsnapshot
from=reference/workloads-2.11/gpt2_generate__default.pickle
confs=(--conf "" --conf expandable_segments:True --conf max_split_size_mb:128 --conf roundup_power2_divisions:4)

# measure LABEL FILE CMD...: one row: wall seconds and peak RSS, and RSS over the file's size.
measure() {
	local label=$1 file=$2 size
	shift 2
	size=$(stat -c %s "$file")
	python3 scripts/measure_run.py "$@" | awk -v label="$label" -v size="$size" -v snap="$snap" '
		{ printf "| %s | %s | %.1f MiB | %.2f s | %.0f MiB | %.2f× |\n", label, snap, size / 1048576, $1, $3 / 1024, $3 * 1024 / size }'
}

echo "Measured by \`scripts/bench-big-snapshot.sh ${sizes[*]}\` on $(date -u '+%Y-%m-%d %H:%M UTC') ($(nproc) cores, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), load average $(cut -d' ' -f1 /proc/loadavg) at the start; $(go version | cut -d' ' -f3), $(python3 --version)); snapshots from \`$from\` by \`scripts/bigsnapshot\`:"
echo
echo "| run | snapshot | file | wall time | peak resident | resident / file |"
echo "|---|---|---|---|---|---|"
for size in "${sizes[@]}"; do
	for stacks in distinct same; do
		f="$tmp/big-$size-$stacks.pickle"
		flag=()
		[ "$stacks" = same ] && flag=(-same-stacks)
		n=$("$tmp/bigsnapshot" -from "$from" -size "$size" "${flag[@]}" -o "$f" | sed -n 's/.*, \([0-9]*\) trace entries.*/\1/p')
		snap="$size, $n entries, $stacks stacks"
		measure "memlab reading alone (\`bigsnapshot -read\`)" "$f" "$tmp/bigsnapshot" -read "$f"
		measure "\`pickle.load\` alone" "$f" python3 -c 'import pickle, sys; pickle.load(open(sys.argv[1], "rb"))' "$f"
		measure "\`memlab whatif\`, one setting" "$f" "$tmp/memlab" whatif "$f"
		measure "\`memlab whatif\`, four settings" "$f" "$tmp/memlab" whatif "$f" "${confs[@]}"
		measure "\`memlab whatif\`, four settings, \`GOMEMLIMIT=off\`" "$f" env GOMEMLIMIT=off "$tmp/memlab" whatif "$f" "${confs[@]}"
		gzip -6 -k "$f"
		measure "\`memlab whatif\`, four settings, the file gzipped ($(awk -v n="$(stat -c %s "$f.gz")" 'BEGIN { printf "%.1f MiB", n / 1048576 }') \`.pickle.gz\`)" "$f" "$tmp/memlab" whatif "$f.gz" "${confs[@]}"
		rm -f "$f" "$f.gz"
	done
done
