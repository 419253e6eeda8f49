#!/usr/bin/env bash
# The handout graded on a laptop with no bash and no GNU tool (a Mac has bash 3.2 and BSD tools;
# a minimal container has busybox): a PATH of nothing but busybox's applets, CMake, make and
# the compiler with its binutils, and the grader run by busybox's sh.
#
#   tests/grader/busybox_grade.sh WORKDIR gcc|libcxx
#
# gcc: GNU's compiler and library; libcxx: clang with LLVM's libc++, the nearest this machine
# comes to a Mac's toolchain. In a fresh handout whose task files hold the course's own
# implementation, `scripts/grade.sh all` scores every task and writes students/grades.csv; a
# planted bug (a wrong solution of tests/grader/wrong/) scores 0 and gets its hint; a task's
# grade exits 0 exactly when it passes; --hint gives the next level and logs it; an edited
# test file makes the grade 0 and is named; a task whose tests run another, wrong task names
# that one as the bug.
set -u
W=$(realpath -m "$1")
KIND=${2:-gcc}
rm -rf "$W" && mkdir -p "$W/bin" || exit 1
cd "$(dirname "$0")/../.." || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
H="$W/handout"

case "$KIND" in
  gcc) ARGS="-DCMAKE_CXX_COMPILER=g++"; TOOLS="g++ gcc c++ cc" ;;
  libcxx) ARGS="-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_FLAGS=-stdlib=libc++ -DCMAKE_EXE_LINKER_FLAGS=-stdlib=libc++ -DRF_OPENMP=OFF"
          TOOLS="clang++ clang" ;;
  *) echo "busybox_grade: the second argument is gcc or libcxx" >&2; exit 2 ;;
esac
for t in busybox cmake make $TOOLS; do
  command -v "$t" > /dev/null || { echo "SKIP: $t is not installed (scripts/setup.sh --all installs it)"; exit 77; }
done

tests/grader/reference_handout.sh "$H" "$W" || fail "no handout with the course's implementation"

# The PATH: busybox's applets, then CMake, make, the compiler and binutils (as, ld, ar, ranlib:
# busybox's own ar only extracts) over them.
busybox --install -s "$W/bin" || fail "busybox --install failed"
rm -f "$W/bin/bash"
for t in cmake make $TOOLS as ld ld.bfd ld.gold ar ranlib nm objdump strip x86_64-linux-gnu-as x86_64-linux-gnu-ld x86_64-linux-gnu-ld.bfd x86_64-linux-gnu-ar x86_64-linux-gnu-ranlib; do
  p=$(command -v "$t") && ln -sf "$p" "$W/bin/$t"
done
run() {  # run LOG ARGS…: the grader in the handout, under busybox's sh and that PATH alone
  ( cd "$H" && env -i PATH="$W/bin" HOME="$W" GRADE_CMAKE_ARGS="$ARGS" JOBS="${JOBS:-2}" "$W/bin/sh" scripts/grade.sh "$@" ) > "$W/$LOG" 2>&1
}
LOG=all.log run all; rc=$?
cat "$W/all.log"
[ "$rc" = 0 ] || fail "the course's implementation, graded in the handout, exits $rc"
grep -q "^score: 6 of 6 tasks pass" "$W/all.log" || fail "the course's implementation does not score 6 of 6"
[ "$(grep -c ',1,.*,pass,' "$H/students/grades.csv" 2>/dev/null)" = 6 ] || fail "students/grades.csv does not hold 6 passing grades"
grep -q "^time_utc,task,score,passed,failed,status,failing_test,hint_id,hint_level,compiler,os$" "$H/students/grades.csv" \
  || fail "students/grades.csv has no header line"

# A planted bug: half pairs neighbours; rope_forward scores 0 and gets its hint.
cp tests/grader/wrong/rope_forward.half_pairs_neighbours.cpp "$H/students/tasks/rope_forward.cpp"
LOG=bug.log run rope_forward; rc=$?
cat "$W/bug.log"
[ "$rc" = 1 ] || fail "the planted bug's grade exits $rc, not 1"
grep -q "^rope_forward .*0/1" "$W/bug.log" || fail "the planted bug does not score 0"
hint=$(awk -F' [|] ' '$2 == "rope_forward.half" { print $4 }' students/hints.txt)
grep -qF "hint: $hint" "$W/bug.log" || fail "the planted bug's console shows no hint '$hint'"
tail -n 1 "$H/students/grades.csv" | grep -q ',rope_forward,0,.*,fail,.*,rope_forward.half,1,' \
  || fail "the planted bug's line in grades.csv: $(tail -n 1 "$H/students/grades.csv")"
