#!/usr/bin/env bash
# The scripts behave like the binary (ctest cli_scripts_hostile): every script in scripts/ that
# reads a run's files or writes next to them is given hostile arguments and paths — a missing
# directory, a file where a directory belongs, empty strings, blank lines, empty cells, all-zero
# matrices, stray files, a missing output folder, a user's file at the output path — and must
# answer with exit 2 and ONE line on stderr (no Python traceback), leaving the user's files byte
# for byte as they were. Also: paired_diff.py on a real compare + extrapolate directory whose
# reference cannot run every length, finetune_sweep.sh when its pre-training fails, and
# bitcheck.sh asked to delete a directory it did not make (run from a throw-away copy of the
# script, so a regression deletes nothing real). The rules: docs/training.md, "What every
# script guarantees"; the shared helper: scripts/script_outputs.py.
#   tests/machinery/cli_scripts_hostile.sh ROFORMER_BIN WORK_DIR      (run from the repository root)
# Exit 77 (skipped) only where /usr/bin/python3 lacks numpy or matplotlib.
set -uo pipefail
BIN=$1 WORK=$2
PY=/usr/bin/python3
export PYTHONDONTWRITEBYTECODE=1
$PY -c "import numpy, matplotlib" 2>/dev/null || { echo "SKIP: /usr/bin/python3 lacks numpy or matplotlib"; exit 77; }
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
failures=0
bad() { echo "FAIL: $*"; failures=$((failures + 1)); }

# refused NAME CMD…: exit 2, exactly one line on stderr, no traceback.
refused() {
  local name=$1 rc; shift
  "$@" >"$WORK/stdout" 2>"$WORK/stderr"; rc=$?
  if [ $rc -ne 2 ] || [ "$(wc -l <"$WORK/stderr")" -ne 1 ] || grep -q Traceback "$WORK/stderr"; then
    bad "$name: exit $rc (want 2 and one line on stderr): $(head -c 400 "$WORK/stderr")"
  fi
}
# mine FILE: a user's file at FILE; untouched FILE: it is still byte for byte the user's.
mine() { mkdir -p "$(dirname "$1")" && printf 'my own notes, not a script output\n' >"$1"; }
untouched() { [ "$(cat "$1" 2>/dev/null)" = "my own notes, not a script output" ] || bad "$1 (a user's file) was changed"; }

# ---- paired_diff.py --------------------------------------------------------------------------
"$BIN" compare --config configs/compare_smoke.toml --out "$WORK/cmp" --no-plot >/dev/null 2>&1 || bad "compare smoke run"
"$BIN" extrapolate --runs "$WORK/cmp" --no-plot >/dev/null 2>&1 || bad "extrapolate on the smoke run"
# learned (the preset's default reference) has no loss beyond its max_positions: no division by 0
out=$($PY scripts/paired_diff.py "$WORK/cmp" learned 2>&1); rc=$?
{ [ $rc -eq 0 ] && ! echo "$out" | grep -qiE "traceback|nan"; } || bad "paired_diff.py learned on compare + extrapolate: exit $rc: $out"
refused "paired_diff missing DIR" $PY scripts/paired_diff.py "$WORK/nowhere" learned
refused "paired_diff DIR is a file" $PY scripts/paired_diff.py "$WORK/cmp/curves.csv" learned
refused "paired_diff empty DIR" $PY scripts/paired_diff.py "" learned
refused "paired_diff empty REFERENCE" $PY scripts/paired_diff.py "$WORK/cmp" ""
refused "paired_diff unknown REFERENCE" $PY scripts/paired_diff.py "$WORK/cmp" nosuchscheme
refused "paired_diff no arguments" $PY scripts/paired_diff.py
mkdir -p "$WORK/pd1" "$WORK/pd2" "$WORK/pd3"
printf 'scheme,seed,step,train_loss,val_loss,val_accuracy\na,1,2,4.0,3.9,0.1\nb,1,2,4.0,3.8,0.1\n' >"$WORK/pd1/curves.csv"
out=$($PY scripts/paired_diff.py "$WORK/pd1" a 2>&1); rc=$?
{ [ $rc -eq 0 ] && ! echo "$out" | grep -qiE "traceback|nan"; } || bad "paired_diff.py over one seed printed: exit $rc: $out"
printf 'scheme,seed,step,train_loss,val_loss,val_accuracy\na,1,2,4.0,,0.1\nb,1,2,4.0,3.8,0.1\n' >"$WORK/pd2/curves.csv"
refused "paired_diff empty val_loss cell" $PY scripts/paired_diff.py "$WORK/pd2" a
printf 'scheme,seed,step,train_loss,val_loss,val_accuracy\n' >"$WORK/pd3/curves.csv"
refused "paired_diff header-only curves.csv" $PY scripts/paired_diff.py "$WORK/pd3" a

