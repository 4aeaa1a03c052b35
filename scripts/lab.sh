#!/usr/bin/env bash
# lab.sh sets up and starts the memlab notebooks: Jupyter, the GoNB kernel
# (pinned), goimports, and the kernel registration that lets notebooks import
# this repository's packages. Every step checks first and skips what is already
# there, so a second run takes seconds. Installs are quiet; their output goes to
# build/setup/*.log and is shown only when a step fails.
#
# Usage:
#   scripts/lab.sh deps      install what headless execution needs (nbconvert, GoNB, goimports)
#   scripts/lab.sh deps-ui   the same plus a browser UI (JupyterLab or Jupyter Notebook)
#   scripts/lab.sh kernel    (re)register the GoNB kernel for this checkout
#   scripts/lab.sh start     deps-ui + kernel, then run Jupyter on notebooks/ in the foreground
#   scripts/lab.sh jupyter   print the jupyter command to use
#
# Environment: LAB_IP (default 127.0.0.1), LAB_PORT (default 8888),
# GONB_VERSION (default v0.11.4), GOIMPORTS_VERSION (default v0.52.0),
# LAB_NO_PIP=1 to skip the PyPI attempt.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LOGDIR="$REPO/build/setup"
GONB_VERSION=${GONB_VERSION:-v0.11.4}
GOIMPORTS_VERSION=${GOIMPORTS_VERSION:-v0.52.0} # golang.org/x/tools; builds with Go 1.26
GOBIN_DIR=$(go env GOBIN)
[ -n "$GOBIN_DIR" ] || GOBIN_DIR="$(go env GOPATH)/bin"
GOROOT_BIN="$(go env GOROOT)/bin"
export PATH="$GOBIN_DIR:$GOROOT_BIN:$PATH"

mkdir -p "$LOGDIR"

say() { printf 'lab: %s\n' "$*"; }

