#!/usr/bin/env bash
# e2e/run.sh (make e2e): the browser test. Installs what it needs when missing —
# Debian's Chromium and a CJK font (apt; never a browser download), playwright-core
# from e2e/package-lock.json (npm ci), the checkout's JupyterLab and GoNB kernel
# (scripts/lab.sh deps-lab) — then runs e2e/lab.test.mjs. Every process the test
# starts carries a marker in its environment; on exit, also on failure or Ctrl-C,
# whatever still carries it is stopped. npm, pip and go run with the user's own
# settings (npm_config_registry, PIP_INDEX_URL or pip.conf, GOPROXY…), so a mirror
# set there is used; apt uses the system's sources.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
E2E="$REPO/e2e"
LOGDIR="$REPO/build/setup"
export CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
export E2E_MARK="memlab-e2e-$$-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
mkdir -p "$LOGDIR" "$REPO/build/e2e"

say() { printf 'e2e: %s\n' "$*"; }

as_root() {
	if [ "$(id -u)" = 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		sudo -n "$@"
	else
		echo "need root to run: $*" >&2
		return 1
	fi
}

# stop_marked stops every process whose environment carries E2E_MARK (the
# server, kernels, gopls, Chromium), first with SIGTERM, then SIGKILL.
stop_marked() {
	local sig pids p
	for sig in TERM KILL; do
		pids=()
		for p in /proc/[0-9]*; do
			p=${p#/proc/}
			[ "$p" = $$ ] && continue
			grep -qsz "^E2E_MARK=$E2E_MARK\$" "/proc/$p/environ" 2>/dev/null && pids+=("$p")
		done
		[ ${#pids[@]} -eq 0 ] && return 0
		[ "$sig" = KILL ] && say "stopping ${#pids[@]} processes left behind: ${pids[*]}"
		kill "-$sig" "${pids[@]}" 2>/dev/null || true
		sleep 2
	done
}
trap stop_marked EXIT

# The browser and a CJK font: the zh-CN edition, JupyterLab's Chinese menus and the
# chapter quotes of both editions are Chinese, and the test checks their glyphs.
pkgs=()
[ -x "$CHROMIUM" ] || pkgs+=(chromium)
[ -n "$(fc-list 'Noto Sans CJK SC' family 2>/dev/null)" ] || pkgs+=(fonts-noto-cjk)
if [ ${#pkgs[@]} -gt 0 ]; then
	say "installing ${pkgs[*]} with apt-get (log: build/setup/apt-e2e.log)"
	t0=$SECONDS
	{ as_root apt-get update -q && DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q --no-install-recommends "${pkgs[@]}"; } \
		>"$LOGDIR/apt-e2e.log" 2>&1 || {
		tail -n 20 "$LOGDIR/apt-e2e.log"
		say "apt-get install ${pkgs[*]} failed"
		exit 1
	}
	say "apt-get install done in $((SECONDS - t0))s"
fi

# playwright-core, exactly as e2e/package-lock.json pins it; never its browsers.
if ! [ "$(sha256sum <"$E2E/package-lock.json")" = "$(cat "$E2E/node_modules/.memlab-lock.sha256" 2>/dev/null)" ]; then
	t0=$SECONDS
	(cd "$E2E" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --ignore-scripts) >"$LOGDIR/npm-e2e.log" 2>&1 || {
		tail -n 20 "$LOGDIR/npm-e2e.log"
		say "npm ci failed"
		exit 1
	}
	sha256sum <"$E2E/package-lock.json" >"$E2E/node_modules/.memlab-lock.sha256"
	say "npm ci (playwright-core) done in $((SECONDS - t0))s"
fi

"$REPO/scripts/lab.sh" deps-lab

cd "$REPO"
# node runs in the background so that a TERM or INT sent to this script reaches it
# at once (it then closes Chromium and stops JupyterLab); stop_marked follows.
node "$E2E/lab.test.mjs" &
node_pid=$!
trap 'kill -TERM "$node_pid" 2>/dev/null; wait "$node_pid"; exit 130' INT TERM
wait "$node_pid"
