#!/usr/bin/env bash
# progress-time.sh measures the cell that ends every notebook, progress.Show,
# as a learner meets it after `make lab`: a fresh working copy of the exercises
# (their stubs, as `memlab exercises copy` makes them, in a temporary
# MEMLAB_WORKBOOK), the cell built as GoNB builds one (a one-line main package
# in a go.work that uses this checkout, -ldflags=-w, CGO_ENABLED=0, Go's cache
# warm) and run: its build, its first look, a second look, and a look after the
# learner changed one exercise (exercise 1's stub with a comment added), with
# the date, machine and load. Each time is wall-clock seconds (CPU in brackets).
# Usage: scripts/progress-time.sh
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/memlab-progress-time.XXXXXX")
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/cell" "$dir/workbook"
printf 'module memlab_progresstime\n\ngo 1.26\n' >"$dir/cell/go.mod"
printf 'go 1.26\n\nuse (\n\t.\n\t%s\n)\n' "$REPO" >"$dir/cell/go.work"
printf 'package main\n\nimport "memlab.dev/memlab/progress"\n\nfunc main() { progress.Show("00") }\n' >"$dir/cell/main.go"
export MEMLAB_WORKBOOK="$dir/workbook" MEMLAB_LANG=en CGO_ENABLED=0
echo "progress-time: $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')); load average $(cut -d' ' -f1-3 /proc/loadavg); $(go version | cut -d' ' -f3); commit $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo '?')"
(cd "$REPO" && go run ./cmd/memlab exercises copy $(seq 1 30) >/dev/null 2>&1 || true)
n=$(find "$dir/workbook/exercises" -mindepth 1 -maxdepth 1 -type d -not -name '.*' | wc -l)
[ "$n" -gt 0 ] || { echo "progress-time: no working copies made in $dir/workbook/exercises"; exit 1; }
timed() { # timed LABEL COMMAND...: runs COMMAND, prints LABEL and its wall and CPU seconds
	local label=$1
	shift
	/usr/bin/time -o "$dir/time" -f "%e %U %S" "$@" >"$dir/out" 2>&1
	awk -v l="$label" '{printf "%-40s %6.2f s (%.2f CPU s)\n", l, $1, $2+$3}' "$dir/time"
}
(cd "$dir/cell" && go build -ldflags=-w -o "$dir/prog" .) # the packages into Go's cache, as lab.sh warm does
echo "package main; var _ = $RANDOM" >"$dir/cell/x.go"
timed "the cell's build (a fresh main package)" sh -c "cd '$dir/cell' && go build -ldflags=-w -o '$dir/prog' ."
cd "$REPO"
timed "first look ($n working copies, stubs)" "$dir/prog"
grep -q "exercises pass" "$dir/out" || { echo "progress-time: the first look showed no summary:"; cat "$dir/out"; exit 1; }
timed "second look" "$dir/prog"
first=$(find "$dir/workbook/exercises" -mindepth 1 -maxdepth 1 -type d -name '01-*' | head -n 1)
f=$(ls "$first"/*.go | head -n 1)
echo "// the learner's edit" >>"$f"
timed "after an edit of exercise 1" "$dir/prog"
timed "and again" "$dir/prog"
