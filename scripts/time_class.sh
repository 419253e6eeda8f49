#!/usr/bin/env bash
# Times the 90-minute class route (docs/lesson-plan.md) as a student's machine runs it: every
# command of the route's "machine" column, in the route's order, on a tree already built by
# scripts/setup.sh --all. Prints a Markdown table; with --write it also replaces the table between
# the class-route markers of docs/timing.md (the one place the route's times live).
#
#   scripts/time_class.sh [--write]
#
# The student build is made from nothing in a temporary directory (no compiler cache), as on a
# student's machine before class. Runs go to a temporary directory; nothing under runs/ or
# build-student/ is touched. Each row: wall time, and user + system CPU time (/usr/bin/time),
# so a reader can tell a loaded machine (wall ≫ CPU) from an idle one.
set -euo pipefail
cd "$(dirname "$0")/.."
WRITE=0
[ "${1:-}" = --write ] && WRITE=1
[ -x build/roformer ] || { echo "time_class: build/roformer is missing; run scripts/setup.sh --all first" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "time_class: /usr/bin/time is missing (Debian package time; scripts/setup.sh --all installs it)" >&2; exit 2; }

TMP=$(mktemp -d /tmp/time_class.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
ROWS=()

# step LABEL COMMAND... : runs the command, quiet, and records wall / user / sys.
step() {
  local label="$1"; shift
  local t="$TMP/time.txt" status=0
  /usr/bin/time -f "%e %U %S" -o "$t" "$@" > "$TMP/out.txt" 2>&1 || status=$?
  read -r wall user sys < <(tail -n 1 "$t") || true   # after "Command exited with …", if any
  local shown="" a
  for a in "$@"; do [[ "$a" == *" "* ]] && shown+="\"$a\" " || shown+="$a "; done
  shown="${shown% }"
  ROWS+=("| $label | \`${shown//$TMP/\$TMP}\` | ${wall} s | ${user} + ${sys} s | $status |")
  echo "time_class: $label: ${wall} s wall" >&2
}

export GRADE_BUILD_DIR="$TMP/build-student" GRADE_CMAKE_ARGS=""
step "the lesson build, first time (before class: the handout's ./install.sh builds it)" scripts/grade.sh --build
step "rope_forward, first grade" scripts/grade.sh rope_forward
touch students/tasks/rope_forward.cpp
step "an attempt at rope_forward" scripts/grade.sh rope_forward
step "switching to rope_backward" scripts/grade.sh rope_backward
touch students/tasks/rope_backward.cpp
step "an attempt at rope_backward" scripts/grade.sh rope_backward
step "the classroom run (4000 steps, 2 threads)" \
  build/roformer train --config configs/classroom.toml --out "$TMP/classroom"
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3   # Debian's, with numpy and matplotlib (scripts/setup.sh --all)
export ROFORMER_BIN="$PWD/build/roformer" ROFORMER_ROOT="$PWD" ROFORMER_RUNS="$TMP/notebook-runs"
export JUPYTER_RUNTIME_DIR="$TMP/jupyter" IPYTHONDIR="$TMP/ipython" MPLCONFIGDIR="$TMP/matplotlib"
step "notebook 01, top to bottom" \
  "$PY" -m nbconvert --to notebook --execute notebooks/01_rope_geometry.ipynb --output-dir "$TMP"
step "RoPE's tests on the real kernel" build/tests/test_roformer --no-version "-tc=rope: *"
step "a live gradient check" build/roformer gradcheck
step "the broken sign" build/roformer gradcheck --break-sin-sign
step "fill-mask" build/roformer fill-mask --run "$TMP/classroom" \
  "In the beginning God created the [MASK] and the earth."
step "the run's curves" "$PY" scripts/plot_run.py "$TMP/classroom" --out "$TMP/curves.png"
step "eval at 1×, 2×, 4× the length" build/roformer eval --run "$TMP/classroom" \
  --seq-len 64 --seq-len 128 --seq-len 256
step "attention as JSON for the page" build/roformer attention --run "$TMP/classroom" \
  "In the beginning God created the heaven and the earth." --out "$TMP/att.json"

CPU="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), family $(sed -n 's/^cpu family[[:space:]]*: //p' /proc/cpuinfo | head -n 1) model $(sed -n 's/^model[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
TABLE=$(cat <<EOF
Measured by \`scripts/time_class.sh\` on $(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD),
$(nproc) cores ($CPU), load average $(cut -d' ' -f1-3 /proc/loadavg) when it finished. The
graded stubs and \`--break-sin-sign\` fail on purpose: that is what a student sees first. For
\`grade.sh\`, read the wall time: it builds in a process substitution, whose CPU time
\`/usr/bin/time\` does not always count.

| step | command | wall | CPU (user + sys) | exit |
|---|---|---|---|---|
$(printf '%s\n' "${ROWS[@]}")
EOF
)
echo "$TABLE"
if [ "$WRITE" = 1 ]; then
  python3 - "$TABLE" <<'PY'
import sys, re
path = "docs/timing.md"
text = open(path, encoding="utf-8").read()
begin, end = "<!-- class-route:begin -->", "<!-- class-route:end -->"
if begin not in text or end not in text:
    sys.exit(f"time_class: {path} has no {begin} … {end} block to replace")
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
open(path, "w", encoding="utf-8").write(head + begin + "\n" + sys.argv[1] + "\n" + end + tail)
print(f"time_class: wrote {path}", file=sys.stderr)
PY
fi
