#!/usr/bin/env bash
# run-notebooks.sh executes notebooks headless through the GoNB kernel with
# nbconvert, writes each executed notebook and its HTML rendering to
# build/notebooks/EDITION/ (en or zh-CN, the folder the notebook is in), then checks the executed notebooks with scripts/nbcheck
# (error outputs, panics, stderr errors, plots missing where expected).
# It uses the checkout's own Jupyter (.venv, set up by scripts/lab.sh), with an
# empty Jupyter config directory so that a user's own Jupyter configuration does not
# change the run.
# Usage: scripts/run-notebooks.sh notebooks/en/*.ipynb notebooks/zh-CN/*.ipynb   (run `make lab-deps` first)
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT="$REPO/build/notebooks"
TIMEOUT=${NOTEBOOK_TIMEOUT:-900}
J=("$REPO/scripts/lab.sh" exec)
[ -n "$("$REPO/scripts/lab.sh" jupyter)" ] || {
	echo "run-notebooks: jupyter not found; run make lab-deps" >&2
	exit 1
}
export JUPYTER_CONFIG_DIR="$REPO/build/jupyter-config"
# Cells that write files (notebook 06's exercise copies) write into a working folder
# of this run's, never into the learner's own workbook/.
export MEMLAB_WORKBOOK="$REPO/build/notebooks/workbook"
rm -rf "$MEMLAB_WORKBOOK"
mkdir -p "$JUPYTER_CONFIG_DIR"
[ $# -gt 0 ] || {
	echo "run-notebooks: no notebooks given" >&2
	exit 2
}
mkdir -p "$OUT"
fail=0
executed=()
for nb in "$@"; do
	name=$(basename "$nb" .ipynb)
	edition=$(basename "$(dirname "$nb")")
	out="$OUT/$edition"
	mkdir -p "$out"
	log="$out/$name.log"
	t0=$SECONDS
	# allow_errors keeps executing and saves the notebook, so that a failure
	# can be read in the output; nbcheck below turns any error into a failure.
	if "${J[@]}" nbconvert --to notebook --execute \
		--ExecutePreprocessor.timeout="$TIMEOUT" \
		--ExecutePreprocessor.kernel_name=gonb \
		--ExecutePreprocessor.allow_errors=True \
		--output-dir "$out" --output "$name" "$nb" >"$log" 2>&1 &&
		"${J[@]}" nbconvert --to html --output-dir "$out" "$out/$name.ipynb" >>"$log" 2>&1; then
		echo "notebook $edition/$name: executed in $((SECONDS - t0))s -> build/notebooks/$edition/$name.{ipynb,html}"
		executed+=("$out/$name.ipynb")
	else
		echo "notebook $edition/$name: nbconvert FAILED after $((SECONDS - t0))s (log: $log)"
		tail -n 30 "$log"
		fail=1
	fi
done
if [ ${#executed[@]} -gt 0 ]; then
	(cd "$REPO" && go run ./scripts/nbcheck "${executed[@]}") || fail=1
fi
exit $fail
