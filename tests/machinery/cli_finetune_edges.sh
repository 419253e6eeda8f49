#!/usr/bin/env bash
# `roformer finetune` / `classify` at their edges (ctest cli_finetune_edges): every command
# states what it serves. Each case injects the fault with real files and real processes:
#   a changed task text under finetune --resume and classify --test-split (refused, naming it);
#   --stop-after then --resume: metrics.csv equal to an uninterrupted run's, elapsed_s going on;
#   classify on a stopped fine-tune (one warning line naming the step and the resume command);
#   finetune --from a run still training (refused naming its pid) or stopped early (warned);
#   early stopping during the warm-up (does not stop there);
#   a fine-tune directory given to eval/generate/fill-mask/attention, a pre-training run given
#   to finetune --resume / --out and to classify (named, never "delete it", left unchanged);
#   damaged task.json / tokenizer.json (one line naming the file).
#   tests/machinery/cli_finetune_edges.sh ROFORMER_BIN WORK_DIR      (run from the repository root)
set -uo pipefail
BIN=$1 WORK=$2
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK"
refuse() {  # refuse NAME EXPECTED-FRAGMENT COMMAND...: exit 2, one line, the fragment
  local name=$1 want=$2; shift 2
  msg=$("$@" 2>&1); rc=$?
  [ $rc -eq 2 ] || fail "$name: exit $rc, not 2: $msg"
  [ "$(echo "$msg" | wc -l)" -eq 1 ] || fail "$name: not one line: $msg"
  echo "$msg" | grep -qF -- "$want" || fail "$name: message: $msg"
  echo "$name refused: $msg"
}
train() { "$BIN" train --config configs/tiny.toml --set train.steps=3 --set train.eval_every=0 --quiet "$@"; }
train --out "$WORK/mlm" >/dev/null || fail "training the MLM run"
cp data/kjv.txt "$WORK/kjv.txt"
ft() { "$BIN" finetune --from "$WORK/mlm" --quiet --set threads=1 --set max_train_examples=300 --task kjv-testament --set corpus="$WORK/kjv.txt" "$@"; }

# --stop-after then --resume: metrics.csv as an uninterrupted run's, every column but elapsed_s;
# elapsed_s goes on from where the stopped run was (never back to ~0).
ft --set epochs=2 --set eval_every=5 --out "$WORK/whole" >/dev/null || fail "the uninterrupted fine-tune"
ft --set epochs=2 --set eval_every=5 --out "$WORK/parts" --stop-after 7 >/dev/null || fail "--stop-after"
# classify on the stopped run: served, with one warning naming what it is
out=$("$BIN" classify --run "$WORK/parts" "In the beginning" 2>"$WORK/warn.txt") || fail "classify on a stopped run: $out"
[ "$(wc -l <"$WORK/warn.txt")" -eq 1 ] || fail "classify's warning is not one line: $(cat "$WORK/warn.txt")"
grep -q "^warning: .*parts is an unfinished fine-tune: stopped at step 7 of [0-9]* (--stop-after); resume with: roformer finetune .*--resume --out" "$WORK/warn.txt" \
  || fail "classify on a stopped fine-tune: $(cat "$WORK/warn.txt")"
echo "classify on a stopped run warns: $(cat "$WORK/warn.txt")"
sleep 1.2  # the resumed run's clock must go on from the stopped run's, not restart at 0
ft --set epochs=2 --set eval_every=5 --out "$WORK/parts" --resume >/dev/null || fail "--resume"
cmp "$WORK/whole/model.safetensors" "$WORK/parts/model.safetensors" || fail "resumed model differs"
[ "$(cut -d, -f1-7 "$WORK/whole/metrics.csv")" = "$(cut -d, -f1-7 "$WORK/parts/metrics.csv")" ] \
  || fail "resumed metrics.csv differs from the uninterrupted run's: $(diff <(cut -d, -f1-7 "$WORK/whole/metrics.csv") <(cut -d, -f1-7 "$WORK/parts/metrics.csv"))"
/usr/bin/python3 - "$WORK/parts/metrics.csv" <<'PY' || fail "elapsed_s restarted at the resume"
import csv, sys
e = [float(r["elapsed_s"]) for r in csv.DictReader(open(sys.argv[1]))]
assert all(b >= a for a, b in zip(e, e[1:])), e
PY
out=$("$BIN" classify --run "$WORK/parts" "In the beginning" 2>&1 >/dev/null) || fail "classify on the finished run"
[ -z "$out" ] || fail "classify warned on a finished run: $out"
echo "stop + resume: metrics.csv equal, elapsed_s continues"

# A changed task text: finetune --resume and classify --test-split refuse, naming the file.
ft --set epochs=2 --out "$WORK/cut" --stop-after 3 >/dev/null || fail "--stop-after 3"
sed -i '1s/God/Gad/' "$WORK/kjv.txt"
refuse "finetune --resume on a changed corpus" "kjv.txt' changed since the run started" ft --set epochs=2 --out "$WORK/cut" --resume
refuse "classify --test-split on a changed corpus" "kjv.txt' changed since the run started" "$BIN" classify --run "$WORK/whole" --test-split
cp data/kjv.txt "$WORK/kjv.txt"
ft --set epochs=2 --out "$WORK/cut" --resume >/dev/null || fail "--resume with the text restored"

