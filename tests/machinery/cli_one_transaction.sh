#!/usr/bin/env bash
# One directory transaction, one reader of a directory (ctest cli_one_transaction), on the real
# binary — real concurrent processes, real signals, a real `ulimit -f`:
#   writers  N export-hf / import-hf into one --out at once: exactly one exits 0, and every file
#            its "wrote" line names is there and equals a lone writer's; the others get one line
#   signals  SIGINT, SIGTERM, SIGHUP at moments spread over an import and an export: exit
#            128 + signal and nothing at all left (no --out, no staging), or a complete output;
#            SIGKILL: the half state is named by every reader and replaced by a rerun
#   limits   `ulimit -f` during import-hf and during train's lock record: one line, nothing left
#   reader   every reading command given an HF directory, a comparison, a damaged run, a
#            stopped run, a live run, an empty directory: the one message of that kind; train
#            --out over an HF directory is not told to --resume; a start killed before its
#            first checkpoint is restarted by the next `train --out`
#   tests/machinery/cli_one_transaction.sh ROFORMER_BIN WORK_DIR   (run from the repository root)
set -u
BIN=$(realpath "$1") WORK=$(realpath -m "$2")
rm -rf "$WORK" && mkdir -p "$WORK"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
one_line() {  # one_line FILE LABEL: stderr is one "error: …" or "roformer CMD: stopped by …" line
    [ "$(grep -vc '^note: ' "$1")" -eq 1 ] && grep -qE '^(error: |roformer [a-z-]+: stopped by )' "$1" ||
        fail "$2: not one error line: $(head -3 "$1")"
}
leftovers() { find "$WORK" -maxdepth 1 -name '.*.partial-*' | head -3; }
same_dir() {  # same_dir REF DIR LABEL: the same names, the same bytes
    [ "$(ls -A "$1")" = "$(ls -A "$2")" ] || fail "$3: holds $(ls -A "$2" | tr '\n' ' ')"
    for f in $(ls -A "$1"); do cmp -s "$1/$f" "$2/$f" || fail "$3: $f differs"; done
}
head -c 200000 data/kjv.txt >"$WORK/corpus.txt"
T=(--config configs/tiny.toml --set train.threads=1 --set train.batch_size=2 --set data.val_windows=4
   --set "data.path=$WORK/corpus.txt" --set data.vocab_size=120 --set train.eval_every=0)
"$BIN" train "${T[@]}" --set train.steps=2 --out "$WORK/run" >/dev/null 2>&1 || fail "train"
# A model of some megabytes, so that a signal can land while its files are written.
"$BIN" train "${T[@]}" --set train.steps=1 --set model.hidden=256 --set model.ffn=1024 \
  --set model.num_layers=6 --set model.num_heads=4 --out "$WORK/big" >/dev/null 2>&1 || fail "train big"
"$BIN" export-hf "$WORK/run" --out "$WORK/ref_export" >/dev/null || fail "export-hf"
"$BIN" export-hf "$WORK/run" --out "$WORK/new/parents/x" >/dev/null || fail "export-hf into a new path"
"$BIN" export-hf "$WORK/big" --out "$WORK/big_bpe" >/dev/null || fail "export-hf big"
# import-hf reads BERT's vocab.txt: the exported weights with a WordPiece vocabulary of as many
# lines as the model has token rows.
mkdir -p "$WORK/big_export" && cp "$WORK/big_bpe/config.json" "$WORK/big_bpe/model.safetensors" "$WORK/big_export/"
python3 -c "
import json, sys
v = json.load(open(sys.argv[1]))['vocab_size']
print('\n'.join(['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'] + ['w%d' % i for i in range(5, v)]))" \
  "$WORK/big_export/config.json" >"$WORK/big_export/vocab.txt"
"$BIN" import-hf "$WORK/big_export" --out "$WORK/ref_import" >/dev/null || fail "import-hf big"
"$BIN" export-hf "$WORK/ref_import" --out "$WORK/ref_reexport" >/dev/null || fail "export-hf of the import"

# --- writers: four at once, ten times, for each one-shot writing command ---------------------
for cmd in export import; do
  for t in $(seq 10); do
    X="$WORK/many_${cmd}_$t"
    for i in 1 2 3 4; do
      if [ $cmd = export ]; then argv=(export-hf "$WORK/run" --out "$X"); ref="$WORK/ref_export"
      else argv=(import-hf "$WORK/big_export" --out "$X"); ref="$WORK/ref_import"; fi
      ("$BIN" "${argv[@]}" >"$WORK/w$i.out" 2>"$WORK/w$i.err"; echo $? >"$WORK/w$i.rc") &
    done
    wait
    won=0
    for i in 1 2 3 4; do
      if [ "$(cat "$WORK/w$i.rc")" = 0 ]; then
        won=$((won + 1))
        names=$(sed -n 's/^wrote [^:]*: //p' "$WORK/w$i.out")
        for f in $names; do [ -f "$X/$f" ] || fail "$cmd trial $t: said it wrote $f, which is missing"; done
      else
        one_line "$WORK/w$i.err" "$cmd trial $t writer $i"
      fi
    done
    [ $won = 1 ] || fail "$cmd trial $t: $won of 4 writers exited 0"
    # hf_source.json names where the import came from, the same for all; the rest is bytes
    [ $cmd = export ] && same_dir "$ref" "$X" "$cmd trial $t"
    [ $cmd = import ] && cmp -s "$ref/model.safetensors" "$X/model.safetensors" || [ $cmd = export ] ||
      fail "$cmd trial $t: model.safetensors differs from a lone import"
  done
