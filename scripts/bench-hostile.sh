#!/usr/bin/env bash
# bench-hostile.sh: memlab on hostile inputs under `ulimit -v 4194304` (4 GiB of address
# space): `memlab replay --trace` of three gzip bombs (one 1 GB string, 240 MB of tiny
# ops (more than replay.MaxOps), 300 MB of empty lines) and `memlab whatif` of /dev/zero, of a FIFO that never
# ends (a pickle's first bytes, then zeros) and of a snapshot read through bash's <(…).
# Prints a Markdown table for BENCHMARKS.md (exit status, what memlab said, wall time,
# peak resident memory from /usr/bin/time -v), with the command, date and machine. The
# inputs go to a temporary folder, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /usr/bin/time ] || { echo "bench-hostile: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; kill $(jobs -p) 2>/dev/null || true' EXIT
go build -o "$tmp/memlab" ./cmd/memlab
python3 - "$tmp" <<'PY'
import gzip, sys
d = sys.argv[1]
with gzip.open(f"{d}/string.jsonl.gz", "wb", compresslevel=1) as f:
    f.write(b'{"kind":"header","x":"'); [f.write(b"0" * (1 << 20)) for _ in range(1000)]; f.write(b'"}\n')
with gzip.open(f"{d}/ops.jsonl.gz", "wb", compresslevel=1) as f:
    f.write(b'{"kind":"header","total_memory":1000000,"ops":['); [f.write(b'["a",1],' * 131072) for _ in range(240)]; f.write(b'["a",1]]}\n')
with gzip.open(f"{d}/lines.jsonl.gz", "wb", compresslevel=1) as f:
    f.write(b'{"kind":"header","total_memory":1000000,"ops":[]}\n'); [f.write(b"\n" * (1 << 20)) for _ in range(300)]; f.write(b'{"kind":"footer"}\n')
PY
snap=reference/workloads-2.11/bert_encode__default.pickle

# measure LABEL CMD...: one row, the command run under ulimit -v 4194304.
measure() {
	local label=$1 rc
	shift
	set +e
	(ulimit -v 4194304 && exec /usr/bin/time -v -o "$tmp/time" "$@") >/dev/null 2>"$tmp/err"
	rc=$?
	set -e
	awk -v label="$label" -v rc="$rc" -v said="$(grep -m1 -o 'memlab [a-z]*: .*' "$tmp/err" | sed "s#$tmp/##g; s/|/\\|/g")" '
		/Elapsed \(wall clock\)/ { n = split($NF, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i] }
		/Maximum resident set size/ { rss = $NF * 1024 }
		END { printf "| %s | %s | %s | %.1f s | %.0f MiB |\n", label, rc, said, s, rss / 1048576 }' "$tmp/time"
}

echo "Measured by \`scripts/bench-hostile.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC') ($(nproc) cores, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), load average $(cut -d' ' -f1 /proc/loadavg) at the start; $(go version | cut -d' ' -f3)), each under \`ulimit -v 4194304\`:"
echo
echo "| input | exit | what memlab said | wall time | peak resident |"
echo "|---|---|---|---|---|"
for b in string ops lines; do
	measure "\`memlab replay --trace\`, gzip bomb: $b ($(awk -v n="$(stat -c %s "$tmp/$b.jsonl.gz")" 'BEGIN { printf "%.1f MiB", n / 1048576 }') gzipped)" "$tmp/memlab" replay --trace "$tmp/$b.jsonl.gz"
done
measure "\`memlab whatif /dev/zero\`" "$tmp/memlab" whatif /dev/zero
mkfifo "$tmp/endless"
python3 -c 'import sys; o = sys.stdout.buffer; o.write(b"\x80\x04"); z = bytes(1 << 20)
while True: o.write(z)' >"$tmp/endless" 2>/dev/null &
measure "\`memlab whatif\` of a FIFO that never ends, \`--max-snapshot-size 1GiB\`" "$tmp/memlab" whatif "$tmp/endless" --max-snapshot-size 1GiB
measure "\`memlab whatif <(cat $snap)\`" "$tmp/memlab" whatif <(cat "$snap")
