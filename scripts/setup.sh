#!/usr/bin/env bash
# Installs what is missing (Debian 12, apt-get; a no-op when everything is there), then
# configures and builds Release into build/. Safe to run again and again.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(cmake g++ make pkg-config
          time  # /usr/bin/time: the peak memory column of scripts/bench.sh
          libxtensor-dev xtl-dev libxsimd-dev libopenblas-dev doctest-dev
          libtomlplusplus-dev libcli11-dev nlohmann-json3-dev
          libboost-dev  # Boost.Math (header-only): Student's t in src/experiments/compare_stats.cpp
          python3 python3-numpy python3-matplotlib jupyter-nbconvert python3-ipykernel
          fortunes  # /usr/share/games/fortunes: the fortunes-topic fine-tune task (docs/finetune.md)
          libopenmpi-dev openmpi-bin  # mpirun: data-parallel training and sweeps (docs/distributed.md)
          graphviz  # notebook 02 draws the autograd graph with dot
          clang libclang-rt-14-dev libomp-14-dev)  # the sanitizer + fuzz build (scripts/fuzz.sh)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

JOBS="${JOBS:-$(nproc)}"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release > build.log.tmp 2>&1 || { cat build.log.tmp; rm -f build.log.tmp; exit 1; }
rm -f build.log.tmp
cmake --build build -j "$JOBS"
