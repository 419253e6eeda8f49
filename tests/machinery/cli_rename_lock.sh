#!/usr/bin/env bash
# The lock holds the directory, not its name: a live run's directory renamed (`mv MV MV_old`)
# and a second writer started on the old name. The first keeps writing into MV_old (through
# the locked directory's descriptor) and stops at its next commit with one line saying where
# its files are (exit 2); the second owns MV alone. Real processes, a real rename.
#   tests/machinery/cli_rename_lock.sh BIN WORKDIR train|finetune|compare
# Run from the source directory (configs/tiny.toml, data/kjv.txt).
set -u
BIN=$(realpath "$1")
W=$(realpath -m "$2")
WHAT=$3
rm -rf "$W" && mkdir -p "$W" || exit 1
cd "$(dirname "$0")/../.." || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
head -c 200000 data/kjv.txt > "$W/corpus.txt"
T=(--config configs/tiny.toml --set train.threads=1 --set data.val_windows=4
   --set "data.path=$W/corpus.txt" --set data.vocab_size=120 --set train.eval_every=0)
wait_for() {  # wait_for FILE: until it exists (or 60 s)
    for _ in $(seq 600); do [ -e "$1" ] && return 0; sleep 0.1; done
    fail "$1 did not appear in 60 s"
}
# first_stopped LOG STATUS: the first writer ended with exit 2 and one line naming MV_old.
first_stopped() {
    [ "$2" -eq 2 ] || fail "$WHAT: the renamed writer exited $2, not 2: $(tail -2 "$1")"
    grep -q "was moved or replaced while this run wrote into it; its files are now at '$W/MV_old" "$1" ||
        fail "$WHAT: no 'moved' message naming MV_old: $(tail -2 "$1")"
}
# step_of DIR: the step checkpoint.json commits.
step_of() { sed -n 's/.*"step": \([0-9]*\).*/\1/p' "$1/checkpoint.json"; }

if [ "$WHAT" = train ]; then
    "$BIN" train "${T[@]}" --set train.steps=4000 --set train.checkpoint_every=20 \
        --set train.log_every=10 --quiet --out "$W/MV" > "$W/A.log" 2>&1 &
    A=$!
    wait_for "$W/MV/checkpoint.json"
    mv "$W/MV" "$W/MV_old"
    "$BIN" train "${T[@]}" --set train.steps=40 --quiet --out "$W/MV" > "$W/B.log" 2>&1 ||
        fail "the second writer on MV: $(tail -2 "$W/B.log")"
    wait "$A"
    first_stopped "$W/A.log" $?
    grep -q "steps = 40$" "$W/MV/config.toml" || fail "MV/config.toml is not B's"
    grep -q "steps = 4000$" "$W/MV_old/config.toml" || fail "MV_old/config.toml is not A's"
    [ "$(step_of "$W/MV")" = 40 ] || fail "MV's checkpoint is at step $(step_of "$W/MV"), not B's 40"
    [ "$(tail -1 "$W/MV/metrics.csv" | cut -d, -f1)" = 40 ] || fail "MV/metrics.csv has rows past B's 40"
    "$BIN" eval --run "$W/MV" > "$W/evalB.log" 2>&1 || fail "eval MV: $(cat "$W/evalB.log")"
    grep -q "(step 40," "$W/evalB.log" || fail "eval MV is not B's step 40: $(head -3 "$W/evalB.log")"
    "$BIN" eval --run "$W/MV_old" > "$W/evalA.log" 2>&1 || fail "eval MV_old: $(cat "$W/evalA.log")"
    a_step=$(step_of "$W/MV_old")
    # ≥ 20: the rename may land between the first commit's manifest and its own check
    [ "${a_step:-0}" -ge 20 ] || fail "A's checkpoint is not in MV_old (step ${a_step:-none})"
    ls "$W/MV" "$W/MV_old" | grep -q '\.tmp-' && fail "temporaries left: $(ls "$W/MV" "$W/MV_old")"
    # A continues where it stopped, in its new place.
    "$BIN" train "${T[@]}" --set train.steps=4000 --set train.checkpoint_every=20 \
        --set train.log_every=10 --quiet --stop-after $((a_step + 20)) --resume \
        --out "$W/MV_old" > "$W/A2.log" 2>&1 || fail "resume in MV_old: $(tail -2 "$W/A2.log")"
