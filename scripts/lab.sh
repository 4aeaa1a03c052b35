#!/usr/bin/env bash
# lab.sh sets up and starts the memlab notebooks: JupyterLab in a virtual
# environment of this checkout's own (.venv/, pinned and hashed by
# scripts/requirements-lab.txt), the GoNB kernel, goimports and gopls (pinned,
# built into .venv/bin), and the kernel registration that lets notebooks import
# this repository's packages. The kernel is registered inside .venv
# (.venv/share/jupyter/kernels/gonb), so other Jupyter installs and other clones
# are untouched. Every step checks first and skips what is already there, so a
# second run takes seconds. Install output goes to build/setup/*.log and is shown
# only when a step fails. pip, go and npm run with the user's own settings (a
# mirror in PIP_INDEX_URL, pip.conf, GOPROXY, GOFLAGS, npm_config_registry…).
#
# What a learner opens and edits are working copies, workbook/EDITION/NAME.ipynb
# (git-ignored), made from the pristine notebooks/EDITION/NAME.ipynb by
# scripts/workbook; JupyterLab runs on workbook/, so it never writes a tracked file.
# EDITION (en or zh-CN) picks the edition JupyterLab opens, and its UI language;
# without it, zh-CN when the locale (the first of LC_ALL, LC_MESSAGES, LANG that is
# set) starts with zh, else en. MEMLAB_WORKBOOK moves the working copies (default
# workbook/ in the checkout; the browser test uses its own).
#
# Usage:
#   scripts/lab.sh deps       everything `make notebooks` needs (Jupyter, GoNB, goimports, gopls, kernel),
#                             and the build caches warmed (warm)
#   scripts/lab.sh deps-lab   deps, and fail unless JupyterLab itself is installed (make e2e)
#   scripts/lab.sh start      deps, the working copies, then JupyterLab on workbook/ in the
#                             foreground in the edition's language, printing its URL (make lab);
#                             its log in build/lab/jupyter.log (warnings and errors also on the
#                             terminal), GoNB's in build/lab/gonb.log
#   scripts/lab.sh warm       compile what the notebooks import, for Go's and gopls' caches (part of deps)
#   scripts/lab.sh sync       create the missing working copies, refresh the unedited ones
#   scripts/lab.sh restore [--edition en|zh-CN] [NAME...]
#                             replace working copies with their pristine notebooks (all of the
#                             edition's when no NAME), keeping each edited one as NAME.ipynb.bak-TIME
#   scripts/lab.sh server PORT TOKEN [ARGS]  run the server that `start` runs, on PORT with TOKEN
#   scripts/lab.sh exec ARGS  run `jupyter ARGS` with this checkout's Jupyter and kernel
#   scripts/lab.sh status     which Jupyter and tools are used, the edition, the working copies
#
# Environment: LAB_IP (default 127.0.0.1; an IPv6 address or a host name too),
# LAB_PORT (default 8888, 1–65535, checked at once; the next free port is taken
# when it is busy on any of LAB_IP's addresses), LAB_NO_PIP=1 skips pip and uses the
# distribution's Jupyter (as when no package index answers), MEMLAB_VENV (default
# .venv in the checkout).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LOGDIR="$REPO/build/setup"
# GoNB's log, of every kernel (scripts/gonb-kernel), and the Jupyter server's of make lab.
KERNEL_LOG="$REPO/build/lab/gonb.log"
SERVER_LOG="$REPO/build/lab/jupyter.log"
VENV=${MEMLAB_VENV:-$REPO/.venv}
WORKBOOK=${MEMLAB_WORKBOOK:-$REPO/workbook}
# The kernels Jupyter starts from here inherit both: notebook 06's cells save the
# learner's exercise code under $MEMLAB_WORKBOOK/exercises and check it from $MEMLAB_REPO.
export MEMLAB_REPO=$REPO MEMLAB_WORKBOOK=$WORKBOOK
REQS="$REPO/scripts/requirements-lab.txt"
STAMP="$VENV/.memlab-requirements.sha256"
JUPYTERLAB_VERSION=4.5.11 # keep in step with scripts/requirements-lab.in (its minor is the zh-CN language pack's)
GONB_VERSION=v0.11.4
GOIMPORTS_VERSION=v0.52.0 # golang.org/x/tools; builds with Go 1.26
GOPLS_VERSION=v0.23.0     # golang.org/x/tools/gopls; the newest that builds with Go 1.26
GOROOT_BIN="$(go env GOROOT)/bin"
TOOLS_BIN="$VENV/bin"
export PATH="$TOOLS_BIN:$GOROOT_BIN:$PATH"
# The kernel lives in the environment's data directory; Jupyter's runtime files
# (connection files) go there too, never to ~/.local/share/jupyter.
export JUPYTER_DATA_DIR="$VENV/share/jupyter"

