#!/usr/bin/env bash
# A file-size limit (ulimit -f) hit while a checkpoint is written (issue 14): roformer ignores
# SIGXFSZ, so the write fails with EFBIG and the run ends with a one-line error and exit 2 —
# not death by signal — and the previous checkpoint stays whole: checkpoint.json, the model
# and the optimizer are byte for byte what they were, and --resume without the limit ends
# bit-identical to a run that was never cut.
#
#   tests/machinery/cli_file_size_limit.sh BIN WORKDIR
set -u
BIN=$(realpath "$1")
W=$(realpath -m "$2")
rm -rf "$W" && mkdir -p "$W" || exit 1
cd "$(dirname "$0")/../.." || exit 1
fail() { echo "FAIL: $*"; exit 1; }

head -c 200000 data/kjv.txt > "$W/corpus.txt"
ARGS="--config configs/tiny.toml --set data.path=$W/corpus.txt --set data.vocab_size=120
      --set data.val_windows=4 --set train.eval_every=2 --set train.steps=4 --quiet"
"$BIN" train $ARGS --out "$W/whole" > "$W/whole.log" 2>&1 || fail "the uninterrupted run"
"$BIN" train $ARGS --stop-after 2 --out "$W/cut" > "$W/cut.log" 2>&1 || fail "the run to step 2"
snapshot() { (cd "$W/cut" && sha256sum checkpoint.json model.safetensors optimizer.safetensors); }
before=$(snapshot)
size=$(stat -c %s "$W/cut/model.safetensors")
limit_kb=$((size / 1024 / 2))  # half the model file: the next checkpoint cannot be written

(ulimit -f "$limit_kb" && exec "$BIN" train $ARGS --resume --out "$W/cut") > "$W/limited.log" 2>&1
status=$?
[ "$status" -eq 2 ] || fail "under ulimit -f $limit_kb the exit code is $status, not 2: $(tail -2 "$W/limited.log")"
grep -q "File too large" "$W/limited.log" || fail "no 'File too large' in: $(cat "$W/limited.log")"
[ "$(grep -c . "$W/limited.log")" -eq 1 ] || fail "the error is not one line: $(cat "$W/limited.log")"
[ "$(snapshot)" = "$before" ] || fail "the step-2 checkpoint changed under the failed write"
# The failed write's temporaries are gone at once, not at the next resume: they would keep
# holding the space that ran out.
ls "$W/cut" | grep -q '\.tmp-' && fail "temporaries left by the failed write: $(ls "$W/cut")"
"$BIN" eval --run "$W/cut" > "$W/eval.log" 2>&1 || fail "the kept checkpoint does not load: $(cat "$W/eval.log")"
grep -q "(step 2," "$W/eval.log" || fail "eval does not see step 2: $(cat "$W/eval.log")"

"$BIN" train $ARGS --resume --out "$W/cut" > "$W/resumed.log" 2>&1 || fail "resume without the limit: $(tail -2 "$W/resumed.log")"
ls "$W/cut" | grep -q '\.tmp-' && fail "temporaries left behind: $(ls "$W/cut")"
for f in model.safetensors optimizer.safetensors; do
    cmp -s "$W/whole/$f" "$W/cut/$f" || fail "$f differs from the uninterrupted run's"
done
# A fresh run whose first checkpoint fails leaves nothing a rerun would refuse: the same
# command without the limit starts (train into a new and into a user's empty directory,
# finetune, compare), and single-file outputs leave no temporary.
no_temps() { find "$1" -name '*.tmp-*' 2>/dev/null | grep -q . && fail "$2: temporaries left: $(find "$1" -name '*.tmp-*')"; }
limited() { (ulimit -f "$limit_kb" && exec "$BIN" "$@") > "$W/lim.log" 2>&1; }
mkdir "$W/users_empty"
for out in fresh users_empty; do
    limited train $ARGS --out "$W/$out" && fail "$out: the limited fresh run exited 0"
    grep -q "File too large" "$W/lim.log" || fail "$out: no 'File too large': $(cat "$W/lim.log")"
    no_temps "$W/$out" "$out"
    "$BIN" train $ARGS --out "$W/$out" > "$W/rerun.log" 2>&1 || fail "$out: rerun after a failed first checkpoint: $(tail -1 "$W/rerun.log")"
done
[ -d "$W/users_empty" ] || fail "the user's empty directory was removed"
"$BIN" finetune --from "$W/whole" --task kjv-testament --quiet --set threads=1 --set epochs=1 \
    --set max_train_examples=100 --out "$W/ft_ref" > "$W/ft.log" 2>&1 || fail "fine-tune: $(tail -1 "$W/ft.log")"
ft_kb=$(( $(stat -c %s "$W/ft_ref/model.safetensors") / 1024 / 2 ))
(ulimit -f "$ft_kb" && exec "$BIN" finetune --from "$W/whole" --task kjv-testament --quiet --set threads=1 \
    --set epochs=1 --set max_train_examples=100 --out "$W/ft") > "$W/lim.log" 2>&1 && fail "finetune: the limited run exited 0"
no_temps "$W/ft" "finetune"
"$BIN" finetune --from "$W/whole" --task kjv-testament --quiet --set threads=1 --set epochs=1 \
    --set max_train_examples=100 --out "$W/ft" > "$W/ft.log" 2>&1 || fail "finetune rerun: $(tail -1 "$W/ft.log")"
CMP="compare --config configs/tiny.toml --set data.path=$W/corpus.txt --set data.vocab_size=120 --set data.val_windows=4 --set train.steps=4 --set train.eval_every=2 --seeds 1 --no-plot --schemes rope_interleaved"
limited $CMP --out "$W/cmp" && fail "compare: the limited run exited 0"
no_temps "$W/cmp" "compare"
"$BIN" $CMP --out "$W/cmp" > "$W/cmp.log" 2>&1 || fail "compare rerun: $(tail -1 "$W/cmp.log")"
mkdir -p "$W/single"
(ulimit -f 1 && exec "$BIN" attention --run "$W/whole" --out "$W/single/a.npy" "$(head -c 600 "$W/corpus.txt" | tr '\n' ' ')") > "$W/lim.log" 2>&1 &&
    fail "attention --out under ulimit -f 1 exited 0"
grep -q "File too large" "$W/lim.log" || fail "attention: no 'File too large': $(cat "$W/lim.log")"
(ulimit -f 1 && exec "$BIN" graph --out "$W/single/g.dot") > "$W/lim.log" 2>&1 && fail "graph --out under ulimit -f 1 exited 0"
grep -q "File too large" "$W/lim.log" || fail "graph: no 'File too large': $(cat "$W/lim.log")"
[ -z "$(ls "$W/single")" ] || fail "single-file outputs left files: $(ls "$W/single")"

echo "PASS: a file-size limit is a clean error (exit 2), the previous checkpoint intact, resume bit-identical"
