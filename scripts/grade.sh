#!/bin/sh
# Graded tasks (docs/graded-tasks.md): builds the grader (students/grader/, a C++ program of the
# lesson build) and hands it the arguments. POSIX sh and CMake only — no bash, no GNU tool — so
# the same command grades on Linux, macOS, WSL, MSYS2 and busybox; on Windows without a shell,
# scripts\grade.cmd does the same.
#
#   scripts/grade.sh                  list the tasks: what to write, which tests grade it
#   scripts/grade.sh TASK... | all    grade students/tasks/<task>.cpp: its tests, a score table,
#                                     each failing test case and a hint; in a handout, each grade
#                                     is a line of students/grades.csv (commit it with your work)
#   scripts/grade.sh --hint TASK      a deeper hint for TASK's last failure (logged there too)
#   scripts/grade.sh --build          build every task's tests (the handout's ./install.sh)
# In the course repository only (scripts/grade_course.sh; a handout refuses them):
#   scripts/grade.sh --reference ...  grade the course's own implementation (every test passes)
#   scripts/grade.sh --grade-file TASK FILE [--report CSV]   grade FILE as TASK
#   scripts/grade.sh --handout DIR [TASK...]   write a student's handout into DIR
#   scripts/grade.sh --check          CI: the handout holds no answer; every stub fails; every
#                                     wrong solution of tests/grader/wrong/ scores 0 with its hint;
#                                     the course's implementation passes
#   scripts/grade.sh --class OUT DIR... [--no-regrade] [--force]
#                                     the instructor's class table (scripts/class_table.py) of
#                                     the students' repositories DIR (their students/grades.csv):
#                                     OUT/class.csv and OUT/class.html, every task file graded
#                                     again with the course's tests
#
# Builds in GRADE_BUILD_DIR (default build-student). JOBS: parallel build jobs (default: every
# core); GRADE_CMAKE_ARGS: extra configure flags (e.g. -DCMAKE_CXX_COMPILER_LAUNCHER=ccache);
# GRADE_TIMEOUT: seconds a task's tests may run (default 60); GRADE_MAX_OUTPUT: bytes they may
# print (default 1000000). Exit status: 0 when every graded task passes all its tests.
set -eu
here=$(dirname "$0")
case "${1:-}" in
  --class)  # OUT and DIR are named from where the instructor stands: no cd first
    if [ -f "$here/../students/handout.txt" ] || [ ! -f "$here/class_table.py" ]; then
      echo "grade: this is a handout: the reference answers are not in it (--class needs the course repository)" >&2
      exit 2
    fi
    shift
    exec python3 "$here/class_table.py" "$@" ;;
esac
cd "$here/.."
BUILD="${GRADE_BUILD_DIR:-build-student}"
export GRADE_BUILD_DIR="$BUILD"

case "${1:-}" in
  --handout|--check|--reference|--grade-file|--check-grading)
    if [ -f students/handout.txt ] || [ ! -f scripts/grade_course.sh ]; then
      echo "grade: this is a handout: the reference answers are not in it ($1 needs the course repository)" >&2
      exit 2
    fi
    case "$1" in --handout|--check) exec bash scripts/grade_course.sh "$@" ;; esac ;;
esac

# The lesson build (students/CMakeLists.txt), configured once; cmake reconfigures it itself when
# its lists change.
if [ -f "$BUILD/CMakeCache.txt" ] && ! grep -q '^CMAKE_HOME_DIRECTORY:INTERNAL=.*/students$' "$BUILD/CMakeCache.txt"; then
  echo "grade: $BUILD was configured from another folder than students/ (the lesson build): remove it and grade again" >&2
  exit 2
fi
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  mkdir -p "$BUILD"
  # shellcheck disable=SC2086  # GRADE_CMAKE_ARGS: extra configure flags, split on spaces
  if ! cmake -S students -B "$BUILD" -DCMAKE_BUILD_TYPE=Release ${GRADE_CMAKE_ARGS:-} > "$BUILD/configure.log" 2>&1; then
    echo "grade: configuring the lesson build failed (is every package of ./install.sh there?); the end of $BUILD/configure.log:" >&2
    tail -n 20 "$BUILD/configure.log" >&2
    rm -f "$BUILD/CMakeCache.txt"
    exit 1
  fi
fi
if ! cmake --build "$BUILD" --config Release --target grader > "$BUILD/grader-build.log" 2>&1; then
  echo "grade: building the grader failed; its output: $BUILD/grader-build.log" >&2
  tail -n 20 "$BUILD/grader-build.log" >&2
  exit 1
fi
for g in "$BUILD/grader" "$BUILD/grader.exe" "$BUILD/Release/grader.exe"; do
  [ -f "$g" ] && exec "$g" "$@"
done
echo "grade: the grader was built but is not in $BUILD" >&2
exit 1
