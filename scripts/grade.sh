#!/usr/bin/env bash
# Graded tasks (issue 24; docs/graded-tasks.md). The tasks are the lines of students/tasks.txt.
#
#   scripts/grade.sh                  list the tasks: what to write, which tests grade it
#   scripts/grade.sh TASK... | all    grade students/tasks/<task>.cpp: build it in place of our
#                                     implementation, run the task's tests, print a score table
#   scripts/grade.sh --reference ...  the same, grading our implementation (every test passes)
#   scripts/grade.sh --check          CI: every stub as committed compiles and fails its tests,
#                                     and our implementation passes them (scripts/test.sh)
#
# Builds in GRADE_BUILD_DIR (default build-student), reconfigured for each task; only the
# libraries the task's tests need and `test_student` are compiled, so after the first task a
# task costs one file and a link. JOBS (default nproc) parallel jobs. Exit status: 0 when every
# graded task passes all its tests (--check: when the stubs fail and the reference passes).
set -euo pipefail
cd "$(dirname "$0")/.."
TABLE=students/tasks.txt
BUILD="${GRADE_BUILD_DIR:-build-student}"
JOBS="${JOBS:-$(nproc)}"
GRADE_CMAKE_ARGS="${GRADE_CMAKE_ARGS:-}"

field() { awk -F' [|] ' -v t="$1" -v f="$2" '/^[a-z_]+ [|] / && $1 == t { print $f }' "$TABLE"; }
tasks() { awk -F' [|] ' '/^[a-z_]+ [|] / { print $1 }' "$TABLE"; }

list_tasks() {
  echo "Graded tasks (students/tasks.txt). Write students/tasks/<task>.cpp, then: scripts/grade.sh <task>"
  echo
  awk -F' [|] ' '/^[a-z_]+ [|] / {
      printf "  %-19s %s\n  %-19s replaces %s; graded by %s, test cases \"%s\"\n\n", $1, $6, "", $2, $4, $5 }' "$TABLE"
}

# grade TASK MODE(student|reference) → prints "passed failed" of the task's test cases;
# "- -" when the student file does not compile (the build log is in $BUILD/<task>.log).
grade() {
  local task="$1" mode="$2" reference=OFF log="$BUILD/$1.$2.log"
  [ "$mode" = reference ] && reference=ON
  mkdir -p "$BUILD"
  # shellcheck disable=SC2086  # GRADE_CMAKE_ARGS: extra configure flags, e.g. a compiler launcher
  if ! cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release $GRADE_CMAKE_ARGS -DRF_STUDENT_TASK="$task" \
         -DRF_STUDENT_REFERENCE="$reference" > "$log" 2>&1; then
    echo "configure failed, see $log" >&2; echo "- -"; return
  fi
  if ! cmake --build "$BUILD" -j "$JOBS" --target test_student >> "$log" 2>&1; then
    echo "$task: does not compile; the errors:" >&2
    grep -E "error|Error" "$log" | head -n 20 >&2
    echo "- -"; return
  fi
  local out
  out=$("$BUILD/tests/test_student" --no-version -tc="$(field "$task" 5)" 2>&1 || true)
  echo "$out" >> "$log"
  # doctest's summary: "[doctest] test cases: 4 | 3 passed | 1 failed | 0 skipped"
  echo "$out" | sed -n 's/.*test cases: *[0-9]* *| *\([0-9]*\) passed *| *\([0-9]*\) failed.*/\1 \2/p' \
    | tail -n 1 | grep . || echo "- -"
}

# run MODE TASK... → the score table; sets ALL_PASS / ANY_PASS_STUB per task for --check.
declare -A PASSED FAILED
run() {
  local mode="$1"; shift
  printf "\n%-20s %-8s %-8s %s\n" "task ($mode)" passed failed score
  local full=0 n=0
  for task in "$@"; do
    read -r p f < <(grade "$task" "$mode")
    PASSED[$task.$mode]=$p; FAILED[$task.$mode]=$f
    local score="0/1 (does not compile or crashed)"
    if [ "$p" != "-" ]; then
      if [ "$f" = 0 ] && [ "$p" -gt 0 ]; then score="1/1"; full=$((full + 1)); else score="0/1"; fi
    fi
    n=$((n + 1))
    printf "%-20s %-8s %-8s %s\n" "$task" "$p" "$f" "$score"
  done
  echo "score: $full of $n tasks pass all their tests (logs: $BUILD/<task>.$mode.log)"
  [ "$full" = "$n" ]
}

case "${1:-list}" in
  list|-h|--help) list_tasks ;;
  --check)
    mapfile -t all < <(tasks)
    run student "${all[@]}" || true
    run reference "${all[@]}" || true
    bad=0
    for task in "${all[@]}"; do
      sp=${PASSED[$task.student]}; sf=${FAILED[$task.student]}
      rp=${PASSED[$task.reference]}; rf=${FAILED[$task.reference]}
      if [ "$sp" = "-" ]; then echo "FAIL: the stub of $task does not compile"; bad=1
      elif [ "$sf" = 0 ]; then echo "FAIL: the stub of $task passes its tests (they grade nothing)"; bad=1; fi
      if [ "$rp" = "-" ] || [ "$rf" != 0 ] || [ "$rp" = 0 ]; then
        echo "FAIL: our implementation of $task does not pass its tests ($rp passed, $rf failed)"; bad=1
      fi
    done
    [ "$bad" = 0 ] && echo "grade --check: PASS (${#all[@]} stubs compile and fail, the reference passes)"
    exit "$bad" ;;
  *)
    mode=student
    [ "$1" = --reference ] && { mode=reference; shift; }
    [ $# -eq 0 ] && set -- all
    if [ "$1" = all ]; then mapfile -t chosen < <(tasks); else chosen=("$@"); fi
    for task in "${chosen[@]}"; do
      [ -n "$(field "$task" 1)" ] || { echo "grade: no task '$task'; the tasks: $(tasks | tr '\n' ' ')" >&2; exit 2; }
    done
    run "$mode" "${chosen[@]}" ;;
esac
