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
"$BIN" eval --run "$W/cut" > "$W/eval.log" 2>&1 || fail "the kept checkpoint does not load: $(cat "$W/eval.log")"
grep -q "(step 2," "$W/eval.log" || fail "eval does not see step 2: $(cat "$W/eval.log")"

"$BIN" train $ARGS --resume --out "$W/cut" > "$W/resumed.log" 2>&1 || fail "resume without the limit: $(tail -2 "$W/resumed.log")"
ls "$W/cut" | grep -q '\.tmp-' && fail "temporaries left behind: $(ls "$W/cut")"
for f in model.safetensors optimizer.safetensors; do
    cmp -s "$W/whole/$f" "$W/cut/$f" || fail "$f differs from the uninterrupted run's"
done
echo "PASS: a file-size limit is a clean error (exit 2), the previous checkpoint intact, resume bit-identical"
