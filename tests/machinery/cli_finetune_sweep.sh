#!/usr/bin/env bash
# scripts/finetune_sweep.sh --smoke (ctest cli_finetune_sweep): the fine-tune table's tooling
# end to end in seconds — 2 schemes × 2 seeds pre-trained, each fine-tuned on 2 tasks, the
# from-scratch baseline, the table with its floors and paired intervals; a second run redoes
# nothing; fortunes-topic runs with its own schedule. The numbers mean nothing at this size.
#   tests/machinery/cli_finetune_sweep.sh ROFORMER_BIN WORK_DIR      (run from the repository root)
set -uo pipefail
BIN=$1 WORK=$2
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$WORK"
out=$(ROFORMER_BIN=$BIN scripts/finetune_sweep.sh --smoke "$WORK" 2>&1) || fail "the smoke sweep: $out"
table="$WORK/table.md"
[ -f "$table" ] || fail "no table.md"
for task in kjv-testament fortunes-topic; do
  grep -q "^## $task$" "$table" || fail "no section for $task in table.md"
done
for row in "rope_interleaved | 2 |" "learned | 2 |" "scratch | 2 |" "bag of words (floor) | 6 runs" "majority class (floor) | 6 runs"; do
  [ "$(grep -c "^| $row" "$table")" -eq 2 ] || fail "row '$row' is not in both tasks' tables: $(cat "$table")"
done
grep -q "^| learned | 2 | 0\.[0-9]* ± 0\.[0-9]* | 0\.[0-9]* ± 0\.[0-9]* | [+-]0\.[0-9]* \[[+-]0\.[0-9]*, [+-]0\.[0-9]*\] |$" "$table" || fail "no paired interval on the learned row: $(cat "$table")"
# fortunes-topic's own schedule (task_set: lr 2e-3) on top of the preset (lr 2e-4), for every
# model of that task and none of the other's; the table says which settings each task ran.
/usr/bin/python3 - "$WORK/ft" <<'PY' || fail "fortunes-topic's own lr is not what its runs used"
import sys, tomllib
lr = lambda run: tomllib.load(open(f"{sys.argv[1]}/{run}/finetune.toml", "rb"))["finetune"]["lr"]
assert lr("fortunes-topic/learned/seed1") == 2e-3 and lr("fortunes-topic/scratch/seed2") == 2e-3
assert lr("kjv-testament/learned/seed1") == 2e-4, lr("kjv-testament/learned/seed1")
PY
grep -q 'scheme = "rope"' "$WORK/ft/kjv-testament/scratch/seed1/config.toml" || fail "the from-scratch baseline is not the reference scheme's architecture"
grep -q '"from_scratch": true' "$WORK/ft/kjv-testament/scratch/seed1/task.json" || fail "the scratch run was not from scratch"
grep -q "; lr 0.002, 1 epochs of batch 16" "$table" || fail "the table does not state fortunes-topic's settings: $(cat "$table")"
[ "$(tail -n +2 "$WORK/finetune_results.csv" | wc -l)" -eq 12 ] || fail "finetune_results.csv has not 12 runs (2 tasks × 3 models × 2 seeds)"
before=$(stat -c %Y "$WORK/ft/kjv-testament/learned/seed1/model.safetensors")
again=$(ROFORMER_BIN=$BIN scripts/finetune_sweep.sh --smoke "$WORK" 2>&1) || fail "the second smoke sweep: $again"
echo "$again" | grep -q "0 runs trained, 0 resumed, 4 already finished" || fail "the second sweep pre-trained again: $again"
echo "$again" | grep -q "test: accuracy" && fail "the second sweep fine-tuned again: $again"
[ "$(stat -c %Y "$WORK/ft/kjv-testament/learned/seed1/model.safetensors")" = "$before" ] || fail "a finished fine-tune was redone"
echo "smoke sweep: table with 2 tasks × (2 schemes + scratch) × 2 seeds and its floors; a rerun redoes nothing"
echo PASS