# Kinds of directory: each command names what it found and the command for it.
for cmd in eval generate fill-mask attention; do
  args=(); case $cmd in generate) args=("In the");; fill-mask) args=("In the [MASK]");; attention) args=("In the beginning");; esac
  refuse "$cmd on a fine-tune run" "is a fine-tune run (task.json, from \`roformer finetune\`); use \`roformer classify --run" "$BIN" $cmd --run "$WORK/whole" "${args[@]}"
done
refuse "finetune --from a fine-tune run" "is a fine-tune run (task.json, from" "$BIN" finetune --from "$WORK/whole" --out "$WORK/no1"
[ -e "$WORK/no1" ] && fail "a refused finetune left a directory"
before=$(ls -l --time-style=+%s.%N "$WORK/mlm" | md5sum)
msg=$("$BIN" finetune --from "$WORK/mlm" --task kjv-testament --out "$WORK/mlm" --resume 2>&1); rc=$?
[ $rc -eq 2 ] || fail "finetune --resume on a pre-training run: exit $rc: $msg"
echo "$msg" | grep -q "is a training run (config.toml" || fail "finetune --resume on a pre-training run: $msg"
echo "$msg" | grep -qi "delete" && fail "advice to delete a run of another kind: $msg"
refuse "finetune --out a pre-training run" "is a training run (config.toml" "$BIN" finetune --from "$WORK/mlm" --task kjv-testament --out "$WORK/mlm"
refuse "classify on a pre-training run" "is a training run (config.toml" "$BIN" classify --run "$WORK/mlm" "In the beginning"
[ "$(ls -l --time-style=+%s.%N "$WORK/mlm" | md5sum)" = "$before" ] || fail "the pre-training run was changed"
echo "kinds of directory: named, nothing changed"

# Damaged files: one line naming the file (JSON that parses but no longer fits the weights too:
# task.json with other labels, tokenizer.json with another vocabulary).
damaged_but_valid() {
  if [ "$1" = task.json ]; then echo '{"task": "kjv-testament", "labels": ["a", "b", "c"], "pair": false, "max_len": 64}'
  else echo '{"type": "char", "vocab": ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"]}'; fi
}
for f in task.json tokenizer.json; do
  for bad in '{"labels": 3}' 'not json at all' '[]' "$(damaged_but_valid "$f")"; do
    rm -rf "$WORK/dmg" && cp -r "$WORK/whole" "$WORK/dmg"
    printf '%s\n' "$bad" >"$WORK/dmg/$f"
    msg=$("$BIN" classify --run "$WORK/dmg" "In the beginning" 2>&1); rc=$?
    [ $rc -ne 0 ] && [ $rc -lt 128 ] || fail "classify with a damaged $f ($bad): exit $rc"
    [ "$(echo "$msg" | wc -l)" -eq 1 ] || fail "damaged $f ($bad): not one line: $msg"
    echo "$msg" | grep -q "dmg/$f" || fail "damaged $f ($bad) not named: $msg"
    echo "$msg" | grep -q "json.exception\|\[json\.\|type_error\|parse_error" && fail "raw json error for $f: $msg"
  done
done
echo "damaged task.json / tokenizer.json: one line naming the file"

# --from a pre-training still running: refused naming its pid; one that stopped early: warned.
"$BIN" train --config configs/tiny.toml --set train.steps=100000 --set train.eval_every=0 --set train.checkpoint_every=1 --quiet --out "$WORK/live" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 300); do [ -f "$WORK/live/model.safetensors" ] && break; sleep 0.1; done
refuse "finetune --from a run still training" "is being written by pid $pid" "$BIN" finetune --from "$WORK/live" --task kjv-testament --out "$WORK/no2"
kill -INT $pid; wait $pid
[ -e "$WORK/no2" ] && fail "a refused finetune left a directory"
"$BIN" train --config configs/tiny.toml --set train.steps=5 --set train.eval_every=0 --quiet --stop-after 2 --out "$WORK/early" >/dev/null 2>&1
msg=$("$BIN" finetune --from "$WORK/early" --quiet --set threads=1 --set max_train_examples=100 --set epochs=1 --task kjv-testament --out "$WORK/ft_early" 2>&1 >/dev/null) || fail "finetune --from a stopped run: $msg"
echo "$msg" | grep -q "^warning: --from .*early is an unfinished pre-training: its checkpoint is at step 2 of 5" || fail "no warning for an unfinished pre-training: $msg"
echo "--from: a live run refused, a stopped one warned"

# Early stopping during the warm-up: patience does not count there (the run goes on).
out=$(ft --set epochs=1 --set patience=1 --set eval_every=1 --set warmup_steps=1000 --out "$WORK/warm" 2>&1) || fail "early stopping in the warm-up: $out"
echo "$out" | grep -q "stopped early" && fail "early stopping stopped during the warm-up: $out"
echo "early stopping: not during the warm-up"
echo PASS
