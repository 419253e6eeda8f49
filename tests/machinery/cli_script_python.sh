#!/usr/bin/env bash
# The Python scripts find Debian's python (ctest cli_script_python): started by a python that
# lacks matplotlib or numpy, a script runs itself again with /usr/bin/python3 when that one has
# them (scripts/script_outputs.py, plotting), and says how in one line when it cannot.
#   tests/machinery/cli_script_python.sh ROFORMER_BIN WORK_DIR      (run from the repository root)
# The pythons that lack the modules: /usr/bin/python3 -S (no site-packages), a venv made without
# the system's packages, and a PYTHONPATH whose matplotlib raises ImportError (which the second
# start inherits, so Debian's cannot stand in: the one-line refusal, exit 3, no loop).
# Skipped (exit 77) where /usr/bin/python3 itself lacks numpy or matplotlib.
set -uo pipefail
BIN=$1 WORK=$2
PY=/usr/bin/python3
fail() { echo "FAIL: $*"; exit 1; }
"$PY" -c "import numpy, matplotlib" 2>/dev/null || { echo "SKIP: /usr/bin/python3 lacks numpy or matplotlib"; exit 77; }
"$PY" -S -c "import matplotlib" 2>/dev/null && { echo "SKIP: /usr/bin/python3 -S still finds matplotlib"; exit 77; }
rm -rf "$WORK" && mkdir -p "$WORK/run" "$WORK/rope" "$WORK/shadow/matplotlib"
unset ROFORMER_SCRIPT_RERUN
cat >"$WORK/run/metrics.csv" <<'CSV'
step,tokens,train_loss,val_loss,val_accuracy,lr,grad_norm,tokens_per_s,elapsed_s
1,1024,6.2,6.3,0.02,0.001,1.5,1000,0.1
2,2048,5.1,5.4,0.06,0.001,1.2,1000,0.2
CSV
ours() { head -c 8 "$1" | od -c | grep -q "P   N   G" && grep -aq "roformer-cpp scripts/$2" "$1"; }

# 1. plot_run.py (matplotlib) under a python without site-packages: run again, picture written.
timeout 120 "$PY" -S scripts/plot_run.py "$WORK/run" --unigram 5 --out "$WORK/run/s.png" \
    >"$WORK/1.out" 2>"$WORK/1.err" || fail "python3 -S plot_run.py exited $?: $(cat "$WORK/1.err")"
grep -q "running the script again with /usr/bin/python3" "$WORK/1.err" ||
    fail "python3 -S plot_run.py did not say it ran again: $(cat "$WORK/1.err")"
ours "$WORK/run/s.png" plot_run.py || fail "python3 -S plot_run.py wrote no picture of its own"

# 2. plot_rope.py (numpy too) the same way.
timeout 120 "$PY" -S scripts/plot_rope.py --out "$WORK/rope" --figures decay --roformer "$BIN" \
    >"$WORK/2.out" 2>"$WORK/2.err" || fail "python3 -S plot_rope.py exited $?: $(cat "$WORK/2.err")"
ours "$WORK/rope/rope_decay.png" plot_rope.py || fail "python3 -S plot_rope.py wrote no rope_decay.png"

# 3. A venv without the system's packages (where the venv module works).
if "$PY" -m venv --without-pip "$WORK/venv" >/dev/null 2>&1; then
  "$WORK/venv/bin/python3" -c "import matplotlib" 2>/dev/null && fail "the venv sees matplotlib"
  timeout 120 "$WORK/venv/bin/python3" scripts/plot_run.py "$WORK/run" --unigram 5 --out "$WORK/run/v.png" \
      >/dev/null 2>"$WORK/3.err" || fail "venv plot_run.py exited $?: $(cat "$WORK/3.err")"
  ours "$WORK/run/v.png" plot_run.py || fail "venv plot_run.py wrote no picture"
  venv="a venv, "
else
  venv=""
fi

# 4. Neither python has it (a PYTHONPATH whose matplotlib fails): one line saying how, exit 3.
echo 'raise ImportError("matplotlib hidden by the test")' >"$WORK/shadow/matplotlib/__init__.py"
PYTHONPATH="$WORK/shadow" timeout 60 "$PY" scripts/plot_run.py "$WORK/run" --unigram 5 \
    --out "$WORK/run/h.png" >"$WORK/4.out" 2>"$WORK/4.err"
rc=$?
[ $rc -eq 3 ] || fail "with matplotlib hidden from both pythons: exit $rc, not 3: $(cat "$WORK/4.err")"
[ "$(wc -l <"$WORK/4.err")" -eq 1 ] || fail "not one line on stderr: $(cat "$WORK/4.err")"
grep -q "install python3-numpy python3-matplotlib" "$WORK/4.err" || fail "the line says not how: $(cat "$WORK/4.err")"
[ ! -e "$WORK/run/h.png" ] || fail "a picture was written without matplotlib"

# 5. The second start never starts a third: with the mark set, -S refuses instead of rerunning.
ROFORMER_SCRIPT_RERUN=/elsewhere timeout 60 "$PY" -S scripts/plot_run.py "$WORK/run" --unigram 5 \
    --out "$WORK/run/m.png" >/dev/null 2>"$WORK/5.err"
rc=$?
[ $rc -eq 3 ] && [ "$(wc -l <"$WORK/5.err")" -eq 1 ] ||
    fail "with ROFORMER_SCRIPT_RERUN set: exit $rc, stderr $(cat "$WORK/5.err")"
echo "PASS: python3 -S, ${venv}plot_run.py and plot_rope.py ran again with /usr/bin/python3; hidden from both: one line, exit 3"
