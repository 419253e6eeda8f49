#!/usr/bin/env bash
# The student's handout from zero (CI: .ci/run's handout stage; docs/graded-tasks.md): writes
# the handout of every task, copies it into a bare Debian root (scripts/fresh_root.sh --repo)
# and there, as a student would, runs its one command and grades:
#   1. the container's steps, which are a laptop's one command in two: ./install.sh --packages
#      (the image), then ./install.sh (the devcontainer) — what they download (the .deb files
#      apt fetched) and how long they take; they install, build and grade every task once (the
#      stubs fail);
#   2. switching tasks: rope_forward, rope_backward, rope_forward again, each timed;
#   3. a kernel whose pair loop runs one pair too far: the grader must name the crash, the
#      kind of bad access and the line in students/tasks/rope_forward.cpp, and give its hint;
#   4. a kernel that never ends: stopped after GRADE_TIMEOUT seconds and named.
# The wrong kernels come from tests/grader/wrong/ (not in a handout): they travel into the
# root as untracked files of the handout. Times are printed, not asserted (docs/timing.md
# quotes them); the checks of 1, 3 and 4 fail the script.
#
#   tests/grader/handout_from_zero.sh [RELEASE]     (default bookworm; needs root, as fresh_root.sh)
set -euo pipefail
if [ "${1:-}" = --inside ]; then
  cd "$(dirname "$0")/.."
  fails=0
  fail() { echo "handout_from_zero: FAIL: $*"; fails=$((fails + 1)); }
  since() { awk -v a="$1" -v b="$2" 'BEGIN { print b - a }'; }
  # The container's steps (.devcontainer/): the image runs ./install.sh --packages, the
  # devcontainer ./install.sh; on a laptop the one ./install.sh does both.
  t0=$(date +%s.%N)
  ./install.sh --packages > install.log 2>&1 || { tail -n 30 install.log; fail "./install.sh --packages exited $?"; }
  grep -q 'sh /tmp/install.sh --packages && rm /tmp/install.sh' .devcontainer/Dockerfile \
    || fail "the container's Dockerfile no longer runs what this stage runs (./install.sh --packages)"
  grep -q '"postCreateCommand": "./install.sh"' .devcontainer/devcontainer.json \
    || fail "the devcontainer no longer runs what this stage runs (./install.sh)"
  ./install.sh >> install.log 2>&1 || { tail -n 30 install.log; fail "./install.sh exited $?"; }
  t1=$(date +%s.%N)
  bytes=$(find /var/cache/apt/archives -name '*.deb' -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
  debs=$(find /var/cache/apt/archives -name '*.deb' | wc -l)
  grep -q "score: 0 of [0-9]* tasks pass" install.log || fail "./install.sh did not grade the stubs: $(tail -n 3 install.log)"
  printf 'handout_from_zero: ./install.sh --packages, then ./install.sh: %.0f s (installed, built, graded), %d packages downloaded, %.1f MB\n' \
    "$(since "$t0" "$t1")" "$debs" "$(awk -v b="$bytes" 'BEGIN { print b / 1e6 }')"
  for task in rope_forward rope_backward rope_forward; do
    t0=$(date +%s.%N); scripts/grade.sh "$task" > /dev/null 2>&1 || true; t1=$(date +%s.%N)
    printf 'handout_from_zero: switching to %s: %.1f s\n' "$task" "$(since "$t0" "$t1")"
  done
  cp students/tasks/rope_forward.cpp stub.cpp
  cp .grader-check/rope_forward.pairs_past_end.cpp students/tasks/rope_forward.cpp
  t0=$(date +%s.%N); out=$(scripts/grade.sh rope_forward 2>&1 || true); t1=$(date +%s.%N)
  printf 'handout_from_zero: a kernel past the end of its buffers, edited and graded: %.1f s\n' "$(since "$t0" "$t1")"
  for want in "crashed in \"rope: " "past the end of a buffer" "at students/tasks/rope_forward.cpp:" \
              "hint: past the end of a buffer"; do
    grep -qF -- "$want" <<< "$out" || fail "the crash is not named ('$want' missing): $out"
  done
  cp .grader-check/rope_forward.endless_loop.cpp students/tasks/rope_forward.cpp
  out=$(GRADE_TIMEOUT=10 scripts/grade.sh rope_forward 2>&1 || true)
  for want in "never finished: stopped after 10 s in \"rope: " "0/1 (never finished)" "hint: the tests never finished"; do
    grep -qF -- "$want" <<< "$out" || fail "the endless loop is not named ('$want' missing): $out"
  done
  cp stub.cpp students/tasks/rope_forward.cpp
  [ "$fails" = 0 ] && echo "handout_from_zero: PASS (installed, built and graded from a bare root; the crash and the endless loop named)"
  exit "$fails"
fi

RELEASE="${1:-bookworm}"
cd "$(dirname "$0")/../.."
W=$(mktemp -d "${TMPDIR:-/var/tmp}/handout-from-zero.XXXXXX")
trap 'rm -rf "$W"' EXIT
scripts/grade.sh --handout "$W/handout" > "$W/handout.log" 2>&1 || { cat "$W/handout.log"; exit 1; }
mkdir -p "$W/handout/.grader-check"
cp tests/grader/handout_from_zero.sh tests/grader/wrong/rope_forward.pairs_past_end.cpp \
   tests/grader/wrong/rope_forward.endless_loop.cpp "$W/handout/.grader-check/"
scripts/fresh_root.sh "$RELEASE" --repo "$W/handout" -- 'bash .grader-check/handout_from_zero.sh --inside'
