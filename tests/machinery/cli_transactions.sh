#!/usr/bin/env bash
# Every output a transaction, every interruption honest (issue 23), on the real binary: signals,
# forked children, flock, full disks and file-size limits are process-level behaviour.
#   tests/machinery/cli_transactions.sh <roformer binary> <scratch dir> compare|outputs|lock|disk
#   compare: SIGINT (jobs 1) / SIGTERM to the parent (jobs 2) / SIGTERM to one child / SIGHUP
#            stop every run with a checkpoint, exit 128+signal, print the command that
#            continues, write no summary, leave no process behind; ONE re-run finishes every
#            run, bit-identical to an uninterrupted comparison; a kill at the final manifest
#            needs one re-run too; train | head -1 (SIGPIPE) checkpoints
#   outputs: under ulimit -f, on a full tmpfs, into /dev/full, to a missing directory or a
#            directory, over a user's file: one-line error, exit 2, nothing half-written, the
#            previous file intact; extrapolate refuses unfinished runs and a user's CSV
#   lock:    a symlinked lock, a user's `lock` file, a deleted lock file, extrapolate during a
#            compare
#   disk:    a full disk for a moment during training leaves metrics.csv complete and
#            identical to an uninterrupted run's (warning, exit 0); a disk that stays full
#            ends the run with a one-line error and the last checkpoint intact
# Run from the source directory (configs/tiny.toml). `disk` mounts a tmpfs (needs root).
set -u
BIN=$(realpath "$1") WORK=$(realpath -m "$2") WHAT=$3
rm -rf "$WORK" && mkdir -p "$WORK"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
head -c 200000 data/kjv.txt >"$WORK/corpus.txt"  # a small corpus: seconds, not minutes
T=(--config configs/tiny.toml --set train.threads=1 --set train.batch_size=2 --set data.val_windows=4
   --set "data.path=$WORK/corpus.txt" --set data.vocab_size=120)
one_line() {  # one_line FILE LABEL: the file is one "error: …" line
    [ "$(grep -c . "$1")" -eq 1 ] && grep -q '^error: ' "$1" || fail "$2: not one error line: $(head -3 "$1")"
}
losses() { cut -d, -f1-7 "$1/metrics.csv"; }
same_run() {  # same_run REF DIR LABEL
    [ "$(losses "$1")" = "$(losses "$2")" ] || fail "$3: metrics.csv differs"
    cmp -s "$1/model.safetensors" "$2/model.safetensors" || fail "$3: model differs"
    cmp -s "$1/optimizer.safetensors" "$2/optimizer.safetensors" || fail "$3: optimizer differs"
}
rows() { [ -f "$1" ] && wc -l <"$1" || echo 0; }
wait_rows() {  # wait_rows FILE N: until FILE has more than N lines (or 60 s)
    for _ in $(seq 600); do [ "$(rows "$1")" -gt "$2" ] && return 0; sleep 0.1; done
    fail "no more than $2 rows in $1 after 60 s"
}
no_orphans() {  # no_orphans DIR LABEL: no process has DIR on its command line (after 10 s)
    for _ in $(seq 100); do pgrep -f -- "--out $1" >/dev/null || return 0; sleep 0.1; done
    pgrep -f -- "--out $1" >/dev/null && fail "$2: processes left behind: $(pgrep -af -- "--out $1")"
}

