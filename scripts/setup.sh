#!/usr/bin/env bash
# Installs what is missing (Debian 12 or 13, apt-get; a no-op when everything is there), then
# configures and builds Release into build/. Safe to run again and again.
#
#   scripts/setup.sh         the main job's set: what `roformer` needs to build and train;
#                            builds the `roformer` target alone (scripts/demo.sh)
#   scripts/setup.sh --all   adds what the tests, the notebooks and the plotting scripts need
#                            (python3 with numpy and matplotlib, Jupyter, PyTorch for the
#                            reference fixtures, clang, chromium, node) and OpenMPI;
#                            builds every target (scripts/test.sh)
#   scripts/setup.sh --lesson  the main set and doctest; builds `roformer` and `test_lesson`
#                            (scripts/test.sh --lesson: the lesson tests alone)
#   scripts/setup.sh --libcxx  the macOS route's nearest proof on Debian: the main set (less
#                            oneDNN), doctest, clang and its libc++; builds `roformer` and
#                            `test_lesson` into build-libcxx/ with clang, libc++ and no OpenMP
#                            (scripts/test.sh --libcxx; docs/testing.md, "The libc++ build")
#
# Package names carry no version, so one list serves both releases (Debian 12 "bookworm",
# Debian 13 "trixie"). A build without an optional library says so in one line at configure
# time and refuses only the settings that need it.
set -euo pipefail
cd "$(dirname "$0")/.."

MODE=main
case "${1:-}" in
  "") ;;
  --all) MODE=all ;;
  --lesson) MODE=lesson ;;
  --libcxx) MODE=libcxx ;;
  *) echo "setup: unknown argument '$1'; use no argument (the main job), --all, --lesson or --libcxx" >&2; exit 2 ;;
esac

# The main job: a C++17 compiler, CMake, and the libraries the `roformer` binary links. Every
# name stands in the list itself, the reasons above it:
#   libopenblas0-pthread  OpenBLAS's pthreads build (libopenblas-dev's first choice, named so
#                         that no other build stands in: src/fast/threading.cpp holds it to one
#                         thread on the fast path)
#   libssl-dev       libcrypto's SHA-256: the .written-by marks of the outputs (src/io/output_file.cpp)
#   libboost-dev     Boost.Math (header-only): Student's t in src/experiments/compare_stats.cpp
#   libutf8proc-dev  NFD, case and categories for BERT's WordPiece tokenizer (src/data/unicode_text.cpp)
#   libdnnl-dev      oneDNN: the fast path's products by default (model.products = auto; without
#                    it, OpenBLAS: src/fast/onednn_products.hpp). In this set also because it
#                    changes how the core compiles: added later, it would rebuild it.
MAIN_PACKAGES=(cmake g++ make pkg-config
          libxtensor-dev xtl-dev libxsimd-dev libopenblas-dev libopenblas0-pthread
          libtomlplusplus-dev libcli11-dev nlohmann-json3-dev
          libssl-dev libboost-dev libutf8proc-dev libdnnl-dev)
# What --all adds: the tests', notebooks' and plots' needs, and OpenMPI (optional: mpirun):
#   git              scripts/grade.sh --handout (git archive) and the hostile probe's snapshot of the tree
#   time             /usr/bin/time: the peak memory column of scripts/bench.sh
#   libopenmpi-dev openmpi-bin  mpirun: data-parallel training and sweeps (docs/distributed.md)
#   python3-torch    the PyTorch reference fixtures; scripts/hf_to_safetensors.py (docs/huggingface.md)
#   fortunes         /usr/share/games/fortunes: the fortunes-topic fine-tune task (docs/finetune.md)
#   graphviz         notebook 02 draws the autograd graph with dot
#   clang libclang-rt-dev libomp-dev  the sanitizer + fuzz build (scripts/fuzz.sh); clang 14
#                    on Debian 12, 19 on 13
#   ca-certificates  npm ci below reaches the npm registry over https
#   chromium         headless, for the explorer page's test (tests/browser/, docs/explorer/)
#   gdb              the reading path's frame count, train_step to RoPE's kernel (scripts/reading_path.sh)
#   busybox libc++-dev libc++abi-dev  the handout graded with busybox's sh and applets alone, by
#                    GCC and by clang with libc++ (tests/grader/busybox_grade.sh)
#   g++-mingw-w64-x86-64-posix wine64  the handout built for Windows and graded under Wine
#                    (tests/grader/mingw_wine.sh)
TEST_PACKAGES=(doctest-dev git time gdb
          libopenmpi-dev openmpi-bin
          python3-torch python3 python3-numpy python3-matplotlib jupyter-nbconvert python3-ipykernel
          fortunes graphviz
          clang libclang-rt-dev libomp-dev
          ca-certificates chromium
          busybox libc++-dev libc++abi-dev g++-mingw-w64-x86-64-posix wine64)
