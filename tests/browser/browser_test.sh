#!/usr/bin/env bash
# The explorer page checked against the C++ library in headless Chromium (ctest browser_rope,
# and browser_rope_broken with --break: the same checks on a copy with a bug planted, which
# must print MISMATCH). Steps: npm ci of tests/browser when node_modules is missing; without
# --break, train configs/tiny.toml for 3 steps and dump its attention as JSON; the expected
# numbers from rope_cases; then check_page.js drives docs/explorer/rope.html.
#   tests/browser/browser_test.sh ROFORMER_BIN ROPE_CASES_BIN WORK_DIR [--break MODE]
#                                                              (run from the repository root)
# Exit 77 (ctest SKIP_RETURN_CODE) only where /usr/bin/chromium or node is missing.
set -uo pipefail
BIN=$1 CASES=$2 WORK=$3
shift 3
fail() { echo "FAIL: $*"; exit 1; }
[ -x /usr/bin/chromium ] || { echo "SKIP: /usr/bin/chromium is missing (scripts/setup.sh --all installs it)"; exit 77; }
command -v node >/dev/null || { echo "SKIP: node is missing (scripts/setup.sh --all installs nodejs npm)"; exit 77; }
if [ ! -d tests/browser/node_modules/playwright-core ]; then
  npm ci --prefix tests/browser --no-audit --no-fund >/dev/null ||
    fail "npm ci --prefix tests/browser (needs the npm registry once; scripts/setup.sh --all runs it)"
fi
rm -rf "$WORK" && mkdir -p "$WORK"
"$CASES" >"$WORK/cases.json" || fail "rope_cases"
attention=()
if [ $# -eq 0 ]; then
  "$BIN" train --config configs/tiny.toml --set train.steps=3 --set train.eval_every=0 --quiet \
    --out "$WORK/tiny" >/dev/null || fail "training configs/tiny.toml"
  "$BIN" attention --run "$WORK/tiny" "In the beginning God created the heaven" \
    --out "$WORK/attention.json" >/dev/null || fail "roformer attention --out attention.json"
  attention=(--attention "$WORK/attention.json")
fi
node tests/browser/check_page.js --page docs/explorer/rope.html --cases "$WORK/cases.json" \
  --screenshot "$WORK/rope.png" "${attention[@]}" "$@"
