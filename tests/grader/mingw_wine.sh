#!/usr/bin/env bash
# Native Windows, as near as Linux gets: the handout's lesson build cross-compiled with MinGW-w64
# (Debian's g++-mingw-w64-x86-64-posix; xtensor, xtl, xsimd and doctest are header-only and come
# from Debian's packages through a staging prefix), then graded under Wine (Debian's wine64) by
# the grader built for Windows (students/grader/: its job object, CreateProcess, the test
# programs' record). The build runs here (GRADE_BUILD=0: Wine grades what was built).
#
#   tests/grader/mingw_wine.sh WORKDIR
#
# The course's implementation in the handout's task files scores 6 of 6; a planted bug in
# rope_forward scores 0 with its hint; each writes its line of students/grades.csv.
set -u
W=$(realpath -m "$1")
rm -rf "$W" && mkdir -p "$W" || exit 1
cd "$(dirname "$0")/../.." || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
CXX=x86_64-w64-mingw32-g++-posix
WINE=$(command -v wine64 || command -v wine || ls /usr/lib/wine/wine64 2> /dev/null || true)
command -v "$CXX" > /dev/null && [ -n "$WINE" ] \
  || { echo "SKIP: $CXX or wine64 is not installed (scripts/setup.sh --all installs both)"; exit 77; }
H="$W/handout"
tests/grader/reference_handout.sh "$H" "$W" || fail "no handout with the course's implementation"
tasks=$(awk -F' [|] ' '/^[a-z_]+ [|] / { print $1 }' students/tasks.txt)

# The header-only packages, as an MSYS2 or vcpkg prefix would hold them: Debian's CMake package
# files copied (their paths are relative to the prefix) and the headers linked.
P="$W/prefix"
mkdir -p "$P/include" "$P/lib/x86_64-linux-gnu/cmake" "$P/share/cmake" "$P/lib/cmake"
for d in xtensor xtl xsimd doctest; do ln -s "/usr/include/$d" "$P/include/$d"; done
[ -f /usr/include/xtensor.hpp ] && ln -s /usr/include/xtensor.hpp "$P/include/xtensor.hpp"
for c in /usr/lib/x86_64-linux-gnu/cmake/xtensor /usr/lib/x86_64-linux-gnu/cmake/xsimd /usr/share/cmake/xtl /usr/lib/cmake/doctest; do
  [ -d "$c" ] && cp -r "$c" "$P/${c#/usr/}"
done
# (Debian's doctest names its prefix as /usr outright: the copy names the staging one.)
find "$P" -name '*.cmake' -exec sed -i.orig "s|set(_IMPORT_PREFIX \"/usr\")|set(_IMPORT_PREFIX \"$P\")|" {} +
B="$H/build-student"
cmake -S "$H/students" -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_SYSTEM_NAME=Windows \
  -DCMAKE_CXX_COMPILER="$CXX" -DRF_OPENMP=OFF -DCMAKE_EXE_LINKER_FLAGS="-static" \
  -DCMAKE_FIND_ROOT_PATH="$P" -DCMAKE_FIND_ROOT_PATH_MODE_PACKAGE=ONLY -DCMAKE_PREFIX_PATH=/ \
  -Dxtl_DIR="$P/share/cmake/xtl" -Dxsimd_DIR="$P/lib/x86_64-linux-gnu/cmake/xsimd" \
  -Dxtensor_DIR="$P/lib/x86_64-linux-gnu/cmake/xtensor" -Ddoctest_DIR="$P/lib/cmake/doctest" \
  > "$W/configure.log" 2>&1 || { tail -n 30 "$W/configure.log"; fail "the MinGW configure failed"; }
cmake --build "$B" -j "${JOBS:-2}" > "$W/build.log" 2>&1 || { grep -E "error" "$W/build.log" | head -n 20; fail "the MinGW build failed"; }
[ -f "$B/grader.exe" ] || fail "no grader.exe"
for task in $tasks; do [ -f "$B/test_$task.exe" ] || fail "no test_$task.exe"; done

export WINEPREFIX="$W/wine" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
( cd "$H" && GRADE_BUILD=0 "$WINE" "$B/grader.exe" all ) > "$W/all.log" 2>&1; rc=$?
cat "$W/all.log"
[ "$rc" = 0 ] || fail "the course's implementation, graded under Wine, exits $rc"
grep -q "^score: 6 of 6 tasks pass" "$W/all.log" || fail "the course's implementation does not score 6 of 6 under Wine"
grep -q ',pass,.*,Windows' "$H/students/grades.csv" 2> /dev/null || fail "students/grades.csv holds no Windows grade"

cp tests/grader/wrong/rope_forward.half_pairs_neighbours.cpp "$H/students/tasks/rope_forward.cpp"
cmake --build "$B" --target test_rope_forward > "$W/build-bug.log" 2>&1 || fail "the planted bug does not build"
( cd "$H" && GRADE_BUILD=0 "$WINE" "$B/grader.exe" rope_forward ) > "$W/bug.log" 2>&1; rc=$?
cat "$W/bug.log"
[ "$rc" = 1 ] || fail "the planted bug's grade under Wine exits $rc, not 1"
hint=$(awk -F' [|] ' '$2 == "rope_forward.half" { print $4 }' students/hints.txt)
grep -qF "hint: $hint" "$W/bug.log" || fail "the planted bug's console under Wine shows no hint '$hint'"
[ "$fails" = 0 ] && echo "PASS: MinGW-w64's build of the handout, graded under Wine (reference 6 of 6, a planted bug named)"
exit "$fails"
