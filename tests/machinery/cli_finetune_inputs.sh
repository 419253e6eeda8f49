#!/usr/bin/env bash
# What a fine-tune reads means what it says (ctest cli_finetune_inputs). Each case injects the
# bad input with real files and expects one line naming it, exit 2:
#   classify on a blank text (spaces, a tab, a line end), refused as the empty text is;
#   a task.json whose "task" or "max_len" was edited away from finetune.toml's (the task that
#   --test-split rebuilds and scores): refused by classify and classify --test-split, naming
#   the file and the key;
#   a fortunes topic file with a latin-1 byte or a NUL byte: refused naming the file and the
#   byte offset, before a run directory is made.
#   tests/machinery/cli_finetune_inputs.sh ROFORMER_BIN WORK_DIR      (run from the repository root)
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
"$BIN" train --config configs/tiny.toml --set train.steps=3 --set train.eval_every=0 --quiet --out "$WORK/mlm" >/dev/null \
  || fail "training the MLM run"
"$BIN" finetune --from "$WORK/mlm" --quiet --set threads=1 --set max_train_examples=50 --set epochs=1 \
  --task kjv-testament --out "$WORK/ft" >/dev/null || fail "the fine-tune"

# Blank texts: refused like the empty one; a text with a word still classified.
for blank in "   " "$(printf '\t')" "$(printf ' \n ')"; do
  refuse "classify a blank text" "the text is blank" "$BIN" classify --run "$WORK/ft" "$blank"
done
"$BIN" classify --run "$WORK/ft" " In the beginning " >/dev/null || fail "a text with words was refused"

# task.json edited: its task is no longer the one finetune.toml builds and --test-split scores.
"$BIN" classify --run "$WORK/ft" --test-split >/dev/null || fail "--test-split on the untouched run"
cp -r "$WORK/ft" "$WORK/edited"
sed -i 's/"task": "kjv-testament"/"task": "fortunes-topic"/' "$WORK/edited/task.json"
# A recorded run refuses the edited file by its record (checkpoint.json's run_files) …
refuse "classify after task.json was edited in a recorded run" \
  "edited/task.json' changed since the run recorded it" \
  "$BIN" classify --run "$WORK/edited" --test-split
# … and a run from before that record (no run_files, a model without the mark that says it
# has one: unmark_run.py) by what task.json and finetune.toml say.
python3 -c 'import json, sys; p = sys.argv[1]; m = json.load(open(p)); m.pop("run_files"); json.dump(m, open(p, "w"))' \
  "$WORK/edited/checkpoint.json" || fail "set-up: a run without the record"
python3 "$(dirname "$0")/unmark_run.py" "$WORK/edited" || fail "set-up: a run from before the mark"
grep -q '"task": "fortunes-topic"' "$WORK/edited/task.json" || fail "the edit of task.json did not apply"
for args in "--test-split" "In the beginning"; do
  refuse "classify $args after task.json's task was edited" \
    "edited/task.json' says \"task\": \"fortunes-topic\", but '$WORK/edited/finetune.toml', which the run was fine-tuned with, has task = \"kjv-testament\"" \
    "$BIN" classify --run "$WORK/edited" "$args"
done
cp "$WORK/ft/task.json" "$WORK/edited/task.json"
sed -i 's/"max_len": 64/"max_len": 32/' "$WORK/edited/task.json"
refuse "classify after task.json's max_len was edited" "says \"max_len\": 32" \
  "$BIN" classify --run "$WORK/edited" --test-split
echo "task.json and finetune.toml: one task"

# Fortunes files that are not UTF-8 text: refused naming the file and the byte offset.
mkdir -p "$WORK/fortunes"
for topic in computers food law love science sports; do
  for i in $(seq 1 12); do printf 'A %s quote number %d about things.\n%%\n' "$topic" "$i"; done >"$WORK/fortunes/$topic"
done
good_size=$(stat -c %s "$WORK/fortunes/law")
for case in latin1 nul; do
  cp "$WORK/fortunes/law" "$WORK/law.orig"
  if [ $case = latin1 ]; then printf 'Caf\xe9 au lait.\n%%\n' >>"$WORK/fortunes/law"; want="is not UTF-8 at byte offset $((good_size + 3)) (0xE9)"
  else printf 'Nul\0byte.\n%%\n' >>"$WORK/fortunes/law"; want="has a NUL byte at byte offset $((good_size + 3))"; fi
  refuse "fortunes with a $case byte" "'$WORK/fortunes/law' $want" \
    "$BIN" finetune --from "$WORK/mlm" --quiet --task fortunes-topic --set fortunes_dir="$WORK/fortunes" --out "$WORK/ft_$case"
  [ -e "$WORK/ft_$case" ] && fail "a refused fortunes fine-tune left a directory"
  mv "$WORK/law.orig" "$WORK/fortunes/law"
done
echo PASS
