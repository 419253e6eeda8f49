#!/usr/bin/env bash
# Set-up + the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build/roformer --help
