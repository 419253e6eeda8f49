#!/usr/bin/env bash
# `roformer finetune` / `classify` end to end (ctest cli_finetune): a tiny MLM run fine-tuned
# for a few steps on kjv-testament, classified; then the refusals, each one line, exit 2 and no
# run directory left behind: a clm run as --from, a task the tokenizer cannot encode at all
# (a tokenizer trained on Greek), an empty split (a corpus whose chapters are too short for
# the pair task), fortunes-topic without the fortunes package; Ctrl-C: exit 130 with a
# committed checkpoint classify can read; early stopping, interrupted and resumed; a metrics.csv
# row refused by a file-size limit (one error line, the checkpoint kept, the resume completes);
# classify --test-split reproduces the run's own test scores (last row, or the best model's).
#   tests/machinery/cli_finetune.sh ROFORMER_BIN WORK_DIR      (run from the repository root)
set -uo pipefail
BIN=$1 WORK=$2
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK"
train() { "$BIN" train --config configs/tiny.toml --set train.steps=3 --set train.eval_every=0 --quiet "$@"; }
train --out "$WORK/mlm" >/dev/null || fail "training the MLM run"
ft() { "$BIN" finetune --from "$WORK/mlm" --quiet --set threads=1 --set max_train_examples=300 --set epochs=1 "$@"; }
out=$(ft --task kjv-testament --out "$WORK/ft") || fail "finetune: $out"
echo "$out" | grep -q "^test: accuracy 0\.[0-9]*, macro-F1" || fail "finetune output: $out"
for f in finetune.toml config.toml tokenizer.json task.json metrics.csv floor.json model.safetensors checkpoint.json; do
  [ -f "$WORK/ft/$f" ] || fail "no $f in the fine-tune run"
done
out=$("$BIN" classify --run "$WORK/ft" "And Jesus answered and said") || fail "classify: $out"
echo "$out" | head -1 | grep -Eq "^label: (Old|New) Testament$" || fail "classify output: $out"
/usr/bin/python3 - "$out" <<'PY' || fail "probabilities do not sum to 1"
import sys
p = [float(l.split()[0]) for l in sys.argv[1].splitlines()[1:]]
assert len(p) == 2 and abs(sum(p) - 1) < 1e-3, p
PY
# classify --test-split scores the test split again with the kept model: the same accuracy,
# macro-F1 and loss as the run's last metrics.csv row; its confusion CSV sums to the examples
# and its diagonal to the accuracy.
out=$("$BIN" classify --run "$WORK/ft" --test-split --confusion "$WORK/confusion.csv") || fail "classify --test-split: $out"
/usr/bin/python3 - "$out" "$WORK/ft/metrics.csv" "$WORK/confusion.csv" <<'PY' || fail "classify --test-split disagrees with the run: $out"
import csv, re, sys
out, metrics, conf = sys.argv[1:]
m = re.search(r"accuracy (\S+)  macro-F1 (\S+)  loss (\S+)", out)
last = list(csv.DictReader(open(metrics)))[-1]
for got, key in zip(m.groups(), ("accuracy", "macro_f1", "test_loss")):
    assert abs(float(got) - float(last[key])) < 6e-5, (key, got, last[key])
