#!/usr/bin/env bash
# book.sh builds the rendered book (make book): both editions of every notebook with
# their outputs, the glossary and the exercises' instructions, as a static site in
# build/book/ (open build/book/index.html). Jupyter Book 1 (pinned in
# scripts/requirements-lab.txt, the checkout's .venv; run `make lab-deps` first) renders
# the source scripts/mkbook writes into build/book-src/: the kept H200 copies
# (notebooks/executed/) where they belong to the current sources, the notebooks executed
# here on the simulated device where they do not. Sphinx executes nothing and fetches
# nothing. A link to a repository file outside the book (pool/doc.go) serves that file,
# copied into the book; then every link of the built site is checked (mkbook -check).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
VENV=${MEMLAB_VENV:-$REPO/.venv}
JB="$VENV/bin/jupyter-book"
[ -x "$JB" ] || {
	echo "book: $JB not found; run make lab-deps" >&2
	exit 1
}
mkdir -p build/bin
go build -o build/bin/memlab ./cmd/memlab
go run ./scripts/mkbook -memlab build/bin/memlab -out build/book-src
log=build/book-build.log
if ! "$JB" build --builder html build/book-src >"$log" 2>&1; then
	tail -n 40 "$log" >&2
	echo "book: jupyter-book build FAILED (log: $log)" >&2
	exit 1
fi
# Sphinx's warnings (links to repository files outside the book, mostly), without colour.
warnings=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E "WARNING|ERROR" || true)
if [ -n "$warnings" ]; then
	echo "book: $(echo "$warnings" | wc -l) Sphinx warnings (all in $log); the first:"
	echo "$warnings" | head -n 5 | sed "s|$REPO/||; s/^/book:   /"
fi
rm -rf build/book
cp -r build/book-src/_build/html build/book
# Every link of the built site: each relative href and src names a file of the book,
# each #fragment an id of its page (mkbook -check; its tests run in go test).
go run ./scripts/mkbook -check build/book | sed 's/^mkbook/book/'
echo "book: build/book/index.html ($(find build/book -name '*.html' | wc -l) pages; log: $log)"