# ---- plot_confusion.py -----------------------------------------------------------------------
c="$WORK/conf"; mkdir -p "$c"
printf 'true\\predicted,x,y\nx,3,1\ny,0,2\n' >"$c/good.csv"
printf '\ntrue\\predicted,x,y\nx,3,1\ny,0,2\n' >"$c/blank_first.csv"
printf 'true\\predicted,x,y\nx,3,1\n\ny,0,2\n' >"$c/blank_middle.csv"
printf 'true\\predicted,x,y\nx,0,0\ny,0,0\n' >"$c/zeros.csv"
printf 'true\\predicted,x,y\nx,3,-1\ny,0,2\n' >"$c/negative.csv"
printf 'true\\predicted,x,y\nx,3,\ny,0,2\n' >"$c/empty_cell.csv"
printf 'true\\predicted\n' >"$c/no_labels.csv"
: >"$c/empty.csv"
for f in blank_first blank_middle zeros negative empty_cell no_labels empty; do
  refused "plot_confusion $f.csv" $PY scripts/plot_confusion.py "$c/$f.csv" "$c/$f.png"
  [ -e "$c/$f.png" ] && bad "plot_confusion $f.csv wrote a picture"
done
refused "plot_confusion missing CSV" $PY scripts/plot_confusion.py "$c/nowhere.csv" "$c/x.png"
refused "plot_confusion CSV is a folder" $PY scripts/plot_confusion.py "$c" "$c/x.png"
refused "plot_confusion empty CSV name" $PY scripts/plot_confusion.py "" "$c/x.png"
refused "plot_confusion empty OUT" $PY scripts/plot_confusion.py "$c/good.csv" ""
refused "plot_confusion missing output folder" $PY scripts/plot_confusion.py "$c/good.csv" "$c/no/such/x.png"
refused "plot_confusion OUT is a folder" $PY scripts/plot_confusion.py "$c/good.csv" "$c"
mine "$c/user.png"
refused "plot_confusion over a user's file" $PY scripts/plot_confusion.py "$c/good.csv" "$c/user.png"
refused "plot_confusion over a user's file, --force" $PY scripts/plot_confusion.py "$c/good.csv" "$c/user.png" --force
untouched "$c/user.png"

# ---- plot_curves.py --------------------------------------------------------------------------
p="$WORK/curves"; mkdir -p "$p/empty_cell" "$p/header_only" "$p/user"
printf 'scheme,seed,step,train_loss,val_loss,val_accuracy\na,1,0,4.0,4.0,0\na,1,2,3.9,,0\n' >"$p/empty_cell/curves.csv"
printf 'scheme,seed,step,train_loss,val_loss,val_accuracy\n' >"$p/header_only/curves.csv"
cp "$WORK/cmp/curves.csv" "$WORK/cmp/extrapolation.csv" "$p/user/"
mine "$p/user/curves.png"; mine "$p/user/extrapolation.png"; mine "$p/user/mine.png"
refused "plot_curves missing DIR" $PY scripts/plot_curves.py "$WORK/nowhere"
refused "plot_curves missing DIR, curves" $PY scripts/plot_curves.py "$WORK/nowhere" curves
refused "plot_curves DIR is a file" $PY scripts/plot_curves.py "$WORK/cmp/curves.csv"
refused "plot_curves empty DIR" $PY scripts/plot_curves.py ""
refused "plot_curves folder without CSV" $PY scripts/plot_curves.py "$c"
refused "plot_curves empty val_loss cell" $PY scripts/plot_curves.py "$p/empty_cell" curves
refused "plot_curves header-only curves.csv" $PY scripts/plot_curves.py "$p/header_only" curves
refused "plot_curves over a user's curves.png" $PY scripts/plot_curves.py "$p/user" curves
refused "plot_curves over a user's extrapolation.png" $PY scripts/plot_curves.py "$p/user" extrapolation
refused "plot_curves over a user's OUT.png" $PY scripts/plot_curves.py "$p/user" curves "$p/user/mine.png"
refused "plot_curves OUT in a missing folder" $PY scripts/plot_curves.py "$p/user" curves "$p/no/such/x.png"
refused "plot_curves unknown plot" $PY scripts/plot_curves.py "$p/user" nosuchplot
untouched "$p/user/curves.png"; untouched "$p/user/extrapolation.png"; untouched "$p/user/mine.png"

