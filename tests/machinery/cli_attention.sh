#!/usr/bin/env bash
# `roformer attention` end to end (ctest cli_attention): train a tiny MLM for a few steps, dump
# its attention as .npy, as CSV and as JSON, check them with numpy (shape [layers, heads, T, T],
# every row sums to 1, the CSV equals the .npy, the JSON parses and equals the CSV), --out
# replaces only its own unedited file, then a linear-attention run must be refused.
#   tests/machinery/cli_attention.sh ROFORMER_BIN WORK_DIR      (run from the repository root)
set -uo pipefail
BIN=$1 WORK=$2
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK"
train() { "$BIN" train --config configs/tiny.toml --set train.steps=3 --set train.eval_every=0 --quiet "$@"; }
train --out "$WORK/softmax" >/dev/null || fail "training the softmax run"
TEXT="In the beginning God created the heaven"
"$BIN" attention --run "$WORK/softmax" "$TEXT" --out "$WORK/all.npy" >"$WORK/npy.out" || fail "attention --out .npy"
"$BIN" attention --run "$WORK/softmax" "$TEXT" --layer 1 --head 1 >"$WORK/one.csv" || fail "attention CSV"
"$BIN" attention --run "$WORK/softmax" "$TEXT" --layer 1 --out "$WORK/one.json" >/dev/null || fail "attention --out .json"
/usr/bin/python3 - "$WORK" <<'PY' || fail "checking the dumps"
import csv, sys, numpy as np
work = sys.argv[1]
p = np.load(f"{work}/all.npy")
tokens = open(f"{work}/npy.out").read().split("tokens:", 1)[1].split()
L, H, T, T2 = p.shape
assert (L, H) == (2, 2) and T == T2 == len(tokens), (p.shape, tokens)
assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]", tokens
assert np.abs(p.sum(axis=-1) - 1).max() < 1e-5 and p.min() >= 0
rows = list(csv.reader(open(f"{work}/one.csv")))
assert rows[0][:4] == ["layer", "head", "query", "token"] and len(rows[0]) == 4 + T
assert [r[3] for r in rows[1:]] == tokens
one = np.array([[float(v) for v in r[4:]] for r in rows[1:]])
assert np.abs(one - p[1, 1]).max() < 1e-5, np.abs(one - p[1, 1]).max()
import json
doc = json.load(open(f"{work}/one.json"))
assert doc["run"] == "softmax" and doc["text"].startswith("In the beginning"), doc["run"]
assert doc["tokens"] == tokens and doc["T"] == T, (doc["tokens"], doc["T"])
assert doc["layers"] == [1] and doc["heads"] == [0, 1], (doc["layers"], doc["heads"])
w = np.array(doc["weights"], dtype=float)
assert w.shape == (1, 2, T, T), w.shape
assert np.abs(w.sum(axis=-1) - 1).max() < 1e-5 and w.min() >= 0
assert np.abs(w[0, 1] - one).max() < 1e-5, np.abs(w[0, 1] - one).max()
assert np.abs(w[0] - p[1]).max() < 1e-6, np.abs(w[0] - p[1]).max()
print(f"attention dumps agree: [{L}, {H}, {T}, {T}], rows sum to 1, CSV = npy = JSON")
PY
# Provenance, not format: our own .json is replaced (its .written-by mark matches); one the
# user edited since, and a user's file, are refused untouched.
"$BIN" attention --run "$WORK/softmax" "$TEXT" --out "$WORK/one.json" >/dev/null || fail "--out one.json: our own file was not replaced"
echo " " >>"$WORK/one.json" && cp "$WORK/one.json" "$WORK/edited.json"
msg=$("$BIN" attention --run "$WORK/softmax" "$TEXT" --out "$WORK/one.json" 2>&1) && fail "--out one.json replaced a file the user edited"
echo "$msg" | grep -q "one.json.*changed after roformer wrote it" || fail "--out one.json (edited): $msg"
cmp -s "$WORK/one.json" "$WORK/edited.json" || fail "the edited one.json was changed"
echo "user notes" >"$WORK/notes.json"
msg=$("$BIN" attention --run "$WORK/softmax" "$TEXT" --out "$WORK/notes.json" 2>&1) && fail "--out notes.json replaced a user's file"
echo "$msg" | grep -q "notes.json.*nothing shows that roformer wrote it" || fail "--out notes.json: $msg"
[ "$(cat "$WORK/notes.json")" = "user notes" ] || fail "notes.json was changed"
msg=$("$BIN" attention --run "$WORK/softmax" "$TEXT" --layer 2 2>&1) && fail "--layer 2 accepted"
echo "$msg" | grep -q "layer 2 is out of range" || fail "--layer 2: $msg"
train --set model.attention=linear --out "$WORK/linear" >/dev/null || fail "training the linear run"
msg=$("$BIN" attention --run "$WORK/linear" "$TEXT" 2>&1) && fail "a linear-attention run was not refused"
echo "$msg"
echo "$msg" | grep -q "trained with model.attention = linear" || fail "refusal message: $msg"
echo PASS
