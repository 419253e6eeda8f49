#!/usr/bin/env bash
# A run's integrity record cannot be dropped, and a reader reads its checkpoint once (issue 65,
# items 2 and 3). Each case injects the fault with real files:
#   checkpoint.json deleted, or only its "run_files" key, in a run of this version (its model
#   carries the mark "recorded_by"): eval, tokenize and --resume refuse it as damage, one line
#   naming the file; a run from before the mark (unmark_run.py) is read as it is;
#   a recorded file replaced by a symbolic link: recorded as the file it points to, never
#   skipped — an edit of that file after a --resume is still refused;
#   corpus.json (train) or task_data.json (finetune) deleted, then --resume over a changed
#   text: refused (the text would be mixed);
#   the validation text changed since training: eval refuses; another data.path given with
#   --set: scored, with one note naming the difference;
#   eval beside a live writer that commits every step: the step its warning names is the
#   step it scores.
#   tests/machinery/cli_run_record.sh ROFORMER_BIN WORK_DIR      (run from the repository root)
set -u
BIN=$(realpath "$1")
W=$(realpath -m "$2")
rm -rf "$W" && mkdir -p "$W" || exit 1
cd "$(dirname "$0")/../.." || exit 1  # configs/ and data/ are relative to the repository
UNMARK=tests/machinery/unmark_run.py
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
setup() { "$BIN" "$@" > "$W/setup.log" 2>&1 || { echo "FAIL: set-up: $*"; cat "$W/setup.log"; exit 1; }; }
# refuse NAME FRAGMENT CMD…: exit 2, one line on stderr holding FRAGMENT.
refuse() {
    local name=$1 want=$2 rc; shift 2
    "$@" > "$W/out" 2> "$W/err"; rc=$?
    [ $rc -eq 2 ] || { fail "$name: exit $rc, not 2: $(head -c 400 "$W/err")"; return; }
    [ "$(wc -l < "$W/err")" -eq 1 ] || fail "$name: not one line: $(cat "$W/err")"
    grep -qF -- "$want" "$W/err" || fail "$name: message: $(cat "$W/err")"
}
reads() {  # reads NAME CMD…: exit 0
    local name=$1; shift
    "$@" > "$W/out" 2> "$W/err" || fail "$name: exit $?: $(head -c 400 "$W/err")"
}
manifest_pop() {  # manifest_pop DIR KEY: checkpoint.json without KEY
    python3 -c 'import json, sys; p = sys.argv[1] + "/checkpoint.json"; m = json.load(open(p)); m.pop(sys.argv[2]); json.dump(m, open(p, "w"))' "$1" "$2"
}
swap_vocab() { python3 -c "import sys; p=sys.argv[1]; t=open(p).read().split('\n'); i=t.index('    \"E\",'); j=t.index('    \"F\",'); t[i],t[j]=t[j],t[i]; open(p,'w').write('\n'.join(t))" "$1"; }

TINY="--config configs/tiny.toml --set train.eval_every=0 --set data.val_windows=4 --quiet"
head -c 200000 data/kjv.txt > "$W/corpus.txt"
SMALL="$TINY --set data.path=$W/corpus.txt --set data.vocab_size=120"
setup train $SMALL --set train.steps=4 --stop-after 2 --out "$W/cut"  # resumable
setup train $SMALL --set train.steps=2 --out "$W/run"                  # finished
python3 -c 'import json, struct, sys; b = open(sys.argv[1], "rb").read(); n = struct.unpack("<Q", b[:8])[0]; assert json.loads(b[8:8 + n])["__metadata__"]["recorded_by"] == "checkpoint.json"' \
    "$W/cut/model.safetensors" || fail "set-up: the model carries no recorded_by mark"
RESUME=("$BIN" train $SMALL --set train.steps=4)

# 1. checkpoint.json deleted: damage, never "a run from before the record".
cp -r "$W/cut" "$W/nomanifest" && rm "$W/nomanifest/checkpoint.json"
refuse "eval without checkpoint.json" "nomanifest/checkpoint.json' is missing, yet" \
    "$BIN" eval --run "$W/nomanifest"
refuse "tokenize without checkpoint.json" "nomanifest/checkpoint.json' is missing, yet" \
    "$BIN" tokenize --run "$W/nomanifest" EF
refuse "--resume without checkpoint.json" "nomanifest/checkpoint.json' is missing, yet" \
    "${RESUME[@]}" --resume --out "$W/nomanifest"
grep -qF "back from a copy of the run, or train again into a new --out" "$W/err" || fail "no fix: $(cat "$W/err")"
# 2. only "run_files" deleted: the same.
cp -r "$W/cut" "$W/norecord" && manifest_pop "$W/norecord" run_files
swap_vocab "$W/norecord/tokenizer.json"  # what the record would have caught
refuse "eval without run_files" "checkpoint.json' has no \"run_files\" record" "$BIN" eval --run "$W/norecord"
refuse "--resume without run_files" "checkpoint.json' has no \"run_files\" record" \
    "${RESUME[@]}" --resume --out "$W/norecord"
# … while a run from before the mark is read as it is (today's rule for older runs).
cp -r "$W/cut" "$W/older" && manifest_pop "$W/older" run_files && python3 "$UNMARK" "$W/older" ||
    fail "set-up: an older run"