# The terminal's messages are in the edition's language (LAB_LANG, set by
# pick_edition): every say format has its Chinese in lang/zh-CN/lab.txt, the
# catalog of package lang (en:/zh: pairs; cmd/memlab's tests check that each
# format is there, its verbs in the English order that printf needs).
CATALOG="$REPO/lang/zh-CN/lab.txt"
LAB_LANG=en

# tr_fmt FORMAT: FORMAT in LAB_LANG (FORMAT itself in English, or when the
# catalog lacks it).
tr_fmt() {
	if [ "$LAB_LANG" = zh-CN ] && [ -f "$CATALOG" ]; then
		awk -v en="$1" 'substr($0, 1, 4) == "en: " { cur = substr($0, 5); next }
			substr($0, 1, 4) == "zh: " && cur == en { print substr($0, 5); found = 1; exit }
			END { if (!found) print en }' "$CATALOG"
	else
		printf '%s\n' "$1"
	fi
}

# say FORMAT ARGS...: prints "lab: " and FORMAT (printf's, in LAB_LANG) with ARGS.
say() {
	local f
	f=$(tr_fmt "$1")
	shift
	# shellcheck disable=SC2059 # the format is the catalog's
	printf "lab: $f\n" "$@"
}

# descendants PID: the processes PID started, and theirs, one per line.
descendants() {
	ps -e -o pid=,ppid= | awk -v root="$1" '{ parent[$1] = $2 }
		END {
			seen[root] = 1
			for (changed = 1; changed;) {
				changed = 0
				for (c in parent) if (!(c in seen) && (parent[c] in seen)) { seen[c] = 1; changed = 1 }
			}
			for (c in seen) if (c != root) print c
		}'
}

