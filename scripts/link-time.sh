#!/usr/bin/env bash
# link-time.sh measures what a notebook cell's `go build` costs in the linker, as
# GoNB builds a cell (-ldflags=-w): a program that prints one line and imports
# memlab (every notebook cell that uses the lab), and one that imports only the
# tensor, allocator and simulated-device packages and GoNB's display package
# (what memlab would cost without its plots), each with cgo on and off. Of N builds
# each (default 5; each of a changed main package, as every cell is), it prints the
# median one's linker total time (-benchmark=cpu), its host-link step (gcc/ld, only
# when cgo makes the linker hand the program to the system's), that build's CPU
# time and the binary's size, with the date, machine and load.
# Usage: scripts/link-time.sh [N]
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
N=${1:-5}
dir=$(mktemp -d "${TMPDIR:-/tmp}/memlab-link-time.XXXXXX")
trap 'rm -rf "$dir"' EXIT
printf 'module memlab_linktime\n\ngo 1.26\n' >"$dir/go.mod"
printf 'go 1.26\n\nuse (\n\t.\n\t%s\n)\n' "$REPO" >"$dir/go.work"
mkdir -p "$dir/memlab" "$dir/noplot"
cat >"$dir/memlab/main.go" <<'EOF'
package main

import (
	"fmt"

	"memlab.dev/memlab/memlab"
)

func main() { fmt.Println(memlab.FormatBytes(1 << 20)) }
EOF
cat >"$dir/noplot/main.go" <<'EOF'
package main

import (
	"fmt"

	"github.com/janpfeifer/gonb/gonbui"
	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/device/sim"
	"memlab.dev/memlab/tensor"
)

func main() {
	fmt.Println(tensor.Float32, allocator.StateInactive, sim.New != nil, gonbui.IsNotebook)
}
EOF
echo "link-time: $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')); load average $(cut -d' ' -f1-3 /proc/loadavg); $(go version | cut -d' ' -f3); the median of $N builds each, by link time"
cd "$dir"
for p in memlab noplot; do
	for cgo in 1 0; do
		CGO_ENABLED=$cgo go build -ldflags=-w -o "$dir/bin" "./$p" # the packages, compiled once
		for i in $(seq "$N"); do
			echo "package main; var _ = $i$RANDOM" >"$p/x.go"
			out=$({ /usr/bin/time -f "CPU %U %S" env CGO_ENABLED=$cgo go build -ldflags="-w -benchmark=cpu" -o "$dir/bin" "./$p"; } 2>&1)
			tot=$(grep -o 'BenchmarkTotalTime 1 [0-9]*' <<<"$out" | awk '{print $3/1e9}')
			host=$(grep -o 'BenchmarkHostlink 1 [0-9]*' <<<"$out" | awk '{print $3/1e9}')
			cpu=$(grep '^CPU' <<<"$out" | awk '{print $2+$3}')
			echo "$tot $host $cpu"
		done | sort -n | awk -v p="$p" -v cgo="$cgo" -v size="$(stat -c %s "$dir/bin")" '
			{t[NR]=$1; h[NR]=$2; c[NR]=$3}
			END {m=int((NR+1)/2); printf "%-7s CGO_ENABLED=%s  link %.2f s (host link %.2f s)  go build CPU %.2f s  binary %.1f MB\n", p, cgo, t[m], h[m], c[m], size/1e6}'
		rm -f "$p/x.go"
	done
done
