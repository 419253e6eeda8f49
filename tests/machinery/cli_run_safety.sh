#!/usr/bin/env bash
# A run directory survives kills, interruptions and a second writer (issue 14), tested on the
# real binary because signals, _exit and flock are process-level behaviour.
#   tests/machinery/cli_run_safety.sh <roformer binary> <scratch dir> faults|signals
#   faults:  RF_FAULT_KILL_AT kills the writer at each point of a checkpoint commit (at the
#            first checkpoint and at a later one); --resume then ends bit-identical to an
#            uninterrupted run (metrics loss columns, model and optimizer bytes)
#   signals: a second writer is refused naming the first's pid; SIGINT then SIGTERM stop the
#            run with a checkpoint (exit 130, 143); --resume ends bit-identical
# Run from the source directory (configs/tiny.toml).
set -u
BIN=$1 WORK=$2 WHAT=$3
rm -rf "$WORK" && mkdir -p "$WORK"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# metrics.csv without the timing columns (tokens_per_s, elapsed_s), which differ run to run.
losses() { cut -d, -f1-7 "$1/metrics.csv"; }
same_as() {  # same_as REF DIR LABEL
    local ref=$1 dir=$2 label=$3
    [ "$(losses "$ref")" = "$(losses "$dir")" ] || fail "$label: metrics.csv differs"
    cmp -s "$ref/model.safetensors" "$dir/model.safetensors" || fail "$label: model differs"
    cmp -s "$ref/optimizer.safetensors" "$dir/optimizer.safetensors" ||
        fail "$label: optimizer differs"
    ls "$dir" | grep -q '\.tmp-' && fail "$label: temporaries left: $(ls "$dir")"
}
TRAIN=("$BIN" train --config configs/tiny.toml --set train.eval_every=5)
train() { "${TRAIN[@]}" "$@"; }  # in the background, "${TRAIN[@]}" itself: $! must be its pid

if [ "$WHAT" = faults ]; then
    ARGS=(--set train.steps=12 --set train.checkpoint_every=4 --set train.log_every=2 --quiet)
    train "${ARGS[@]}" --out "$WORK/ref" >/dev/null || fail "reference run"
    for point in model-temp optimizer-temp manifest model-rename optimizer-rename; do
        for step in 4 8; do
            dir="$WORK/$point-$step"
            RF_FAULT_KILL_AT=$point@$step train "${ARGS[@]}" --out "$dir" >/dev/null 2>&1
            code=$?
            [ $code -eq 99 ] || fail "$point@$step: exit $code, expected the fault hook's 99"
            out=$(train "${ARGS[@]}" --resume --out "$dir" 2>&1) || fail "$point@$step: resume: $out"
            same_as "$WORK/ref" "$dir" "$point@$step"
        done
    done
elif [ "$WHAT" = signals ]; then
    ARGS=(--set train.steps=400 --set train.log_every=1)
    train "${ARGS[@]}" --quiet --out "$WORK/ref" >/dev/null || fail "reference run"
    dir="$WORK/run"
    rows() { [ -f "$dir/metrics.csv" ] && wc -l <"$dir/metrics.csv" || echo 0; }
    wait_rows() {  # until metrics.csv has more than $1 lines (or 60 s)
        for _ in $(seq 600); do [ "$(rows)" -gt "$1" ] && return 0; sleep 0.1; done
        fail "no metrics row after 60 s"
    }
    # 1. A writer, then a second one on the same directory: refused, naming the first's pid.
    "${TRAIN[@]}" "${ARGS[@]}" --out "$dir" >"$WORK/first.out" 2>"$WORK/first.err" &
    first=$!
    wait_rows 1
    for extra in "" --resume; do
        msg=$(train "${ARGS[@]}" $extra --out "$dir" 2>&1)
        code=$?
        [ $code -ne 0 ] || fail "second writer ($extra) exited 0"
        echo "$msg" | grep -q "run directory $dir is in use by pid $first" ||
            fail "second writer ($extra): '$msg'"
    done
    # 2. SIGINT: the step finishes, a checkpoint is written, exit 130 with the resume command.
    kill -INT $first
    wait $first
    code=$?
    [ $code -eq 130 ] || fail "SIGINT: exit $code, expected 130"
    grep -q "interrupted at step [0-9]*; continue with: roformer train .* --resume --out $dir" \
        "$WORK/first.err" || fail "SIGINT message: $(tail -2 "$WORK/first.err")"
    # 3. Resume, SIGTERM it a few rows later (exit 143), resume to the end: same bytes.
    before=$(rows)
    "${TRAIN[@]}" "${ARGS[@]}" --resume --out "$dir" >/dev/null 2>"$WORK/second.err" &
    second=$!
    wait_rows $((before + 2))
    kill -TERM $second
    wait $second
    code=$?
    [ $code -eq 143 ] || fail "SIGTERM: exit $code, expected 143"
    train "${ARGS[@]}" --quiet --resume --out "$dir" >/dev/null 2>&1 || fail "final resume"
    same_as "$WORK/ref" "$dir" "SIGINT + SIGTERM"
    # 4. Killed hard before its first checkpoint: --resume starts again from step 0.
    dir="$WORK/hard"
    "${TRAIN[@]}" "${ARGS[@]}" --out "$dir" >/dev/null 2>&1 &
    third=$!
    wait_rows 1
    kill -KILL $third
    wait $third 2>/dev/null
    msg=$(train "${ARGS[@]}" --resume --out "$dir" 2>&1) || fail "resume after -9: $msg"
    echo "$msg" | grep -q "no checkpoint in $dir yet; starting again from step 0" ||
        fail "resume after -9 did not say it restarts: $msg"
    same_as "$WORK/ref" "$dir" "kill -9 before the first checkpoint"
else
    echo "usage: $0 <roformer> <scratch dir> faults|signals" && exit 2
fi
[ $failures -eq 0 ] && echo "PASS ($WHAT)" || { echo "$failures failure(s)"; exit 1; }
