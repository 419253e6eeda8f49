#!/usr/bin/env bash
# `roformer import-hf` / `export-hf` and scripts/hf_to_safetensors.py end to end (ctest cli_hf),
# on the two checkpoints transformers itself wrote (tests/reference/hf/PROVENANCE-models.md):
# import; the run serves fill-mask, attention, tokenize and finetune --from → classify as a
# finished run; hf_source.json records each file's SHA-256; export → import is bit-identical
# (tensors and fill-mask output) and the export holds HF's tensor names, shapes and values;
# refusals (an existing --out, a non-empty export folder, a run HF cannot express) change
# nothing; char and BPE runs round-trip through tokenizer.json (import-hf, tokenize --tokenizer); the converter turns a torch.save'd state dict into the same tensors and refuses
# what is not a RoFormer.
#   tests/machinery/cli_hf.sh ROFORMER_BIN WORK_DIR      (run from the repository root)
set -uo pipefail
BIN=$1 WORK=$2
PY=/usr/bin/python3
REF=tests/reference/hf
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK"
vocab() { $PY -c "
sp = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']
print('\n'.join(sp + ['w%d' % i for i in range(5, 60)]))" >"$1/vocab.txt"; }
# Tensors of two safetensors files equal, bit for bit, by name (metadata aside).
same_tensors() { $PY - "$1" "$2" <<'PY' || fail "tensors of $1 and $2 differ"
import json, struct, sys
def tensors(path):
    b = open(path, "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n])
    return {k: (v["dtype"], v["shape"], b[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]])
            for k, v in h.items() if k != "__metadata__"}
a, b = tensors(sys.argv[1]), tensors(sys.argv[2])
assert a.keys() == b.keys(), sorted(set(a) ^ set(b))
for k in a: assert a[k] == b[k], k
PY
}

$PY -c "import random; random.seed(0); print('\n'.join(' '.join('w%d' % random.randrange(5, 60) for _ in range(30)) for _ in range(100)))" >"$WORK/corpus.txt"
for fx in hf_roformer_tiny hf_roformer_tiny_project; do
  mkdir -p "$WORK/$fx" && cp "$REF/$fx/config.json" "$REF/$fx/model.safetensors" "$WORK/$fx/" && vocab "$WORK/$fx"
  chmod u+w "$WORK/$fx"/*
  out=$("$BIN" import-hf "$WORK/$fx" --out "$WORK/run_$fx") || fail "import-hf $fx: $out"
  echo "$out" | grep -q "transformers 5.17.0" || fail "import-hf output: $out"
  for f in config.toml tokenizer.json model.safetensors checkpoint.json hf_source.json; do
    [ -f "$WORK/run_$fx/$f" ] || fail "$fx: the run has no $f"
  done
  $PY - "$WORK/$fx" "$WORK/run_$fx/hf_source.json" <<'PY' || fail "$fx: hf_source.json"
import hashlib, json, os, sys
src, record = sys.argv[1], json.load(open(sys.argv[2]))
assert record["transformers_version"] == "5.17.0" and record["dtype"] == "F32", record
assert os.path.samefile(record["imported_from"], src)
for name in ("config.json", "model.safetensors", "vocab.txt"):
    assert record["files"][name]["sha256"] == hashlib.sha256(open(f"{src}/{name}", "rb").read()).hexdigest(), name
PY
  # A finished run: nothing warns, every reader takes it.
  "$BIN" fill-mask --run "$WORK/run_$fx" "w7 w9 [MASK] w11" >"$WORK/fill_$fx.txt" 2>"$WORK/fill_$fx.err" || fail "fill-mask $fx"
  [ -s "$WORK/fill_$fx.err" ] && fail "fill-mask warns on an imported run: $(cat "$WORK/fill_$fx.err")"
  "$BIN" attention --run "$WORK/run_$fx" "w7 w9 w11" --layer 1 --head 1 >/dev/null || fail "attention $fx"
  out=$("$BIN" eval --run "$WORK/run_$fx" --set data.path="$WORK/corpus.txt" --set data.seq_len=32 2>&1) || fail "eval $fx: $out"
  "$BIN" tokenize --run "$WORK/run_$fx" "w7 w9 [MASK]" --ids-only | grep -q "^2 7 9 4 3$" || fail "tokenize $fx"
  # export → the fixture's own tensors; import of the export → the same run, the same output
  out=$("$BIN" export-hf "$WORK/run_$fx" --out "$WORK/exp_$fx") || fail "export-hf $fx: $out"
  same_tensors "$WORK/exp_$fx/model.safetensors" "$REF/$fx/model.safetensors"
  cmp -s "$WORK/exp_$fx/vocab.txt" "$WORK/$fx/vocab.txt" || fail "$fx: exported vocab.txt differs"
  "$BIN" import-hf "$WORK/exp_$fx" --out "$WORK/back_$fx" >/dev/null || fail "import-hf of the export $fx"
  same_tensors "$WORK/back_$fx/model.safetensors" "$WORK/run_$fx/model.safetensors"
  "$BIN" fill-mask --run "$WORK/back_$fx" "w7 w9 [MASK] w11" | cmp -s - "$WORK/fill_$fx.txt" || fail "$fx: fill-mask after the round trip differs"
done

# do_basic_tokenize false: WordPiece on whitespace-separated words (BertTokenizer: 2 1 7 3 for
# "W5.w6 w7", where its basic tokenizer gives 2 5 1 6 7 3), kept by import and by export.
mkdir -p "$WORK/plain" && cp "$REF/hf_roformer_tiny/config.json" "$REF/hf_roformer_tiny/model.safetensors" "$WORK/plain/" && vocab "$WORK/plain"
chmod u+w "$WORK/plain"/*
echo '{"do_basic_tokenize": false}' >"$WORK/plain/tokenizer_config.json"
[ "$("$BIN" tokenize --tokenizer "$WORK/plain" "W5.w6 w7" --ids-only)" = "2 1 7 3" ] || fail "do_basic_tokenize false: tokenize"
"$BIN" import-hf "$WORK/plain" --out "$WORK/run_plain" >/dev/null || fail "import-hf with do_basic_tokenize false"
"$BIN" export-hf "$WORK/run_plain" --out "$WORK/exp_plain" >/dev/null || fail "export-hf with do_basic_tokenize false"
[ "$("$BIN" tokenize --tokenizer "$WORK/exp_plain" "W5.w6 w7" --ids-only)" = "2 1 7 3" ] || fail "do_basic_tokenize false: lost on export"
[ "$("$BIN" tokenize --tokenizer "$WORK/hf_roformer_tiny" "W5.w6 w7" --ids-only)" = "2 5 1 6 7 3" ] || fail "the basic tokenizer"

# Refusals change nothing: an existing --out for import, a non-empty folder for export.
before=$(ls -A "$WORK/run_hf_roformer_tiny" | sort | tr '\n' ' ')
"$BIN" import-hf "$WORK/hf_roformer_tiny" --out "$WORK/run_hf_roformer_tiny" >/dev/null 2>"$WORK/err"; rc=$?
[ $rc = 2 ] && grep -q "not empty" "$WORK/err" || fail "import-hf into an existing run: rc $rc $(cat "$WORK/err")"
[ "$(ls -A "$WORK/run_hf_roformer_tiny" | sort | tr '\n' ' ')" = "$before" ] || fail "a refused import changed the run"
mkdir -p "$WORK/notes" && echo mine >"$WORK/notes/a.txt"
"$BIN" export-hf "$WORK/run_hf_roformer_tiny" --out "$WORK/notes" >/dev/null 2>"$WORK/err"; rc=$?
[ $rc = 2 ] && grep -q "not empty" "$WORK/err" && [ "$(ls -A "$WORK/notes")" = a.txt ] || fail "export into a non-empty folder: rc $rc"
"$BIN" train --config configs/tiny.toml --set train.steps=2 --set train.eval_every=0 --set position.pairing=half \
  --quiet --out "$WORK/half" >/dev/null || fail "training the half-pairing run"
"$BIN" export-hf "$WORK/half" --out "$WORK/exp_half" >/dev/null 2>"$WORK/err"; rc=$?
[ $rc = 2 ] && grep -q "position.pairing = half" "$WORK/err" && [ ! -e "$WORK/exp_half" ] || fail "export of a half-pairing run: rc $rc $(cat "$WORK/err")"

# A run trained here, with its char tokenizer: the export holds the run's tensors unchanged and
# HF's table made from HF's own formula (numpy, float64: row m = sin(m·θ_i) then cos(m·θ_i),
# θ_i = 10000^(−2i/D)), a tokenizer.json of the run's vocabulary.
"$BIN" train --config configs/tiny.toml --set train.steps=2 --set train.eval_every=0 --set data.tokenizer=char \
  --quiet --out "$WORK/char" >/dev/null || fail "training the char run"
"$BIN" export-hf "$WORK/char" --out "$WORK/exp_char" >"$WORK/out" || fail "export-hf of a char run: $(cat "$WORK/out")"
$PY - "$WORK/char" "$WORK/exp_char" "$REF/hf_roformer_tiny/config.json" <<'PY' || fail "the char run's export"
import json, struct, sys, numpy as np
run, exp, fixture = sys.argv[1:]
def tensors(path):
    b = open(path, "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n])
    return h.get("__metadata__", {}), {k: np.frombuffer(b[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]], "<f4").reshape(v["shape"])
                                       for k, v in h.items() if k != "__metadata__"}
_, ours = tensors(f"{run}/model.safetensors")
meta, theirs = tensors(f"{exp}/model.safetensors")
assert meta == {"format": "pt"}, meta
table = theirs.pop("roformer.encoder.embed_positions.weight")
assert ours.keys() == theirs.keys(), sorted(set(ours) ^ set(theirs))
for k in ours: assert np.array_equal(ours[k], theirs[k]), k
config = json.load(open(f"{exp}/config.json"))
assert set(config) == set(json.load(open(fixture))) - {"transformers_version"}, set(config)
P, D = config["max_position_embeddings"], config["hidden_size"] // config["num_attention_heads"]
angles = np.arange(P)[:, None] * 10000.0 ** (-2 * np.arange(D // 2) / D)
assert table.shape == (P, D) and np.abs(table - np.concatenate([np.sin(angles), np.cos(angles)], 1)).max() < 1e-6
vocab = json.load(open(f"{run}/tokenizer.json"))["vocab"]
tok = json.load(open(f"{exp}/tokenizer.json"))
assert tok["model"]["vocab"] == {t: i for i, t in enumerate(vocab)} and config["vocab_size"] == len(vocab)
assert [a["content"] for a in tok["added_tokens"]] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
PY
# The round trip for both tokenizers train makes: import-hf reads export-hf's tokenizer.json,
# the run comes back with the same tensors, the same tokenizer and the same fill-mask output;
# tokenize --tokenizer reads the exported tokenizer.json (and its directory) as the run's.
"$BIN" train --config configs/tiny.toml --set train.steps=2 --set train.eval_every=0 --set data.tokenizer=bpe \
  --quiet --out "$WORK/bpe" >/dev/null || fail "training the bpe run"
"$BIN" export-hf "$WORK/bpe" --out "$WORK/exp_bpe" >"$WORK/out" || fail "export-hf of a bpe run: $(cat "$WORK/out")"
text="In the beginning God created the [MASK] and the earth."
for kind in char bpe; do
  "$BIN" import-hf "$WORK/exp_$kind" --out "$WORK/back_$kind" >"$WORK/out" 2>&1 || fail "import of a $kind export: $(cat "$WORK/out")"
  same_tensors "$WORK/back_$kind/model.safetensors" "$WORK/$kind/model.safetensors"
  cmp -s "$WORK/back_$kind/tokenizer.json" "$WORK/$kind/tokenizer.json" || fail "$kind: the tokenizer changed on the round trip"
  grep -q "^tokenizer = \"$kind\"" "$WORK/back_$kind/config.toml" || fail "$kind: the imported config.toml names another data.tokenizer"
  "$BIN" fill-mask --run "$WORK/$kind" "$text" >"$WORK/fill_a" || fail "fill-mask $kind"
  "$BIN" fill-mask --run "$WORK/back_$kind" "$text" | cmp -s - "$WORK/fill_a" || fail "$kind: fill-mask after the round trip differs"
  want=$("$BIN" tokenize --run "$WORK/$kind" "$text" --ids-only) || fail "tokenize --run $kind"
  for given in "$WORK/exp_$kind/tokenizer.json" "$WORK/exp_$kind"; do
    got=$("$BIN" tokenize --tokenizer "$given" "$text" --ids-only 2>&1) || fail "tokenize --tokenizer $given: $got"
    [ "$got" = "$want" ] || fail "tokenize --tokenizer $given: $got, the run gives $want"
  done
done
# What the export does not write is refused at import, naming the file and the key.
$PY - "$WORK/exp_bpe/tokenizer.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1])); t["normalizer"] = {"type": "Lowercase"}; json.dump(t, open(sys.argv[1], "w"))
PY
"$BIN" import-hf "$WORK/exp_bpe" --out "$WORK/back_lower" >/dev/null 2>"$WORK/err"; rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$WORK/err")" = 1 ] && grep -q 'tokenizer.json: "normalizer"' "$WORK/err" && [ ! -e "$WORK/back_lower" ] ||
  fail "import of a changed tokenizer.json: rc $rc $(cat "$WORK/err")"
# An imported run's data.path names no file relative to where the user stands: eval asks for one.
grep -q '^path = "(none' "$WORK/back_char/config.toml" || fail "imported data.path: $(grep '^path' "$WORK/back_char/config.toml")"
bin=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
(cd "$WORK" && mkdir -p data && cp corpus.txt data/kjv.txt && "$bin" eval --run back_char >/dev/null 2>err); rc=$?
[ $rc = 2 ] && grep -q "data.path" "$WORK/err" || fail "eval of an imported run without data.path: rc $rc $(cat "$WORK/err")"

# finetune --from an imported checkpoint, then classify with it.
# Its vocab.txt: frequent KJV words, so that the task's text is not all [UNK].
mkdir -p "$WORK/words" && cp "$REF/hf_roformer_tiny_project/config.json" "$REF/hf_roformer_tiny_project/model.safetensors" "$WORK/words/"
chmod u+w "$WORK/words"/*
printf '%s\n' '[PAD]' '[UNK]' '[CLS]' '[SEP]' '[MASK]' the and of to that in he shall unto for i his a lord they \
  be is him not them it with all thou thy was god which my me said but ye their have will thee from as are \
  when this out were upon man by you israel king son up there hath then >"$WORK/words/vocab.txt"
"$BIN" import-hf "$WORK/words" --out "$WORK/run_words" >/dev/null || fail "import-hf with a word vocabulary"
out=$("$BIN" finetune --from "$WORK/run_words" --task kjv-testament --out "$WORK/ft" --quiet \
  --set threads=1 --set max_train_examples=64 --set epochs=1 --set max_len=32) || fail "finetune --from an import: $out"
"$BIN" classify --run "$WORK/ft" "And Jesus answered" | head -1 | grep -Eq "^label: (Old|New) Testament$" || fail "classify after finetune"
"$BIN" export-hf "$WORK/ft" --out "$WORK/exp_ft" >/dev/null 2>"$WORK/err"; rc=$?
[ $rc = 2 ] && grep -q "fine-tune" "$WORK/err" || fail "export of a fine-tune run: rc $rc $(cat "$WORK/err")"

# scripts/hf_to_safetensors.py: a torch.save'd state dict (with the tied decoder, as older
# checkpoints hold it) → the fixture's tensors; refusals.
if $PY -c "import torch" 2>/dev/null; then
  mkdir -p "$WORK/bin" && $PY - "$REF/hf_roformer_tiny/model.safetensors" "$WORK/bin" <<'PY' || fail "making the .bin"
import json, struct, sys, numpy as np, torch
b = open(sys.argv[1], "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n])
sd = {k: torch.from_numpy(np.frombuffer(b[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]], "<f4").reshape(v["shape"]).copy())
      for k, v in h.items() if k != "__metadata__"}
torch.save(sd, f"{sys.argv[2]}/pytorch_model.bin")
sd["cls.predictions.decoder.weight"] = sd["roformer.embeddings.word_embeddings.weight"]
torch.save(sd, f"{sys.argv[2]}/tied.bin")
torch.save({"bert.embeddings.word_embeddings.weight": torch.zeros(2, 2)}, f"{sys.argv[2]}/bert.bin")
PY
  $PY scripts/hf_to_safetensors.py "$WORK/bin" >/dev/null || fail "hf_to_safetensors on a folder"
  same_tensors "$WORK/bin/model.safetensors" "$REF/hf_roformer_tiny/model.safetensors"
  $PY scripts/hf_to_safetensors.py "$WORK/bin" >/dev/null || fail "replacing its own unchanged output"
  cp "$REF/hf_roformer_tiny/config.json" "$WORK/bin/" && vocab "$WORK/bin" && chmod u+w "$WORK/bin/config.json"
  $PY scripts/hf_to_safetensors.py "$WORK/bin/tied.bin" --out "$WORK/bin/model.safetensors" >/dev/null || fail "the tied .bin over its own output"
  "$BIN" import-hf "$WORK/bin" --out "$WORK/run_bin" >/dev/null || fail "import of a converted .bin with its tied decoder"
  $PY scripts/hf_to_safetensors.py "$WORK/bin/bert.bin" --out "$WORK/bert.safetensors" 2>"$WORK/err"; rc=$?
  [ $rc = 2 ] && grep -q "not a RoFormer" "$WORK/err" && [ ! -e "$WORK/bert.safetensors" ] || fail "a BERT state dict: rc $rc"
  echo mine >"$WORK/user.safetensors"
  $PY scripts/hf_to_safetensors.py "$WORK/bin" --out "$WORK/user.safetensors" 2>"$WORK/err"; rc=$?
  [ $rc = 2 ] && [ "$(cat "$WORK/user.safetensors")" = mine ] || fail "overwrote a user's file: rc $rc"
  touch "$WORK/tf_model.h5"
  $PY scripts/hf_to_safetensors.py "$WORK/tf_model.h5" 2>"$WORK/err"; rc=$?
  [ $rc = 2 ] && grep -q "TensorFlow" "$WORK/err" || fail "a TF file: rc $rc"
else
  echo "skipped hf_to_safetensors.py: /usr/bin/python3 has no torch (apt install python3-torch)"
fi
echo PASS