rows = list(csv.reader(open(conf)))
assert rows[0][1:] == ["Old Testament", "New Testament"], rows[0]
counts = [[int(x) for x in r[1:]] for r in rows[1:]]
n = sum(map(sum, counts)); trace = sum(counts[i][i] for i in range(len(counts)))
assert n == int(re.search(r": (\d+) examples", out).group(1)), (n, out)
assert abs(trace / n - float(last["accuracy"])) < 1e-6, (trace, n, last["accuracy"])
PY
echo "classify --test-split: agrees with metrics.csv's last row"
# …and scripts/plot_confusion.py draws it (a PNG, written by rename); a CSV that is not one is refused.
/usr/bin/python3 scripts/plot_confusion.py "$WORK/confusion.csv" "$WORK/confusion.png" "tiny run" >/dev/null || fail "plot_confusion.py"
[ "$(head -c 4 "$WORK/confusion.png" | od -An -c | tr -d ' ')" = "211PNG" ] || fail "plot_confusion.py wrote no PNG"
/usr/bin/python3 scripts/plot_confusion.py "$WORK/ft/metrics.csv" "$WORK/bad.png" 2>/dev/null; rc=$?
[ $rc -eq 2 ] && [ ! -e "$WORK/bad.png" ] || fail "plot_confusion.py on a metrics.csv: exit $rc"
# It draws over its own picture again, never over someone else's file.
/usr/bin/python3 scripts/plot_confusion.py "$WORK/confusion.csv" "$WORK/confusion.png" >/dev/null || fail "plot_confusion.py over its own PNG"
echo "my figure" > "$WORK/mine.png"
msg=$(/usr/bin/python3 scripts/plot_confusion.py "$WORK/confusion.csv" "$WORK/mine.png" 2>&1); rc=$?
[ $rc -eq 2 ] && [ "$(cat "$WORK/mine.png")" = "my figure" ] || fail "plot_confusion.py over a user's file: exit $rc, $(head -c 40 "$WORK/mine.png")"
echo "$msg" | grep -q "was not drawn by plot_confusion.py; move it away" || fail "plot_confusion.py's refusal: $msg"
ls "$WORK"/mine.png.tmp-* >/dev/null 2>&1 && fail "plot_confusion.py left a temporary file"
refuse() {  # refuse NAME EXPECTED-FRAGMENT COMMAND...
  local name=$1 want=$2; shift 2
  msg=$("$@" 2>&1); rc=$?
  [ $rc -eq 2 ] || fail "$name: exit $rc, not 2: $msg"
  [ "$(echo "$msg" | wc -l)" -eq 1 ] || fail "$name: not one line: $msg"
  echo "$msg" | grep -q "$want" || fail "$name: message: $msg"
  echo "$name refused: $msg"
}
refuse "--test-split with a text" "drop the text" "$BIN" classify --run "$WORK/ft" --test-split "In the beginning"
refuse "--confusion without --test-split" "add it" "$BIN" classify --run "$WORK/ft" --confusion "$WORK/c2.csv" "In the beginning"
echo "my notes" > "$WORK/notes.csv"
refuse "--confusion over a user's file" "nothing shows that roformer wrote it" "$BIN" classify --run "$WORK/ft" --test-split --confusion "$WORK/notes.csv"
[ "$(cat "$WORK/notes.csv")" = "my notes" ] || fail "a user's file was overwritten by --confusion"
train --set train.objective=clm --out "$WORK/clm" >/dev/null || fail "training the clm run"
refuse "clm --from" "is a causal-LM run" "$BIN" finetune --from "$WORK/clm" --out "$WORK/no1"
[ -e "$WORK/no1" ] && fail "a refused finetune left a directory"
/usr/bin/python3 -c "
words = 'αβγ δεζ ηθι κλμ νξο πρσ τυφ χψω'.split()
print('\n\n'.join('\n'.join(' '.join(words[(b + l + k) % 8] for k in range(12)) for l in range(30)) for b in range(40)))
" > "$WORK/greek.txt"
train --set data.path="$WORK/greek.txt" --set data.tokenizer=char --out "$WORK/greek" >/dev/null || fail "training the Greek run"
refuse "unencodable task" "cannot encode this task's text" "$BIN" finetune --from "$WORK/greek" --task kjv-testament --out "$WORK/no2"
/usr/bin/python3 -c "print('\n\n'.join('In the beginning was the word\nand the word was' for _ in range(1189)))" > "$WORK/short.txt"
refuse "empty split" "split is empty" "$BIN" finetune --from "$WORK/mlm" --task kjv-next-verse --set corpus="$WORK/short.txt" --out "$WORK/no3"
# Ctrl-C: the step finishes, the model is committed, exit 130
"$BIN" finetune --from "$WORK/mlm" --task kjv-testament --set threads=1 --set epochs=50 --out "$WORK/int" 2>"$WORK/int.log" &
pid=$!
for _ in $(seq 1 300); do grep -q "^step 0 " "$WORK/int.log" 2>/dev/null && break; sleep 0.1; done
kill -INT $pid; wait $pid; rc=$?
[ $rc -eq 130 ] || fail "SIGINT: exit $rc, not 130: $(cat "$WORK/int.log")"
grep -q "interrupted at step .*continue with: roformer finetune .* --resume --out" "$WORK/int.log" || fail "no interruption message: $(tail -1 "$WORK/int.log")"
"$BIN" classify --run "$WORK/int" "In the beginning" >/dev/null || fail "classify after Ctrl-C"
# --stop-after then --resume ends bit-identical to an uninterrupted fine-tune (model bytes and
# every metrics.csv column but elapsed_s: the checkpoint carries the train-loss window)
ft --task kjv-testament --set epochs=2 --out "$WORK/whole" >/dev/null || fail "the uninterrupted fine-tune"
out=$(ft --task kjv-testament --set epochs=2 --out "$WORK/parts" --stop-after 7) || fail "--stop-after: $out"
echo "$out" | grep -q "stopped after step 7 of" || fail "--stop-after output: $out"
ft --task kjv-testament --set epochs=2 --out "$WORK/parts" --resume >/dev/null || fail "--resume"
cmp "$WORK/whole/model.safetensors" "$WORK/parts/model.safetensors" || fail "resumed model differs"
[ "$(cut -d, -f1-7 "$WORK/whole/metrics.csv")" = "$(cut -d, -f1-7 "$WORK/parts/metrics.csv")" ] || fail "resumed metrics differ"
refuse "changed config on resume" "config differs from $WORK/parts/finetune.toml: epochs = 2 there but epochs = 3 now" "$BIN" finetune --from "$WORK/mlm" --quiet --set threads=1 --set max_train_examples=300 --set epochs=3 --task kjv-testament --out "$WORK/parts" --resume
echo "resume: bit-identical model and metrics"
# A metrics.csv row the file system refuses (a file-size limit here; a full disk alike): one
# error line naming the file, exit 2, the checkpoint before it intact, and the resume completes.
fsz() { ft --task kjv-testament --set max_train_examples=1000 --set eval_every=1 --out "$WORK/fsz" "$@"; }
fsz --stop-after 1 >/dev/null || fail "the run to step 1 before the file-size limit"
(ulimit -f 1 && fsz --resume) >"$WORK/fsz.out" 2>"$WORK/fsz.err"
rc=$?
[ $rc -eq 2 ] || fail "metrics.csv over the file-size limit: exit $rc: $(cat "$WORK/fsz.err")"
[ "$(wc -l <"$WORK/fsz.err")" -eq 1 ] || fail "metrics.csv over the limit: not one line: $(cat "$WORK/fsz.err")"
grep -q "^error: cannot append a row to .*metrics.csv (File too large)" "$WORK/fsz.err" ||
  fail "metrics.csv over the limit: message: $(cat "$WORK/fsz.err")"