# ---- finetune_table.py -----------------------------------------------------------------------
ft_run() {  # ft_run OUT TASK SCHEME SEED F1: a finished fine-tune's files, as finetune writes them
  local d="$1/ft/$2/$3/seed$4"; mkdir -p "$d"
  printf 'epoch,step,train_loss,val_loss,accuracy,macro_f1,elapsed_s\n1,10,0.7,0.6,0.8,%s,2.0\n' "$5" >"$d/metrics.csv"
  printf '{"bag_of_words": {"accuracy": 0.7, "macro_f1": 0.5}, "majority_class": {"accuracy": 0.6, "macro_f1": 0.4}}\n' >"$d/floor.json"
  printf '[finetune]\nlr = 2e-4\nepochs = 1\nbatch_size = 16\nwarmup_steps = 2\n' >"$d/finetune.toml"
  : >"$d/done"
}
t="$WORK/table"
for s in 1 2; do ft_run "$t" task rope_interleaved $s 0.5$s; ft_run "$t" task learned $s 0.4$s; done
ft_run "$t" task sinusoidal 1 0.45
out=$($PY scripts/finetune_table.py "$t" 2>&1); rc=$?
{ [ $rc -eq 0 ] && ! echo "$out" | grep -qiE "traceback|nan"; } || bad "finetune_table.py on a good sweep (one scheme with one seed): exit $rc: $out"
$PY scripts/finetune_table.py "$t" >/dev/null 2>&1 || bad "finetune_table.py refused to rewrite its own table"
refused "finetune_table missing OUT" $PY scripts/finetune_table.py "$WORK/nowhere"
refused "finetune_table OUT is a file" $PY scripts/finetune_table.py "$c/good.csv"
refused "finetune_table empty OUT" $PY scripts/finetune_table.py ""
refused "finetune_table unknown REFERENCE" $PY scripts/finetune_table.py "$t" nosuchscheme
for stray in "ft/notes.txt" "ft/task/notes.txt"; do
  cp -r "$t" "$WORK/stray"; echo notes >"$WORK/stray/$stray"
  refused "finetune_table stray $stray" $PY scripts/finetune_table.py "$WORK/stray"; rm -rf "$WORK/stray"
done
cp -r "$t" "$WORK/empty_metrics"; head -1 "$t/ft/task/learned/seed1/metrics.csv" >"$WORK/empty_metrics/ft/task/learned/seed1/metrics.csv"
refused "finetune_table header-only metrics.csv" $PY scripts/finetune_table.py "$WORK/empty_metrics"
cp -r "$t" "$WORK/empty_f1"; sed -i 's/,0\.41,/,,/' "$WORK/empty_f1/ft/task/learned/seed1/metrics.csv"
refused "finetune_table empty macro_f1 cell" $PY scripts/finetune_table.py "$WORK/empty_f1"
cp -r "$t" "$WORK/bad_floor"; echo '{"bag_of_words": {}}' >"$WORK/bad_floor/ft/task/learned/seed1/floor.json"
refused "finetune_table damaged floor.json" $PY scripts/finetune_table.py "$WORK/bad_floor"
for f in table.md finetune_results.csv; do
  cp -r "$t" "$WORK/user_$f"; rm -f "$WORK/user_$f/$f.written-by"; mine "$WORK/user_$f/$f"
  refused "finetune_table over a user's $f" $PY scripts/finetune_table.py "$WORK/user_$f"
  refused "finetune_table over a user's $f, --force" $PY scripts/finetune_table.py "$WORK/user_$f" --force
  untouched "$WORK/user_$f/$f"
done

# its own table, edited by hand: kept unless --force says to replace the edits
echo "my edit" >>"$t/table.md"
refused "finetune_table over its own, edited table.md" $PY scripts/finetune_table.py "$t"
grep -q "^my edit$" "$t/table.md" || bad "finetune_table.py replaced an edited table.md without --force"
$PY scripts/finetune_table.py "$t" --force >/dev/null 2>&1 || bad "finetune_table.py --force over its own edited table.md"
grep -q "^my edit$" "$t/table.md" && bad "finetune_table.py --force kept the edit"

