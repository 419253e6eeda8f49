#!/usr/bin/env bash
# Batches with no masked token, through the binary, on every product library (ctest
# cli_empty_batches): such a batch is counted, not computed, so no library sees a 0-row product.
#   1. `eval --seq-len L` for every L from 3 to 64, model.products = openblas and auto (oneDNN
#      where built): exit 0, or exit 2 with one error line — never an abort;
#   2. training with windows of 8 tokens, one window a batch, evaluated every 4 steps (many
#      validation batches draw no masked token): exit 0, stopped and resumed; no nan written.
#   tests/machinery/cli_empty_batches.sh ROFORMER_BIN WORK_DIR      (run from the repository root)
set -uo pipefail
BIN=$(realpath "$1")
W=$(realpath -m "$2")
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$W" && mkdir -p "$W" || exit 1
cd "$(dirname "$0")/../.." || exit 1
TINY="--config configs/tiny.toml --set train.eval_every=0 --set data.val_windows=8 --quiet"
"$BIN" train $TINY --set train.steps=4 --out "$W/run" > "$W/setup.log" 2>&1 ||
  { cat "$W/setup.log"; fail "set-up: a tiny run"; }

failures=0
# outcome ARGS…: exit 0, or exit 2 with exactly one line on stderr, which is an error line
outcome() {
  "$BIN" "$@" > "$W/out" 2> "$W/err"; local rc=$?
  if [ "$rc" -eq 0 ]; then return 0; fi
  if [ "$rc" -eq 2 ] && [ "$(wc -l < "$W/err")" -eq 1 ] && grep -q "^error: " "$W/err"; then
    return 0
  fi
  echo "FAIL: roformer $* — exit $rc:"; head -c 600 "$W/err"; echo
  failures=$((failures + 1))
  return 1
}

for products in openblas auto; do
  zeros=0
  for L in $(seq 3 64); do
    outcome eval --run "$W/run" --seq-len "$L" --max-tokens 512 --set model.products=$products ||
      continue
    [ -s "$W/err" ] && zeros=$((zeros + 1))
  done
  echo "ok: eval --seq-len 3…64, model.products = $products ($zeros refused in one line)"
done

for products in openblas auto; do
  R=$W/short_$products
  SHORT="$TINY --set data.seq_len=8 --set train.batch_size=1 --set data.mask_prob=0.15"
  SHORT="$SHORT --set model.products=$products --set train.steps=12 --set train.eval_every=4"
  outcome train $SHORT --stop-after 6 --out "$R" || continue
  outcome train $SHORT --resume --out "$R" || continue
  grep -q "^final validation: " "$W/out" ||
    { echo "FAIL: no final validation:"; cat "$W/out"; failures=$((failures + 1)); continue; }
  if grep -qi "nan" "$R/metrics.csv"; then
    echo "FAIL: nan in $R/metrics.csv"; failures=$((failures + 1)); continue
  fi
  echo "ok: train with windows of 8 tokens, model.products = $products: $(grep '^final' "$W/out")"
done

[ "$failures" -eq 0 ] || { echo "FAIL: $failures case(s)"; exit 1; }
echo "PASS"