[ "$(sed -n 's/.*"step": *\([0-9]*\).*/\1/p' "$WORK/fsz/checkpoint.json")" = 1 ] ||
  fail "the checkpoint of step 1 did not survive: $(cat "$WORK/fsz/checkpoint.json")"
fsz --resume >/dev/null 2>"$WORK/fsz2.err" || fail "resume after the file-size limit: $(cat "$WORK/fsz2.err")"
fields=$(head -1 "$WORK/fsz/metrics.csv" | awk -F, '{ print NF }')
awk -F, -v n="$fields" 'NF != n { exit 1 }' "$WORK/fsz/metrics.csv" ||
  fail "a row cut by the file-size limit survived the resume: $(awk -F, -v n="$fields" 'NF != n' "$WORK/fsz/metrics.csv")"
echo "metrics.csv refused: $(cat "$WORK/fsz.err")"
# a learned-position run with fewer positions than finetune.max_len: refused before any file
train --set position.scheme=learned --set position.max_positions=16 --set data.seq_len=16 --out "$WORK/learned16" >/dev/null || fail "training the learned run"
refuse "max_len over learned positions" "is more than the --from run's position.max_positions = 16" "$BIN" finetune --from "$WORK/learned16" --out "$WORK/no5"
[ -e "$WORK/no5" ] && fail "a refused max_len finetune left a directory"
# fortunes-topic without the package: one line naming the apt-get command
refuse "fortunes missing" "apt-get install fortunes" "$BIN" finetune --from "$WORK/mlm" --task fortunes-topic --set fortunes_dir="$WORK/no-fortunes" --out "$WORK/no4"
[ -e "$WORK/no4" ] && fail "a refused fortunes finetune left a directory"
# Early stopping (patience = 2, evaluated every step, no warm-up — evaluations in a warm-up do
# not count): the run says when and why it stopped;
# stopped with --stop-after before that step and resumed, it stops at the same step with the
# same best and last models; resuming a stopped run is refused; classify reads best.safetensors.
es() { ft --task kjv-testament --set eval_every=1 --set patience=2 --set warmup_steps=0 "$@"; }
out=$(es --out "$WORK/es_whole") || fail "early stopping: $out"
echo "$out" | grep -q "^stopped early after step [0-9]* of [0-9]*: validation macro-F1 (30 held-out training examples) did not rise for 2 evaluations" || fail "early-stopping output: $out"
echo "$out" | grep -q "^best: step [0-9]*, validation macro-F1" || fail "no best line: $out"
stop=$(echo "$out" | sed -n 's/^stopped early after step \([0-9]*\) of.*/\1/p')
[ "$stop" -ge 2 ] || fail "stopped at step $stop: too early to test a resume before it"
for f in best.safetensors early_stopping.json; do [ -f "$WORK/es_whole/$f" ] || fail "no $f"; done
head -1 "$WORK/es_whole/metrics.csv" | grep -q ",val_loss,val_accuracy,val_macro_f1$" || fail "metrics.csv header: $(head -1 "$WORK/es_whole/metrics.csv")"
es --out "$WORK/es_parts" --stop-after $((stop - 1)) >/dev/null || fail "early stopping --stop-after"
out2=$(es --out "$WORK/es_parts" --resume) || fail "early stopping --resume: $out2"
[ "$(echo "$out2" | head -2)" = "$(echo "$out" | head -2)" ] || fail "resumed run stopped differently: $out2 vs $out"
for f in best.safetensors model.safetensors early_stopping.json; do
  cmp "$WORK/es_whole/$f" "$WORK/es_parts/$f" || fail "resumed early-stopping run: $f differs"
done
refuse "resume a stopped run" "stopped early at step $stop" "$BIN" finetune --from "$WORK/mlm" --quiet --set threads=1 --set max_train_examples=300 --set epochs=1 --task kjv-testament --set eval_every=1 --set patience=2 --set warmup_steps=0 --out "$WORK/es_whole" --resume
"$BIN" classify --run "$WORK/es_whole" "In the beginning" >/dev/null || fail "classify an early-stopped run"
out=$("$BIN" classify --run "$WORK/es_whole" --test-split) || fail "classify --test-split, early-stopped: $out"
/usr/bin/python3 - "$out" "$WORK/es_whole/early_stopping.json" <<'PY' || fail "--test-split of an early-stopped run is not its best model's score: $out"
import json, re, sys
acc, f1 = map(float, re.search(r"accuracy (\S+)  macro-F1 (\S+)", sys.argv[1]).groups())
best = json.load(open(sys.argv[2]))["best_test"]
assert "model best.safetensors" in sys.argv[1]
assert abs(acc - best["accuracy"]) < 6e-5 and abs(f1 - best["macro_f1"]) < 6e-5, (acc, f1, best)
PY
echo "early stopping: stopped at step $stop, resumed run identical"
echo PASS
