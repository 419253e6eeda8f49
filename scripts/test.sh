#!/usr/bin/env bash
# Set-up + the whole test suite (what CI runs).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cd build
ctest --output-on-failure -j "${JOBS:-$(nproc)}"
