#!/usr/bin/env bash
# link-time.sh measures what a notebook cell's `go build` costs, as GoNB builds a
# cell (-ldflags=-w, a fresh main package each time, the packages' compiled code
# in Go's cache): a program that prints one line and imports memlab (every
# notebook cell that uses the lab and draws nothing) and one that also draws a
# memory curve with memplot (a cell that draws), each with cgo on and off. memlab
# links no plotting library (issue 30): only a program that imports memplot links
# gonum/plot and its fonts. Of N builds each (default 5), it prints the median
# one's wall time and CPU seconds, its linker's total time (-benchmark=cpu), the
# host-link step (gcc/ld, only when cgo makes the linker hand the program to the
# system's), the linker's CPU seconds (what a busy machine inflates least) and
# the binary's size, with the date, machine and load.
# Usage: scripts/link-time.sh [N]
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
N=${1:-5}
dir=$(mktemp -d "${TMPDIR:-/tmp}/memlab-link-time.XXXXXX")
trap 'rm -rf "$dir"' EXIT
printf 'module memlab_linktime\n\ngo 1.26\n' >"$dir/go.mod"
printf 'go 1.26\n\nuse (\n\t.\n\t%s\n)\n' "$REPO" >"$dir/go.work"
mkdir -p "$dir/memlab" "$dir/draws"
cat >"$dir/memlab/main.go" <<'EOF'
package main

import (
	"fmt"

	"memlab.dev/memlab/memlab"
)

func main() { fmt.Println(memlab.FormatBytes(1 << 20)) }
EOF
cat >"$dir/draws/main.go" <<'EOF'
package main

import (
	"fmt"

	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/memplot"
)

func main() {
	fmt.Println(memlab.FormatBytes(1 << 20))
	l := memlab.MustOpen(memlab.Sim("1GiB"))
	defer l.Close()
	steps := l.Steps()
	steps.Add("start")
	memlab.Show(memplot.Curve("one step", steps))
}
EOF
echo "link-time: $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')); load average $(cut -d' ' -f1-3 /proc/loadavg); $(go version | cut -d' ' -f3); the median of $N builds each, by link time"
# The linker's own CPU seconds (user+sys), which the load of a shared machine
# inflates far less than wall time: each build runs its tools through tx.sh.
cat >"$dir/tx.sh" <<'EOF'
#!/bin/sh
case "$1" in
*/link) exec /usr/bin/time -a -o "$LINK_CPU" -f "%U %S %C" "$@" ;;
esac
exec "$@"
EOF
chmod +x "$dir/tx.sh"
export LINK_CPU="$dir/link-cpu"
cd "$dir"
for p in memlab draws; do
	for cgo in 1 0; do
		CGO_ENABLED=$cgo go build -toolexec "$dir/tx.sh" -ldflags=-w -o "$dir/bin" "./$p" # the packages, compiled once
		for i in $(seq "$N"); do
			echo "package main; var _ = $i$RANDOM" >"$p/x.go"
			: >"$LINK_CPU"
			out=$({ /usr/bin/time -f "CPU %U %S %e" env CGO_ENABLED=$cgo go build -toolexec "$dir/tx.sh" -ldflags="-w -benchmark=cpu" -o "$dir/bin" "./$p"; } 2>&1)
			lcpu=$(grep -- ' -o ' "$LINK_CPU" | awk '{s+=$1+$2} END {print s+0}')
			tot=$(grep -o 'BenchmarkTotalTime 1 [0-9]*' <<<"$out" | awk '{print $3/1e9}')
			host=$(grep -o 'BenchmarkHostlink 1 [0-9]*' <<<"$out" | awk '{print $3/1e9}')
			cpu=$(grep '^CPU' <<<"$out" | awk '{print $2+$3}')
			wall=$(grep '^CPU' <<<"$out" | awk '{print $4}')
			echo "$tot $host $cpu $wall $lcpu"
		done | sort -n | awk -v p="$p" -v cgo="$cgo" -v size="$(stat -c %s "$dir/bin")" '
			{t[NR]=$1; h[NR]=$2; c[NR]=$3; w[NR]=$4; l[NR]=$5}
			END {m=int((NR+1)/2); printf "%-7s CGO_ENABLED=%s  go build %.2f s wall, %.2f CPU s  link %.2f s wall (host link %.2f s), %.2f CPU s  binary %.1f MB\n", p, cgo, w[m], c[m], t[m], h[m], l[m], size/1e6}'
		rm -f "$p/x.go"
	done
done