# Stuck: --hint gives the next level, logged as a line of its own.
LOG=hint.log run --hint rope_forward
level2=$(awk -F' [|] ' '$2 == "rope_forward.half" { print $5 }' students/hints.txt)
grep -qF "hint level 2 of 2: $level2" "$W/hint.log" || fail "--hint does not give level 2: $(cat "$W/hint.log")"
tail -n 1 "$H/students/grades.csv" | grep -q ',rope_forward,0,,,hint,,rope_forward.half,2,' \
  || fail "--hint's line in grades.csv: $(tail -n 1 "$H/students/grades.csv")"
# A test file edited in the handout: the grade is 0 and names it; put back, it grades again.
cp "$H/tests/lesson/test_rope.cpp" "$W/test_rope.cpp"
echo "// edited" >> "$H/tests/lesson/test_rope.cpp"
LOG=tampered.log run rope_forward; rc=$?
[ "$rc" = 1 ] && grep -q "tests changed" "$W/tampered.log" && grep -q "tests/lesson/test_rope.cpp" "$W/tampered.log" \
  || fail "an edited test file is not named: $(cat "$W/tampered.log")"
cp "$W/test_rope.cpp" "$H/tests/lesson/test_rope.cpp"

# A wrong rope_forward under a right rope_backward: rope_backward's tests run rope_forward, and
# the grader names rope_forward as the bug instead of blaming rope_backward.
# (A kernel that assigns when asked to accumulate: the course's rope_backward calls it to add
# into dx, so a tensor used twice gets one gradient. A kernel wrong the same way in both
# directions, one that turns the other way, say, passes the gradient check: the backward is
# then the true transpose of that forward.)
cp tests/grader/wrong/rope_forward.accumulate_assigns.cpp "$H/students/tasks/rope_forward.cpp"
LOG=calls.log run rope_backward; rc=$?
cat "$W/calls.log"
hint=$(awk -F' [|] ' '$2 == "any.calls_failing" { print $4 }' students/hints.txt)
[ "$rc" = 1 ] || fail "rope_backward's grade under a wrong rope_forward exits $rc, not 1"
grep -qF "hint: $hint" "$W/calls.log" || fail "rope_backward's failure under a wrong rope_forward does not name rope_forward"
grep -qF "rope_backward's tests run your rope_forward, which fails its own tests" "$W/calls.log" \
  || fail "the console does not say that rope_forward fails its own tests"
# Windows line ends: a clone with core.autocrlf=true (Git for Windows' default) still checks
# the scripts out with LF (.gitattributes), and tables and fingerprints with CRLF still grade.
if [ "$KIND" = gcc ] && command -v git > /dev/null; then
  git -c core.autocrlf=true clone -q "$H" "$W/crlf-clone" 2> /dev/null || fail "cloning the handout failed"
  grep -q "$(printf '\r')" "$W/crlf-clone/scripts/grade.sh" "$W/crlf-clone/install.sh" 2> /dev/null \
    && fail "a clone with core.autocrlf=true has CRLF in the handout's scripts"
  for f in students/tasks.txt students/hints.txt students/pristine.txt; do
    sed 's/$/\r/' "$H/$f" > "$W/crlf" && cat "$W/crlf" > "$H/$f"
  done
  LOG=crlf.log run rope_forward; rc=$?
  [ "$rc" = 1 ] && grep -q "^rope_forward .*0/1$" "$W/crlf.log" && grep -qF "hint: " "$W/crlf.log" \
    || fail "with CRLF tables the grade is not read as before: $(cat "$W/crlf.log")"
fi
[ "$fails" = 0 ] && echo "PASS: busybox's sh and applets, CMake, make and $KIND grade the handout (reference 6 of 6, a planted bug named)"
exit "$fails"
