#!/usr/bin/env bash
# Non-finite numbers are an error everywhere (ctest cli_nonfinite): every case below must end
# with exit code 2 and one error line holding the expected fragment — never nan/inf printed,
# sampled or saved with exit 0.
#   tests/machinery/cli_nonfinite.sh ROFORMER_BIN WORK_DIR      (run from the repository root)
# The damaged runs are tiny runs whose model.safetensors (or optimizer.safetensors) had one
# tensor overwritten by set_tensor below, the manifest (checkpoint.json) updated so that only
# the values are wrong — the same way tests/machinery/cli_bad_inputs.sh makes its NaN run:
#   $HUGE     MLM run, the embeddings' LayerNorm γ = 3e38: finite weights (the checkpoint's own
#             check passes), but γ·x̂ overflows float32, so every output is inf or nan
#   $HUGE_CLM the same for a causal LM run (generate)
#   $HUGE_FT  the same for a fine-tune (classify)
#   $MOMENTS  an MLM run stopped at step 2 whose AdamW moments for the word embeddings are
#             m = 3e38, v = 0: the next update moves the weights to ±inf while the loss of that
#             step is still finite — the checkpoint must not be committed
set -uo pipefail
BIN=$(realpath "$1")
W=$(realpath -m "$2")
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$W" && mkdir -p "$W" || exit 1
cd "$(dirname "$0")/../.." || exit 1
TINY="--config configs/tiny.toml --set train.eval_every=0 --set data.val_windows=4 --quiet"
setup() { "$BIN" "$@" > "$W/setup.log" 2>&1 || { cat "$W/setup.log"; fail "set-up: $*"; }; }

# set_tensor DIR FILE NAME_PART VALUE: every element of the first tensor of DIR/FILE whose
# name holds NAME_PART becomes VALUE; the manifest's FNV-1a 64 of FILE follows (set_tensor.py).
set_tensor() {
  python3 tests/machinery/set_tensor.py "$@" || fail "set-up: set_tensor $*"
}

setup train $TINY --set train.steps=2 --out "$W/mlm"
setup train $TINY --set train.steps=2 --set train.objective=clm --out "$W/clm"
setup finetune --from "$W/mlm" --quiet --set threads=1 --set max_train_examples=100 --set epochs=1 \
  --task kjv-testament --out "$W/ft"
for fused in true false; do
  setup train $TINY --set train.steps=4 --set model.fused=$fused --stop-after 2 --out "$W/moments_$fused"
done
cp -r "$W/mlm" "$W/huge" && HUGE=$W/huge && set_tensor "$HUGE" model.safetensors embeddings.LayerNorm.weight 3e38
cp -r "$W/clm" "$W/huge_clm" && HUGE_CLM=$W/huge_clm && set_tensor "$HUGE_CLM" model.safetensors embeddings.LayerNorm.weight 3e38
cp -r "$W/ft" "$W/huge_ft" && HUGE_FT=$W/huge_ft && set_tensor "$HUGE_FT" model.safetensors embeddings.LayerNorm.weight 3e38
for fused in true false; do
  set_tensor "$W/moments_$fused" optimizer.safetensors word_embeddings.weight.exp_avg 3e38
  set_tensor "$W/moments_$fused" optimizer.safetensors word_embeddings.weight.exp_avg_sq 0
  cp "$W/moments_$fused/model.safetensors" "$W/moments_${fused}_step2"
done

failures=0
# expect FRAGMENT ARGS...: exit code 2, one error line (stderr's last; generate writes a line
# about the run before it) holding FRAGMENT
expect() {
  local fragment=$1; shift
  "$BIN" "$@" > "$W/out" 2> "$W/err"; local rc=$?
  local lines; lines=$(grep -c "^error: " "$W/err")
  if [ "$rc" -ne 2 ] || [ "$lines" -ne 1 ] || ! tail -1 "$W/err" | grep -q "^error: " ||
     ! grep -qF -- "$fragment" "$W/err"; then
    echo "FAIL: roformer $* — exit $rc, $lines error line(s), wanted 2 and '$fragment':"
    head -c 600 "$W/err"; head -c 300 "$W/out"; echo
    failures=$((failures + 1))
  else
    echo "ok: $1 … → $(tail -1 "$W/err")"
  fi
}
NF="the model's outputs are not finite"
expect "$NF" eval --run "$HUGE"
expect "$HUGE: the logits at [MASK] token" fill-mask --run "$HUGE" "the [MASK] of"
expect "$NF" fill-mask --run "$HUGE" "the [MASK] of"
expect "$HUGE: the attention weights of layer" attention --run "$HUGE" "the beginning"
expect "$HUGE_CLM: the logits of token" generate --run "$HUGE_CLM" "In the beginning" --max-new-tokens 3
expect "$NF" generate --run "$HUGE_CLM" "In the" --temperature 0 --max-new-tokens 3
expect "$HUGE_FT: the probability of" classify --run "$HUGE_FT" "And Jesus answered and said"
expect "$HUGE_FT: the test-split loss is" classify --run "$HUGE_FT" --test-split
# a config number that is 0 (or inf) in float32 is refused before any work
expect "train.eps = 1e-50 is 0 in float32" train $TINY --set train.eps=1e-50 --out "$W/o1"
expect "the smallest usable value is 1.1754944e-38" train $TINY --set train.eps=1e-50 --out "$W/o2"
expect "model.layer_norm_eps = 1e-46 is 0 in float32" train $TINY --set model.layer_norm_eps=1e-46 --out "$W/o3"
expect "model.init_std = 1e+39 is inf in float32" train $TINY --set model.init_std=1e39 --out "$W/o4"
expect "train.lr = 1e-40 keeps only a few bits in float32" train $TINY --set train.lr=1e-40 --out "$W/o5"
# a model that is no longer finite is never committed (both paths), the previous one kept
for fused in true false; do
  expect "parameter 'roformer.embeddings.word_embeddings.weight' holds" \
    train $TINY --set train.steps=4 --set model.fused=$fused --stop-after 3 --resume \
    --out "$W/moments_$fused"
  cmp -s "$W/moments_$fused/model.safetensors" "$W/moments_${fused}_step2" ||
    { echo "FAIL: model.fused=$fused: the step-2 checkpoint was replaced"; failures=$((failures + 1)); }
done
[ "$failures" -eq 0 ] || fail "$failures case(s)"
echo PASS
