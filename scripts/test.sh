#!/usr/bin/env bash
# Set-up + the whole test suite (what CI runs):
#   1. the Release build (build/): every ctest test — unit, CLI, run safety, notebooks;
#   2. the sanitizer build (build-asan/: -DRF_SANITIZE=ON, AddressSanitizer + UBSan, any report
#      fatal): the fast unit tests (no training runs, no comparisons) and the bad-input table
#      against the sanitized binary;
#   3. the fuzzers: one libFuzzer target per loader, 20 s each (scripts/fuzz.sh, build-fuzz/).
# Between 1 and 2, the graded tasks (scripts/grade.sh --check, build-student/): every stub of
# students/tasks/ compiles and fails its tests, our implementation passes them.
# SKIP_SANITIZERS=1 stops after 1 and the graded tasks.
#
#   scripts/test.sh            all of the above
#   scripts/test.sh --lesson   the lesson tests alone (tests/lesson/: the core a student reads),
#                              with the main set of packages and doctest (scripts/setup.sh
#                              --lesson); .ci/run's Debian 13 stage
#   scripts/test.sh --libcxx   the macOS route's nearest proof here: clang, LLVM's libc++ and no
#                              OpenMP (scripts/setup.sh --libcxx, build-libcxx/); checks that
#                              the binaries link libc++ and neither libstdc++ nor an OpenMP
#                              runtime, runs the lesson tests, trains 20 steps of the classroom
#                              config and fills a mask (docs/testing.md, "The libc++ build")
#   scripts/test.sh --arm64    the cross build for arm64 (build-arm64/), its lesson tests and a
#                              20-step demo under qemu-user; as root on Debian x86-64
#                              (scripts/test_arm64.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --lesson ]; then
  scripts/setup.sh --lesson
  build/tests/test_lesson --no-version | tee build/lesson.log
  exit "${PIPESTATUS[0]}"
fi
if [ "${1:-}" = --libcxx ]; then
  t0=$(date +%s)
  scripts/setup.sh --libcxx
  B=build-libcxx
  for bin in "$B/roformer" "$B/tests/test_lesson"; do
    libs=$(ldd "$bin")
    grep -q 'libc++\.so' <<<"$libs" || { echo "libcxx: $bin does not link libc++:" >&2; echo "$libs" >&2; exit 1; }
    if other=$(grep -E 'libstdc\+\+|libgomp|libomp|libiomp' <<<"$libs"); then
      echo "libcxx: $bin loads what this build must not (libstdc++ or an OpenMP runtime):" >&2
      echo "$other" >&2; exit 1
    fi
  done
  echo "libcxx: roformer and test_lesson link libc++, no libstdc++, no OpenMP runtime"
  "$B/tests/test_lesson" --no-version | tee "$B/lesson.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || exit 1
  RUN=$(mktemp -d "${TMPDIR:-/tmp}/libcxx-demo.XXXXXX")
  trap 'rm -rf "$RUN"' EXIT
  # The demo's run, shortened; the classroom config asks for two threads, which this build
  # runs on one, and the run log must say so.
  "$B/roformer" train --config configs/classroom.toml --set train.steps=20 --set train.eval_every=10 \
    --out "$RUN/classroom" 2>&1 | tee "$RUN/train.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || exit 1
  grep -q "^threads 1 (a build without OpenMP" "$RUN/train.log" ||
    { echo "libcxx: the run log does not say that the run is one thread" >&2; exit 1; }
  "$B/roformer" fill-mask --run "$RUN/classroom" "In the beginning God created the [MASK] and the earth."
  echo "libcxx: clang + libc++ + no OpenMP: lesson tests and the 20-step demo passed in $(($(date +%s) - t0)) s"
  exit 0
fi
[ "${1:-}" = --arm64 ] && exec scripts/test_arm64.sh
[ $# -eq 0 ] || { echo "test: unknown argument '$1'; use no argument (the whole suite), --lesson, --libcxx or --arm64" >&2; exit 2; }
scripts/setup.sh --all
JOBS="${JOBS:-$(nproc)}"
(cd build && ctest --output-on-failure -j "$JOBS") | tee build/ctest.log
# The closing line (ctest's count, read from its own summary), printed again at the very end.
passed=$(sed -n 's/^100% tests passed, 0 tests failed out of \([0-9]*\)$/\1/p' build/ctest.log)
[ -n "$passed" ] || { echo "test: ctest did not report every test passed (build/ctest.log)" >&2; exit 1; }
summary() { echo "ctest: $passed passed, 0 failed"; }
JOBS="$JOBS" scripts/grade.sh --check
[ "${SKIP_SANITIZERS:-0}" = 1 ] && { summary; exit 0; }

ASAN="${ASAN_BUILD_DIR:-build-asan}"
mkdir -p "$ASAN"
cmake -S . -B "$ASAN" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
  -DRF_SANITIZE=ON > "$ASAN/configure.log" 2>&1 || { cat "$ASAN/configure.log"; exit 1; }
cmake --build "$ASAN" -j "$JOBS" --target test_roformer roformer
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=86"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# The slow cases train real runs (seconds each in Release, minutes under ASan); the CLI tests
# of step 1 and the bad-input table below run the same code paths through the binary.
SLOW="compare: a smoke*,step 0: the untrained*,*resume after an interruption*,*short training run*"
SLOW="$SLOW,save*load gives identical*,BPE on the KJV*"
echo "sanitizers: unit tests (excluding $SLOW)"
"$ASAN/tests/test_roformer" --test-case-exclude="$SLOW" --no-version
echo "sanitizers: the bad-input table"
RF_SANITIZED=1 tests/machinery/cli_bad_inputs.sh "$ASAN/roformer" "$ASAN/test_runs/bad_inputs"

scripts/fuzz.sh
summary
