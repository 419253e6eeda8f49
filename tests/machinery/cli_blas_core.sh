#!/usr/bin/env bash
# The BLAS core check on the machine it runs on (src/fast/blas_core.hpp, src/cli/main.cpp).
#   tests/machinery/cli_blas_core.sh <roformer binary> <scratch dir>
# What the CPU supports is read here from /proc/cpuinfo, by this script's own table, not the
# program's; each case trains 1 step of configs/tiny.toml and reads the run log's BLAS line:
#   - RF_BLAS_CORE=keep: the library's own pick L runs, and the line says so;
#   - the default: the widest core of this CPU runs — "switched" from L, or L already was it;
#   - the library picking generic Prescott (simulated with RF_TEST_BLAS_LIBRARY_CORE, the way
#     OpenBLAS 0.3.21 does on a CPU newer than its tables): the program restarts itself once
#     with OPENBLAS_CORETYPE set, and the widest core really runs (the name is the library's);
#     the restarted process keeps its pid, arguments and exit code;
#   - a user's own OPENBLAS_CORETYPE is kept, never overridden;
#   - a bad RF_BLAS_CORE is one error line, exit 2, nothing written.
# Run from the source directory.
set -u
BIN=$1 WORK=$2
rm -rf "$WORK" && mkdir -p "$WORK"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
has() { for f in "$@"; do case "$flags" in *" $f "*) ;; *) return 1 ;; esac; done; }
if has avx512f avx512bw avx512vl avx512dq avx512cd avx2 fma; then level=avx512 best=SkylakeX
elif has avx2 fma; then level=avx2 best=Haswell
elif has avx; then level=avx best=Sandybridge
elif has sse4_2 ssse3; then level=sse4.2 best=Nehalem
elif has ssse3; then level=ssse3 best=Core2
elif has pni; then level=sse3 best=Prescott
else echo "PASS (not x86, or below SSE3: OpenBLAS's own core is never switched; nothing to test)"; exit 0
fi
echo "this CPU: $level (/proc/cpuinfo); its widest OpenBLAS core: $best"

line=""
blas_line() {  # blas_line NAME [VAR=value...]: sets $line, the run log's BLAS line of a 1-step run
    local name=$1
    shift
    env -u OPENBLAS_CORETYPE -u RF_BLAS_CORE -u RF_BLAS_CORE_WAS -u RF_TEST_BLAS_LIBRARY_CORE "$@" \
        "$BIN" train --config configs/tiny.toml --set train.steps=1 --set train.eval_every=0 \
        --out "$WORK/$name" > "$WORK/$name.log" 2>&1 || fail "$name ($*) exited non-zero"
    line=$(grep '^OpenBLAS ' "$WORK/$name.log")
}

blas_line keep RF_BLAS_CORE=keep
kept=$line
echo "RF_BLAS_CORE=keep: $kept"
library=$(echo "$kept" | sed -n 's/^OpenBLAS .* core \([A-Za-z0-9_]*\) (CPU: .*/\1/p')
[ -n "$library" ] || fail "no core in '$kept'"
echo "$kept" | grep -q "(CPU: $level; the library's choice, kept by RF_BLAS_CORE=keep" ||
    fail "keep: '$kept'"

blas_line auto
auto=$line
echo "default:           $auto"
# The widest cores, by the vector unit they use (OpenBLAS 0.3.21's names; Zen and Excavator are
# AVX2 cores, Cooperlake and SapphireRapids AVX-512 ones): a library already on one of this
# CPU's widest is kept, anything else is switched to $best.
case "$level:$library" in
    avx512:SkylakeX | avx512:Cooperlake | avx512:SapphireRapids | avx2:Haswell | avx2:Zen | \
    avx2:Excavator | avx:Sandybridge | sse4.2:Nehalem | ssse3:Core2 | sse3:Prescott) widest=yes ;;
    *) widest=no ;;
esac
if [ $widest = yes ]; then
    echo "$auto" | grep -q "core $library (CPU: $level; the best for this CPU)" ||
        fail "default: '$auto'"
    echo "$kept" | grep -q "would run" && fail "keep names another core: '$kept'"
else
    echo "$auto" | grep -q "core $best (CPU: $level; was $library, switched)" ||
        fail "default (library picked $library): '$auto'"
    echo "$kept" | grep -q "the check would run $best" || fail "keep does not name $best: '$kept'"
fi

