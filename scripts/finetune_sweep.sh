#!/usr/bin/env bash
# The fine-tune table at laptop scale (issue 25): every position scheme pre-trained (MLM) with
# 3 seeds by `roformer compare`, each run fine-tuned on every task, a from-scratch baseline per
# task and seed, and a table of mean ± std per scheme and task with paired 95 % intervals
# against rope_interleaved, the bag-of-words floor and the majority class beside them.
#
#   scripts/finetune_sweep.sh OUT_DIR            the full sweep (configs/finetune_sweep.toml;
#                                                ≈ 1 h 30 min on 2 idle cores — see its header)
#   scripts/finetune_sweep.sh --smoke OUT_DIR    seconds: a tiny preset, 2 schemes × 2 seeds,
#                                                2 tasks, 1 short epoch (tests/machinery/cli_finetune_sweep.sh)
#
# Layout: OUT_DIR/pretrain (a `roformer compare` directory: <scheme>/seed<k>),
#         OUT_DIR/ft/<task>/<scheme>/seed<k> and OUT_DIR/ft/<task>/scratch/seed<k> (fine-tune
#         run directories), OUT_DIR/table.md and OUT_DIR/finetune_results.csv.
# Safe to run again: compare resumes its runs, and a fine-tune is redone only if it has no
# "done" marker (an interrupted one is removed and started over, if this sweep began it).
# Every step's failure fails the sweep (a failed pre-training or fine-tune: exit non-zero, no
# table printed); table.md and finetune_results.csv replace only the ones finetune_table.py wrote.
# Environment: ROFORMER_BIN (default build/roformer), PYTHON (default /usr/bin/python3),
# SWEEP_TASKS (space-separated; default all four tasks), SWEEP_SET (extra "key=value" fine-tune
# overrides, space-separated), SWEEP_SCRATCH (the scheme whose architecture the from-scratch
# baseline has; default rope_interleaved, the table's reference). Run from the repository root.
#
# One setting differs by task, for every model alike (the schemes and scratch): fortunes-topic
# has 672 training quotes, so the preset's 3 epochs are 186 steps, 100 of them warm-up; with
# it the models trained from scratch stay exactly at chance (macro-F1 0.0476 on all 3 seeds,
# docs/results.md). It runs the schedule docs/finetune.md chose for it on the tiny run before
# any sweep: 10 epochs (620 steps), lr 2e-3, 30 warm-up steps (task_set below).
set -euo pipefail
cd "$(dirname "$0")/.."
smoke=0
if [ "${1:-}" = "--smoke" ]; then smoke=1; shift; fi
[ $# -eq 1 ] || { echo "usage: scripts/finetune_sweep.sh [--smoke] OUT_DIR" >&2; exit 2; }
OUT=$1
BIN=${ROFORMER_BIN:-build/roformer}
PYTHON=${PYTHON:-/usr/bin/python3}
[ -x "$BIN" ] || { echo "finetune_sweep: $BIN not found; build first (scripts/setup.sh)" >&2; exit 2; }

if [ $smoke = 1 ]; then
  preset=configs/compare_smoke.toml
  tasks=${SWEEP_TASKS:-"kjv-testament fortunes-topic"}
  ft_set=(max_len=16 max_train_examples=60 epochs=1 batch_size=16 warmup_steps=2 threads=1)
else
  preset=configs/finetune_sweep.toml
  tasks=${SWEEP_TASKS:-"kjv-testament kjv-book kjv-next-verse fortunes-topic"}
  ft_set=()
fi
for kv in ${SWEEP_SET:-}; do ft_set+=("$kv"); done
SCRATCH=${SWEEP_SCRATCH:-rope_interleaved}
task_set() {  # the task's own "key=value" settings, before ft_set (which can override them)
  case $1 in
    fortunes-topic) echo "epochs=10 lr=2e-3 warmup_steps=30" ;;
  esac
}

mkdir -p "$OUT"
start=$SECONDS
echo "finetune_sweep: pre-training ($preset) into $OUT/pretrain"
# compare's own lines are filtered for the console (sed, which never fails on no match); with
# pipefail a failed compare fails the sweep here, before any fine-tune or table uses its runs.
"$BIN" compare --config "$preset" --out "$OUT/pretrain" --no-plot | sed -nE '/^\[|runs trained/p' ||
  { echo "finetune_sweep: the pre-training failed (its error is above); fix it and run the same command again" >&2; exit 1; }

finetune() {  # finetune OUT_RUN SEED TASK ARGS...
  local dir=$1 seed=$2 task=$3; shift 3
  [ -f "$dir/done" ] && return 0
  # An unfinished fine-tune is started over — but only one this sweep began (its $dir.log is
  # written before the run starts): a folder it did not make is never deleted.
  if [ -e "$dir" ]; then
    [ -f "$dir.log" ] || { echo "finetune_sweep: $dir exists and was not started by this sweep (no $dir.log); move it away" >&2; exit 2; }
    rm -rf "$dir"
  fi
  mkdir -p "$(dirname "$dir")"
  : >"$dir.log"
  local sets=(--set "seed=$seed")
  for kv in $(task_set "$task") "${ft_set[@]}"; do sets+=(--set "$kv"); done
  "$BIN" finetune --config configs/finetune.toml "${sets[@]}" --quiet --out "$dir" --task "$task" "$@" > "$dir.log"
  touch "$dir/done"
  echo "  $(head -n 1 "$dir.log")  [$dir]"
}

for task in $tasks; do
  echo "finetune_sweep: task $task"
  for run in "$OUT"/pretrain/*/seed*; do
    [ -f "$run/model.safetensors" ] || continue
    scheme=$(basename "$(dirname "$run")") seed=${run##*seed}
    finetune "$OUT/ft/$task/$scheme/seed$seed" "$seed" "$task" --from "$run"
  done
  # the no-pretraining baseline: the reference scheme's architecture (the table's Δ column
  # compares against it), fresh weights, every seed
  [ -d "$OUT/pretrain/$SCRATCH" ] || { echo "finetune_sweep: no $OUT/pretrain/$SCRATCH for the from-scratch baseline; set SWEEP_SCRATCH to a pre-trained scheme" >&2; exit 2; }
  for run in "$OUT/pretrain/$SCRATCH/"seed*; do
    seed=${run##*seed}
    finetune "$OUT/ft/$task/scratch/seed$seed" "$seed" "$task" --from "$run" --from-scratch
  done
done
"$PYTHON" scripts/finetune_table.py "$OUT"
echo "finetune_sweep: $(( SECONDS - start )) s; the table is $OUT/table.md"
