#!/usr/bin/env bash
# The plotting scripts end to end (ctest cli_plots): train configs/tiny.toml for a few steps,
# draw its curves with scripts/plot_run.py (the unigram entropy asked from `roformer eval`),
# check the PNG is ours, that a second draw without --force is refused and that --force never
# replaces a picture someone else made; then scripts/plot_rope.py draws its four figures into a
# temporary directory (the trained head from the tiny run) and refuses a foreign rope_*.png.
#   tests/machinery/cli_plots.sh ROFORMER_BIN WORK_DIR      (run from the repository root)
# Skipped (exit 77) where /usr/bin/python3 lacks numpy or matplotlib (scripts/setup.sh --all
# installs them).
set -uo pipefail
BIN=$1 WORK=$2
PY=/usr/bin/python3
fail() { echo "FAIL: $*"; exit 1; }
"$PY" -c "import numpy, matplotlib" 2>/dev/null || { echo "SKIP: numpy/matplotlib missing"; exit 77; }
rm -rf "$WORK" && mkdir -p "$WORK"
"$BIN" train --config configs/tiny.toml --set train.steps=20 --set train.eval_every=10 \
    --quiet --out "$WORK/tiny" >/dev/null || fail "training the tiny run"

# plot_run.py: written, marked as ours, refused a second time, replaced with --force.
"$PY" scripts/plot_run.py "$WORK/tiny" --roformer "$BIN" >"$WORK/run.out" 2>&1 ||
    fail "plot_run.py: $(cat "$WORK/run.out")"
PNG="$WORK/tiny/curves.png"
[ -s "$PNG" ] || fail "plot_run.py wrote no $PNG"
head -c 8 "$PNG" | od -c | grep -q "P   N   G" || fail "$PNG is not a PNG"
grep -aq "roformer-cpp scripts/plot_run.py" "$PNG" || fail "$PNG lacks the Software chunk"
before=$(cksum <"$PNG")
msg=$("$PY" scripts/plot_run.py "$WORK/tiny" --unigram 5 2>&1) && fail "a second draw without --force was accepted"
echo "$msg" | grep -q "exists; pass --force" || fail "refusal message: $msg"
[ "$(cksum <"$PNG")" = "$before" ] || fail "the refused draw changed $PNG"
"$PY" scripts/plot_run.py "$WORK/tiny" --unigram 5 --force >/dev/null 2>&1 || fail "--force redraw"
echo "not a picture" >"$WORK/foreign.png"
msg=$("$PY" scripts/plot_run.py "$WORK/tiny" --unigram 5 --force --out "$WORK/foreign.png" 2>&1) &&
    fail "--force replaced a file plot_run.py did not draw"
echo "$msg" | grep -q "not drawn by plot_run.py" || fail "foreign-file message: $msg"
grep -q "not a picture" "$WORK/foreign.png" || fail "the foreign file was changed"
msg=$("$PY" scripts/plot_run.py "$WORK/nowhere" --unigram 5 2>&1) && fail "a missing run was accepted"
echo "$msg" | grep -q "metrics.csv" || fail "missing-run message: $msg"

# plot_rope.py: the four figures (rope-decay checked against numpy inside), then a foreign file.
mkdir -p "$WORK/img"
"$PY" scripts/plot_rope.py --out "$WORK/img" --run "$WORK/tiny" --roformer "$BIN" \
    --text "In the beginning God created the heaven" >"$WORK/rope.out" 2>&1 ||
    fail "plot_rope.py: $(cat "$WORK/rope.out")"
for f in turn clocks scores decay; do
    grep -aq "roformer-cpp scripts/plot_rope.py" "$WORK/img/rope_$f.png" || fail "rope_$f.png missing or not ours"
done
msg=$("$PY" scripts/plot_rope.py --out "$WORK/img" --figures scores --roformer "$BIN" 2>&1) &&
    fail "the scores figure without --run was accepted"
echo "$msg" | grep -q "needs a trained run" || fail "no-run message: $msg"
echo "not a picture" >"$WORK/img/rope_turn.png"
msg=$("$PY" scripts/plot_rope.py --out "$WORK/img" --figures turn 2>&1) && fail "a foreign rope_turn.png was replaced"
echo "$msg" | grep -q "not drawn by plot_rope.py" || fail "foreign-file message: $msg"
echo "plot_run.py and plot_rope.py drew, refused what they must, and kept foreign files"
echo PASS