if [ "$WHAT" = compare ]; then
    # 600 steps: on the fast path a tiny run takes ≈ 2 ms a step, so the watched run is still
    # training (≈ 1 s to go) when the signal lands after its 10th row.
    C=("${T[@]}" --set train.steps=600 --set train.eval_every=50 --set train.log_every=1 --seeds 1 --no-plot)
    "$BIN" compare "${C[@]}" --schemes rope_interleaved,none,sinusoidal --out "$WORK/ref" >/dev/null ||
        fail "reference comparison"
    case_() {  # case_ NAME SIGNAL TARGET(parent|child) JOBS
        local name=$1 sig=$2 target=$3 jobs=$4 dir=$WORK/$1
        "$BIN" compare "${C[@]}" --schemes rope_interleaved,none,sinusoidal --jobs "$jobs" \
            --out "$dir" >"$WORK/$name.out" 2>"$WORK/$name.err" &
        local parent=$! victim
        wait_rows "$dir/rope_interleaved/seed1/metrics.csv" 10
        victim=$parent
        [ "$target" = child ] && victim=$(pgrep -P "$parent" | head -1)
        kill -"$sig" "$victim"
        wait $parent
        local code=$? expected=$((128 + $(kill -l "$sig")))
        [ $code -eq $expected ] || fail "$name: exit $code, expected $expected: $(tail -2 "$WORK/$name.err")"
        # A short run (none, ≈ 1 s) may finish before the signal lands; the message must
        # count exactly the runs reported finished, and at least the watched one is not.
        local done_runs
        done_runs=$(grep -c "val loss" "$WORK/$name.out")
        [ "$done_runs" -lt 3 ] || fail "$name: all runs reported finished before the signal"
        grep -q "rope_interleaved .*val loss" "$WORK/$name.out" &&
            fail "$name: the interrupted run was reported finished: $(cat "$WORK/$name.out")"
        grep -q "^interrupted: $done_runs of 3 runs finished.*continue with: roformer compare .*--out $dir\$" \
            "$WORK/$name.err" || fail "$name: no continue message counting $done_runs finished: $(tail -1 "$WORK/$name.err")"
        [ -e "$dir/summary.md" ] && fail "$name: summary.md written from unfinished runs"
        [ -e "$dir/curves.csv" ] && fail "$name: curves.csv written from unfinished runs"
        no_orphans "$dir" "$name"
        # one re-run, the printed command, finishes every run
        local again
        again=$(sed -n 's/.*continue with: //p' "$WORK/$name.err")
        (eval "${again/roformer/\"$BIN\"}") >"$WORK/$name.again" 2>&1 ||
            fail "$name: the re-run failed: $(tail -2 "$WORK/$name.again")"
        for s in rope_interleaved none sinusoidal; do
            same_run "$WORK/ref/$s/seed1" "$dir/$s/seed1" "$name: $s"
        done
        cmp -s "$WORK/ref/curves.csv" "$dir/curves.csv" || fail "$name: curves.csv differs"
    }
    case_ int_jobs1 INT parent 1
    case_ term_jobs2 TERM parent 2
    case_ term_child TERM child 2
    case_ hup_jobs2 HUP parent 2
    # The parent killed hard: its children get SIGTERM (PR_SET_PDEATHSIG), checkpoint and exit.
    dir=$WORK/kill9
    "$BIN" compare "${C[@]}" --schemes rope_interleaved,none --jobs 2 --out "$dir" >/dev/null 2>&1 &
    parent=$!
    wait_rows "$dir/rope_interleaved/seed1/metrics.csv" 10
    kill -KILL $parent
    wait $parent 2>/dev/null
    no_orphans "$dir" "kill -9 of the parent"
    "$BIN" compare "${C[@]}" --schemes rope_interleaved,none --jobs 2 --out "$dir" >"$WORK/kill9.again" 2>&1 ||
        fail "re-run after kill -9 of the parent (refused by an orphan's lock?): $(tail -1 "$WORK/kill9.again")"
    # Killed at the final checkpoint's commit point: one re-run finishes it.
    dir=$WORK/manifest
    RF_FAULT_KILL_AT=manifest@600 "$BIN" compare "${C[@]}" --schemes none --out "$dir" >/dev/null 2>&1
    [ $? -eq 99 ] || fail "the manifest fault did not fire"
    "$BIN" compare "${C[@]}" --schemes none --out "$dir" >"$WORK/manifest.again" 2>&1 ||
        fail "re-run after a kill at the final manifest: $(tail -1 "$WORK/manifest.again")"
    grep -q "1 already finished" "$WORK/manifest.again" || fail "manifest: $(tail -2 "$WORK/manifest.again")"
    same_run "$WORK/ref/none/seed1" "$dir/none/seed1" "kill at the final manifest"
    # train: SIGHUP (the terminal closed) checkpoints and exits 129, like Ctrl-C.
    dir=$WORK/hup
    "$BIN" train "${T[@]}" --set train.steps=100000 --set train.log_every=1 --quiet --out "$dir" >/dev/null 2>"$WORK/hup.err" &
    pid=$!
    wait_rows "$dir/metrics.csv" 5
    kill -HUP $pid
    wait $pid
    code=$?
    [ $code -eq 129 ] || fail "train on SIGHUP: exit $code"
    grep -q "interrupted at step [0-9]*; continue with: roformer train .*--resume --out $dir" "$WORK/hup.err" ||
        fail "train on SIGHUP: $(tail -1 "$WORK/hup.err")"
    grep -q '"step"' "$dir/checkpoint.json" 2>/dev/null || fail "train on SIGHUP left no checkpoint"
    # train | head -1: SIGPIPE checkpoints and exits 141, like Ctrl-C.
    dir=$WORK/pipe
    ( "$BIN" train "${T[@]}" --set train.steps=100000 --set train.log_every=1 --out "$dir" 2>&1; echo "exit $?" >"$WORK/pipe.code" ) | head -1 >/dev/null
    grep -q "exit 141" "$WORK/pipe.code" || fail "train | head -1: $(cat "$WORK/pipe.code")"
    grep -q '"step"' "$dir/checkpoint.json" 2>/dev/null || fail "train | head -1 left no checkpoint"
