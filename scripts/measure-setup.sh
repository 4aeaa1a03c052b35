#!/usr/bin/env bash
# measure-setup.sh times the set-up as a new user meets it: the committed HEAD
# cloned into a temporary folder, with empty Go, pip, npm and memlab caches of its
# own (the machine's shared caches are not touched), then
#   1. `make lab` until it prints its URL (first run: installs everything), stopped;
#   2. `make lab` again (second run), stopped the same way;
#   3. `make test` in a second fresh clone with its own empty caches (what CI runs).
# It prints a markdown table; with --readme it also writes the table into
# README.md between the "setup-timings" markers. System packages (Chromium, the
# CJK font, the distribution's Jupyter) are whatever the machine already has:
# the table says which were present.
#
# Usage: scripts/measure-setup.sh [--readme] [--skip-test]
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readme=0 skip_test=0
for a in "$@"; do
	case $a in
	--readme) readme=1 ;;
	--skip-test) skip_test=1 ;;
	*)
		sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
		exit 2
		;;
	esac
done
WORK=$(mktemp -d /tmp/memlab-measure.XXXXXX)
LOG="$REPO/build/measure-setup"
mkdir -p "$LOG"
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || true; done
	rm -rf "$WORK"
}
trap cleanup EXIT

# fresh NAME: a clone of HEAD in $WORK/NAME with empty caches in $WORK/NAME-cache.
fresh() {
	git clone -q "$REPO" "$WORK/$1"
	git -C "$WORK/$1" checkout -q "$(git -C "$REPO" rev-parse HEAD)"
	local c="$WORK/$1-cache"
	mkdir -p "$c"
	export GOCACHE="$c/go-build" GOMODCACHE="$c/go-mod" PIP_CACHE_DIR="$c/pip"
	export XDG_CACHE_HOME="$c/xdg" npm_config_cache="$c/npm" GOFLAGS="${GOFLAGS:-} -modcacherw"
}

# lab_until_url DIR LOGFILE: seconds from `make lab` to its URL line; stops it.
lab_until_url() {
	local t0=$SECONDS pid
	(cd "$1" && EDITION=en LAB_PORT=18888 exec setsid make lab) >"$2" 2>&1 &
	pid=$!
	pids+=("$pid")
	until grep -q 'memlab lab: http' "$2"; do
		kill -0 "$pid" 2>/dev/null || {
			echo "make lab exited before printing its URL:" >&2
			tail -n 20 "$2" >&2
			exit 1
		}
		sleep 0.2
	done
	echo $((SECONDS - t0))
	kill -TERM -- "-$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

present() { command -v "$1" >/dev/null 2>&1 && echo present || echo absent; }
date=$(date -u '+%Y-%m-%d %H:%M UTC')
machine="$(. /etc/os-release && echo "$PRETTY_NAME"), $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg) at the start"

fresh lab
first=$(lab_until_url "$WORK/lab" "$LOG/make-lab-1.log")
second=$(lab_until_url "$WORK/lab" "$LOG/make-lab-2.log")
steps=$(grep -E '^lab: .* done in [0-9]+s' "$LOG/make-lab-1.log" | sed -E 's/^lab: ([^ ]+) done in ([0-9]+)s.*/\1 \2 s/' | paste -sd, - | sed 's/,/, /g')

test_row=""
if [ "$skip_test" = 0 ]; then
	fresh test
	t0=$SECONDS
	rc=0
	(cd "$WORK/test" && make test) >"$LOG/make-test.log" 2>&1 || rc=$?
	t=$((SECONDS - t0))
	parts=$(grep -E '^== .*: ok in [0-9]+s' "$LOG/make-test.log" | sed -E 's/^== (.*): ok in ([0-9]+)s/\1 \2 s/' | paste -sd, - | sed 's/,/, /g')
	if [ $rc = 0 ]; then
		test_row="| \`make test\`, fresh clone, empty caches | $t s ($parts) |"
	else
		test_row="| \`make test\`, fresh clone, empty caches | FAILED after $t s (log: build/measure-setup/make-test.log) |"
	fi
fi

table=$(
	cat <<EOF
Measured by \`scripts/measure-setup.sh\` on $date ($machine; Chromium $(present chromium), distribution's Jupyter $([ -x /usr/bin/jupyter ] && echo present || echo absent)):

| run | time |
|---|---|
| first \`make lab\`, fresh clone, empty caches, until it prints the URL | $first s ($steps) |
| second \`make lab\` | $second s |
${test_row}
EOF
)
echo "$table"
if [ "$readme" = 1 ]; then
	python3 - "$REPO/README.md" "$table" <<-'EOF'
		import re, sys
		path, table = sys.argv[1], sys.argv[2]
		s = open(path).read()
		begin, end = "<!-- setup-timings: begin (scripts/measure-setup.sh --readme) -->", "<!-- setup-timings: end -->"
		if begin not in s or end not in s:
		    sys.exit("README.md has no setup-timings markers")
		i, j = s.index(begin) + len(begin), s.index(end)
		open(path, "w").write(s[:i] + "\n" + table.strip() + "\n" + s[j:])
	EOF
	echo "README.md updated"
fi
