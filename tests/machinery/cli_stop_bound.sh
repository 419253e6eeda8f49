#!/usr/bin/env bash
# Memory known before the work, and a stop within a bound (issue 57; docs/training.md, "What
# every command guarantees"):
#   train under a ulimit -v too small for its estimate and OpenBLAS's buffers: one line naming
#     ulimit -v and the limit that fits, exit 2, nothing created — never a spin in OpenBLAS's
#     allocator (the old binary spun for ever); the limit it names then trains; eval alike;
#     lower limits too, where OpenBLAS's threads at load ended the process with exit 130;
#   base-bound (OpenMP's workers, started at its first loop) under the limits just above the
#     load floor: its answer (on the threads that fit) or one error line — never libgomp's
#     "Thread creation failed" with exit 1;
#   train stuck in a step (its stderr a full pipe nobody reads, so a progress write blocks):
#     the first SIGTERM ends it on its own within the grace (10 s), exit 143 — no second signal;
#     --resume then continues (the lock is free, nothing half-committed).
#   tests/machinery/cli_stop_bound.sh ROFORMER_BIN WORK_DIR      (run from the repository root)
set -uo pipefail
BIN=$1 WORK=$2
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK"
TINY=(train --config configs/tiny.toml --set train.steps=2 --set train.eval_every=0
      --set train.threads=1 --quiet)

# 1. ulimit -v 160000 (156 MiB): less than the libraries, one OpenBLAS buffer and the model.
msg=$( (ulimit -v 160000; exec timeout -s KILL 30 "$BIN" "${TINY[@]}" --out "$WORK/small") 2>&1)
rc=$?
[ $rc -eq 137 ] && fail "train under ulimit -v 160000 still running after 30 s (OpenBLAS's spin)"
[ $rc -eq 2 ] || fail "train under ulimit -v 160000: exit $rc, not 2: $msg"
[ "$(echo "$msg" | wc -l)" -eq 1 ] || fail "train under ulimit -v: not one line: $msg"
echo "$msg" | grep -q "needs about [0-9]* MiB of address space (.*OpenBLAS buffers.*) but ulimit -v allows 156 MiB; raise it to at least ulimit -v [0-9]*" \
  || fail "train under ulimit -v: message: $msg"
[ -e "$WORK/small" ] && fail "train under ulimit -v left $WORK/small"
echo "ulimit -v 160000: $msg"
# The limit the message names trains.
fits=$(echo "$msg" | sed -n 's/.*at least ulimit -v \([0-9]*\).*/\1/p')
out=$( (ulimit -v "$fits"; exec timeout -s KILL 60 "$BIN" "${TINY[@]}" --out "$WORK/fits") 2>&1) \
  || fail "train under the ulimit -v $fits the refusal named: $out"
echo "ulimit -v $fits (the one named): trained"
# Every command that runs a model checks before its first product: eval of that run too.
msg=$( (ulimit -v 160000; exec timeout -s KILL 30 "$BIN" eval --run "$WORK/fits") 2>&1)
rc=$?
[ $rc -eq 137 ] && fail "eval under ulimit -v 160000 still running after 30 s (OpenBLAS's spin)"
[ $rc -eq 2 ] && [ "$(echo "$msg" | wc -l)" -eq 1 ] || fail "eval under ulimit -v 160000: exit $rc: $msg"
echo "$msg" | grep -q "of address space (.*OpenBLAS buffers.*) but ulimit -v allows 156 MiB; raise it to at least ulimit -v [0-9]*" \
  || fail "eval under ulimit -v: message: $msg"
echo "eval under ulimit -v 160000: $msg"
# Below that, down to where the loader cannot map a library (exit 127, before any code of ours
# runs): still one line and exit 2 — OpenBLAS must not start its threads at load and end the
# process with SIGINT's status (130) before the check (issue 65; cli/main.cpp's .preinit_array).
for v in $(seq 80000 2000 130000); do
  msg=$( (ulimit -v "$v"; exec timeout -s KILL 30 "$BIN" "${TINY[@]}" --out "$WORK/tight") 2>&1)
  rc=$?
  [ $rc -eq 127 ] && continue
  [ $rc -eq 2 ] && [ "$(echo "$msg" | wc -l)" -eq 1 ] && [[ "$msg" == "error: "*"ulimit -v allows"* ]] ||
    fail "train under ulimit -v $v: exit $rc, not 2 in one line: $msg"
  [ -e "$WORK/tight" ] && fail "train under ulimit -v $v left $WORK/tight"