elif [ "$WHAT" = outputs ]; then
    R=$WORK/run
    "$BIN" train "${T[@]}" --set train.steps=4 --quiet --out "$R" >/dev/null || fail "set-up run"
    # 1. compare's summary under a file-size limit: an error, and no truncated summary.md
    C=("${T[@]}" --set train.steps=4 --seeds 1 --schemes none --no-plot)
    "$BIN" compare "${C[@]}" --out "$WORK/cmp" >/dev/null || fail "set-up comparison"
    cp "$WORK/cmp/summary.md" "$WORK/summary.before"
    [ "$(stat -c %s "$WORK/summary.before")" -gt 1024 ] || fail "set-up: summary.md fits in 1 KiB"
    (ulimit -f 1 && exec "$BIN" compare "${C[@]}" --out "$WORK/cmp") >"$WORK/u.out" 2>"$WORK/u.err"
    code=$?
    [ $code -eq 2 ] || fail "compare under ulimit -f 1: exit $code"
    grep -q "File too large" "$WORK/u.err" || fail "compare under ulimit -f: $(cat "$WORK/u.err")"
    grep -q "wrote" "$WORK/u.out" && fail "compare under ulimit -f said it wrote"
    cmp -s "$WORK/cmp/summary.md" "$WORK/summary.before" || fail "summary.md changed under ulimit -f"
    ls "$WORK/cmp" | grep -q '\.tmp-' && fail "temporaries left in cmp: $(ls "$WORK/cmp")"
    # 2. graph / attention / extrapolate into the file-size limit: exit 2, no 0-byte file
    for args in "graph --config configs/tiny.toml --out $WORK/g.dot" \
                "attention --run $R --out $WORK/a.npy In_the_beginning" \
                "attention --run $R --out $WORK/a.csv In_the_beginning"; do
        set -- $args
        out=$(echo "$args" | grep -o "$WORK/[a-z.]*")
        # (the messages through a pipe: the limit applies to files only)
        (ulimit -f 0 && exec "$BIN" "$@" 2>&1) | cat >"$WORK/f.err"
        code=${PIPESTATUS[0]}
        [ $code -eq 2 ] || fail "$1 under ulimit -f 0: exit $code"
        one_line "$WORK/f.err" "$1 under ulimit -f 0"
        [ -e "$out" ] && fail "$1 under ulimit -f 0 left $out"
    done
    (ulimit -f 1 && exec "$BIN" extrapolate --runs "$WORK/cmp" --no-plot --max-tokens 256) >"$WORK/x.out" 2>"$WORK/x.err"
    [ $? -eq 2 ] || fail "extrapolate under ulimit -f 1 did not fail"
    grep -q wrote "$WORK/x.out" && fail "extrapolate under ulimit -f 1 said it wrote"
    cmp -s "$WORK/cmp/summary.md" "$WORK/summary.before" || fail "extrapolate under ulimit changed summary.md"
    # 3. standard output on a full device
    "$BIN" eval --run "$R" >/dev/full 2>"$WORK/full.err"
    [ $? -eq 2 ] || fail "eval > /dev/full exited 0"
    one_line "$WORK/full.err" "eval > /dev/full"
    # 4. a missing directory, a directory, a user's file
    echo "my notes" >"$WORK/notes.dot"
    for target in /nonexistent/g.dot "$WORK" "$WORK/notes.dot"; do
        "$BIN" graph --config configs/tiny.toml --out "$target" >"$WORK/g.out" 2>"$WORK/g.err"
        [ $? -eq 2 ] || fail "graph --out $target did not fail"
        one_line "$WORK/g.err" "graph --out $target"
        grep -q wrote "$WORK/g.out" && fail "graph --out $target said it wrote"
    done
    [ "$(cat "$WORK/notes.dot")" = "my notes" ] || fail "graph overwrote a user's file"
    "$BIN" graph --config configs/tiny.toml --out "$WORK/g.dot" >/dev/null && "$BIN" graph --config configs/tiny.toml --layer 1 --out "$WORK/g.dot" >/dev/null ||
        fail "graph does not replace its own output"
    # 5. extrapolate: a user's extrapolation.csv and summary.md are never replaced or cut
    cp -r "$WORK/cmp" "$WORK/cmpx"
    echo "my,own,table" >"$WORK/cmpx/extrapolation.csv"
    "$BIN" extrapolate --runs "$WORK/cmpx" --no-plot --max-tokens 256 >/dev/null 2>"$WORK/x.err"
    [ $? -eq 2 ] || fail "extrapolate replaced a user's extrapolation.csv"
    grep -q "extrapolation.csv': it was changed after roformer wrote it" "$WORK/x.err" || fail "extrapolate: $(cat "$WORK/x.err")"
    [ "$(cat "$WORK/cmpx/extrapolation.csv")" = "my,own,table" ] || fail "a user's extrapolation.csv changed"
    rm "$WORK/cmpx/extrapolation.csv"
    printf '# My notes\n\n## Length extrapolation\n\nmine\n' >"$WORK/cmpx/summary.md"
    "$BIN" extrapolate --runs "$WORK/cmpx" --no-plot --max-tokens 256 >/dev/null 2>"$WORK/x.err"
    [ $? -eq 2 ] || fail "extrapolate cut a user's summary.md"
    grep -q "mine" "$WORK/cmpx/summary.md" || fail "a user's summary.md lost its end"
    # the plot of a user: compare refuses before training
    cp -r "$WORK/cmp" "$WORK/cmpp" && rm -rf "$WORK/cmpp/none"
    echo "not a plot" >"$WORK/cmpp/curves.png"
    "$BIN" compare "${T[@]}" --set train.steps=4 --seeds 1 --schemes none --out "$WORK/cmpp" >/dev/null 2>"$WORK/p.err"
    [ $? -eq 2 ] || fail "compare replaced a user's curves.png"
    [ -e "$WORK/cmpp/none" ] && fail "compare trained before refusing curves.png"
    [ "$(cat "$WORK/cmpp/curves.png")" = "not a plot" ] || fail "a user's curves.png changed"
    # 6. extrapolate refuses an interrupted comparison's unfinished run
    cp -r "$WORK/cmp" "$WORK/cmpu" && rm -rf "$WORK/cmpu/none/seed1"
    "$BIN" train "${T[@]}" --set train.steps=4 --stop-after 2 --quiet --out "$WORK/cmpu/none/seed1" >/dev/null 2>&1
    "$BIN" extrapolate --runs "$WORK/cmpu" --no-plot --max-tokens 256 >/dev/null 2>"$WORK/u.err"
    [ $? -eq 2 ] || fail "extrapolate accepted an unfinished run"
    grep -q "is at step 2 of 4" "$WORK/u.err" || fail "extrapolate on an unfinished run: $(cat "$WORK/u.err")"
    # 7. the printed continue command is shell-safe and carries --config and --set
    for name in "it's mine" 'a;date' 'b $HOME'; do
        dir="$WORK/$name"
        msg=$("$BIN" train "${T[@]}" --set train.steps=4 --quiet --stop-after 2 --out "$dir" 2>&1) || fail "stop-after into '$name'"
        echo "$msg" | grep -q "continue with: roformer train --config configs/tiny.toml --set .* --resume --out" ||
            fail "the stop-after hint lacks --config/--set: $msg"
        again=${msg#*continue with: }
        (eval "${again/roformer/\"$BIN\"}") >/dev/null 2>"$WORK/again.err" || fail "the printed command for '$name': $(cat "$WORK/again.err")"
        grep -q '"step": 4' "$dir/checkpoint.json" || fail "the printed command did not continue '$name'"
    done
elif [ "$WHAT" = lock ]; then
    A=("${T[@]}" --set train.steps=100000 --set train.log_every=1 --quiet)
    # 1. a symlink named lock: not followed, its target untouched
    mkdir -p "$WORK/sym"
    echo "precious" >"$WORK/target.txt"
    "$BIN" train "${T[@]}" --set train.steps=2 --quiet --out "$WORK/sym/run" >/dev/null || fail "set-up"
    rm "$WORK/sym/run/lock" && ln -s "$WORK/target.txt" "$WORK/sym/run/lock"
    "$BIN" train "${T[@]}" --set train.steps=4 --quiet --resume --out "$WORK/sym/run" >/dev/null 2>"$WORK/sym.err"
    [ $? -eq 2 ] || fail "a symlinked lock was accepted"
    [ "$(cat "$WORK/target.txt")" = "precious" ] || fail "the lock symlink's target was overwritten"
    one_line "$WORK/sym.err" "symlinked lock"
    # 1b. extrapolate on a directory that holds no comparison: refused, and no lock left there
    mkdir -p "$WORK/notes" && echo "my notes" >"$WORK/notes/todo.txt"
    "$BIN" extrapolate --runs "$WORK/notes" --no-plot >/dev/null 2>"$WORK/notes.err"
    [ $? -eq 2 ] || fail "extrapolate accepted a directory without a comparison"
    one_line "$WORK/notes.err" "extrapolate on a plain directory"
    [ "$(ls -A "$WORK/notes")" = "todo.txt" ] || fail "extrapolate left files in a directory it refused: $(ls -A "$WORK/notes")"
    # 2. a user's own file named lock in a non-empty --out: refused, untouched
    mkdir -p "$WORK/mine" && echo "my lock notes" >"$WORK/mine/lock" && echo x >"$WORK/mine/other"
    "$BIN" train "${T[@]}" --set train.steps=2 --quiet --out "$WORK/mine" >/dev/null 2>"$WORK/mine.err"
    [ $? -eq 2 ] || fail "a non-empty --out with a user's lock was accepted"
    [ "$(cat "$WORK/mine/lock")" = "my lock notes" ] || fail "a user's lock file was overwritten"
    rm "$WORK/mine/other"
    "$BIN" train "${T[@]}" --set train.steps=2 --quiet --out "$WORK/mine" >/dev/null 2>&1 && fail "a --out holding only a user's lock was taken"
    [ "$(cat "$WORK/mine/lock")" = "my lock notes" ] || fail "a user's lone lock file was overwritten"
    # 3. deleting the lock file does not let a second writer in
    dir=$WORK/del
    "$BIN" train "${A[@]}" --out "$dir" >/dev/null 2>&1 &
    first=$!
    wait_rows "$dir/metrics.csv" 2
    rm -f "$dir/lock"
    "$BIN" train "${A[@]}" --resume --out "$dir" >/dev/null 2>"$WORK/del.err"
    [ $? -eq 2 ] || fail "a second writer got in after the lock file was deleted"
    grep -q "is in use by pid" "$WORK/del.err" || fail "deleted lock: $(cat "$WORK/del.err")"
    kill -INT $first; wait $first
    # 4. extrapolate during a compare: refused, naming the compare's pid
    C=("${T[@]}" --set train.steps=100000 --set train.eval_every=10 --seeds 1 --schemes none --no-plot)
    "$BIN" compare "${C[@]}" --out "$WORK/cmp" >/dev/null 2>&1 &
    cmp_pid=$!
    wait_rows "$WORK/cmp/none/seed1/metrics.csv" 2
    "$BIN" extrapolate --runs "$WORK/cmp" --no-plot >/dev/null 2>"$WORK/x.err"
    [ $? -eq 2 ] || fail "extrapolate ran during a compare"
    grep -q "in use by pid $cmp_pid" "$WORK/x.err" || fail "extrapolate during compare: $(cat "$WORK/x.err")"
    kill -INT $cmp_pid; wait $cmp_pid
elif [ "$WHAT" = disk ]; then
    mnt=$WORK/mnt && mkdir -p "$mnt"
    mount -t tmpfs -o size=4m tmpfs "$mnt" || { echo "FAIL: cannot mount a tmpfs (root needed)"; exit 1; }
    trap 'umount "$mnt"' EXIT
    A=("${T[@]}" --set train.steps=400 --set train.log_every=1 --set train.eval_every=0)
    "$BIN" train "${A[@]}" --quiet --out "$WORK/ref" >/dev/null || fail "reference run"
    # 1. full for a moment: a warning, exit 0, metrics.csv complete and identical
    "$BIN" train "${A[@]}" --set train.checkpoint_every=0 --quiet --out "$mnt/run" >"$WORK/run.out" 2>"$WORK/run.err" &
    pid=$!
    wait_rows "$mnt/run/metrics.csv" 10
    dd if=/dev/zero of="$mnt/fill" bs=4k 2>/dev/null
    for _ in $(seq 300); do grep -q "warning: cannot append" "$WORK/run.err" && break; sleep 0.1; done
    grep -q "No space left on device" "$WORK/run.err" || fail "no warning while the disk was full: $(cat "$WORK/run.err")"
    rm "$mnt/fill"
    wait $pid || fail "the run failed after the disk had space again: $(tail -2 "$WORK/run.err")"
    [ "$(losses "$WORK/ref")" = "$(losses "$mnt/run")" ] || fail "metrics.csv has a gap or a garbled row: $(wc -l <"$mnt/run/metrics.csv") lines"
    cmp -s "$WORK/ref/model.safetensors" "$mnt/run/model.safetensors" || fail "the model differs"
    rm -rf "$mnt/run"
    # 2. full until the checkpoint: a one-line error, the previous checkpoint intact
    "$BIN" train "${A[@]}" --set train.checkpoint_every=100 --quiet --out "$WORK/ref100" >/dev/null || fail "reference run 2"
    "$BIN" train "${A[@]}" --set train.checkpoint_every=100 --stop-after 100 --quiet --out "$mnt/run" >/dev/null || fail "run to step 100"
    "$BIN" train "${A[@]}" --set train.checkpoint_every=100 --quiet --resume --out "$mnt/run" >/dev/null 2>"$WORK/full.err" &
    pid=$!
    wait_rows "$mnt/run/metrics.csv" 103
    dd if=/dev/zero of="$mnt/fill" bs=4k 2>/dev/null
    wait $pid
    code=$?
    [ $code -eq 2 ] || fail "a disk full at the checkpoint: exit $code"
    [ "$(grep -c '^error: ' "$WORK/full.err")" -eq 1 ] || fail "disk full at the checkpoint: $(cat "$WORK/full.err")"
    grep -q "No space left on device" "$WORK/full.err" || fail "full disk message: $(cat "$WORK/full.err")"
    rm "$mnt/fill"
    "$BIN" train "${A[@]}" --set train.checkpoint_every=100 --quiet --resume --out "$mnt/run" >/dev/null 2>"$WORK/again.err" ||
        fail "resume after the full disk: $(cat "$WORK/again.err")"
    same_run "$WORK/ref100" "$mnt/run" "after a full disk at the checkpoint"
    # 3. no free inode (space left): the message says so, not "check the permissions" (issue 65)
    inodes=$WORK/inodes && mkdir -p "$inodes"
    mount -t tmpfs -o size=4m,nr_inodes=64 tmpfs "$inodes" || fail "cannot mount a small-inode tmpfs"
    trap 'umount "$mnt"; umount "$inodes"' EXIT
    for i in $(seq 200); do : > "$inodes/f$i" 2>/dev/null || break; done
    "$BIN" graph --config configs/tiny.toml --out "$inodes/g.dot" >/dev/null 2>"$WORK/inodes.err"
    code=$?
    [ $code -eq 2 ] && [ "$(grep -c . "$WORK/inodes.err")" -eq 1 ] &&
        grep -q "no free inodes" "$WORK/inodes.err" || fail "inodes exhausted: exit $code: $(cat "$WORK/inodes.err")"
    grep -q "permissions" "$WORK/inodes.err" && fail "inodes exhausted blamed on permissions"
else
    echo "usage: $0 <roformer> <scratch dir> compare|outputs|lock|disk" && exit 2
fi
[ $failures -eq 0 ] && echo "PASS ($WHAT)" || { echo "$failures failure(s)"; exit 1; }