done
[ -z "$(leftovers)" ] || fail "writers left $(leftovers)"

# --- signals at moments spread over the command -----------------------------------------------
caught=0 finished=0
for cmd in import export; do
  for sig in INT TERM HUP; do
    for delay in 0.02 0.08 0.15 0.25 0.4; do
      X="$WORK/sig_${cmd}_${sig}_$delay"
      if [ $cmd = import ]; then argv=(import-hf "$WORK/big_export" --out "$X")
      else argv=(export-hf "$WORK/ref_import" --out "$X"); fi
      "$BIN" "${argv[@]}" >/dev/null 2>"$WORK/sig.err" &
      pid=$!
      sleep "$delay"; kill -s "$sig" $pid 2>/dev/null
      wait $pid 2>/dev/null; rc=$?
      grep -q "^roformer [a-z-]*: stopped by " "$WORK/sig.err" && caught=$((caught + 1))
      if [ $rc = 0 ]; then
        finished=$((finished + 1))
        [ $cmd = import ] && { cmp -s "$WORK/ref_import/model.safetensors" "$X/model.safetensors" ||
          fail "$cmd $sig $delay: exit 0 but the model differs"; }
        [ $cmd = export ] && same_dir "$WORK/ref_reexport" "$X" "$cmd $sig $delay"
      else
        want=$((128 + $(kill -l "$sig")))
        [ $rc = $want ] || fail "$cmd $sig at ${delay}s: exit $rc, not $want"
        [ -e "$X" ] && fail "$cmd $sig at ${delay}s: left $X ($(ls -A "$X" | head -3 | tr '\n' ' '))"
        [ -z "$(leftovers)" ] || fail "$cmd $sig at ${delay}s: left $(leftovers)"
        [ -s "$WORK/sig.err" ] && one_line "$WORK/sig.err" "$cmd $sig at ${delay}s"
        "$BIN" "${argv[@]}" >/dev/null 2>"$WORK/rerun.err" || fail "$cmd rerun after $sig: $(cat "$WORK/rerun.err")"
      fi
    done
  done
done

echo "signals: $caught stopped by the handler part way, $finished finished first, the rest before the handler"
# SIGKILL: no handler runs. The half state is the staging directory; readers name it, the
# rerun replaces it with a note.
for delay in 0.05 0.15 0.3; do
  X="$WORK/killed_$delay"
  "$BIN" import-hf "$WORK/big_export" --out "$X" >/dev/null 2>&1 &
  pid=$!; sleep "$delay"; kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null; rc=$?
  # Finished before the kill (a quiet machine): a whole run, which a rerun rightly refuses.
  [ $rc = 0 ] && { echo "SIGKILL at ${delay} s: the import had finished"; continue; }
  if [ -n "$(leftovers)" ]; then
    "$BIN" eval --run "$X" >/dev/null 2>"$WORK/err" && fail "eval of a half import exited 0"
    grep -q "roformer import-hf.*stopped before it finished.*again" "$WORK/err" ||
      fail "eval of a half import: $(cat "$WORK/err")"
  fi
  "$BIN" import-hf "$WORK/big_export" --out "$X" >/dev/null 2>"$WORK/err" || fail "rerun after SIGKILL: $(cat "$WORK/err")"
  [ -z "$(leftovers)" ] || fail "the rerun after SIGKILL left $(leftovers)"
  cmp -s "$WORK/ref_import/model.safetensors" "$X/model.safetensors" || fail "rerun after SIGKILL: model differs"
done

# --- limits: a file-size limit part way ----------------------------------------------------------
(ulimit -f 256; "$BIN" import-hf "$WORK/big_export" --out "$WORK/limited" >/dev/null 2>"$WORK/err"); rc=$?
[ $rc = 2 ] || fail "import-hf under ulimit -f: exit $rc"
one_line "$WORK/err" "import-hf under ulimit -f"
[ -e "$WORK/limited" ] && fail "import-hf under ulimit -f left $WORK/limited"
[ -z "$(leftovers)" ] || fail "import-hf under ulimit -f left $(leftovers)"
(ulimit -f 0; "$BIN" train "${T[@]}" --set train.steps=2 --out "$WORK/nolock" >/dev/null 2>"$WORK/err"); rc=$?
[ $rc = 2 ] || fail "train under ulimit -f 0: exit $rc"
[ -e "$WORK/nolock" ] && fail "train under ulimit -f 0 left $(ls -A "$WORK/nolock" | tr '\n' ' ')"
"$BIN" train "${T[@]}" --set train.steps=2 --out "$WORK/nolock" >/dev/null 2>&1 || fail "train after ulimit -f 0"

