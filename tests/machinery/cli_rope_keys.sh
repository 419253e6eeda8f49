#!/usr/bin/env bash
# The one rule for RoPE keys, end to end (ctest cli_rope_keys): where no layer rotates
# (position.rope_p = 0, every layer `none`, a scheme without RoPE) a RoPE key away from its
# default is refused at train (no run directory left), at eval --set and at graph --set, in one
# line with exit 2; `frequencies` refuses such a run and lists only the rotating layers of a
# hybrid; `attention --out FILE.json` says which layers RoPE turns in; `graph` names a layer
# whose pairs are all stopped; `extrapolate` scales only the runs where a layer rotates.
#   tests/machinery/cli_rope_keys.sh ROFORMER_BIN WORK_DIR      (run from the repository root)
set -uo pipefail
BIN=$1 WORK=$2
PY=/usr/bin/python3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK"
train() {
    "$BIN" train --config configs/tiny.toml --set train.steps=2 --set train.eval_every=0 \
        --set data.val_windows=4 --quiet "$@"
}
# refused: exit 2, one line naming the key and "no layer rotates"
refused() {  # refused KEY COMMAND...
    local key=$1; shift
    local msg rc
    msg=$("$@" 2>&1); rc=$?
    [ $rc -eq 2 ] || fail "$*: exit $rc, not 2 ($msg)"
    [ "$(printf '%s\n' "$msg" | wc -l)" -eq 1 ] || fail "$*: not one line: $msg"
    echo "$msg" | grep -q "$key" || fail "$*: does not name $key: $msg"
    echo "$msg" | grep -q "no layer rotates" || fail "$*: does not say why: $msg"
}

# at train, for each way of having no rotating layer; nothing is left behind
refused position.rotate_values train --set position.rope_p=0 --set position.rotate_values=true --out "$WORK/t1"
refused position.pairing train --set position.layer_schemes=none,none --set position.pairing=half --out "$WORK/t2"
refused position.scaling train --set position.scheme=alibi --set position.scaling=ntk --set position.scaling_factor=2 --out "$WORK/t3"
refused position.base train --set position.scheme=learned --set position.base=500 --out "$WORK/t4"
for t in t1 t2 t3 t4; do [ ! -e "$WORK/$t" ] || fail "a refused train left $WORK/$t"; done

# a run with no rotating layer (p = 0): eval --set of a scaling is refused, not printed as applied
train --set position.rope_p=0 --out "$WORK/p0" >/dev/null || fail "training the p = 0 run"
"$BIN" eval --run "$WORK/p0" >"$WORK/eval.out" || fail "eval of the p = 0 run"
grep -q "position scaling none" "$WORK/eval.out" || fail "eval header: $(cat "$WORK/eval.out")"
refused position.scaling "$BIN" eval --run "$WORK/p0" --set position.scaling=linear --set position.scaling_factor=2
refused position.interpolation_factor "$BIN" eval --run "$WORK/p0" --set position.interpolation_factor=2
# frequencies: nothing rotates, nothing to describe
msg=$("$BIN" frequencies --run "$WORK/p0" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "frequencies on the p = 0 run: exit $rc, not 2 ($msg)"
echo "$msg" | grep -q "position.rope_p = 0.0 turns none" || fail "frequencies refusal: $msg"
# graph of a layer whose pairs are all stopped says so; a RoPE key beside it is refused
"$BIN" graph --config configs/tiny.toml --set position.rope_p=0 >"$WORK/graph.dot" || fail "graph p = 0"
grep -q "turning no pair" "$WORK/graph.dot" || fail "graph title: $(grep label "$WORK/graph.dot" | head -1)"
refused position.ntk_factor "$BIN" graph --config configs/tiny.toml --set position.rope_p=0 --set position.ntk_factor=2

# a hybrid whose layer 0 is `none`: the same keys are accepted (a layer rotates), and the tools
# describe layer 1 alone
train --set position.layer_schemes=none,rope --set position.rotate_values=true --out "$WORK/hybrid" \
    >/dev/null || fail "training the hybrid"
"$BIN" frequencies --run "$WORK/hybrid" --batches 1 >"$WORK/f.csv" || fail "frequencies on the hybrid"
"$BIN" attention --run "$WORK/hybrid" "In the beginning" --out "$WORK/a.json" >/dev/null \
    || fail "attention on the hybrid"
"$PY" - "$WORK" <<'PY' || fail "checking the hybrid's outputs"
import csv, json, sys
work = sys.argv[1]
layers = {r["layer"] for r in csv.DictReader(open(f"{work}/f.csv"))}
assert layers == {"1"}, f"frequencies describes layers {sorted(layers)}, not only the rotating 1"
doc = json.load(open(f"{work}/a.json"))
assert doc["layers"] == [0, 1] and doc["positions"] == ["none", "rope"], doc["positions"]
print("hybrid: frequencies lists layer 1 only; attention marks layer 0 none, layer 1 rope")
PY
"$BIN" frequencies --run "$WORK/hybrid" --batches 1 --out "$WORK/fh.csv" >/dev/null ||
    fail "frequencies --out on the hybrid"
"$PY" scripts/plot_frequencies.py "$WORK/fh.csv" >/dev/null 2>"$WORK/err" ||
    fail "plot_frequencies.py on the hybrid's layer 1 alone: $(cat "$WORK/err")"

# extrapolate scales only the runs where a layer rotates: a p = 0 run of a comparison gets its
# plain rows, never a scaling that validate() would refuse
cat >"$WORK/preset.toml" <<'TOML'
[compare]
schemes = ["rope_interleaved"]
seeds = 1
[compare.variants]
p0 = ["position.rope_p=0"]
[model]
hidden = 64
num_heads = 2
num_layers = 2
ffn = 128
[data]
tokenizer = "char"
seq_len = 16
val_windows = 4
[train]
batch_size = 4
steps = 2
warmup_steps = 1
eval_every = 0
TOML
"$BIN" compare --config "$WORK/preset.toml" --out "$WORK/cmp" --no-plot >/dev/null 2>&1 || fail "compare"
"$BIN" extrapolate --runs "$WORK/cmp" --factors 1 2 --no-plot >"$WORK/x.out" 2>&1 \
    || fail "extrapolate on a comparison with a p = 0 run: $(cat "$WORK/x.out")"
grep -q "^p0 seed 1:  16 [0-9.]*  32 [0-9.]*$" "$WORK/x.out" || fail "p0's rows: $(cat "$WORK/x.out")"
grep -q "^rope_interleaved seed 1:.*32/ntk" "$WORK/x.out" || fail "RoPE's rows: $(cat "$WORK/x.out")"
echo PASS
