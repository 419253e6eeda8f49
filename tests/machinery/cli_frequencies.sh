#!/usr/bin/env bash
# `roformer frequencies` and `roformer base-bound` end to end (ctest cli_frequencies): train a
# tiny p-RoPE MLM for a few steps, write its frequency usage as CSV and check it with numpy (one
# row per layer × head × pair, θ from the run's ladder with the stopped pairs at 0, shares of a
# head summing to 1, the CSV on stdout equal to the file), draw it with
# scripts/plot_frequencies.py, refuse a run without RoPE, --batches 0 and a user's file; then
# base-bound's table and --csv, and its refusals (exit 2).
#   tests/machinery/cli_frequencies.sh ROFORMER_BIN WORK_DIR      (run from the repository root)
set -uo pipefail
BIN=$1 WORK=$2
PY=/usr/bin/python3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK"
train() { "$BIN" train --config configs/tiny.toml --set train.steps=3 --set train.eval_every=0 --quiet "$@"; }
train --set position.rope_p=0.5 --out "$WORK/p_rope" >/dev/null || fail "training the p-RoPE run"
"$BIN" frequencies --run "$WORK/p_rope" --out "$WORK/f.csv" --batches 1 >"$WORK/f.out" || fail "frequencies --out"
grep -q "layer head" "$WORK/f.out" || fail "no per-head summary: $(cat "$WORK/f.out")"
"$BIN" frequencies --run "$WORK/p_rope" --batches 1 >"$WORK/stdout.csv" || fail "frequencies to stdout"
cmp -s "$WORK/f.csv" "$WORK/stdout.csv" || fail "the CSV on stdout differs from --out's"
"$PY" - "$WORK" <<'PY' || fail "checking the CSV"
import csv, sys, numpy as np
rows = list(csv.DictReader(open(f"{sys.argv[1]}/f.csv")))
L, H, P = 2, 2, 16  # configs/tiny.toml: 2 layers, hidden 64 / 2 heads → D = 32, 16 pairs
assert len(rows) == L * H * P, len(rows)
theta = np.array([float(r["theta"]) for r in rows[:P]])
# the run's ladder, written here: 10000^(−2i/32) for the 8 turning pairs, 0 for the 8 stopped
expected = np.where(np.arange(P) < 8, 10000.0 ** (-2 * np.arange(P) / 32), 0.0)
assert np.allclose(theta, expected, rtol=1e-7, atol=0), theta
share = np.array([float(r["share"]) for r in rows]).reshape(L, H, P)
assert np.abs(share.sum(axis=2) - 1).max() < 1e-6 and share.min() >= 0, share.sum(axis=2)
for r in rows:
    assert (abs(int(r["top_offset"])) <= 1) == (r["top_offset_local"] == "1"), r
    assert 0 < float(r["top_offset_mass"]) <= 1, r
print(f"frequencies CSV: {L} × {H} × {P} rows, θ with 8 stopped pairs, shares sum to 1")
PY
if "$PY" -c "import numpy, matplotlib" 2>/dev/null; then
    "$PY" scripts/plot_frequencies.py "$WORK/f.csv" >/dev/null || fail "plot_frequencies.py"
    grep -aq "roformer-cpp scripts/plot_frequencies.py" "$WORK/f.png" || fail "f.png missing or not ours"
    echo "not a picture" >"$WORK/user.png"
    msg=$("$PY" scripts/plot_frequencies.py "$WORK/f.csv" --out "$WORK/user.png" 2>&1) && fail "plot replaced a user's file"
    echo "$msg" | grep -q "not drawn by plot_frequencies.py" || fail "plot refusal: $msg"
fi
echo "user notes" >"$WORK/notes.csv"
msg=$("$BIN" frequencies --run "$WORK/p_rope" --out "$WORK/notes.csv" 2>&1) && fail "--out replaced a user's file"
echo "$msg" | grep -q "notes.csv.*nothing shows that roformer wrote it" || fail "--out notes.csv: $msg"
[ "$(cat "$WORK/notes.csv")" = "user notes" ] || fail "notes.csv was changed"
"$BIN" frequencies --run "$WORK/p_rope" --batches 0 >/dev/null 2>&1; [ $? -eq 2 ] || fail "--batches 0 not refused with exit 2"
train --set position.scheme=learned --out "$WORK/learned" >/dev/null || fail "training the learned run"
msg=$("$BIN" frequencies --run "$WORK/learned" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "a run without RoPE: exit $rc, not 2"
echo "$msg" | grep -q "position.scheme = learned" || fail "non-RoPE refusal: $msg"

# base-bound: the table, --csv through the provenance rule, refusals
"$BIN" base-bound --head-dim 128 --length 1024 --steps-per-decade 300 --csv "$WORK/bound.csv" >"$WORK/bound.out" || fail "base-bound"
grep -q "smallest base" "$WORK/bound.out" || fail "no table: $(cat "$WORK/bound.out")"
"$PY" - "$WORK" <<'PY' || fail "checking bound.csv"
import csv, sys
rows = list(csv.DictReader(open(f"{sys.argv[1]}/bound.csv")))
smallest = [float(r["base_from"]) for r in rows if r["what"] == "smallest"]
gaps = [r for r in rows if r["what"] == "gap"]
assert len(smallest) == 1 and 4200 < smallest[0] < 4400, smallest  # Men et al.: about 4.3e3
assert gaps, rows
print(f"base-bound CSV: smallest base {smallest[0]:.1f}, {len(gaps)} gap(s)")
PY
for bad in "--head-dim 127 --length 1024" "--head-dim 0 --length 1024" "--head-dim 128 --length 0" \
           "--head-dim 128 --length 99999999" "--head-dim -2 --length 8"; do
    # shellcheck disable=SC2086
    msg=$("$BIN" base-bound $bad 2>&1); rc=$?
    [ $rc -eq 2 ] || fail "base-bound $bad: exit $rc, not 2 ($msg)"
done
echo PASS
