#!/usr/bin/env bash
# Fuzzes every loader (issue 14): safetensors, tokenizer.json, config TOML, corpus text, and
# BERT's WordPiece tokenizer (text and vocab.txt). Builds
# the libFuzzer targets of tests/fuzz with clang, AddressSanitizer and UBSan into build-fuzz/
# (FUZZ_BUILD_DIR), then runs each for FUZZ_SECONDS (default 20) from the seed corpus in
# tests/fuzz/corpus/. A crash, a sanitizer report, a leak or an input slower than 10 s fails
# the script; the input that did it is left in build-fuzz/fuzz-artifacts/ (run it again with
# build-fuzz/tests/fuzz/fuzz_NAME FILE).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${FUZZ_BUILD_DIR:-build-fuzz}"
SECONDS_EACH="${FUZZ_SECONDS:-20}"
JOBS="${JOBS:-$(nproc)}"

if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  mkdir -p "$BUILD"
  CC=clang CXX=clang++ cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" -DRF_SANITIZE=ON -DRF_FUZZ=ON -DRF_BUILD_TESTS=OFF \
    > "$BUILD/configure.log" 2>&1 || { cat "$BUILD/configure.log"; exit 1; }
fi
LOADERS=(safetensors tokenizer config corpus wordpiece)
cmake --build "$BUILD" -j "$JOBS" --target "${LOADERS[@]/#/fuzz_}"

mkdir -p "$BUILD/fuzz-artifacts"
for loader in "${LOADERS[@]}"; do
  work="$BUILD/fuzz-corpus/$loader"  # new inputs land here, the seeds stay as they are
  mkdir -p "$work"
  echo "fuzz: $loader for ${SECONDS_EACH} s"
  if ! "$BUILD/tests/fuzz/fuzz_$loader" -max_total_time="$SECONDS_EACH" -max_len=8192 \
      -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$BUILD/fuzz-artifacts/$loader-" "$work" "tests/fuzz/corpus/$loader" \
      > "$BUILD/fuzz-$loader.log" 2>&1; then
    tail -40 "$BUILD/fuzz-$loader.log"
    echo "fuzz: FAILED on $loader; the input is in $BUILD/fuzz-artifacts/"
    exit 1
  fi
  grep -E "stat::number_of_executed_units|stat::new_units_added" "$BUILD/fuzz-$loader.log" |
    tr '\n' ' ' | sed "s/^/fuzz: $loader: /; s/$/\n/"
done
echo "fuzz: PASS (${#LOADERS[@]} loaders, ${SECONDS_EACH} s each)"