# ---- bitcheck.sh (a throw-away copy: its "repository" is $WORK/repo) ---------------------------
r="$WORK/repo"; mkdir -p "$r/scripts" "$WORK/home"; cp scripts/bitcheck.sh "$r/scripts/"
mine "$r/keep.txt"; mine "$WORK/home/keep.txt"; mine "$WORK/userdir/keep.txt"
cd "$r" || exit 1
HOME="$WORK/home" refused "bitcheck OUT = the repository" scripts/bitcheck.sh "$BIN" "$BIN" .
HOME="$WORK/home" refused "bitcheck OUT empty" scripts/bitcheck.sh "$BIN" "$BIN" ""
cd - >/dev/null || exit 1
HOME="$WORK/home" refused "bitcheck OUT = HOME" "$r/scripts/bitcheck.sh" "$BIN" "$BIN" "$WORK/home"
HOME="$WORK/home" refused "bitcheck OUT = a user's folder" "$r/scripts/bitcheck.sh" "$BIN" "$BIN" "$WORK/userdir"
HOME="$WORK/home" refused "bitcheck OUT = a file" "$r/scripts/bitcheck.sh" "$BIN" "$BIN" "$WORK/userdir/keep.txt"
untouched "$r/keep.txt"; untouched "$WORK/home/keep.txt"; untouched "$WORK/userdir/keep.txt"

# ---- finetune_sweep.sh: a failed pre-training fails the sweep (a stale table is not shown) ------
# A complete earlier sweep is on disk (pre-training, fine-tunes with their done markers); this
# time `roformer compare` fails: the sweep must fail too, not print the old table with exit 0.
s="$WORK/sweep"; mkdir -p "$s/pretrain/rope_interleaved/seed1"
echo "stale" >"$s/pretrain/curves.csv"; echo "stale" >"$s/pretrain/rope_interleaved/seed1/model.safetensors"
for task in kjv-testament fortunes-topic; do
  ft_run "$s" $task rope_interleaved 1 0.5; ft_run "$s" $task scratch 1 0.4
done
printf '#!/bin/sh\n[ "$1" = compare ] || exit 0\necho "error: the pre-training broke" >&2\nexit 1\n' >"$WORK/failing_roformer"
chmod +x "$WORK/failing_roformer"
out=$(ROFORMER_BIN="$WORK/failing_roformer" scripts/finetune_sweep.sh --smoke "$s" 2>&1); rc=$?
{ [ $rc -ne 0 ] && ! echo "$out" | grep -q "the table is"; } || bad "finetune_sweep.sh after a failed pre-training: exit $rc: $out"

# ---- bench.sh: an empty or malformed --cores is refused before any work -----------------------
# (REPEATS=x: a bench.sh that accepted the option stops at that check with exit 1, before it
# builds, installs or times anything.)
REPEATS=x refused "bench --cores ''" scripts/bench.sh --cores ""
REPEATS=x refused "bench --cores 0,,1" scripts/bench.sh --cores 0,,1
REPEATS=x refused "bench --torch-modes ''" scripts/bench.sh --torch-modes ""

# ---- grade.sh: a student's tests that hang, print without end or crash are named, in time ------
# The real grader (built by grade.sh into its own folder) runs stand-in test programs as they
# are (GRADE_BUILD=0: no build), under a 2 s and 100 000-byte limit.
g="$WORK/grade"; mkdir -p "$g"
GRADE_BUILD_DIR="$g/build" scripts/grade.sh list > "$g/list.log" 2>&1 || bad "grade.sh list did not build the grader: $(tail -n 3 "$g/list.log")"
printf '#!/bin/sh\nexec sleep 600\n' >"$g/hang"
printf '#!/bin/sh\nexec yes "a line the student prints in a loop"\n' >"$g/chatty"
printf '#!/bin/sh\nulimit -c 0\nkill -SEGV $$\n' >"$g/crash"
chmod +x "$g/hang" "$g/chatty" "$g/crash"
task=$(awk -F' [|] ' '/^[a-z_]+ [|] / { print $1; exit }' students/tasks.txt)
for case in "hang:its tests never finished: stopped after 2 s" \
            "chatty:printed more than 100000 bytes" "crash:crashed (SIGSEGV)"; do
  cp "$g/${case%%:*}" "$g/build/test_$task"
  out=$(GRADE_BUILD=0 GRADE_BUILD_DIR="$g/build" GRADE_TIMEOUT=2 GRADE_MAX_OUTPUT=100000 \
        timeout 60 scripts/grade.sh "$task" 2>&1); rc=$?
  { [ $rc -ne 0 ] && [ $rc -ne 124 ] && [[ "$out" == *"$task: "*"${case#*:}"* ]]; } ||
    bad "grade.sh $task whose tests ${case%%:*}: exit $rc: $(echo "$out" | head -c 400)"
  [ "${case%%:*}" = chatty ] && { [ "$(wc -c <"$g/build/$task.student.out")" -le 100001 ] || bad "grade.sh kept more than GRADE_MAX_OUTPUT bytes"; }
