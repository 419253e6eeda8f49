#!/usr/bin/env bash
# Every output file one transaction (issue 57: causes 4 and 5, and item 12's messages), on the
# real binary — concurrent writers, name lengths and symlinks are process-level behaviour:
#   1. four `rope-precision --out same.csv` at once, each with its own seed: exactly one says
#      "wrote", and the file holds its bytes; the others exit 2 in one line naming the file and
#      the holder's pid; the mark names the file's bytes; no lock or temporary is left; the next
#      writer is not refused; SIGTERM during the work leaves nothing, SIGKILL a pid record
#      that the next writer takes over
#   2. a 240-byte --out (rope-precision, graph): refused in one line before the work, nothing
#      left behind; the longest name that fits is written with its mark
#   3. --out a symlink to an empty directory (export-hf, import-hf): refused before the work,
#      the directory it names untouched
#   4. a compare that fails before its first checkpoint (ulimit -f) leaves no lock record, no
#      empty scheme directory and no --out it created; a user's empty --out stays, empty; with
#      --jobs 2 the failing child's error is the parent's one `error:` line
#   5. extrapolate on a comparison another process holds: told to wait, not to pick an --out
#   6. a hard link to a user's file under a lock's name ("x.csv.lock"; a run's `lock` after
#      `cp -al` of the run, then train --resume on the copy): refused in one line saying what it
#      is, the user's file unchanged; the copy, its lock moved away, resumes without changing
#      a byte of the original
#   7. an --out whose run files would be over PATH_MAX, or with a part over NAME_MAX (train,
#      finetune, compare, import-hf, export-hf — whose staging directory beside --out is the
#      longer path): refused in one line, nothing created; a train, compare, import-hf or
#      export-hf that fails leaves none of the parent directories it created; a refused
#      `train --resume` into an empty directory leaves it empty (no `lock`)
#
#   tests/machinery/cli_output_files.sh BIN WORKDIR
set -u
BIN=$(realpath "$1")
W=$(realpath -m "$2")
rm -rf "$W" && mkdir -p "$W" || exit 1
cd "$(dirname "$0")/../.." || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
one_line() {  # one_line FILE LABEL: the file is one "error: …" line
    [ "$(grep -c . "$1")" -eq 1 ] && grep -q '^error: ' "$1" || fail "$2: not one error line: $(head -3 "$1")"
}
mark_hash() { sed -n 's/.*; sha256 \([0-9a-f]*\)$/\1/p' "$1.written-by"; }
file_hash() { sha256sum "$1" | cut -d' ' -f1; }

