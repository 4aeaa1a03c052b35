#!/usr/bin/env bash
# mkclass.sh DIR N — make a class folder of N students for timing
# "memlab exercises grade --class DIR" (BENCHMARKS.md). Student i hands in, by
# i mod 4: every exercise solved (the reference solutions, in the stubs' files);
# every exercise untouched (the notebook's copies, "memlab exercises copy");
# the first ten solved and the rest untouched; exercise 17 with its naive.go
# rewritten (the answer-key attack) and the rest untouched.
set -euo pipefail
dir=${1:?usage: mkclass.sh DIR N}
n=${2:?usage: mkclass.sh DIR N}
root=$(cd "$(dirname "$0")/.." && pwd)
memlab=${MEMLAB:-"go run $root/cmd/memlab"}
mkdir -p "$dir"
tmpl=$(mktemp -d)
trap 'rm -rf "$tmpl"' EXIT
# The untouched copies, once.
(cd "$root" && $memlab exercises copy $(seq 1 19) --to "$tmpl/stubs" >/dev/null)
# The solved copies: each stub's file holds the reference solution.
cp -r "$tmpl/stubs" "$tmpl/solved"
for ex in "$tmpl"/solved/[0-9][0-9]-*/; do
	slug=$(basename "$ex")
	for sol in "$root/exercises/$slug"/*_solution.go; do
		stub=$(basename "$sol" _solution.go).go
		sed '1{/^\/\/go:build solution$/d}' "$sol" >"$ex/$stub"
	done
done
for i in $(seq 1 "$n"); do
	s=$(printf "%s/student%03d" "$dir" "$i")
	rm -rf "$s"
	case $((i % 4)) in
	1) cp -r "$tmpl/solved" "$s" ;;
	2) cp -r "$tmpl/stubs" "$s" ;;
	3) cp -r "$tmpl/stubs" "$s"
	   for k in $(seq -w 1 10); do rm -rf "$s"/$k-*; cp -r "$tmpl"/solved/$k-* "$s"/; done ;;
	0) cp -r "$tmpl/stubs" "$s"
	   printf 'package inplace\n\nimport "memlab.dev/memlab/tensor"\n\nfunc NaiveBlock(x, b *tensor.Tensor, s float64) (*tensor.Tensor, error) { return x.Clone() }\n\nfunc release(t *tensor.Tensor, err error) error { return err }\n' >"$s/17-inplace-block/naive.go" ;;
	esac
done