done
echo "ulimit -v 80000 to 130000: one error line (or the loader's exit 127) at every limit"
# A command that starts OpenMP's workers at its first loop (base-bound): under a limit where a
# worker's stack does not fit beside what is loaded, libgomp would end the process ("Thread
# creation failed", exit 1, no line of ours); the loops run on the threads that fit instead —
# the same answer as without a limit — or one error line, exit 2.
want=$("$BIN" base-bound --head-dim 16 --length 32 2>&1) || fail "base-bound without a limit: $want"
for v in $(seq 90000 2000 140000); do
  msg=$( (ulimit -v "$v"; exec timeout -s KILL 30 "$BIN" base-bound --head-dim 16 --length 32) 2>&1)
  rc=$?
  [ $rc -eq 127 ] && continue
  if [ $rc -eq 0 ]; then
    [ "$msg" = "$want" ] || fail "base-bound under ulimit -v $v: another answer: $msg"
  else
    [ $rc -eq 2 ] && [ "$(echo "$msg" | wc -l)" -eq 1 ] && [[ "$msg" == "error: "* ]] ||
      fail "base-bound under ulimit -v $v: exit $rc, not 0 or 2 in one line: $msg"
  fi
done
echo "base-bound under ulimit -v 90000 to 140000: its answer or one error line at every limit"
# A command that reads JSON (import-hf of an exported run) under limits from below the load
# floor up: a bad_alloc unwinding through nlohmann's json, whose destructor allocates, once
# ended in std::terminate (exit 134, no line of ours, the staging directory left); now the
# import, or one error line, exit 2, and nothing left where --out goes.
"$BIN" "${TINY[@]}" --out "$WORK/hf_run" > /dev/null 2>&1 || fail "the run to export did not train"
"$BIN" export-hf "$WORK/hf_run" --out "$WORK/hf" > /dev/null 2>&1 || fail "export-hf of the tiny run failed"
for v in $(seq 90000 500 130000); do
  rm -rf "$WORK/imported"
  msg=$( (ulimit -v "$v"; exec timeout -s KILL 30 "$BIN" import-hf "$WORK/hf" --out "$WORK/imported") 2>&1)
  rc=$?
  [ $rc -eq 127 ] && continue
  if [ $rc -ne 0 ]; then
    [ $rc -eq 2 ] && [ "$(echo "$msg" | wc -l)" -eq 1 ] && [[ "$msg" == "error: "* ]] ||
      fail "import-hf under ulimit -v $v: exit $rc, not 0 or 2 in one line: $msg"
    left=$(ls -A "$WORK" | grep -E '^(imported|\.imported)' || true)
    [ -z "$left" ] || fail "import-hf under ulimit -v $v failed and left: $left"
  fi
done
echo "import-hf under ulimit -v 90000 to 130000: the import or one error line, nothing left"

# 2. A step that does not end: SIGTERM once, and the process ends within the grace.
python3 - "$BIN" "$WORK/stuck" <<'EOF' || exit 1
import fcntl, os, signal, struct, subprocess, sys, termios, time
binary, run = sys.argv[1], sys.argv[2]
r, w = os.pipe()
fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ: one page, filled by a few dozen progress lines
p = subprocess.Popen([binary, "train", "--config", "configs/tiny.toml", "--set", "train.steps=100000",
                      "--set", "train.log_every=1", "--set", "train.eval_every=0", "--out", run],
                     stdout=subprocess.DEVNULL, stderr=w)
os.close(w)
queued = lambda: struct.unpack("i", fcntl.ioctl(r, termios.FIONREAD, b"\0\0\0\0"))[0]
# Full: the next line does not fit in the page, so the queue stops growing (for 2 s).
deadline, last, still = time.time() + 60, -1, 0
while p.poll() is None and time.time() < deadline and still < 20:
    time.sleep(0.1)
    now = queued()
    still, last = (still + 1 if now == last and now > 2048 else 0), now
if p.poll() is not None or still < 20:
    p.kill(); print("FAIL: the stderr pipe never filled (exit %s)" % p.poll()); sys.exit(1)
p.send_signal(signal.SIGTERM)
start = time.time()
try:
    rc = p.wait(timeout=20)
except subprocess.TimeoutExpired:
    p.kill(); p.wait()
    print("FAIL: still running 20 s after one SIGTERM (it waits for a second signal)"); sys.exit(1)
took = time.time() - start
if rc != 143 or not 9 <= took <= 15:
    print("FAIL: exit %d after %.1f s; expected 143 after the 10 s grace" % (rc, took)); sys.exit(1)
print("stuck step, one SIGTERM: exit %d after %.1f s" % (rc, took))
EOF
out=$(timeout 120 "$BIN" train --config configs/tiny.toml --set train.steps=100000 --set train.log_every=1 \
  --set train.eval_every=0 --stop-after 3 --resume --out "$WORK/stuck" 2>&1) \
  || fail "--resume after the watchdog's exit: $out"
echo "$out" | grep -q "no checkpoint in $WORK/stuck yet; starting again from step 0" \
  || fail "--resume after the watchdog's exit: $out"
ls "$WORK/stuck" | grep -q '\.tmp-' && fail "temporaries left: $(ls "$WORK/stuck")"
echo "--resume after it: starts again from step 0 (no checkpoint had been committed)"
echo PASS
