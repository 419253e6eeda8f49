#!/usr/bin/env bash
# The reading path measured from the real program (docs/reading-path.md; the ctest
# reading_path_ran runs this): builds `roformer` with gcov's counters in every source
# (-DRF_COVERAGE=ON: -O0 -g) into build-coverage/, then tests/reading_path/check.py runs
#   roformer train --config configs/classroom.toml --set model.fused=false --stop-after 2
# whose second turn of the loop alone is counted, reads the lines that ran, and holds the page's table to them;
# under gdb (when installed) it also counts the frames from train_step to RoPE's kernel.
#
#   scripts/reading_path.sh             build (incrementally; with ccache when there is one), check
#   scripts/reading_path.sh --suggest   the same, and print per file the line ranges that ran
#                                       (what the table's rows must cover after the code moves)
#   scripts/reading_path.sh --table F   check the table of F (a copy of the page) instead
#
# COVERAGE_BUILD_DIR chooses the build directory (default build-coverage), JOBS its parallel
# jobs (default: every core).
set -euo pipefail
cd "$(dirname "$0")/.."
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --suggest) args+=(--suggest) ;;
    --table) [ -n "${2:-}" ] || { echo "reading_path: --table needs a file (a copy of docs/reading-path.md)" >&2; exit 2; }
             args+=(--table "$2"); shift ;;
    *) echo "reading_path: unknown argument '$1'; use --suggest or --table FILE" >&2; exit 2 ;;
  esac
  shift
done
B="${COVERAGE_BUILD_DIR:-build-coverage}"
JOBS="${JOBS:-$(nproc)}"
mkdir -p "$B"
if [ ! -f "$B/CMakeCache.txt" ]; then
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  # Release (NDEBUG: the lines the real program runs), with -O0 -g added by RF_COVERAGE.
  cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DRF_COVERAGE=ON -DRF_BUILD_TESTS=OFF \
    "${launcher[@]}" > "$B/configure.log" 2>&1 || { cat "$B/configure.log"; exit 1; }
fi
t0=$(date +%s)
cmake --build "$B" -j "$JOBS" --target roformer > "$B/build.log" 2>&1 || { tail -40 "$B/build.log"; exit 1; }
echo "reading_path: $B/roformer built with gcov's counters in $(($(date +%s) - t0)) s"
exec python3 tests/reading_path/check.py --roformer "$B/roformer" --build "$B" --source . "${args[@]}"
