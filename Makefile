# memlab: the README's commands.
#
#   make lab        install what is missing into the checkout's .venv (JupyterLab, pinned by
#                   scripts/requirements-lab.txt; GoNB, goimports, gopls), register the GoNB
#                   kernel there, make the learner's working copies (workbook/EDITION/, git-
#                   ignored) of the notebooks, open JupyterLab on them and print its URL;
#                   EDITION=en or EDITION=zh-CN picks the edition (default: from the locale)
#   make restore    NB=NAME EDITION=zh-CN: put working copies back as the notebooks ship them
#                   (no NB: all of the edition's), keeping each edited one as a backup
#   make notebooks  execute every notebook headless into build/notebooks/ (.ipynb + HTML)
#                   with the same environment's nbconvert, failing on any error or missing plot
#   make book       the rendered book of both editions with their outputs, glossary and
#                   exercises: a static site in build/book/ (scripts/book.sh, Jupyter Book 1)
#   make e2e        the browser test: every notebook run in JupyterLab through headless
#                   Chromium, screenshots in build/e2e/ (e2e/run.sh)
#   make cell-latency  how long every cell of every notebook takes in a real GoNB kernel, the
#                   cells over 3 s listed (scripts/cell-latency.py; ARGS=--phases splits each
#                   into GoNB's steps): BENCHMARKS.md's figures
#   make test       gofmt check, go vet, go test, exercise and GPU-fragment checks, notebooks, e2e
#
# Makefile.gpu and Makefile.exercises are fragments other parts of the project own;
# `make test` runs their ptx-check, vet-cuda and test-exercises targets when they exist.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
REPO := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
GO ?= go
NOTEBOOKS ?= $(sort $(wildcard notebooks/en/*.ipynb notebooks/zh-CN/*.ipynb))
NOTEBOOK_TIMEOUT ?= 900

-include Makefile.gpu Makefile.exercises

# timed NAME, COMMAND: runs COMMAND and reports how long it took.
define timed
	@t0=$$(date +%s); echo "== $(1)"; $(2); echo "== $(1): ok in $$(( $$(date +%s) - t0 ))s"
endef

# optional TARGET: runs `make TARGET` when a fragment defines it (make -q exits 2
# for an unknown target), and says so when it is skipped.
define optional
	@if $(MAKE) -q $(1) >/dev/null 2>&1; [ $$? -ne 2 ]; then \
		t0=$$(date +%s); echo "== $(1)"; $(MAKE) --no-print-directory $(1); \
		echo "== $(1): ok in $$(( $$(date +%s) - t0 ))s"; \
	else echo "== $(1): not defined (fragment missing), skipped"; fi
endef

.PHONY: lab lab-deps restore notebooks book e2e cell-latency test fmt-check vet go-test grader-deps race fragments ci fidelity-record

lab:
	@scripts/lab.sh start

lab-deps:
	@scripts/lab.sh deps

restore:
	@scripts/lab.sh restore $(if $(EDITION),--edition $(EDITION)) $(NB)

notebooks: lab-deps
	$(call timed,notebooks,scripts/run-notebooks.sh $(NOTEBOOKS))

book: lab-deps
	$(call timed,book,scripts/book.sh)

cell-latency: lab-deps
	@py=$${MEMLAB_VENV:-$(REPO)/.venv}/bin/python; [ -x "$$py" ] || py=/usr/bin/python3; \
		"$$py" scripts/cell-latency.py $(ARGS)

e2e:
	$(call timed,e2e,E2E_NOTEBOOKS="$(NOTEBOOKS)" e2e/run.sh)

fmt-check:
	$(call timed,gofmt,bad=$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go')); \
		if [ -n "$$bad" ]; then echo "gofmt would change:"; echo "$$bad"; exit 1; fi)

vet:
	$(call timed,go vet,$(GO) vet ./...)

# bubblewrap is the sandbox of `memlab exercises grade`; its tests (go test
# ./internal/workbook) run students' attacks in it. Debian 12's package, installed
# when missing (CI runs as root); elsewhere it says what to install.
BWRAP_VERSION ?= 0.8.*
grader-deps:
	@command -v bwrap >/dev/null || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			apt-get update -qq && apt-get install -y -qq "bubblewrap=$(BWRAP_VERSION)"; \
		else echo "memlab: the grader's tests need bubblewrap: sudo apt-get install bubblewrap"; exit 1; fi; }

# whatif's package replays every shipped practitioner's program under every placement
# (476 s of a clean run on the 2-core machine at 21b2d7f, near go test's default 10-minute
# limit per package, past it when the machine is shared): its limit is 30 minutes, still
# far below CI's 90, so a hang still fails.
GO_TEST_TIMEOUT ?= 30m
go-test: grader-deps
	$(call timed,go test,$(GO) test -timeout $(GO_TEST_TIMEOUT) ./...)

# The packages whose state is shared between goroutines, under the race detector.
RACE_PACKAGES ?= ./allocator ./tensor ./device/sim ./kernels/cpu ./pool ./model ./memlab
# whatif's shared state is its concurrent replays (Replay's workers over settings ×
# devices, Files' ranks): under the race detector, the tests that drive them on small
# histories, several settings, devices and ranks, and bad input (its whole suite there
# took 414 s of make test's 470 s of -race; go test ./... runs all of it without).
# Each name must match a test: the run fails when one no longer does.
RACE_WHATIF ?= TestFilesRanks TestSeveralDevices TestSparseDeviceIDs TestInconsistentHistories TestNeutralSettings TestColumns TestRobustBadHistories TestRobustBadSettings
# snapshot's shared state is the first pass that counts a framed pickle's frames on
# every core: its tests, on every reference folder's pickles.
race:
	$(call timed,go test -race,$(GO) test -race $(RACE_PACKAGES); \
		$(GO) test -race -run '^TestCountFramed' ./snapshot; \
		out=$$($(GO) test -race -v -run '^($(subst $(eval) ,|,$(strip $(RACE_WHATIF))))$$' ./whatif) || { echo "$$out"; exit 1; }; \
		echo "$$out" | tail -n 1; ran=$$(echo "$$out" | grep -c '^--- PASS'); \
		[ "$$ran" = $(words $(RACE_WHATIF)) ] || { echo "race: $$ran of the $(words $(RACE_WHATIF)) whatif tests in RACE_WHATIF ran: one was renamed or removed"; exit 1; })

fragments:
	$(call optional,ptx-check)
	$(call optional,vet-cuda)
	$(call optional,test-exercises)

test:
	@t0=$$(date +%s); \
	$(MAKE) --no-print-directory fmt-check vet go-test race fragments notebooks e2e; \
	echo "== make test: all passed in $$(( $$(date +%s) - t0 ))s"

ci: test

# The randomized differential suites' ground truth (issue 22), recorded with the
# PyTorch of this machine on its first CUDA GPU into reference/fidelity-2.11/.
fidelity-record:
	bash scripts/record/fidelity.sh reference/fidelity-2.11