if [ "$best" != Prescott ]; then
    blas_line fallback RF_TEST_BLAS_LIBRARY_CORE=Prescott
    fallback=$line
    echo "library on Prescott: $fallback"
    echo "$fallback" | grep -q "core $best (CPU: $level; was Prescott, switched)" ||
        fail "simulated Prescott: '$fallback'"
    # The restarted process is the same process, with the same arguments and exit code.
    env -u OPENBLAS_CORETYPE RF_TEST_BLAS_LIBRARY_CORE=Prescott sh -c \
        'echo $$ > "$1/pid"; exec "$2" train --config configs/tiny.toml --set train.steps=1 --set train.eval_every=0 --set train.threads=1 --set train.seed=77 --out "$1/same_pid" --profile' \
        sh "$WORK" "$BIN" > "$WORK/same_pid.log" 2>&1 || fail "the restarted run failed"
    grep -q "was Prescott, switched" "$WORK/same_pid.log" || fail "no restart in the pid run"
    grep -q "seed = 77" "$WORK/same_pid/config.toml" || fail "the restart lost an argument (seed)"
    grep -q "^threads 1 " "$WORK/same_pid.log" || fail "the restart lost an argument (threads)"
    grep -q -i "profile" "$WORK/same_pid.log" || fail "the restart lost --profile"
    out=$(env -u OPENBLAS_CORETYPE RF_TEST_BLAS_LIBRARY_CORE=Prescott "$BIN" train \
        --config "$WORK/missing.toml" --out "$WORK/never" 2>&1)
    code=$?
    [ $code = 2 ] || fail "a failing restarted run exited $code, not 2"
    [ "$(echo "$out" | grep -c '^error: ')" = 1 ] || fail "the restarted error: '$out'"
fi

blas_line user OPENBLAS_CORETYPE=Prescott
user=$line
echo "user's Prescott:   $user"
widest="; this CPU's widest is $best"
[ "$best" = Prescott ] && widest=""
echo "$user" | grep -q -F "core Prescott (CPU: $level; set by OPENBLAS_CORETYPE, kept$widest)" ||
    fail "user's OPENBLAS_CORETYPE: '$user'"
blas_line user_and_test OPENBLAS_CORETYPE=Prescott RF_TEST_BLAS_LIBRARY_CORE=Prescott
user=$line
echo "$user" | grep -q "core Prescott " || fail "user's core overridden: '$user'"

out=$(env RF_BLAS_CORE=fastest "$BIN" train --config configs/tiny.toml --out "$WORK/bad" 2>&1)
code=$?
[ $code = 2 ] || fail "RF_BLAS_CORE=fastest exited $code, not 2"
[ "$out" = "error: RF_BLAS_CORE='fastest' is not a setting; use auto (the default: run the best BLAS core for this CPU) or keep (the library's own choice)" ] ||
    fail "RF_BLAS_CORE=fastest: '$out'"
[ -e "$WORK/bad" ] && fail "RF_BLAS_CORE=fastest created its --out directory"

# One thread pool: a 2-thread run of the fast path has two threads, ours (the main thread and
# one OpenMP worker) — OpenBLAS starts with one thread and is held to it. The composed path
# (model.fused = false) runs its own ops on the main thread alone and lets OpenBLAS thread its
# products as it always did: one worker of OpenBLAS's appears (of its pthreads or its OpenMP
# pool, by the build), two threads again. Threads counted from /proc/PID/task every 0.05 s
# (scripts/thread_times.sh), not timed. The runs are 100 steps: libgomp's worker lives from the
# first parallel loop to the exit, and 5 steps of the tiny model (≈ 20 ms on a fast CPU) could
# end between two samples, so the worker went unseen (a CI flake, 2026-11-24).
count_threads() {  # count_threads NAME [roformer train arguments...]
    local name=$1
    shift
    scripts/thread_times.sh -i 0.05 -- env -u OPENBLAS_NUM_THREADS "$BIN" train \
        --config configs/tiny.toml --set train.steps=100 --set train.eval_every=0 \
        --set train.threads=2 --quiet --out "$WORK/$name" "$@" > "$WORK/$name.table" 2>&1 ||
        fail "$name: the run failed"
    # (threads that computed: the stop watchdog, src/run/interrupt.cpp, sleeps on a semaphore
    # and never gets a tick)
    awk '/^per-thread/ { on = 1; next } on && $1 ~ /^[0-9]+$/ && $5 > 0 { n++ } END { print n + 0 }' \
        "$WORK/$name.table"
}
fused=$(count_threads threads_fused)
composed=$(count_threads threads_composed --set model.fused=false)
echo "threads of a 2-thread run: $fused (the composed path: $composed)"
[ "$fused" = 2 ] || fail "a 2-thread run had $fused threads: $(cat "$WORK/threads_fused.table")"
[ "$composed" = 2 ] || fail "the composed path's 2-thread run had $composed threads, not 2: $(cat "$WORK/threads_composed.table")"

[ $failures -eq 0 ] && echo PASS || echo "$failures failure(s)"
