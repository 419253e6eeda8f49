#!/usr/bin/env bash
# Per-thread CPU time of one command: which threads worked, and how much of it in the kernel.
#
#   scripts/thread_times.sh [-i SECONDS] -- COMMAND [ARGS...]
#   e.g. scripts/thread_times.sh -- build/roformer train --config configs/classroom.toml \
#            --set train.steps=300 --out /tmp/run
#
# The command runs in the background, its output passed through; every SECONDS (default
# 0.1) the script reads /proc/PID/task/*/stat — utime and stime of every thread, in clock
# ticks (1/100 s) — and keeps each thread's last reading. When the command ends it prints one
# row per thread: tid, when it started (seconds after the command), user and system CPU
# seconds, and the share of the run's wall time it was busy. A thread's last SECONDS before
# the end can be missed; the table's sum is printed beside the process's own total (its
# /proc/PID/stat, which also counts threads that have ended) to show how much. (The kernel
# splits the process total into user and system by its own estimate, so compare the totals.) The sampling
# uses only bash builtins and one `sleep` a round, so it takes almost no CPU itself.
# Threads are not named by OpenBLAS or libgomp (all show the program's name); tid order is
# creation order: OpenBLAS's pool starts when the library loads (before main), libgomp's
# workers at the first parallel loop.
set -euo pipefail
interval=0.1
while [ $# -gt 0 ]; do
    case "$1" in
        -i) interval=$2; shift 2 ;;
        --) shift; break ;;
        *) break ;;
    esac
done
[ $# -gt 0 ] || { echo "usage: scripts/thread_times.sh [-i SECONDS] -- COMMAND [ARGS...]" >&2; exit 2; }

hz=$(getconf CLK_TCK)
boot_ticks() { awk -v hz="$hz" '{ printf "%d", $1 * hz }' /proc/uptime; }
declare -A user sys start
start_ticks=$(boot_ticks)
start_ns=$(date +%s%N)
"$@" &
pid=$!
total_user=0 total_sys=0
sample() {  # every thread's utime, stime, starttime (stat fields 14, 15, 22; comm stripped)
    local f tid rest
    for f in /proc/$pid/task/*/stat; do
        read -r rest 2>/dev/null < "$f" || continue
        tid=${f#/proc/$pid/task/}; tid=${tid%/stat}
        read -r -a v <<< "${rest##*) }"  # v[0] is field 3 (state)
        user[$tid]=${v[11]} sys[$tid]=${v[12]} start[$tid]=${v[19]}
    done
    # The whole process, dead threads included: fields 14, 15 of /proc/PID/stat.
    if read -r rest 2>/dev/null < /proc/$pid/stat; then
        read -r -a v <<< "${rest##*) }"
        total_user=${v[11]} total_sys=${v[12]}
    fi
}
while read -r line 2>/dev/null < /proc/$pid/stat; do
    read -r -a v <<< "${line##*) }"
    [ "${v[0]}" = Z ] && break  # exited, not yet reaped: its threads are gone
    sample
    sleep "$interval"
done
status=0
wait "$pid" || status=$?
wall=$(awk -v a="$start_ns" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')

printf '\nper-thread CPU time of pid %s (%s s wall, sampled every %s s)\n' "$pid" "$wall" "$interval"
printf '%10s %9s %9s %9s %9s %7s\n' tid "start s" "user s" "sys s" "total s" "busy"
sum_user=0 sum_sys=0
for tid in $(printf '%s\n' "${!user[@]}" | sort -n); do
    u=${user[$tid]} s=${sys[$tid]}
    sum_user=$((sum_user + u)) sum_sys=$((sum_sys + s))
    awk -v t="$tid" -v st="${start[$tid]}" -v s0="$start_ticks" -v u="$u" -v s="$s" -v hz="$hz" \
        -v w="$wall" -v main="$pid" 'BEGIN {
        printf "%10s %9.2f %9.2f %9.2f %9.2f %6.0f%%%s\n", t, (st - s0) / hz, u / hz, s / hz,
               (u + s) / hz, 100 * (u + s) / hz / w, (t == main ? "  main thread" : "") }'
done
awk -v u="$sum_user" -v s="$sum_sys" -v tu="$total_user" -v ts="$total_sys" -v hz="$hz" 'BEGIN {
    printf "%10s %9s %9.2f %9.2f %9.2f\n", "threads", "", u / hz, s / hz, (u + s) / hz
    printf "%10s %9s %9.2f %9.2f %9.2f   (the process, last reading)\n", "process", "", tu / hz,
           ts / hz, (tu + ts) / hz }'
exit "$status"
