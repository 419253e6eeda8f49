#!/usr/bin/env bash
# Installs what is missing (Debian 12, apt-get; a no-op when everything is there), then
# configures and builds Release into build/. Safe to run again and again.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(cmake g++ make pkg-config
          time  # /usr/bin/time: the peak memory column of scripts/bench.sh
          libxtensor-dev xtl-dev libxsimd-dev libopenblas-dev doctest-dev
          libtomlplusplus-dev libcli11-dev nlohmann-json3-dev
          libssl-dev  # libcrypto's SHA-256: the .written-by marks of the outputs (src/io/output_file.cpp)
          libboost-dev  # Boost.Math (header-only): Student's t in src/experiments/compare_stats.cpp
          libdnnl-dev  # oneDNN: the fast path's products with model.products = onednn (src/fast/onednn_products.hpp)
          libutf8proc-dev  # NFD, case and categories for BERT's WordPiece tokenizer (src/data/unicode_text.cpp)
          python3-torch  # scripts/hf_to_safetensors.py reads a pytorch_model.bin (docs/huggingface.md)
          python3 python3-numpy python3-matplotlib jupyter-nbconvert python3-ipykernel
          fortunes  # /usr/share/games/fortunes: the fortunes-topic fine-tune task (docs/finetune.md)
          libopenmpi-dev openmpi-bin  # mpirun: data-parallel training and sweeps (docs/distributed.md)
          graphviz  # notebook 02 draws the autograd graph with dot
          clang libclang-rt-14-dev libomp-14-dev  # the sanitizer + fuzz build (scripts/fuzz.sh)
          chromium)  # headless, for the explorer page's test (tests/browser/, docs/explorer/)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node and npm run tests/browser/check_page.js (playwright-core drives the chromium above).
# By command, not by package: a node from elsewhere, with its own npm, is kept.
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# playwright-core for the browser test, from tests/browser/package-lock.json (once).
if [ ! -d tests/browser/node_modules ]; then
  npm ci --prefix tests/browser --no-audit --no-fund >/dev/null 2>&1 ||
    echo "setup: npm ci --prefix tests/browser failed (no npm registry?): the browser tests will fail until it runs"
fi

JOBS="${JOBS:-$(nproc)}"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release > build.log.tmp 2>&1 || { cat build.log.tmp; rm -f build.log.tmp; exit 1; }
rm -f build.log.tmp
cmake --build build -j "$JOBS"
