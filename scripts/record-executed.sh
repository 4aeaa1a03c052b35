#!/usr/bin/env bash
# record-executed.sh records the kept executed notebooks, notebooks/executed/EDITION/NAME.ipynb:
# every pristine notebook executed on a GPU by `memlab lab -ipynb` (no Jupyter, no Go
# needed there), stamped with the device, date, commit and command.
#
#   scripts/record-executed.sh build
#       here (Go, git): build bin/record/memlab (CGO_ENABLED=0), write bin/record/COMMIT
#       (git describe) and copy this script to bin/record/record-executed.sh
#   bash bin/record/record-executed.sh [NB...]
#       on the GPU machine, in the repository root with bin/record carried: execute NB
#       (default: every notebooks/{en,zh-CN}/*.ipynb) on the GPU and pack the results into
#       one file, $OUT/executed.tar (OUT defaults to build/record-executed)
#   scripts/record-executed.sh unpack TAR
#       here: unpack TAR into notebooks/executed/ and check that the copies are fresh
#       (go test ./internal/nbexec)
#
# Environment: MEMLAB_RECORD_DEVICE (default cuda: recording on the simulator by mistake
# fails instead) is the device spec passed to memlab lab -device.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
say() { printf 'record-executed: %s\n' "$*"; }
die() {
	printf 'record-executed: %s\n' "$*" >&2
	exit 1
}

cmd_build() {
	local repo
	repo=$(cd "$here/.." && pwd)
	cd "$repo"
	mkdir -p bin/record
	CGO_ENABLED=0 go build -ldflags="-s -w" -o bin/record/memlab ./cmd/memlab
	git describe --always --dirty >bin/record/COMMIT
	cp scripts/record-executed.sh bin/record/record-executed.sh
	say "bin/record/memlab built at $(cat bin/record/COMMIT)"
	echo
	echo "On the GPU machine (repository root, bin/record carried), run:"
	echo "    bash bin/record/record-executed.sh"
	echo "then here, with the executed.tar it wrote under \$OUT:"
	echo "    scripts/record-executed.sh unpack PATH/TO/executed.tar"
}

cmd_run() {
	[ -x "$here/memlab" ] && [ -f "$here/COMMIT" ] ||
		die "$here/memlab or $here/COMMIT missing: run scripts/record-executed.sh build first (on a machine with Go), and carry bin/record"
	[ -d notebooks ] || die "run it from the repository root (no notebooks/ in $(pwd))"
	local out=${OUT:-build/record-executed} dev=${MEMLAB_RECORD_DEVICE:-cuda} commit
	commit=$(cat "$here/COMMIT")
	local nbs=("$@")
	if [ ${#nbs[@]} -eq 0 ]; then
		shopt -s nullglob
		nbs=(notebooks/en/*.ipynb notebooks/zh-CN/*.ipynb)
		shopt -u nullglob
	fi
	[ ${#nbs[@]} -gt 0 ] || die "no notebooks under notebooks/en or notebooks/zh-CN"
	mkdir -p "$out"
	local stage fail=0 t0=$SECONDS
	stage=$(mktemp -d)
	for nb in "${nbs[@]}"; do
		local ed name
		ed=$(basename "$(dirname "$nb")")
		name=$(basename "$nb")
		case "$ed" in en | zh-CN) ;; *) die "$nb: not in notebooks/en or notebooks/zh-CN" ;; esac
		mkdir -p "notebooks/executed/$ed" "$stage/notebooks/executed/$ed"
		if "$here/memlab" lab -ipynb "notebooks/$ed/$name" -o "notebooks/executed/$ed/$name" -device "$dev" -commit "$commit" >>"$stage/record.log" 2>&1; then
			say "$ed/$name: ok"
		else
			say "$ed/$name: FAILED (see record.log in the tar)"
			fail=1
		fi
		[ -f "notebooks/executed/$ed/$name" ] && cp "notebooks/executed/$ed/$name" "$stage/notebooks/executed/$ed/$name"
	done
	tar -C "$stage" -cf "$out/executed.tar" notebooks record.log
	rm -rf "$stage"
	say "${#nbs[@]} notebooks in $((SECONDS - t0))s -> $out/executed.tar (commit $commit, device $dev)"
	return $fail
}

cmd_unpack() {
	local tar=${1:-}
	[ -n "$tar" ] && [ -f "$tar" ] || die "usage: scripts/record-executed.sh unpack PATH/TO/executed.tar"
	local repo
	repo=$(cd "$here/.." && pwd)
	# Only notebooks/executed/{en,zh-CN}/*.ipynb and record.log may come out of it.
	local bad
	bad=$(tar -tf "$tar" | grep -Ev '^(notebooks/|notebooks/executed/|notebooks/executed/(en|zh-CN)/|notebooks/executed/(en|zh-CN)/[A-Za-z0-9._-]+\.ipynb|record\.log)$' || true)
	[ -z "$bad" ] || die "$tar holds unexpected entries: $bad"
	tar -C "$repo" -xf "$tar" --exclude record.log notebooks
	mkdir -p "$repo/build"
	tar -xOf "$tar" record.log >"$repo/build/record-executed.log" 2>/dev/null || true
	say "unpacked $(tar -tf "$tar" | grep -c '\.ipynb$') notebooks into notebooks/executed/ (the GPU's log: build/record-executed.log)"
	cd "$repo" && go test -count=1 -run 'TestKeptCopies' ./internal/nbexec
}

case "${1:-run}" in
build) cmd_build ;;
unpack)
	shift
	cmd_unpack "$@"
	;;
run)
	[ $# -gt 0 ] && shift
	cmd_run "$@"
	;;
*) cmd_run "$@" ;;
esac
