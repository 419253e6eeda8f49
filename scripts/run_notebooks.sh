#!/usr/bin/env bash
# Executes every notebooks/NN_*.ipynb top to bottom, headless, and fails if any cell errors.
#
#   scripts/run_notebooks.sh [BUILD_DIR]          (default: build; needs BUILD_DIR/roformer)
#
# The committed notebooks are never modified: the executed copies and every run directory the
# notebooks create go to a temporary directory that is removed at the end (KEEP=1 keeps it).
# Each notebook runs with the repository's notebooks/ as its working directory and with
# ROFORMER_BIN / ROFORMER_ROOT / ROFORMER_RUNS set, so it finds the binary, configs/ and data/.
# Environment: NOTEBOOK_TIMEOUT (seconds per notebook, default 900), CELL_TIMEOUT (default 600;
# notebook 05 trains three runs in one cell, a few minutes on a loaded machine),
# PYTHON (default /usr/bin/python3, Debian's, with numpy, matplotlib, nbconvert, ipykernel),
# SAVE_TO (a directory: when every notebook passed, the executed notebooks are copied there —
# `SAVE_TO=notebooks scripts/run_notebooks.sh` refreshes the committed outputs).
# Exit codes: 0 all passed, 1 a notebook failed or timed out, 2 bad set-up, 77 nbconvert missing
# (CTest reports that as skipped).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR="$(cd "${1:-$ROOT/build}" 2>/dev/null && pwd)" || {
  echo "run_notebooks: build directory '${1:-$ROOT/build}' not found; build first (scripts/setup.sh)" >&2
  exit 2
}
BIN="$BUILD_DIR/roformer"
[ -x "$BIN" ] || { echo "run_notebooks: $BIN not found; build the roformer target first" >&2; exit 2; }

PYTHON="${PYTHON:-/usr/bin/python3}"
[ -x "$PYTHON" ] || PYTHON="$(command -v python3)"
if ! "$PYTHON" -c "import nbconvert, ipykernel, numpy, matplotlib" 2>/dev/null; then
  echo "run_notebooks: $PYTHON lacks nbconvert/ipykernel/numpy/matplotlib; install Debian's" \
       "jupyter-nbconvert python3-ipykernel python3-numpy python3-matplotlib (scripts/setup.sh --all)" >&2
  exit 77
fi

NOTEBOOK_TIMEOUT="${NOTEBOOK_TIMEOUT:-900}"
CELL_TIMEOUT="${CELL_TIMEOUT:-600}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/roformer-notebooks.XXXXXX")"
if [ "${KEEP:-0}" = 1 ]; then
  echo "run_notebooks: keeping $WORK"
else
  trap 'rm -rf "$WORK"' EXIT
fi

# A private Jupyter/IPython/matplotlib state: nothing is read from or written to $HOME.
export ROFORMER_BIN="$BIN" ROFORMER_ROOT="$ROOT"
export JUPYTER_RUNTIME_DIR="$WORK/jupyter-runtime" IPYTHONDIR="$WORK/ipython"
export MPLCONFIGDIR="$WORK/matplotlib" PYDEVD_DISABLE_FILE_VALIDATION=1

failed=()
shopt -s nullglob
notebooks=("$ROOT"/notebooks/[0-9][0-9]_*.ipynb)
[ ${#notebooks[@]} -gt 0 ] || { echo "run_notebooks: no notebooks in $ROOT/notebooks" >&2; exit 2; }
for nb in "${notebooks[@]}"; do
  name="$(basename "$nb" .ipynb)"
  export ROFORMER_RUNS="$WORK/runs/$name"
  start=$SECONDS
  if timeout -s INT -k 30 "$NOTEBOOK_TIMEOUT" "$PYTHON" -m nbconvert --to notebook --execute \
       --ExecutePreprocessor.timeout="$CELL_TIMEOUT" --ExecutePreprocessor.kernel_name=python3 \
       --output-dir "$WORK/executed" --output "$name" "$nb" > "$WORK/$name.log" 2>&1; then
    echo "run_notebooks: $name passed ($((SECONDS - start)) s)"
  else
    code=$?
    [ $code -eq 124 ] && why="timed out (NOTEBOOK_TIMEOUT=$NOTEBOOK_TIMEOUT s)" || why="failed (exit $code)"
    echo "run_notebooks: $name $why after $((SECONDS - start)) s; the failing cell:" >&2
    # nbconvert's log without colour codes, from the last cell error on (or its last lines).
    sed 's/\x1b\[[0-9;]*m//g' "$WORK/$name.log" > "$WORK/$name.plain.log"
    line="$(grep -n "CellExecutionError\|CellTimeoutError" "$WORK/$name.plain.log" | tail -n 1 | cut -d: -f1 || true)"
    if [ -n "$line" ]; then tail -n "+$line" "$WORK/$name.plain.log" | head -n 60 >&2
    else tail -n 30 "$WORK/$name.plain.log" >&2; fi
    failed+=("$name")
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "run_notebooks: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "run_notebooks: all ${#notebooks[@]} notebooks ran without errors"
if [ -n "${SAVE_TO:-}" ]; then
  cp "$WORK"/executed/*.ipynb "$SAVE_TO"/
  echo "run_notebooks: executed notebooks copied to $SAVE_TO"
fi