fi

if [ "$WHAT" = finetune ]; then
    "$BIN" train "${T[@]}" --set train.steps=3 --quiet --out "$W/mlm" > /dev/null 2>&1 || fail "pre-training"
    ft() { "$BIN" finetune --from "$W/mlm" --task kjv-testament --set threads=1 --quiet "$@"; }
    ft --set epochs=200 --set max_train_examples=300 --out "$W/MV" > "$W/A.log" 2>&1 &
    A=$!
    wait_for "$W/MV/metrics.csv"
    mv "$W/MV" "$W/MV_old"
    ft --set epochs=1 --set max_train_examples=200 --out "$W/MV" > "$W/B.log" 2>&1 ||
        fail "the second fine-tune on MV: $(tail -2 "$W/B.log")"
    wait "$A"
    first_stopped "$W/A.log" $?
    grep -q "max_train_examples = 200$" "$W/MV/finetune.toml" || fail "MV/finetune.toml is not B's"
    grep -q "max_train_examples = 300$" "$W/MV_old/finetune.toml" || fail "MV_old/finetune.toml is not A's"
    b_step=$(step_of "$W/MV")
    "$BIN" classify --run "$W/MV" --test-split > "$W/classifyB.log" 2>&1 || fail "classify MV: $(tail -2 "$W/classifyB.log")"
    [ "$(tail -1 "$W/MV/metrics.csv" | cut -d, -f1)" = "$b_step" ] ||
        fail "MV/metrics.csv ends past B's step $b_step: $(tail -1 "$W/MV/metrics.csv")"
    ls "$W/MV" "$W/MV_old" | grep -q '\.tmp-' && fail "temporaries left: $(ls "$W/MV" "$W/MV_old")"
fi

if [ "$WHAT" = compare ]; then
    C=("${T[@]}" --set train.batch_size=2 --seeds 1 --no-plot --schemes rope_interleaved,none)
    "$BIN" compare "${C[@]}" --set train.steps=3000 --set train.checkpoint_every=20 \
        --out "$W/MV" > "$W/A.log" 2>&1 &
    A=$!
    wait_for "$W/MV/rope_interleaved/seed1/checkpoint.json"
    mv "$W/MV" "$W/MV_old"
    "$BIN" compare "${C[@]}" --set train.steps=20 --out "$W/MV" > "$W/B.log" 2>&1 ||
        fail "the second compare on MV: $(tail -2 "$W/B.log")"
    wait "$A"
    status=$?
    [ "$status" -ne 0 ] || fail "compare: the renamed comparison exited 0"
    grep -q "was moved or replaced while this run wrote into it; its files are now at '$W/MV_old" "$W/A.log" ||
        fail "compare: no 'moved' message naming MV_old: $(tail -3 "$W/A.log")"
    for run in rope_interleaved none; do
        grep -q "steps = 20$" "$W/MV/$run/seed1/config.toml" || fail "MV/$run is not B's"
        [ "$(step_of "$W/MV/$run/seed1")" = 20 ] || fail "MV/$run's checkpoint is not B's step 20"
    done
    grep -q "steps = 3000$" "$W/MV_old/rope_interleaved/seed1/config.toml" || fail "MV_old/rope_interleaved is not A's"
    [ -e "$W/MV_old/none" ] && [ ! -e "$W/MV_old/none/seed1/tokenizer.json" ] || true
    find "$W/MV" "$W/MV_old" -name '*.tmp-*' | grep -q . && fail "temporaries left: $(find "$W" -name '*.tmp-*')"
fi

[ "$failures" -eq 0 ] && echo "PASS: $WHAT: a renamed live run keeps writing into itself and stops saying where; the new one owns the name"
