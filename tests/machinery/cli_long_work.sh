#!/usr/bin/env bash
# Long computations without training steps (ctest cli_long_work; docs/training.md, "What every
# command guarantees"): each either has a cap that refuses a larger input before any work, or
# shows progress and stops on a signal.
#   base-bound at a length that runs for minutes: a progress line on stderr, then SIGINT / SIGTERM
#     stop it within a few seconds — exit 130 / 143, one line naming the signal, nothing on
#     stdout, no --csv written;
#   generate stopped by SIGINT mid-way: exit 130, its one stop line;
#   the caps: base-bound's L·D/2, rope-decay's terms and rows, generate's --max-new-tokens,
#     gradcheck's matmul product, extrapolate's --factors, each refused in one line, exit 2, before any work.
#   tests/machinery/cli_long_work.sh ROFORMER_BIN WORK_DIR      (run from the repository root)
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

# stop_midway SIGNAL CODE: base-bound at L = 2^20, D = 128 (minutes of work), stopped once its
# progress line has shown.
stop_midway() {
  local sig=$1 code=$2 err="$WORK/err_$1.txt" csv="$WORK/edges_$1.csv"
  "$BIN" base-bound --head-dim 128 --length 1048576 --csv "$csv" >"$WORK/out_$sig.txt" 2>"$err" &
  local pid=$!
  for _ in $(seq 1 300); do grep -q "bases scanned" "$err" && break; sleep 0.1; done
  grep -q "^base-bound: L = 1048576: [0-9]* of [0-9]* bases scanned, [0-9]* s (Ctrl-C stops)$" "$err" \
    || { kill -9 $pid; fail "no progress line within 30 s: $(cat "$err")"; }
  kill -"$sig" $pid
  for _ in $(seq 1 50); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
  if kill -0 $pid 2>/dev/null; then kill -9 $pid; fail "SIG$sig: still running 5 s later"; fi
  wait $pid; local rc=$?
  [ $rc -eq "$code" ] || fail "SIG$sig: exit $rc, not $code: $(cat "$err")"
  local last; last=$(tail -n 1 "$err")
  echo "$last" | grep -q "^roformer base-bound: stopped by .*SIG$sig.* at L = 1048576; nothing printed, no --csv written" \
    || fail "SIG$sig: the last line: $(cat "$err")"
  [ "$(grep -vc "bases scanned" "$err")" -eq 1 ] || fail "SIG$sig: more than the one stop line: $(cat "$err")"
  [ -s "$WORK/out_$sig.txt" ] && fail "SIG$sig: printed a table: $(cat "$WORK/out_$sig.txt")"
  [ -e "$csv" ] && fail "SIG$sig: wrote the --csv"
  ls "$WORK" | grep -q "tmp" && fail "SIG$sig: left a temporary: $(ls "$WORK")"
  echo "SIG$sig: exit $rc, $last"
}
stop_midway INT 130
stop_midway TERM 143

# generate's tokens are its progress; SIGINT stops it after the token being sampled, one line.
"$BIN" train --config configs/tiny.toml --set train.objective=clm --set train.steps=3 --set train.eval_every=0 \
  --quiet --out "$WORK/clm" >/dev/null 2>&1 || fail "training the causal LM run"
"$BIN" generate --run "$WORK/clm" --max-new-tokens 100000 "In the" >"$WORK/gen_out.txt" 2>"$WORK/gen_err.txt" &
pid=$!
for _ in $(seq 1 300); do [ "$(wc -c <"$WORK/gen_out.txt")" -gt 200 ] && break; sleep 0.1; done
kill -INT $pid
for _ in $(seq 1 50); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
if kill -0 $pid 2>/dev/null; then kill -9 $pid; fail "generate: still running 5 s after SIGINT"; fi
wait $pid; rc=$?
[ $rc -eq 130 ] || fail "generate after SIGINT: exit $rc, not 130: $(cat "$WORK/gen_err.txt")"
tail -n 1 "$WORK/gen_err.txt" | grep -q "^roformer generate: stopped by Ctrl-C (SIGINT) after [0-9]* of 100000 tokens; the text above is what it generated$" \
  || fail "generate's stop line: $(cat "$WORK/gen_err.txt")"
[ "$(wc -l <"$WORK/gen_err.txt")" -eq 2 ] || fail "generate: more than its header and the stop line: $(cat "$WORK/gen_err.txt")"
echo "generate after SIGINT: exit 130, $(tail -n 1 "$WORK/gen_err.txt")"

# A short search prints its table and nothing on stderr.
out=$("$BIN" base-bound --head-dim 64 --length 256 2>"$WORK/short_err.txt") || fail "a short base-bound: $out"
echo "$out" | grep -q "^ *256 " || fail "the short base-bound's table: $out"
[ -s "$WORK/short_err.txt" ] && fail "a short base-bound wrote to stderr: $(cat "$WORK/short_err.txt")"
echo "a short search: its table, no progress line"