# 1. Concurrent writers of one file. --head-dim 128 makes each take about a second, far longer
# than the others' start: all four overlap, so only one may write.
RP=(rope-precision --head-dim 128)
for trial in 1 2 3; do
    d=$W/concurrent$trial && mkdir -p "$d"
    pids=()
    for seed in 1 2 3 4; do
        "$BIN" "${RP[@]}" --seed $seed --out "$d/same.csv" >"$d/w$seed.log" 2>&1 &
        pids+=($!)
    done
    wrote=()
    for i in 0 1 2 3; do
        wait "${pids[$i]}"
        status=$?
        seed=$((i + 1))
        if [ $status -eq 0 ]; then
            grep -q "wrote $d/same.csv" "$d/w$seed.log" || fail "trial $trial: writer $seed exit 0 without 'wrote'"
            wrote+=($seed)
        else
            [ $status -eq 2 ] || fail "trial $trial: writer $seed exit $status, not 2"
            one_line "$d/w$seed.log" "trial $trial: writer $seed"
            grep -q "'$d/same.csv': another roformer (pid [0-9]*) is writing it now; wait" "$d/w$seed.log" ||
                fail "trial $trial: writer $seed's refusal names no holder: $(cat "$d/w$seed.log")"
        fi
    done
    [ ${#wrote[@]} -eq 1 ] || fail "trial $trial: ${#wrote[@]} of 4 overlapping writers said 'wrote' (seeds ${wrote[*]:-none})"
    [ -f "$d/same.csv" ] && [ "$(mark_hash "$d/same.csv")" = "$(file_hash "$d/same.csv")" ] ||
        fail "trial $trial: same.csv and its mark disagree"
    if [ ${#wrote[@]} -ge 1 ]; then  # the bytes are those of the writer that said "wrote"
        "$BIN" "${RP[@]}" --seed "${wrote[-1]}" >"$d/expected.csv" 2>/dev/null
        cmp -s "$d/expected.csv" "$d/same.csv" || fail "trial $trial: same.csv is not seed ${wrote[-1]}'s, which said 'wrote'"
    fi
    leftovers=$(ls "$d" | grep -E '\.lock$|\.tmp-')
    [ -z "$leftovers" ] || fail "trial $trial: left behind: $leftovers"
    "$BIN" rope-precision --head-dim 8 --out "$d/same.csv" >"$d/rerun.log" 2>&1 ||
        fail "trial $trial: the next writer is refused: $(tail -1 "$d/rerun.log")"
done

# 1b. Stopped during the work: SIGTERM removes the lock as the process dies (exit 143, nothing
# beside the name); after SIGKILL the lock's pid record stays, and the next writer takes it over.
d=$W/stopped && mkdir -p "$d"
"$BIN" rope-precision --head-dim 512 --out "$d/a.csv" >/dev/null 2>&1 &
pid=$!
sleep 0.5
kill -TERM $pid; wait $pid
status=$?
[ $status -eq 143 ] || fail "rope-precision stopped by SIGTERM: exit $status, not 143 (too fast?)"
[ -z "$(ls -A "$d")" ] || fail "SIGTERM during the work left: $(ls -A "$d")"
"$BIN" rope-precision --head-dim 512 --out "$d/a.csv" >/dev/null 2>&1 &
pid=$!
sleep 0.5
kill -KILL $pid; wait $pid 2>/dev/null
"$BIN" rope-precision --head-dim 8 --out "$d/a.csv" >"$d/l.log" 2>&1 || fail "after SIGKILL: $(tail -1 "$d/l.log")"
[ "$(ls "$d" | grep -v l.log | tr '\n' ' ')" = "a.csv a.csv.written-by " ] ||
    fail "after SIGKILL and a rerun: $(ls "$d")"

# 2. A name too long for the mark's temporary: refused before the work, nothing left.
d=$W/long && mkdir -p "$d"
long=$(printf 'x%.0s' $(seq 236))
for cmd in "rope-precision --head-dim 128 --out $d/$long.csv" "graph --out $d/$long.dot"; do
    # shellcheck disable=SC2086
    "$BIN" $cmd >"$d/l.log" 2>&1
    status=$?
    [ $status -eq 2 ] || fail "${cmd%% *} --out of 240 bytes: exit $status, not 2"
    one_line "$d/l.log" "${cmd%% *} --out of 240 bytes"
    grep -q "NAME_MAX); give a name of at most" "$d/l.log" || fail "${cmd%% *}: no length in: $(cat "$d/l.log")"
    rm -f "$d/l.log"
    [ -z "$(ls -A "$d")" ] || fail "${cmd%% *} --out of 240 bytes left: $(ls -A "$d" | cut -c1-40)"
done
fits=$(printf 'x%.0s' $(seq 228)).csv  # 232 bytes + ".written-by.tmp-" + 7 digits = 255
"$BIN" rope-precision --head-dim 8 --out "$d/$fits" >/dev/null 2>"$d/l.err" || fail "a 232-byte name: $(cat "$d/l.err")"
[ "$(mark_hash "$d/$fits")" = "$(file_hash "$d/$fits")" ] || fail "the 232-byte name has no matching mark"
"$BIN" rope-precision --head-dim 8 --out "$d/$fits" >/dev/null 2>"$d/l.err" || fail "its rerun: $(cat "$d/l.err")"

# 3. --out a symlink to an empty directory: refused before the work (it failed at the publish).
head -c 200000 data/kjv.txt >"$W/corpus.txt"
TRAIN=(--config configs/tiny.toml --set "data.path=$W/corpus.txt" --set data.vocab_size=120
       --set data.val_windows=4 --set train.eval_every=2 --set train.steps=4 --quiet)
"$BIN" train "${TRAIN[@]}" --out "$W/run" >"$W/t.log" 2>&1 || fail "the tiny run: $(tail -1 "$W/t.log")"
"$BIN" export-hf "$W/run" --out "$W/hf" >"$W/t.log" 2>&1 || fail "the export: $(tail -1 "$W/t.log")"
mkdir "$W/empty" && ln -s empty "$W/link"
for cmd in "export-hf $W/run --out $W/link" "import-hf $W/hf --out $W/link"; do
    # shellcheck disable=SC2086
    "$BIN" $cmd >"$W/s.log" 2>&1
    status=$?
    [ $status -eq 2 ] || fail "${cmd%% *} --out a symlink: exit $status, not 2"
    one_line "$W/s.log" "${cmd%% *} --out a symlink"
    grep -q "is a symbolic link (to 'empty')" "$W/s.log" || fail "${cmd%% *}: $(cat "$W/s.log")"
    [ -L "$W/link" ] && [ -z "$(ls -A "$W/empty")" ] || fail "${cmd%% *}: the link or its directory changed"
    [ -z "$(ls -A "$W" | grep partial)" ] || fail "${cmd%% *}: a staging directory left"
done

# 4. compare fails before its first checkpoint: nothing of it stays.
CMP=(compare --config configs/tiny.toml --set "data.path=$W/corpus.txt" --set data.vocab_size=120
     --set data.val_windows=4 --set train.steps=4 --set train.eval_every=2 --seeds 1 --no-plot
     --schemes rope_interleaved)
mkdir "$W/users_empty"
for out in cmp users_empty; do
    (ulimit -f 100 && exec "$BIN" "${CMP[@]}" --out "$W/$out") >"$W/c.log" 2>&1 &&
        fail "compare $out under ulimit -f 100 exited 0"
    grep -q "File too large" "$W/c.log" || fail "compare $out: $(cat "$W/c.log")"
done
[ ! -e "$W/cmp" ] || fail "compare left the --out it created: $(find "$W/cmp")"
# With --jobs 2 the run trains in a child process: its error reaches the user once, in the
# parent's one line (it was printed by the child and then referred to by the parent).
(ulimit -f 100 && exec "$BIN" "${CMP[@]}" --jobs 2 --out "$W/cmp") >"$W/c.log" 2>&1
status=$?
[ $status -eq 2 ] || fail "compare --jobs 2 with a failing run: exit $status, not 2"
one_line "$W/c.log" "compare --jobs 2 with a failing run"
grep -q "^error: compare: $W/cmp/rope_interleaved/seed1: cannot write .*(File too large); .*; fix it and run the same command again" "$W/c.log" ||
    fail "compare --jobs 2 with a failing run: $(cat "$W/c.log")"
[ ! -e "$W/cmp" ] || fail "compare --jobs 2 left the --out it created: $(find "$W/cmp")"
[ -d "$W/users_empty" ] && [ -z "$(ls -A "$W/users_empty")" ] ||
    fail "compare left in the user's empty --out: $(ls -A "$W/users_empty" 2>&1)"
"$BIN" "${CMP[@]}" --out "$W/cmp" >"$W/c.log" 2>&1 || fail "compare's rerun: $(tail -1 "$W/c.log")"

# 5. extrapolate on a comparison another process holds (flock(1) on the directory).
if command -v flock >/dev/null; then
    flock "$W/cmp" sleep 5 &
    holder=$!
    sleep 0.5
    "$BIN" extrapolate --runs "$W/cmp" --no-plot >"$W/x.log" 2>&1
    status=$?
    kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
    [ $status -eq 2 ] || fail "extrapolate on a held comparison: exit $status"
    one_line "$W/x.log" "extrapolate on a held comparison"
    grep -q "wait for it to finish" "$W/x.log" || fail "extrapolate: $(cat "$W/x.log")"
    grep -q -- "--out" "$W/x.log" && fail "extrapolate names an --out it does not take: $(cat "$W/x.log")"
fi

# 6. A lock is only ever a file roformer created (io/lock_file.hpp): a hard link to a user's file
# under a lock's name — an output file's "NAME.lock", or a run's `lock` shared by `cp -al` — is
# refused in one line saying what it is; the user's file keeps its bytes, nothing is written.
d=$W/hardlink && mkdir -p "$d"
for content in "" "12345\n"; do  # an empty file, and one a pid record's digits
    printf "$content" >"$d/users.txt"
    cp "$d/users.txt" "$W/users_copy.txt"
    ln "$d/users.txt" "$d/x.csv.lock"
    "$BIN" rope-precision --head-dim 8 --out "$d/x.csv" >"$d/l.log" 2>&1
    status=$?
    [ $status -eq 2 ] || fail "a hard-linked x.csv.lock holding '$content': exit $status, not 2"
    one_line "$d/l.log" "a hard-linked x.csv.lock"
    grep -q "'$d/x.csv.lock' exists and is not roformer's lock (it is a hard link: one of 2 names of one file); move it away" "$d/l.log" ||
        fail "a hard-linked x.csv.lock: $(cat "$d/l.log")"
    cmp -s "$d/users.txt" "$W/users_copy.txt" || fail "the user's file linked as x.csv.lock now holds: $(cat "$d/users.txt")"
    [ -e "$d/x.csv.lock" ] && [ ! -e "$d/x.csv" ] || fail "a hard-linked x.csv.lock: $(ls "$d")"
    rm -f "$d/x.csv.lock" "$d/l.log"
done
# A run stopped at step 2 of 4, copied with cp -al: every file of the copy is a second name of
# the original's. Resuming the copy is refused at its lock; once that name is moved away the
# copy resumes, and not a byte of the original changes (the run's files are replaced by renames).
"$BIN" train "${TRAIN[@]}" --stop-after 2 --out "$W/cut" >"$W/r.log" 2>&1 || fail "the cut run: $(tail -1 "$W/r.log")"
cp -al "$W/cut" "$W/cut_copy"
before=$(cd "$W/cut" && sha256sum *)
"$BIN" train "${TRAIN[@]}" --resume --out "$W/cut_copy" >"$W/r.log" 2>&1
status=$?
[ $status -eq 2 ] || fail "train --resume on a cp -al copy: exit $status, not 2"
one_line "$W/r.log" "train --resume on a cp -al copy"
grep -q "'$W/cut_copy/lock' exists and is not roformer's lock record (it is a hard link: one of 2 names of one file); .*move it away" "$W/r.log" ||
    fail "train --resume on a cp -al copy: $(cat "$W/r.log")"
[ "$(cd "$W/cut" && sha256sum *)" = "$before" ] || fail "train --resume on a cp -al copy changed the original run"
rm "$W/cut_copy/lock"
"$BIN" train "${TRAIN[@]}" --resume --out "$W/cut_copy" >"$W/r.log" 2>&1 ||
    fail "the copy, its lock moved away, does not resume: $(tail -1 "$W/r.log")"
[ "$(cd "$W/cut" && sha256sum *)" = "$before" ] || fail "resuming a cp -al copy changed the original run"
# 7. Every path checked before the work (issue 65). An --out of 4080 bytes: the directory fits
# PATH_MAX, the files a run writes inside it would not — train, finetune and compare refuse it
# in one line and create nothing; so they do an --out with a part over NAME_MAX. A train or a
# compare that fails after it created new parents for its --out leaves none of them.
deep=$W/deep
while [ ${#deep} -lt 3870 ]; do deep+=/$(printf 'd%.0s' $(seq 200)); done
deep+=/$(printf 'e%.0s' $(seq $((4080 - ${#deep} - 1))))
wide=$W/wide/$(printf 'w%.0s' $(seq 300))/run
FT=(finetune --from "$W/run" --quiet --set threads=1 --set max_train_examples=50 --set epochs=1
    --task kjv-testament)
# import-hf and export-hf write into ".NAME.partial-CMD-PID" beside --out: 4060 bytes fit
# PATH_MAX with the staging name (+ 27 with a 7-digit pid), not with the files written inside
# it (+ 55 and more). Exactly 4060 whatever $W's length: the last part pads it (18–219 bytes).
staged=$W/deep
while [ ${#staged} -lt 3840 ]; do staged+=/$(printf 'd%.0s' $(seq 200)); done
staged+=/$(printf 'e%.0s' $(seq $((4060 - ${#staged} - 1))))
[ ${#staged} -eq 4060 ] || fail "the staged --out has ${#staged} bytes, not 4060"
for out in "$deep" "$wide" "$staged"; do
    limit=PATH_MAX && [ "$out" = "$wide" ] && limit=NAME_MAX
    cmds="train finetune compare import-hf export-hf"
    [ "$out" = "$staged" ] && cmds="import-hf export-hf"
    for cmd in $cmds; do
        case $cmd in
            train) args=(train "${TRAIN[@]}") ;;
            finetune) args=("${FT[@]}") ;;
            compare) args=("${CMP[@]}") ;;
            import-hf) args=(import-hf "$W/hf") ;;
            export-hf) args=(export-hf "$W/run") ;;
        esac
        "$BIN" "${args[@]}" --out "$out" >"$W/d.log" 2>&1
        status=$?
        [ $status -eq 2 ] || fail "$cmd --out over $limit: exit $status, not 2"
        one_line "$W/d.log" "$cmd --out over $limit"
        grep -q "($limit); give" "$W/d.log" || fail "$cmd --out over $limit: $(cut -c1-300 "$W/d.log")"
        [ ! -e "$W/deep" ] && [ ! -e "$W/wide" ] || fail "$cmd --out over $limit created $(find "$W/deep" "$W/wide" 2>/dev/null | head -1 | cut -c1-100)…"
        rm -rf "$W/deep" "$W/wide"
    done
done
"$BIN" train "${TRAIN[@]}" --set "data.path=$W/no_such_corpus.txt" --out "$W/a/b/c" >"$W/d.log" 2>&1 &&
    fail "train on a missing corpus exited 0"
[ ! -e "$W/a" ] || fail "a failed train left the parents it created: $(find "$W/a")"
(ulimit -f 100 && exec "$BIN" "${CMP[@]}" --out "$W/x/y/cmp") >"$W/d.log" 2>&1 &&
    fail "compare under ulimit -f 100 exited 0"
[ ! -e "$W/x" ] || fail "a failed compare left the parents it created: $(find "$W/x")"
# import-hf of a directory that does not exist, export-hf of a causal-LM run (HF's RoFormer
# has no such head): refused after the lock on --out, which made its parents — all removed.
"$BIN" train "${TRAIN[@]}" --set train.objective=clm --out "$W/clm" >"$W/t.log" 2>&1 ||
    fail "the causal-LM run: $(tail -1 "$W/t.log")"
for cmd in "import-hf $W/no_such_hf" "export-hf $W/clm"; do
    # shellcheck disable=SC2086
    "$BIN" $cmd --out "$W/p/q/out" >"$W/d.log" 2>&1
    status=$?
    [ $status -eq 2 ] || fail "${cmd%% *} that fails: exit $status, not 2: $(cat "$W/d.log")"
    one_line "$W/d.log" "${cmd%% *} that fails"
    [ ! -e "$W/p" ] || fail "a failed ${cmd%% *} left the parents it created: $(find "$W/p")"
done
# A refused `train --resume` leaves nothing it made: not the pid record in an empty directory.
mkdir "$W/empty_resume"
"$BIN" train "${TRAIN[@]}" --resume --out "$W/empty_resume" >"$W/d.log" 2>&1
status=$?
[ $status -eq 2 ] || fail "train --resume into an empty directory: exit $status, not 2"
one_line "$W/d.log" "train --resume into an empty directory"
[ -z "$(ls -A "$W/empty_resume")" ] ||
    fail "a refused train --resume left $(ls -A "$W/empty_resume") in the empty directory"
[ $failures -eq 0 ] && echo "PASS: one writer per output file, names checked before the work, nothing left behind"
[ $failures -eq 0 ]