# stop_tree PID: stops PID (TERM, KILL after 10 s), then every process it had
# started that still runs — Jupyter starts each kernel in a session of its own,
# so a GoNB kernel, its gopls and a cell's program would outlive the server,
# reparented to PID 1. Sets STOPPED_LEFT to how many it had to stop that way.
stop_tree() {
	local root=$1 procs p i left=()
	procs=$(descendants "$root")
	kill -TERM "$root" 2>/dev/null || true
	for i in $(seq 1 50); do
		kill -0 "$root" 2>/dev/null || break
		sleep 0.2
	done
	kill -KILL "$root" 2>/dev/null || true
	for p in $procs; do
		kill -0 "$p" 2>/dev/null && left+=("$p")
	done
	STOPPED_LEFT=${#left[@]}
	[ ${#left[@]} -gt 0 ] || return 0
	kill -TERM "${left[@]}" 2>/dev/null || true
	for i in $(seq 1 10); do
		p=0
		for i in "${left[@]}"; do kill -0 "$i" 2>/dev/null && p=1; done
		[ $p = 1 ] || return 0
		sleep 0.2
	done
	kill -KILL "${left[@]}" 2>/dev/null || true
}

# on_signal SIG: Ctrl-C (or a TERM) stops what runs — the Jupyter server with
# its kernels, or the install step under way — and exits: 0 after Ctrl-C, so
# that make prints no "Error 130" for the usual way to stop the lab.
STEP_PID=
SERVER_PID=
WARM_PID=
on_signal() {
	# A terminal pipe (make lab | tee) that the same Ctrl-C closed must not stop
	# the clean-up half-way.
	trap '' INT TERM PIPE
	set +e
	printf '\n'
	if [ -n "$SERVER_PID" ]; then
		say "stopping JupyterLab and its kernels…"
		stop_tree "$SERVER_PID"
		wait "$SERVER_PID" 2>/dev/null || true
		say "stopped (JupyterLab, and %s processes of its kernels)" "$STOPPED_LEFT"
		[ -n "$WARM_PID" ] && kill -0 "$WARM_PID" 2>/dev/null && stop_tree "$WARM_PID"
	elif [ -n "$STEP_PID" ]; then
		stop_tree "$STEP_PID"
		wait "$STEP_PID" 2>/dev/null || true
		say "interrupted: the next make lab starts this step again"
	fi
	[ "$1" = INT ] && exit 0
	exit 143
}

# step NAME CMD...: runs CMD with its output in build/setup/NAME.log, showing
# while it runs the seconds so far and the log's last line (the package pip
# fetches, the one go builds): on one line rewritten in place on a terminal,
# a line every 15 s otherwise. STEP_COUNT (a grep pattern) and STEP_TOTAL add
# how many lines of the log match, of how many (pip's "Collecting" lines). On
# failure it prints the log's tail and exits.
step() {
	local name=$1
	shift
	local log="$LOGDIR/$name.log" t0=$SECONDS shown=$SECONDS tty=0 rc=0 last n
	mkdir -p "$LOGDIR"
	[ -t 1 ] && tty=1
	"$@" >"$log" 2>&1 &
	STEP_PID=$!
	while kill -0 "$STEP_PID" 2>/dev/null; do
		sleep 0.5
		[ $tty = 1 ] || [ $((SECONDS - shown)) -ge 15 ] || continue
		shown=$SECONDS
		last=$(tail -n 1 "$log" 2>/dev/null | tr -d '\r' | cut -c1-64)
		n=""
		# shellcheck disable=SC2059 # the format is the catalog's
		[ -n "${STEP_COUNT:-}" ] && n=$(printf "$(tr_fmt "%s of %s, ")" "$(grep -c -- "$STEP_COUNT" "$log")" "${STEP_TOTAL:-?}")
		if [ $tty = 1 ]; then
			printf '\r\033[K%s' "$(say "%s: %ss, %s%s" "$name" "$((SECONDS - t0))" "$n" "$last")"
		else
			say "%s: %ss, %s%s" "$name" "$((SECONDS - t0))" "$n" "$last"
		fi
	done
	wait "$STEP_PID" || rc=$?
	STEP_PID=
	[ $tty = 1 ] && printf '\r\033[K'
	if [ $rc != 0 ]; then
		say "%s FAILED (log: %s); last lines:" "$name" "$log"
		tail -n 25 "$log" >&2
		exit 1
	fi
	say "%s done in %ss (log: %s)" "$name" "$((SECONDS - t0))" "$log"
}

# as_root CMD...: runs CMD as root (directly, or through sudo -n).
as_root() {
	if [ "$(id -u)" = 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		sudo -n "$@"
	else
		echo "need root to run: $*" >&2
		echo "run it yourself (for example with sudo), then run make again" >&2
		return 1
	fi
}

reqs_sum() { sha256sum "$REQS" | cut -d' ' -f1; }

# venv_ok: the environment holds exactly scripts/requirements-lab.txt.
venv_ok() {
	[ -x "$VENV/bin/jupyter" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$(reqs_sum)" ]
}

# jupyter_cmd prints the jupyter to use: the environment's, else the
# distribution's (the fallback when pip could not reach an index), else nothing.
jupyter_cmd() {
	if venv_ok; then
		echo "$VENV/bin/jupyter"
		return 0
	fi
	local c
	for c in /usr/bin/jupyter /usr/local/bin/jupyter; do
		[ -x "$c" ] && "$c" --version >/dev/null 2>&1 && {
			echo "$c"
			return 0
		}
	done
	return 0
}

has_sub() { # has_sub SUBCOMMAND: whether jupyter SUBCOMMAND works
	# The environment holds exactly the pinned JupyterLab: no need to start Python.
	if venv_ok && { [ "$1" = lab ] || [ "$1" = nbconvert ]; }; then return 0; fi
	local j
	j=$(jupyter_cmd)
	[ -n "$j" ] && "$j" "$1" --version >/dev/null 2>&1
}

pip_venv() {
	python3 -m venv --clear "$VENV" &&
		"$VENV/bin/python" -m pip install --disable-pip-version-check --retries 1 --timeout 30 \
			--require-hashes --no-deps -r "$REQS" &&
		reqs_sum >"$STAMP"
}

# install_venv installs scripts/requirements-lab.txt into the environment, or
# returns 1 (saying why) when pip cannot: no python3 venv module, no index.
install_venv() {
	if venv_ok; then
		say "JupyterLab %s present (%s)" "$JUPYTERLAB_VERSION" "$VENV"
		return 0
	fi
	if [ "${LAB_NO_PIP:-0}" = 1 ]; then
		say "LAB_NO_PIP=1: not using pip"
		return 1
	fi
	if ! command -v python3 >/dev/null 2>&1 || ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
		say "python3 with its venv module is missing (Debian: apt-get install python3-venv), so pip cannot install JupyterLab"
		return 1
	fi
	mkdir -p "$LOGDIR"
	# A quick probe: does the configured package index answer at all?
	if ! python3 -m pip download --disable-pip-version-check --no-deps --retries 0 --timeout 10 \
		-d "$LOGDIR/pip-probe" "jupyterlab==$JUPYTERLAB_VERSION" >"$LOGDIR/pip-probe.log" 2>&1; then
		say "pip cannot reach a package index (log: %s)" "$LOGDIR/pip-probe.log"
		return 1
	fi
	rm -rf "$LOGDIR/pip-probe"
	say "installing JupyterLab %s and %s pinned packages into %s (first run only)" "$JUPYTERLAB_VERSION" "$(grep -c '^[A-Za-z0-9].*==' "$REQS")" "$VENV"
	STEP_COUNT='^Collecting ' STEP_TOTAL=$(grep -c '^[A-Za-z0-9].*==' "$REQS") step pip-jupyterlab pip_venv
	say "installed JupyterLab %s and its pinned dependencies into %s" "$JUPYTERLAB_VERSION" "$VENV"
}

apt_install() {
	command -v apt-get >/dev/null 2>&1 || {
		echo "no apt-get here: install Jupyter yourself" >&2
		return 1
	}
	export DEBIAN_FRONTEND=noninteractive
	as_root apt-get update -q
	as_root apt-get install -y -q --no-install-recommends "$@"
}

install_jupyter() {
	install_venv && return 0
	say "FALLING BACK to the distribution's Jupyter (Debian's Jupyter Notebook 6.4, classic UI; no JupyterLab)"
	if [ -x /usr/bin/jupyter ] && /usr/bin/jupyter nbconvert --version >/dev/null 2>&1 &&
		/usr/bin/jupyter notebook --version >/dev/null 2>&1; then
		say "distribution's Jupyter present (%s)" /usr/bin/jupyter
	else
		step apt-jupyter apt_install jupyter-nbconvert jupyter-client jupyter-notebook
	fi
	has_sub nbconvert || {
		say "jupyter nbconvert still missing after the install"
		exit 1
	}
	# The venv directory still holds the tools and the kernel.
	mkdir -p "$TOOLS_BIN" "$JUPYTER_DATA_DIR"
}

# go_tool_version BIN MODULE: the version of MODULE that BIN was built from, or nothing.
go_tool_version() {
	[ -x "$1" ] || return 0
	go version -m "$1" 2>/dev/null | awk -v m="$2" '($1 == "mod" || $1 == "dep") && $2 == m {print $3; exit}'
}

build_gonb() {
	# The module proxy may refuse GoNB's version list, which breaks
	# `go install …@version`; a throw-away module works everywhere.
	local tmp rc=0
	tmp=$(mktemp -d)
	(cd "$tmp" && go mod init tools && go get "github.com/janpfeifer/gonb@$GONB_VERSION" &&
		GOBIN="$TOOLS_BIN" go install -v github.com/janpfeifer/gonb) || rc=$?
	rm -rf "$tmp"
	return $rc
}

# go_tool NAME MODULE VERSION CMD...: builds NAME into .venv/bin with CMD unless it
# is there at VERSION.
go_tool() {
	local name=$1 module=$2 version=$3
	shift 3
	if [ "$(go_tool_version "$TOOLS_BIN/$name" "$module")" = "$version" ]; then
		say "%s %s present (%s)" "$name" "$version" "$TOOLS_BIN/$name"
		return 0
	fi
	say "building %s %s into %s (first run only)" "$name" "$version" "$TOOLS_BIN"
	step "$name" "$@"
}

install_go_tools() {
	mkdir -p "$TOOLS_BIN"
	go_tool gonb github.com/janpfeifer/gonb "$GONB_VERSION" build_gonb
	go_tool goimports golang.org/x/tools "$GOIMPORTS_VERSION" \
		env GOBIN="$TOOLS_BIN" go install -v "golang.org/x/tools/cmd/goimports@$GOIMPORTS_VERSION"
	go_tool gopls golang.org/x/tools/gopls "$GOPLS_VERSION" \
		env GOBIN="$TOOLS_BIN" go install -v "golang.org/x/tools/gopls@$GOPLS_VERSION"
}

# register_kernel writes the gonb kernelspec into the environment: every
# notebook's kernel starts with a go.work that uses this checkout (so
# `import "memlab.dev/memlab/..."` works with no manual step), and the kernel's
# PATH finds go, goimports and gopls even when Jupyter is started from a shell
# that lacks them. The kernel starts through scripts/gonb-kernel, which links
# cells without DWARF and sends GoNB's log to KERNEL_LOG.
register_kernel() {
	local spec="$JUPYTER_DATA_DIR/kernels/gonb/kernel.json"
	step gonb-install "$TOOLS_BIN/gonb" --install --logtostderr=false "--go_work=$REPO"
	[ -f "$spec" ] || {
		say "gonb --install wrote no %s" "$spec"
		exit 1
	}
	python3 - "$spec" "$PATH" "$REPO/scripts/gonb-kernel" "$KERNEL_LOG" <<-'EOF'
		import json, sys
		spec, path, wrapper, log = sys.argv[1:]
		with open(spec) as f:
		    k = json.load(f)
		# The wrapper adds the log flags; the ones gonb --install copied would only mislead.
		k["argv"] = [wrapper] + [a for a in k["argv"][1:] if not a.split("=")[0] in ("-log_file", "-log_dir", "-extra_log", "-stderrthreshold")]
		k.setdefault("env", {}).update({"PATH": path, "MEMLAB_KERNEL_LOG": log})
		with open(spec, "w") as f:
		    json.dump(k, f, indent=1)
	EOF
	say "GoNB kernel registered: %s (go.work uses %s; log: %s)" "$spec" "$REPO" "${KERNEL_LOG#"$REPO"/}"
}

# warm compiles what the notebooks import into Go's build cache and lets gopls
# load it into its own cache, as a GoNB kernel does for its first cell (a module
# of its own in a go.work that uses this checkout), so that the first cell after
# `make lab` compiles one small file instead of the lab and its dependencies.
# It takes seconds when nothing changed (BENCHMARKS.md, "Notebook cell latency").
warm() {
	local dir="$REPO/build/lab/warm" p
	mkdir -p "$dir"
	printf 'module memlab_warm\n\ngo 1.26\n' >"$dir/go.mod"
	printf 'go 1.26\n\nuse (\n\t.\n\t%s\n)\n' "$REPO" >"$dir/go.work"
	{
		printf '// Written by scripts/lab.sh warm: every package the notebooks import.\npackage main\n\nimport (\n'
		for p in $(cat "$REPO"/notebooks/*/*.ipynb | grep -o 'memlab\.dev/memlab/[a-z0-9/]*[a-z0-9]' | sort -u); do
			printf '\t_ "%s"\n' "$p"
		done
		printf ')\n\nfunc main() {}\n'
	} >"$dir/main.go"
	# Nothing to do when the sources, the tools, the caches and the packages are as at the last
	# warm-up (a checkout that is no git repository is warmed every time).
	local key
	key=$( (go version && go env GOCACHE && echo "${XDG_CACHE_HOME:-}" "${CGO_ENABLED:-0}" && gopls version && cat "$dir/main.go" && git -C "$REPO" ls-files -s -- '*.go' go.mod go.sum &&
		git -C "$REPO" diff HEAD -- '*.go' go.mod go.sum) 2>/dev/null | sha256sum | cut -d' ' -f1)
	if git -C "$REPO" rev-parse HEAD >/dev/null 2>&1 && [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$key" ]; then
		echo "warm already: nothing changed since the last warm-up"
		return 0
	fi
	rm -f "$dir/.stamp"
	# As scripts/gonb-kernel builds cells: without DWARF and without cgo.
	(cd "$dir" && export GOFLAGS="-ldflags=-w${GOFLAGS:+ $GOFLAGS}" CGO_ENABLED=${CGO_ENABLED:-0} &&
		go build -v -o /dev/null . && gopls check main.go)
	echo "$key" >"$dir/.stamp"
}

deps() {
	install_jupyter
	install_go_tools
	register_kernel
	step warm warm
}

# pick_edition sets ED to the edition make lab opens and ED_WHY to why: EDITION
# (en or zh-CN; anything else is an error), else zh-CN when the locale is Chinese
# (the first of LC_ALL, LC_MESSAGES and LANG that is set starts with zh), else en.
pick_edition() {
	if [ -n "${EDITION:-}" ]; then
		case $EDITION in
		en | zh-CN) ;;
		*)
			say "EDITION=%s is not an edition: use EDITION=en or EDITION=zh-CN" "$EDITION"
			exit 2
			;;
		esac
		ED=$EDITION LAB_LANG=$EDITION
		ED_WHY="EDITION=$EDITION"
		return 0
	fi
	local n v
	for n in LC_ALL LC_MESSAGES LANG; do
		v=${!n:-}
		[ -n "$v" ] || continue
		case $v in
		zh*) ED=zh-CN ;;
		*) ED=en ;;
		esac
		LAB_LANG=$ED
		# shellcheck disable=SC2059 # the format is the catalog's
		ED_WHY=$(printf "$(tr_fmt "from the locale, %s")" "$n=$v")
		return 0
	done
	ED=en LAB_LANG=en
	ED_WHY=$(tr_fmt "no EDITION and no locale set")
}

# workbook CMD ARGS...: runs scripts/workbook (the working copies) from the
# checkout's root, naming the folders relative to it where they are inside.
workbook() {
	local wb=$WORKBOOK
	case $wb in "$REPO"/*) wb=${wb#"$REPO"/} ;; esac
	(cd "$REPO" && go build -o build/bin/workbook ./scripts/workbook &&
		MEMLAB_LANG=$LAB_LANG build/bin/workbook -notebooks notebooks -workbook "$wb" "$@")
}

# restore [--edition ED] [NAME...]: the working copies back to pristine.
restore() {
	local ed=""
	while [ $# -gt 0 ]; do
		case $1 in
		--edition)
			[ $# -ge 2 ] || {
				say "restore: --edition needs a value: en or zh-CN"
				exit 2
			}
			ed=$2
			shift 2
			;;
		--edition=*)
			ed=${1#--edition=}
			shift
			;;
		--)
			shift
			break
			;;
		-*)
			say "restore: unknown option %s (usage: scripts/lab.sh restore [--edition en|zh-CN] [NAME...])" "$1"
			exit 2
			;;
		*) break ;;
		esac
	done
	if [ -n "$ed" ]; then
		case $ed in en | zh-CN) LAB_LANG=$ed ;; esac
	else
		pick_edition
		ed=$ED
		say "edition %s (%s; --edition picks another)" "$ed" "$ED_WHY"
	fi
	workbook restore -edition "$ed" "$@"
}

# lab_settings ED: prints the JupyterLab settings folder of edition ED (made
# here, inside the environment, so other Jupyter installs are untouched): a copy
# of the environment's own (.venv/share/jupyter/lab/settings, where an extension
# may have put a page_config.json or overrides), whose overrides.json also sets
# JupyterLab's language, Chinese (the pinned language pack) for zh-CN, English for
# en, and turns JupyterLab's news pop-up and update check off. A learner's own
# choice in Settings still wins.
lab_settings() {
	local base="$VENV/share/jupyter/lab" dir locale=en
	dir="$base/memlab-settings-$1"
	[ "$1" = zh-CN ] && locale=zh_CN
	# overrides.json is replaced in one step: a server already running on the
	# folder never reads half of it.
	python3 - "$base/settings" "$dir" "$locale" <<-'EOF'
		import json, os, shutil, sys
		src, dst, locale = sys.argv[1:]
		os.makedirs(dst, exist_ok=True)
		o = {}
		if os.path.isdir(src):
		    shutil.copytree(src, dst, dirs_exist_ok=True, ignore=lambda d, names: ["overrides.json"] if d == src else [])
		    if os.path.exists(os.path.join(src, "overrides.json")):
		        with open(os.path.join(src, "overrides.json"), encoding="utf-8") as f:
		            o = json.load(f)
		o.setdefault("@jupyterlab/translation-extension:plugin", {})["locale"] = locale
		# No news pop-up and no update check: the lab is pinned, and offline often.
		o.setdefault("@jupyterlab/apputils-extension:notification", {}).update({"fetchNews": "false", "checkForUpdates": False})
		tmp = os.path.join(dst, ".overrides.json.%d" % os.getpid())
		with open(tmp, "w", encoding="utf-8") as f:
		    json.dump(o, f, indent=1)
		os.replace(tmp, os.path.join(dst, "overrides.json"))
	EOF
	echo "$dir"
}

# lab_port: LAB_PORT (default 8888), checked at once: a port number from 1 to 65535.
lab_port() {
	local p=${LAB_PORT:-8888}
	case $p in
	'' | *[!0-9]*) ;;
	*)
		if [ "${#p}" -le 5 ] && [ "$((10#$p))" -ge 1 ] && [ "$((10#$p))" -le 65535 ]; then
			echo "$((10#$p))"
			return
		fi
		;;
	esac
	say "LAB_PORT=%s: want a port number from 1 to 65535" "$p" >&2
	return 1
}

# free_port FROM: the first free port from FROM on (at most 100 tried, none above
# 65535) at LAB_IP, for every address it names: IPv4, IPv6 (::1, ::) or a host
# name such as localhost (both).
free_port() {
	python3 - "$1" "${LAB_IP:-127.0.0.1}" <<-'EOF'
		import socket, sys
		port, ip = int(sys.argv[1]), sys.argv[2]
		try:
		    addrs = {(ai[0], ai[4][0]) for ai in socket.getaddrinfo(ip, None, type=socket.SOCK_STREAM)}
		except OSError as e:
		    sys.exit("LAB_IP=%s: %s" % (ip, e))
		for p in range(port, min(port + 100, 65536)):
		    free = True
		    for family, addr in addrs:
		        with socket.socket(family, socket.SOCK_STREAM) as s:
		            if family == socket.AF_INET6:
		                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
		            try:
		                s.bind((addr, p))
		            except OSError:
		                free = False
		                break
		    if free:
		        print(p)
		        break
	EOF
}

# server PORT TOKEN [ARGS...]: runs (execs) the Jupyter server on the working
# copies (workbook/), in the language of the edition (EDITION, the locale), with
# the settings every start shares (make lab and the browser test).
server() {
	local port=$1 token=$2 j ip args
	shift 2
	j=$(jupyter_cmd)
	ip=${LAB_IP:-127.0.0.1}
	mkdir -p "$WORKBOOK"
	pick_edition
	if has_sub lab; then
		# GoNB publishes a status only in reply to a request; JupyterLab ignores
		# the replies to kernel_info (an "untracked" type) and would show the
		# kernel as "Unknown" until the first cell runs. The default list, less
		# kernel_info_request and kernel_info_reply:
		local t untracked=(comm_info_request comm_info_reply shutdown_request shutdown_reply
			interrupt_request interrupt_reply debug_request debug_reply stream display_data
			update_display_data execute_input execute_result error status clear_output
			debug_event input_request input_reply)
		args=(lab "--IdentityProvider.token=$token" "--ServerApp.root_dir=$WORKBOOK" --ServerApp.port_retries=0)
		args+=("--LabApp.app_settings_dir=$(lab_settings "$ED")")
		# One workspace (the tabs JupyterLab reopens) and one set of user
		# settings per edition, with the working copies: EDITION=zh-CN make lab
		# after an English session opens no English tabs, starts no kernels of
		# theirs, and a language chosen in Settings stays with its edition.
		# JUPYTERLAB_WORKSPACES_DIR and JUPYTERLAB_SETTINGS_DIR, when set (the
		# browser test sets its own), are honoured as JupyterLab honours them.
		args+=("--LabApp.workspaces_dir=${JUPYTERLAB_WORKSPACES_DIR:-$WORKBOOK/.jupyter/$ED/workspaces}" "--LabApp.user_settings_dir=${JUPYTERLAB_SETTINGS_DIR:-$WORKBOOK/.jupyter/$ED/user-settings}")
		for t in "${untracked[@]}"; do args+=("--MappingKernelManager.untracked_message_types=$t"); done
	else
		args=(notebook "--NotebookApp.token=$token" "--notebook-dir=$WORKBOOK" --NotebookApp.port_retries=0)
	fi
	args+=(--no-browser "--ip=$ip" "--port=$port")
	[ "$(id -u)" = 0 ] && args+=(--allow-root)
	exec "$j" "${args[@]}" "$@"
}

# trust_pristine JUPYTER: signs the working copies that are exactly as their
# notebooks ship (in this environment's notary, beside the kernel), once each, so
# that the server does not warn that they are "not trusted" when they open. A
# copy the learner has edited is left as it is (JupyterLab signs what it saves).
trust_pristine() {
	local j=$1 done="$JUPYTER_DATA_DIR/memlab-trusted.txt" nb copy sum todo=() sums=()
	for nb in "$REPO"/notebooks/*/*.ipynb; do
		copy="$WORKBOOK/${nb#"$REPO"/notebooks/}"
		[ -f "$copy" ] && cmp -s "$nb" "$copy" || continue
		sum=$(sha256sum <"$copy" | cut -d' ' -f1)
		grep -qsx "$sum ${copy#"$WORKBOOK"/}" "$done" && continue
		todo+=("$copy")
		sums+=("$sum ${copy#"$WORKBOOK"/}")
	done
	[ ${#todo[@]} -gt 0 ] || return 0
	if "$j" trust "${todo[@]}" >"$LOGDIR/trust.log" 2>&1; then
		printf '%s\n' "${sums[@]}" >>"$done"
	else
		say "could not sign the working copies (log: %s); JupyterLab will call them not trusted" "${LOGDIR#"$REPO"/}/trust.log"
	fi
}

# server_output copies the Jupyter server's output, and its kernels', into
# SERVER_LOG, and shows on the terminal only warnings, errors (with the traceback
# that follows one) and a kernel's fatal error: the rest is the server's routine
# (extensions loaded, kernels started and stopped, files saved).
server_output() {
	local line show=0
	while IFS= read -r line; do
		printf '%s\n' "$line" >>"$SERVER_LOG"
		case $line in
		# Jupyter Server's kernel websockets keep their own pings (every 30 s, a
		# 90 s timeout); Tornado, whose pings they replace, warns once that a timeout
		# longer than the interval is cut to it: nothing a learner can act on, and a
		# 30 s timeout would close healthy connections (a pong answers the previous
		# ping). Hidden here with its second line, kept in the log.
		'[W '*'The websocket_ping_timeout ('*') cannot be longer than the websocket_ping_interval'*) show=0 ;;
		# The slideshow (RISE) looks for optional style sheets beside the notebook.
		'[W '*' 404 GET /files/'*'.css ('*) show=0 ;;
		'['[DI]' '*) show=0 ;;
		'['[WEC]' '* | 'Traceback '*) show=1 ;;
		F[0-9][0-9][0-9][0-9]' '*) show=1 ;;
		[IWE][0-9][0-9][0-9][0-9]' '*) show=0 ;;
		esac
		if [ $show = 1 ]; then printf '%s\n' "$line"; fi
	done
}

start() {
	local j ip port token pid url sub from host
	from=$(lab_port) || exit 2
	# The edition first: the terminal speaks its language from the first step on.
	pick_edition
	trap 'on_signal INT' INT
	trap 'on_signal TERM' TERM
	deps
	# The working copies of both editions (a learner may switch), and of the exercises.
	if [ "$ED" = zh-CN ]; then
		say "edition zh-CN (%s); English edition: EDITION=en make lab" "$ED_WHY"
	else
		say "edition en (%s); 中文版: EDITION=zh-CN make lab" "$ED_WHY"
	fi
	workbook -exercises exercises sync | sed 's/^workbook[:：] */lab: /'
	local open=$ED first=00-setup-and-tour.ipynb
	if [ ! -d "$WORKBOOK/$ED" ]; then
		say "the %s edition has no notebooks yet: opening the English ones" "$ED"
		open=en
	fi
	[ -f "$WORKBOOK/$open/$first" ] && open="$open/$first"
	j=$(jupyter_cmd)
	ip=${LAB_IP:-127.0.0.1}
	port=$(free_port "$from")
	[ -n "$port" ] || {
		say "no free port from %s on" "$from"
		exit 1
	}
	host=$ip
	case $ip in *:*) host="[$ip]" ;; esac # an IPv6 address in a URL
	token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
	local version
	if has_sub lab; then
		sub=lab
		url="http://$host:$port/lab?token=$token"
		version=$JUPYTERLAB_VERSION
		venv_ok || version=$("$j" lab --version 2>/dev/null || true)
	else
		sub=notebook
		url="http://$host:$port/tree?token=$token"
		version=$("$j" notebook --version 2>/dev/null || true)
	fi
	# Open the edition's first notebook (or its folder).
	if [ "$sub" = lab ]; then
		url=${url/\/lab\?/\/lab\/tree\/$open?}
	elif [ "${open%.ipynb}" != "$open" ]; then
		url=${url/\/tree\?/\/notebooks\/$open?}
	else
		url=${url/\/tree\?/\/tree\/$open?}
	fi
	say "JupyterLab's root: the working copies in %s/" "${WORKBOOK#"$REPO"/}"
	say "starting jupyter %s %s (%s) on %s" "$sub" "$version" "$j" "$ip:$port"
	trust_pristine "$j"
	mkdir -p "$(dirname "$SERVER_LOG")"
	: >"$SERVER_LOG"
	server "$port" "$token" > >(server_output) 2>&1 &
	pid=$!
	SERVER_PID=$pid
	# Wait until the server answers, then print the URL with its token.
	local i
	for i in $(seq 1 120); do
		kill -0 "$pid" 2>/dev/null || {
			wait "$pid" || true
			sleep 0.2 # the last lines through server_output
			say "Jupyter exited before it answered (log: %s); its last lines:" "${SERVER_LOG#"$REPO"/}"
			tail -n 25 "$SERVER_LOG" >&2
			exit 1
		}
		python3 -c 'import socket,sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 1)' "$ip" "$port" 2>/dev/null && break
		sleep 0.5
	done
	echo
	echo "    memlab lab: $url"
	if [ "$ED" = zh-CN ]; then
		echo "    先打开 $open；你的修改都保存在 ${WORKBOOK#"$REPO"/}/ 里（notebooks/ 保持原样）；"
		echo "    scripts/lab.sh restore --edition ${open%%/*} 名称 把一个笔记本恢复原样。按 Ctrl-C 停止"
	else
		echo "    it opens $open; your edits are saved in ${WORKBOOK#"$REPO"/}/ (notebooks/ stays as it is);"
		echo "    scripts/lab.sh restore --edition ${open%%/*} NAME puts a notebook back as it was. Stop with Ctrl-C"
	fi
	echo
	say "Jupyter's log: %s, the Go kernels': %s (warnings and errors show here too)" "${SERVER_LOG#"$REPO"/}" "${KERNEL_LOG#"$REPO"/}"
	# The exercises' results on the working copy, kept for the progress cells'
	# first look (afterwards only what the learner changes runs again); niced,
	# so the learner's cells come first. Stopped with the server.
	(cd "$REPO" && MEMLAB_LANG=en nice -n 19 go run ./cmd/memlab exercises list) >"$LOGDIR/exercises-results.log" 2>&1 &
	WARM_PID=$!
	local rc=0
	wait "$pid" || rc=$?
	# Jupyter stopped on its own (File ▸ Shut Down): so does the rest.
	SERVER_PID=
	kill -0 "$WARM_PID" 2>/dev/null && stop_tree "$WARM_PID"
	return $rc
}

status() {
	local j
	j=$(jupyter_cmd)
	echo "jupyter:   ${j:-none}"
	[ -n "$j" ] && { has_sub lab && echo "jupyterlab: $("$j" lab --version)" || echo "jupyterlab: none (the distribution's Jupyter Notebook $("$j" notebook --version 2>/dev/null || echo '?'))"; }
	local t
	for t in gonb goimports gopls; do
		echo "$t: $([ -x "$TOOLS_BIN/$t" ] && go version -m "$TOOLS_BIN/$t" | awk '$1 == "mod" {print $2, $3; exit}' || echo none)"
	done
	echo "kernel:    $JUPYTER_DATA_DIR/kernels/gonb/kernel.json$([ -f "$JUPYTER_DATA_DIR/kernels/gonb/kernel.json" ] || echo ' (missing)')"
	pick_edition
	echo "edition:   $ED ($ED_WHY)"
	workbook status
}

case "${1:-}" in
deps)
	pick_edition
	trap 'on_signal INT' INT
	trap 'on_signal TERM' TERM
	deps
	;;
deps-lab)
	pick_edition
	deps
	has_sub lab || {
		say "JupyterLab is not installed in %s (pip could not install it: see above)" "$VENV"
		exit 1
	}
	;;
start) start ;;
warm) warm ;;
sync) workbook sync ;;
restore)
	shift
	restore "$@"
	;;
server)
	shift
	[ $# -ge 2 ] || {
		say "usage: scripts/lab.sh server PORT TOKEN [JUPYTER ARGS...]"
		exit 2
	}
	server "$@"
	;;
exec)
	shift
	j=$(jupyter_cmd)
	[ -n "$j" ] || {
		say "no Jupyter: run scripts/lab.sh deps (make lab-deps)"
		exit 1
	}
	exec "$j" "$@"
	;;
jupyter) jupyter_cmd ;;
status) status ;;
*)
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit 2
	;;
esac