# --- the reader: one message per kind --------------------------------------------------------
cp -r "$WORK/ref_export" "$WORK/plain_hf" && rm -f "$WORK/plain_hf"/*.written-by
mkdir -p "$WORK/comparison/rope/seed1" && cp "$WORK/run/config.toml" "$WORK/comparison/rope/seed1/"
cp -r "$WORK/run" "$WORK/damaged" && rm "$WORK/damaged/config.toml"
mkdir -p "$WORK/empty"
expect() {  # expect LABEL PATTERN COMMAND...: exits non-zero with one line matching PATTERN
  local label=$1 pattern=$2; shift 2
  "$@" >/dev/null 2>"$WORK/err"; local rc=$?
  [ $rc = 2 ] || fail "$label: exit $rc"
  one_line "$WORK/err" "$label"
  grep -qE "$pattern" "$WORK/err" || fail "$label: $(cat "$WORK/err")"
}
for reader in "eval --run" "fill-mask --run" "export-hf" "finetune --task kjv-testament --from"; do
  set -- $reader
  tail=(); [ "$1" = fill-mask ] && tail=("[MASK]"); [ "$1" = export-hf ] && tail=(--out "$WORK/never")
  [ "$1" = finetune ] && tail=(--out "$WORK/never")
  expect "$1 of an HF export" "written by .roformer export-hf.*import-hf" "$BIN" "$@" "$WORK/ref_export" "${tail[@]}"
  expect "$1 of an HF directory" "Hugging Face model directory.*import-hf" "$BIN" "$@" "$WORK/plain_hf" "${tail[@]}"
  expect "$1 of a comparison" "comparison.*rope/seed1" "$BIN" "$@" "$WORK/comparison" "${tail[@]}"
  expect "$1 of a damaged run" "damaged run: config.toml is missing" "$BIN" "$@" "$WORK/damaged" "${tail[@]}"
  expect "$1 of an empty directory" "is empty" "$BIN" "$@" "$WORK/empty" "${tail[@]}"
  [ -e "$WORK/never" ] && fail "$1 wrote $WORK/never"
done
expect "train --out an HF directory" "Hugging Face model directory" \
  "$BIN" train "${T[@]}" --set train.steps=2 --out "$WORK/plain_hf"
grep -q -- "--resume" "$WORK/err" && fail "train --out an HF directory is told to --resume"
expect "train --resume of a damaged run" "damaged run" \
  "$BIN" train "${T[@]}" --set train.steps=2 --resume --out "$WORK/damaged"
# A stopped run: every serving and exporting command says so, the same way.
"$BIN" train "${T[@]}" --set train.steps=4 --stop-after 2 --out "$WORK/stopped" >/dev/null 2>&1
for reader in "eval --run" "export-hf"; do
  set -- $reader; tail=(); [ "$1" = export-hf ] && tail=(--out "$WORK/stopped_export")
  "$BIN" "$@" "$WORK/stopped" "${tail[@]}" >/dev/null 2>"$WORK/err" || fail "$1 of a stopped run: $(cat "$WORK/err")"
  grep -q "^warning: .*step 2 of 4" "$WORK/err" || fail "$1 of a stopped run says: $(cat "$WORK/err")"
done
# A live run: served with a warning, refused by what would freeze it.
"$BIN" train "${T[@]}" --set train.steps=100000 --set train.checkpoint_every=1 --out "$WORK/live" >/dev/null 2>&1 &
live=$!
for _ in $(seq 300); do [ -f "$WORK/live/checkpoint.json" ] && break; sleep 0.1; done
"$BIN" eval --run "$WORK/live" --set data.val_windows=1 >/dev/null 2>"$WORK/err" || fail "eval of a live run: $(cat "$WORK/err")"
grep -q "^warning: .*being written by pid $live" "$WORK/err" || fail "eval of a live run says: $(cat "$WORK/err")"
expect "export-hf of a live run" "being written by pid $live" "$BIN" export-hf "$WORK/live" --out "$WORK/live_export"
expect "finetune --from a live run" "being written by pid $live" \
  "$BIN" finetune --task kjv-testament --from "$WORK/live" --out "$WORK/live_ft"
kill -INT $live; wait $live
# A start killed before its first checkpoint (its own files and a dead writer's lock record):
# the next train --out starts it again.
mkdir -p "$WORK/start" && cp "$WORK/run/config.toml" "$WORK/start/" && echo 999999 >"$WORK/start/lock"
"$BIN" train "${T[@]}" --set train.steps=2 --out "$WORK/start" >/dev/null 2>"$WORK/err" ||
  fail "train over a killed start: $(cat "$WORK/err")"
grep -q "^note: .*killed before its first checkpoint" "$WORK/err" || fail "no note on the killed start: $(cat "$WORK/err")"

[ $failures = 0 ] && echo "PASS: one transaction per directory, one reader" || { echo "$failures failures"; exit 1; }