# The caps: over-cap inputs are refused before any work.
refuse "base-bound over L·D/2" "sums more than 2^27 cosines per base tried" \
  "$BIN" base-bound --head-dim 128 --length 2097153
refuse "base-bound --steps-per-decade over its cap" "must be from 10 to 100000" \
  "$BIN" base-bound --head-dim 64 --length 1024 --steps-per-decade 100001
refuse "rope-decay over its terms" "more than 10⁹ terms" \
  "$BIN" rope-decay --dim 65536 --max-distance 100000
refuse "rope-decay over its rows" "more than 10 million rows" \
  "$BIN" rope-decay --dim 2 --max-distance 20000000
refuse "generate over --max-new-tokens" "over the limit of" \
  "$BIN" generate --run "$WORK/no_such_run" --max-new-tokens 100001 "In the"
refuse "extrapolate with more than 8 factors" "over the limit of 8" \
  "$BIN" extrapolate --runs "$WORK/no_such_comparison" --factors 1 2 3 4 5 6 7 8 9 --no-plot
refuse "extrapolate with a factor twice" "--factors lists a factor twice" \
  "$BIN" extrapolate --runs "$WORK/no_such_comparison" --factors 4 4 --no-plot
refuse "gradcheck --op matmul over its product" "--op matmul: --seq × --seq is over 4096 elements" \
  "$BIN" gradcheck --op matmul --dim 1 --seq 65
"$BIN" gradcheck --op matmul --dim 64 --seq 64 >/dev/null || fail "gradcheck --op matmul at its cap"
# gradcheck's rope table holds every position up to --offset + --seq: over its cap, or over what
# ulimit -v leaves, refused before it is filled (the old binary filled 32 GB for minutes).
refuse "gradcheck's rope table over its cap" "--offset 1000000000 is over the limit of 4194300 at --dim 8" \
  timeout -s KILL 20 bash -c 'ulimit -v 4000000; exec "$0" gradcheck --op rope --offset 1000000000' "$BIN"
refuse "gradcheck's rope table over ulimit -v" "--offset 4000000: rope's table of 4000004 positions needs 122 MiB but ulimit -v leaves" \
  timeout -s KILL 20 bash -c 'ulimit -v 200000; exec "$0" gradcheck --op rope --offset 4000000' "$BIN"
"$BIN" gradcheck --op rope --offset 4194300 >/dev/null || fail "gradcheck --op rope at its table's cap"

# rope-precision at its largest (minutes): a progress line, then SIGINT stops it between
# measurements with one line, exit 130, nothing printed and no --out written.
csv="$WORK/precision.csv"
"$BIN" rope-precision --head-dim 1024 --max-position 1048576 --out "$csv" >"$WORK/rp_out.txt" 2>"$WORK/rp_err.txt" &
pid=$!
for _ in $(seq 1 300); do grep -q "measured" "$WORK/rp_err.txt" && break; sleep 0.1; done
grep -q "^rope-precision: interleaved pairing, [a-z0-9_]*: [0-9]* of 12 (pairing, case) measured, [0-9]* s (Ctrl-C stops)$" "$WORK/rp_err.txt" \
  || { kill -9 $pid; fail "rope-precision: no progress line within 30 s: $(cat "$WORK/rp_err.txt")"; }
kill -INT $pid
for _ in $(seq 1 150); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
if kill -0 $pid 2>/dev/null; then kill -9 $pid; fail "rope-precision: still running 15 s after SIGINT"; fi
wait $pid; rc=$?
[ $rc -eq 130 ] || fail "rope-precision after SIGINT: exit $rc, not 130: $(cat "$WORK/rp_err.txt")"
tail -n 1 "$WORK/rp_err.txt" | grep -q "^roformer rope-precision: stopped by Ctrl-C (SIGINT) after [0-9]* of 12 (pairing, case) measurements; nothing printed, no --out written$" \
  || fail "rope-precision's stop line: $(cat "$WORK/rp_err.txt")"
[ "$(grep -vc "measured" "$WORK/rp_err.txt")" -eq 1 ] || fail "rope-precision: more than the stop line: $(cat "$WORK/rp_err.txt")"
[ -s "$WORK/rp_out.txt" ] && fail "rope-precision printed after SIGINT: $(head -3 "$WORK/rp_out.txt")"
ls "$WORK" | grep -q "precision.csv" && fail "rope-precision left $(ls "$WORK" | grep precision)"
echo "rope-precision after SIGINT: exit 130, $(tail -n 1 "$WORK/rp_err.txt")"
echo PASS