# step NAME CMD...: runs CMD with its output in build/setup/NAME.log; on failure
# prints the log's tail and exits.
step() {
	local name=$1
	shift
	local log="$LOGDIR/$name.log"
	local t0=$SECONDS
	if ! "$@" >"$log" 2>&1; then
		say "$name FAILED (log: $log); last lines:"
		tail -n 25 "$log" >&2
		exit 1
	fi
	say "$name done in $((SECONDS - t0))s (log: $log)"
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

# jupyter_cmd prints the path of a working jupyter, or nothing.
jupyter_cmd() {
	local c
	for c in "$(command -v jupyter 2>/dev/null || true)" /usr/bin/jupyter /usr/local/bin/jupyter; do
		[ -n "$c" ] && [ -x "$c" ] && "$c" --version >/dev/null 2>&1 && {
			echo "$c"
			return 0
		}
	done
	return 0
}

has_sub() { # has_sub SUBCOMMAND: whether jupyter SUBCOMMAND works
	local j
	j=$(jupyter_cmd)
	[ -n "$j" ] && "$j" "$1" --version >/dev/null 2>&1
}

pip_install_jupyterlab() {
	[ "${LAB_NO_PIP:-0}" = 1 ] && return 1
	command -v python3 >/dev/null 2>&1 || return 1
	python3 -m pip --version >/dev/null 2>&1 || return 1
	# A quick probe: is PyPI (or the configured index) reachable at all?
	python3 -m pip download --no-deps --retries 0 --timeout 5 -d "$LOGDIR/pip-probe" \
		jupyterlab >"$LOGDIR/pip-probe.log" 2>&1 || return 1
	python3 -m pip install --retries 1 --timeout 30 jupyterlab nbconvert jupyter-client \
		>"$LOGDIR/pip-jupyterlab.log" 2>&1 || return 1
	command -v pyenv >/dev/null 2>&1 && pyenv rehash >/dev/null 2>&1
	hash -r
	return 0
}

apt_install() {
	command -v apt-get >/dev/null 2>&1 || {
		echo "no apt-get here: install Jupyter yourself (pip install jupyterlab)" >&2
		return 1
	}
	export DEBIAN_FRONTEND=noninteractive
	as_root apt-get update -q
	as_root apt-get install -y -q --no-install-recommends "$@"
}

install_jupyter() { # install_jupyter ui|headless
	local want=$1
	if has_sub nbconvert && { [ "$want" = headless ] || has_sub lab || has_sub notebook; }; then
		say "jupyter present ($(jupyter_cmd))"
		return 0
	fi
	if [ "$want" = ui ] && pip_install_jupyterlab && has_sub lab && has_sub nbconvert; then
		say "installed JupyterLab with pip (log: $LOGDIR/pip-jupyterlab.log)"
		return 0
	fi
	local pkgs=(jupyter-nbconvert jupyter-client)
	[ "$want" = ui ] && pkgs+=(jupyter-notebook)
	step apt-jupyter apt_install "${pkgs[@]}"
	hash -r
	has_sub nbconvert || {
		say "jupyter nbconvert still missing after install"
		exit 1
	}
}

gonb_installed_version() {
	local bin="$GOBIN_DIR/gonb"
	[ -x "$bin" ] || return 0
	go version -m "$bin" 2>/dev/null | awk '$1 == "mod" && $2 == "github.com/janpfeifer/gonb" {print $3}'
}

build_gonb() {
	# The module proxy may refuse GoNB's version list, which breaks
	# `go install …@version`; a throw-away module works everywhere.
	local tmp rc=0
	tmp=$(mktemp -d)
	(cd "$tmp" && go mod init tools && go get "github.com/janpfeifer/gonb@$GONB_VERSION" &&
		GOBIN="$GOBIN_DIR" go install github.com/janpfeifer/gonb) || rc=$?
	rm -rf "$tmp"
	return $rc
}

install_gonb() {
	if [ "$(gonb_installed_version)" = "$GONB_VERSION" ]; then
		say "gonb $GONB_VERSION present ($GOBIN_DIR/gonb)"
	else
		step gonb build_gonb
	fi
	if command -v goimports >/dev/null 2>&1; then
		say "goimports present ($(command -v goimports))"
	else
		step goimports env GOBIN="$GOBIN_DIR" go install "golang.org/x/tools/cmd/goimports@$GOIMPORTS_VERSION"
	fi
}

# register_kernel writes the gonb kernelspec: every notebook's kernel starts with a
# go.work that uses this checkout (so `import "memlab.dev/memlab/..."` works with no
# manual step, from any directory), and the kernel's PATH finds go and goimports even
# when Jupyter is started from a shell that lacks them.
register_kernel() {
	local data kdir
	data=${JUPYTER_DATA_DIR:-$HOME/.local/share/jupyter}
	kdir="$data/kernels/gonb"
	step gonb-install "$GOBIN_DIR/gonb" --install --force_deps --logtostderr=false \
		"--go_work=$REPO"
	local spec="$kdir/kernel.json"
	[ -f "$spec" ] || {
		say "gonb --install wrote no $spec"
		exit 1
	}
	local path_json=${PATH//\\/\\\\}
	path_json=${path_json//\"/\\\"}
	sed -i "s|\"env\":{[^}]*}|\"env\":{\"PATH\":\"${path_json//|/\\|}\"}|" "$spec"
	grep -q "\"PATH\"" "$spec" || {
		say "could not set PATH in $spec"
		exit 1
	}
	say "GoNB kernel registered: $spec (go.work uses $REPO)"
}

start() {
	install_jupyter ui
	install_gonb
	register_kernel
	local j ip port token sub tokflag
	j=$(jupyter_cmd)
	ip=${LAB_IP:-127.0.0.1}
	port=${LAB_PORT:-8888}
	token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
	if has_sub lab; then
		sub=lab
		tokflag=--ServerApp.token
	else
		sub=notebook
		tokflag=--NotebookApp.token
	fi
	local args=("$sub" --no-browser "--ip=$ip" "--port=$port" "$tokflag=$token" "--notebook-dir=$REPO/notebooks")
	[ "$(id -u)" = 0 ] && args+=(--allow-root)
	say "starting: $j ${args[*]}"
	echo
	echo "    memlab lab: http://$ip:$port/?token=$token"
	echo "    (if port $port is taken, Jupyter picks the next free one and prints its URL below)"
	echo "    open 00-setup-and-tour.ipynb first; stop with Ctrl-C"
	echo
	exec "$j" "${args[@]}"
}

case "${1:-}" in
deps)
	install_jupyter headless
	install_gonb
	register_kernel
	;;
deps-ui)
	install_jupyter ui
	install_gonb
	register_kernel
	;;
kernel) register_kernel ;;
start) start ;;
jupyter) jupyter_cmd ;;
*)
	sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
	;;
esac