reads "eval on a run from before the mark" "$BIN" eval --run "$W/older"
cp -r "$W/older" "$W/oldest" && rm "$W/oldest/checkpoint.json"
reads "eval on a run from before manifests" "$BIN" eval --run "$W/oldest"
echo "a dropped record: refused; an older run: read"

# 3. A recorded file replaced by a symbolic link: followed and recorded, never skipped.
cp -r "$W/cut" "$W/link" && mv "$W/link/tokenizer.json" "$W/tokenizer_elsewhere.json" &&
    ln -s "$W/tokenizer_elsewhere.json" "$W/link/tokenizer.json"
reads "--resume with tokenizer.json a symlink to the same bytes" "${RESUME[@]}" --stop-after 3 --resume --out "$W/link"
python3 -c 'import json, sys; m = json.load(open(sys.argv[1])); assert "tokenizer.json" in m["run_files"], m["run_files"]' \
    "$W/link/checkpoint.json" || fail "the symlinked tokenizer.json left the record"
swap_vocab "$W/tokenizer_elsewhere.json"
refuse "eval after the linked tokenizer was edited" "link/tokenizer.json' changed since the run recorded it" \
    "$BIN" eval --run "$W/link"
refuse "--resume after the linked tokenizer was edited" "link/tokenizer.json' changed since the run recorded it" \
    "${RESUME[@]}" --resume --out "$W/link"
cp -r "$W/cut" "$W/dirlink" && rm "$W/dirlink/split.txt" && ln -s "$W" "$W/dirlink/split.txt"
refuse "--resume with split.txt a link to a directory" "dirlink/split.txt'" \
    "${RESUME[@]}" --resume --out "$W/dirlink"
echo "a symlinked run file: followed, never skipped"

# 4. corpus.json deleted, then --resume over a changed corpus: refused (no mixed text).
head -c 200000 data/kjv.txt > "$W/corpus2.txt"
SMALL2="$TINY --set data.path=$W/corpus2.txt --set data.vocab_size=120"
setup train $SMALL2 --set train.steps=4 --stop-after 2 --out "$W/nocorpus"
cp -r "$W/nocorpus" "$W/valtext"
rm "$W/nocorpus/corpus.json" && sed -i 's/LORD/Lord/g' "$W/corpus2.txt"
refuse "--resume without corpus.json over a changed corpus" "nocorpus/corpus.json' is missing since the run recorded it" \
    "$BIN" train $SMALL2 --set train.steps=4 --resume --out "$W/nocorpus"
# 5. eval on the changed validation text: refused; another text on purpose: a note.
refuse "eval on a changed corpus" "eval: the corpus '$W/corpus2.txt' changed since the run started" \
    "$BIN" eval --run "$W/valtext"
tail -c 100000 data/kjv.txt > "$W/other.txt"
reads "eval --set data.path=another text" "$BIN" eval --run "$W/run" --set "data.path=$W/other.txt"
[ "$(grep -c "^note: eval scores '$W/other.txt', not the corpus the run was trained on ('$W/corpus.txt'" "$W/err")" -eq 1 ] ||
    fail "eval on another text: no one note: $(cat "$W/err")"
cp "$W/corpus.txt" "$W/same.txt"
reads "eval --set data.path=the same text" "$BIN" eval --run "$W/run" --set "data.path=$W/same.txt"
grep -q "note: eval scores" "$W/err" && fail "eval on the same text under another name: a note: $(cat "$W/err")"
echo "corpus.json: in the record; eval checks its text"

# 6. task_data.json deleted, then finetune --resume over a changed task text: refused.
cp data/kjv.txt "$W/ft_corpus.txt"
FT=("$BIN" finetune --from "$W/run" --quiet --set threads=1 --set max_train_examples=40 --set epochs=2
    --set "corpus=$W/ft_corpus.txt" --task kjv-testament)
setup "${FT[@]:1}" --stop-after 1 --out "$W/ft"
rm "$W/ft/task_data.json" && sed -i 's/LORD/Lord/g' "$W/ft_corpus.txt"
refuse "finetune --resume without task_data.json" "ft/task_data.json' is missing since the run recorded it" \
    "${FT[@]}" --resume --out "$W/ft"
echo "task_data.json: in the record"

# 7. eval beside a live writer committing every step: the step warned of is the step scored.
"$BIN" train $SMALL --set train.steps=100000 --set train.checkpoint_every=1 --out "$W/live" \
    > /dev/null 2> "$W/live.err" &
writer=$!
for _ in $(seq 600); do [ -f "$W/live/checkpoint.json" ] && break; sleep 0.1; done
seen=0
for i in $(seq 12); do
    "$BIN" eval --run "$W/live" > "$W/eval.out" 2> "$W/eval.err" || { fail "live eval $i: $(cat "$W/eval.err")"; continue; }
    warned=$(sed -n 's/.*this uses its last checkpoint, step \([0-9]*\) of.*/\1/p' "$W/eval.err")
    scored=$(sed -n 's/.*(step \([0-9]*\), .*/\1/p' "$W/eval.out")
    [ -n "$warned" ] && [ "$warned" = "$scored" ] || fail "live eval $i: warned of step '$warned', scored step '$scored'"
    seen=$((seen + 1))
done
kill -INT $writer; wait $writer
[ $seen -gt 0 ] || fail "no eval beside the live writer"
echo "eval beside a live writer: one read ($seen evaluations)"

[ $failures -eq 0 ] && echo PASS || { echo "$failures failure(s)"; exit 1; }
