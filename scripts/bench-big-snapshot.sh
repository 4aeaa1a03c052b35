#!/usr/bin/env bash
# bench-big-snapshot.sh [SIZE...]: memlab whatif under four settings beside CPython's
# pickle.load on big snapshots (default 80MiB 300MiB), made by scripts/bigsnapshot from
# a real H200 snapshot by repeating its history, and memlab whatif on the same snapshot
# gzipped (gzip -6; its "file" and "resident / file" are the pickle's, decompressed).
# Prints a Markdown table of wall time and peak resident memory (/usr/bin/time -v) for
# BENCHMARKS.md, with the command, date and machine. The snapshots go to a temporary
# folder, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(80MiB 300MiB)
[ -x /usr/bin/time ] || { echo "bench-big-snapshot: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/memlab" ./cmd/memlab
go build -o "$tmp/bigsnapshot" ./scripts/bigsnapshot
from=reference/workloads-2.11/gpt2_generate__default.pickle
confs=(--conf "" --conf expandable_segments:True --conf max_split_size_mb:128 --conf roundup_power2_divisions:4)

# measure LABEL CMD...: one row: wall seconds and peak RSS, and RSS over the file's size.
measure() {
	local label=$1 file=$2 size
	shift 2
	size=$(stat -c %s "$file")
	/usr/bin/time -v -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
	awk -v label="$label" -v size="$size" '
		/Elapsed \(wall clock\)/ { n = split($NF, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i] }
		/Maximum resident set size/ { rss = $NF * 1024 }
		END { printf "| %s | %.1f MiB | %.1f s | %.0f MiB | %.1f× |\n", label, size / 1048576, s, rss / 1048576, rss / size }' "$tmp/time"
}

echo "Measured by \`scripts/bench-big-snapshot.sh ${sizes[*]}\` on $(date -u '+%Y-%m-%d %H:%M UTC') ($(nproc) cores, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), load average $(cut -d' ' -f1 /proc/loadavg) at the start; $(go version | cut -d' ' -f3), $(python3 --version)); snapshots from \`$from\` by \`scripts/bigsnapshot\`:"
echo
echo "| run | file | wall time | peak resident | resident / file |"
echo "|---|---|---|---|---|"
for size in "${sizes[@]}"; do
	f="$tmp/big-$size.pickle"
	"$tmp/bigsnapshot" -from "$from" -size "$size" -o "$f" >/dev/null
	measure "\`memlab whatif\`, four settings" "$f" "$tmp/memlab" whatif "$f" "${confs[@]}"
	measure "\`memlab whatif\`, four settings, \`GOMEMLIMIT=off\`" "$f" env GOMEMLIMIT=off "$tmp/memlab" whatif "$f" "${confs[@]}"
	measure "\`pickle.load\` alone" "$f" python3 -c 'import pickle, sys; pickle.load(open(sys.argv[1], "rb"))' "$f"
	gzip -6 -k "$f"
	measure "\`memlab whatif\`, four settings, the file gzipped ($(awk -v n="$(stat -c %s "$f.gz")" 'BEGIN { printf "%.1f MiB", n / 1048576 }') \`.pickle.gz\`)" "$f" "$tmp/memlab" whatif "$f.gz" "${confs[@]}"
	rm -f "$f" "$f.gz"
done