done

# ---- torch_chroot.sh, fresh_root.sh (root only: chroot, mounts) --------------------------------
if [ "$(id -u)" -eq 0 ]; then
  # A root whose /bin/sh cannot run: one line, exit 2, nothing made or left in it.
  r="$WORK/badroot"; mkdir -p "$r/bin" "$r/proc" "$r/dev"
  printf '#!/nonexistent/interpreter\n' >"$r/bin/sh"; chmod +x "$r/bin/sh"
  before=$(find "$r" | sort)
  refused "torch_chroot on a root whose shell does not run" scripts/torch_chroot.sh "$r" /bin/true
  [ "$(find "$r" | sort)" = "$before" ] || bad "torch_chroot.sh left files in a bad root: $(find "$r" | sort | tr '\n' ' ')"
  # debootstrap fails: the log it names is still there.
  f="$WORK/fresh"; mkdir -p "$f/bin" "$f/tmp"
  printf '#!/bin/sh\necho "E: the mirror cannot be reached"\nexit 1\n' >"$f/bin/debootstrap"; chmod +x "$f/bin/debootstrap"
  out=$(PATH="$f/bin:$PATH" TMPDIR="$f/tmp" RF_ROOT_CACHE="$f/cache" timeout 60 scripts/fresh_root.sh bookworm -- true 2>&1 >/dev/null); rc=$?
  log=$(echo "$out" | sed -n 's/.*its log: \(.*\))$/\1/p')
  { [ $rc -eq 1 ] && [ -n "$log" ] && grep -q "mirror cannot be reached" "$log"; } ||
    bad "fresh_root.sh after a failed debootstrap: exit $rc, log '$log': $out"
  [ "$(ls "$f/tmp")" = "$(basename "${log:-none}")" ] || bad "fresh_root.sh left in TMPDIR: $(ls "$f/tmp")"
fi

# ---- an integer cell too large for a float: one line naming the file and the value -----------
# (issue 57: numpy's float conversion stopped every plot with an OverflowError traceback)
h="$WORK/huge"; mkdir -p "$h/curves" "$h/run"; big=$(printf '9%.0s' $(seq 400))
printf 'vectors,pairing,case,position,shift_error,reference_error,first_token_error,other_tokens_error,score_scale,first_token_scale\nrandom,interleaved,f32,%s,0.1,0.1,0.1,0.1,1,1\nrandom,interleaved,f32,1,0.1,0.1,0.1,0.1,1,1\n' "$big" >"$h/precision.csv"
printf 'scheme,seed,step,train_loss,val_loss,val_accuracy\na,1,0,4.0,4.0,0\na,1,%s,3.9,3.8,0\n' "$big" >"$h/curves/curves.csv"
printf 'step,train_loss,val_loss,val_accuracy\n1,4.0,4.0,0\n%s,3.9,3.8,0\n' "$big" >"$h/run/metrics.csv"
printf 'true\\predicted,x,y\nx,3,%s\ny,0,2\n' "$big" >"$h/confusion.csv"
for cmd in "plot_rope_precision.py $h/precision.csv" "plot_curves.py $h/curves curves" \
           "plot_run.py $h/run --unigram 5" "plot_confusion.py $h/confusion.csv $h/confusion.png"; do
  refused "${cmd%% *} with a 400-digit integer" $PY scripts/$cmd
  grep -q "$h/.*:[0-9]*.*9999.*(400 characters) is larger than" "$WORK/stderr" || bad "${cmd%% *}: the value and file not named: $(head -c 300 "$WORK/stderr")"
done
[ -e "$h/confusion.png" ] && bad "plot_confusion drew a 400-digit count"

[ $failures -eq 0 ] || { echo "FAIL: $failures case(s)"; exit 1; }
echo "hostile arguments and paths: every script refused with one line and exit 2, no traceback, no user file changed"
echo PASS
