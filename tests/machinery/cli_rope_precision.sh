#!/usr/bin/env bash
# `roformer rope-precision` end to end (ctest cli_rope_precision): random vectors to --out and to
# stdout (the same CSV), its rows checked with python (every pairing × case × shift, nothing moved
# at shift 0, bf16 after rotation moving scores far more than f32), the summary printed, the plot
# script; a tiny run's q and k through --run; and the refusals, each exit 2 with one line naming
# the bad thing: --max-position out of range, a missing run, --layer past the run, --layer without
# --run, --seed with --run, a run without RoPE, a user's file as --out.
#   tests/machinery/cli_rope_precision.sh ROFORMER_BIN WORK_DIR      (run from the repository root)
set -uo pipefail
BIN=$1 WORK=$2
PY=/usr/bin/python3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK"

"$BIN" rope-precision --max-position 4096 --out "$WORK/p.csv" >"$WORK/p.out" || fail "rope-precision --out"
grep -q "interleaved pairing: shift error" "$WORK/p.out" || fail "no summary: $(cat "$WORK/p.out")"
grep -q "first token" "$WORK/p.out" || fail "no first-token lines: $(cat "$WORK/p.out")"
"$BIN" rope-precision --max-position 4096 >"$WORK/stdout.csv" || fail "rope-precision to stdout"
cmp -s "$WORK/p.csv" "$WORK/stdout.csv" || fail "the CSV on stdout differs from --out's"
"$PY" - "$WORK/p.csv" <<'PY' || fail "checking the CSV"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cases = ["f32", "bf16_before_rotation", "bf16_after_rotation", "angle_f32", "angle_bf16",
         "bf16_rotation"]
positions = sorted({int(r["position"]) for r in rows})
assert positions[0] == 0 and positions[-1] == 4096, positions
assert len(rows) == 2 * len(cases) * len(positions), len(rows)
assert {r["pairing"] for r in rows} == {"interleaved", "half"}
assert [r["case"] for r in rows[::len(positions)]] == cases * 2, rows[::len(positions)]
assert {r["vectors"] for r in rows} == {"random"}
at = {(r["pairing"], r["case"], int(r["position"])): r for r in rows}
for key, r in at.items():
    if key[2] == 0:
        assert float(r["shift_error"]) == 0.0, r  # shift 0 moves nothing
for pairing in ("interleaved", "half"):
    f32 = float(at[pairing, "f32", 4096]["shift_error"])
    after = float(at[pairing, "bf16_after_rotation", 4096]["shift_error"])
    assert after > 100 * f32, (pairing, after, f32)  # bf16's unit is 2^16 times f32's
print(f"rope-precision CSV: {len(rows)} rows, {len(positions)} shifts, bf16 ≫ f32")
PY
if "$PY" -c "import matplotlib" 2>/dev/null; then
    "$PY" scripts/plot_rope_precision.py "$WORK/p.csv" >/dev/null || fail "plot_rope_precision.py"
    grep -aq "roformer-cpp scripts/plot_rope_precision.py" "$WORK/p.png" || fail "p.png missing or not ours"
    echo "not a picture" >"$WORK/user.png"
    msg=$("$PY" scripts/plot_rope_precision.py "$WORK/p.csv" --out "$WORK/user.png" 2>&1) && fail "plot replaced a user's file"
    echo "$msg" | grep -q "not drawn by plot_rope_precision.py" || fail "plot refusal: $msg"
fi

# q and k from a run
"$BIN" train --config configs/tiny.toml --set train.steps=3 --set train.eval_every=0 --quiet \
    --out "$WORK/run" >/dev/null || fail "training the tiny run"
"$BIN" rope-precision --run "$WORK/run" --layer 1 --max-position 64 --out "$WORK/run.csv" >"$WORK/run.out" \
    || fail "rope-precision --run: $(cat "$WORK/run.out")"
grep -q "layer 1: q and k of its 2 heads" "$WORK/run.out" || fail "the run's source line: $(head -1 "$WORK/run.out")"
grep -q "^run,interleaved,f32,64," "$WORK/run.csv" || fail "the run's CSV rows"

refuse() {  # refuse WHAT PATTERN COMMAND…: exit 2 and one line matching PATTERN
    local what=$1 pattern=$2; shift 2
    msg=$("$@" 2>&1); rc=$?
    [ $rc -eq 2 ] || fail "$what: exit $rc, not 2 ($msg)"
    [ "$(echo "$msg" | wc -l)" -eq 1 ] || fail "$what: more than one line: $msg"
    echo "$msg" | grep -q -- "$pattern" || fail "$what: $msg"
}
refuse "--max-position 0" "--max-position 0 must be from 1 to" "$BIN" rope-precision --max-position 0
refuse "--max-position past the cap" "must be from 1 to 1048576" "$BIN" rope-precision --max-position 99999999
refuse "--max-position -1" "not a whole number" "$BIN" rope-precision --max-position -1
refuse "--max-position abc" "not a whole number" "$BIN" rope-precision --max-position abc
refuse "--head-dim 7" "--head-dim 7 must be an even number" "$BIN" rope-precision --head-dim 7
refuse "a missing run" "$WORK/nothing' does not exist" "$BIN" rope-precision --run "$WORK/nothing"
refuse "--layer past the run" "--layer 2 is out of range" "$BIN" rope-precision --run "$WORK/run" --layer 2
refuse "--layer without --run" "--layer picks a layer of --run" "$BIN" rope-precision --layer 1
refuse "--seed with --run" "--seed is for random vectors" "$BIN" rope-precision --run "$WORK/run" --seed 3
refuse "--out not .csv" "name a .csv file" "$BIN" rope-precision --out "$WORK/p.txt"
echo "user notes" >"$WORK/notes.csv"
refuse "--out a user's file" "nothing shows that roformer wrote it" "$BIN" rope-precision --out "$WORK/notes.csv"
[ "$(cat "$WORK/notes.csv")" = "user notes" ] || fail "notes.csv was changed"
"$BIN" train --config configs/tiny.toml --set position.scheme=learned --set train.steps=2 \
    --set train.eval_every=0 --quiet --out "$WORK/learned" >/dev/null || fail "training the learned run"
refuse "a run without RoPE" "does not turn every pair" "$BIN" rope-precision --run "$WORK/learned"
echo PASS