# What --libcxx adds: clang with LLVM's C++ standard library (the one macOS has), and doctest.
# It leaves out libdnnl-dev: Debian's oneDNN is built with libstdc++, which a libc++ program
# must not load beside its own (two standard libraries in one process).
LIBCXX_PACKAGES=(doctest-dev clang libc++-dev libc++abi-dev)
PACKAGES=("${MAIN_PACKAGES[@]}")
[ "$MODE" = all ] && PACKAGES+=("${TEST_PACKAGES[@]}")
[ "$MODE" = lesson ] && PACKAGES+=(doctest-dev)
if [ "$MODE" = libcxx ]; then
  PACKAGES=()
  for p in "${MAIN_PACKAGES[@]}"; do [ "$p" = libdnnl-dev ] || PACKAGES+=("$p"); done
  PACKAGES+=("${LIBCXX_PACKAGES[@]}")
fi

if command -v dpkg-query >/dev/null && command -v apt-get >/dev/null; then
  missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ "$MODE" = all ]; then
    # node and npm run tests/browser/check_page.js (playwright-core drives the chromium above).
    # By command, not by package: a node from elsewhere, with its own npm, is kept.
    command -v node >/dev/null || missing+=(nodejs)
    command -v npm >/dev/null || missing+=(npm)
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    # Every name must exist on this release; say which one does not, in one line, before apt.
    unknown=()
    for p in "${missing[@]}"; do
      apt-cache show "$p" >/dev/null 2>&1 || unknown+=("$p")
    done
    if [ ${#unknown[@]} -gt 0 ]; then
      . /etc/os-release 2>/dev/null || true
      echo "setup: ${PRETTY_NAME:-this system} has no package ${unknown[*]}; scripts/setup.sh supports Debian 12 and 13 (README, Quick start)" >&2
      exit 1
    fi
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
else
  echo "setup: no apt-get here (not Debian?): install the equivalents of ${PACKAGES[*]} yourself; building with what is installed"
fi

if [ "$MODE" = all ] && [ ! -d tests/browser/node_modules ]; then
  # playwright-core for the browser test, from tests/browser/package-lock.json (once).
  npm ci --prefix tests/browser --no-audit --no-fund >/dev/null 2>&1 ||
    echo "setup: npm ci --prefix tests/browser failed (no npm registry?): the browser tests will fail until it runs"
fi

JOBS="${JOBS:-$(nproc)}"
BUILD=build
CONFIGURE=(-DCMAKE_BUILD_TYPE=Release)
if [ "$MODE" = libcxx ]; then
  # clang with libc++ (compiling and linking), no OpenMP, and none of the libraries Debian
  # builds with libstdc++: oneDNN and OpenMPI left out, toml++ compiled from its headers
  # (CMakeLists.txt, RF_TOML_HEADER_ONLY). ccache when there is one (a developer's reruns).
  BUILD=build-libcxx
  CONFIGURE+=(-DCMAKE_CXX_FLAGS=-stdlib=libc++ -DCMAKE_EXE_LINKER_FLAGS=-stdlib=libc++
              -DCMAKE_SHARED_LINKER_FLAGS=-stdlib=libc++ -DRF_OPENMP=OFF -DRF_ONEDNN=OFF
              -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON -DRF_TOML_HEADER_ONLY=ON)
  command -v ccache >/dev/null && CONFIGURE+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CC=clang CXX=clang++
fi
cmake -S . -B "$BUILD" "${CONFIGURE[@]}" > build.log.tmp 2>&1 || { cat build.log.tmp; rm -f build.log.tmp; exit 1; }
# The configure step's one-line notes on what this build has and lacks (OpenMP, oneDNN, MPI,
# doctest).
grep -E "^-- (OpenMP|oneDNN|MPI|doctest)" build.log.tmp | sed 's/^-- /setup: /' || true
rm -f build.log.tmp
case "$MODE" in
  all) cmake --build build -j "$JOBS" ;;
  lesson) cmake --build build -j "$JOBS" --target roformer test_lesson ;;
  libcxx) cmake --build "$BUILD" -j "$JOBS" --target roformer test_lesson ;;
  main) cmake --build build -j "$JOBS" --target roformer ;;
esac
