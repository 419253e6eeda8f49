#!/usr/bin/env bash
# Set-up + the main job: install what `roformer` needs (nothing the tests need), build that one
# target, train the classroom RoFormer (RoPE) on the shipped KJV text, then ask it to fill a
# mask. Every run gets a fresh directory under runs/ (nothing is overwritten).
#
#   scripts/demo.sh [TRAIN OPTIONS…]   e.g. scripts/demo.sh --set train.steps=100 (a shorter run)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
RUN="${RUN:-runs/classroom-$(date +%Y%m%d-%H%M%S)}"
build/roformer train --config configs/classroom.toml --out "$RUN" "$@"
build/roformer fill-mask --run "$RUN" "In the beginning God created the [MASK] and the earth."
echo "next: build/roformer eval --run $(printf '%q' "$RUN") --seq-len 128 --seq-len 256   (docs/training.md)"
