#!/usr/bin/env bash
# Data-parallel training and sweeps over MPI on loopback (issue 26, docs/distributed.md).
#   tests/machinery/cli_distributed.sh <roformer binary> <scratch dir> train|signals|compare
#   train:   2 ranks vs 1 process on the same config and seed — the first 20 steps' losses and
#            grad norms, and the final weights, agree within the tolerances below; the 2-rank
#            checkpoint evaluates in a 1-process `roformer eval` to the numbers the run logged;
#            a batch of 5 rows on 2 ranks (3 + 2) is handled and agrees with 1 process too;
#            a batch smaller than P is refused; ranks that read different corpora are refused;
#            eval under mpirun is refused once;
#            a 2-rank run stopped and resumed is bit-identical to an uninterrupted 2-rank run
#   signals: SIGINT to rank 1 stops both ranks at one step, exit 130, one checkpoint at that
#            step, and --resume ends bit-identical to an uninterrupted 2-rank run; SIGKILL of
#            rank 1 ends rank 0 and mpirun non-zero within seconds, the checkpoint intact; a
#            second job on the same directory is refused, naming rank 0's pid
#   compare: `mpirun -np 2 roformer compare` writes the same curves.csv as a local compare
#   mixed:   an MPMD launch whose ranks got different settings (train and compare) is refused
#            in one line naming the rank and the key, exit 2, before anything is written
# Run from the source directory (configs/tiny.toml). A binary built without MPI is only checked
# to refuse `mpirun -np 2` in one line; a missing mpirun fails (scripts/setup.sh --all installs it).
#
# Tolerances (derived in docs/distributed.md, "How close is close"): the two runs do the same
# arithmetic except the order of a few float32 sums (the gradient's sum over rows is split in
# two halves; the loss is combined from two shard means), so they start ~1e-7 apart relatively
# and drift apart only as fast as 20 AdamW steps amplify that. We allow a relative 1e-4 on every
# logged loss and 1e-3 on the gradient norm (each ~1000× float32's unit roundoff 6e-8 times the
# condition of the sum), and 1e-4 · lr · steps on any weight: a hundredth of what one AdamW step
# can move a weight (≤ lr, Kingma & Ba §2.1), summed over the steps. A wrong shard, a missing or
# wrong n_r/N weight or a rank on stale weights misses these by orders of magnitude.
set -u
BIN=$1 WORK=$2 WHAT=$3
rm -rf "$WORK" && mkdir -p "$WORK"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
finish() {
    [ $failures -eq 0 ] && echo "PASS ($WHAT)" || echo "$failures failure(s)"
    exit 0
}

if ! command -v mpirun >/dev/null; then echo "FAIL: no mpirun; scripts/setup.sh --all installs openmpi-bin"; exit 0; fi
# OpenMPI refuses root without these; no ptrace in containers: no single-copy shared memory.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
MPI=(mpirun -np 2 --oversubscribe)
# A build without MPI (no libopenmpi-dev at configure time) must refuse P > 1 in one line,
# before touching --out; that is all there is to test of it.
probe=$("${MPI[@]}" "$BIN" train --config configs/tiny.toml --set train.batch_size=1 --out "$WORK/probe" 2>&1)
if echo "$probe" | grep -q "built without MPI"; then
    [ "$(echo "$probe" | grep -c '^error: this roformer was built without MPI but started as one of 2 processes')" = 2 ] ||
        fail "no-MPI build under mpirun: $probe"
    [ -e "$WORK/probe" ] && fail "no-MPI build under mpirun created $WORK/probe"
    echo "(this build has no MPI: checked its refusal only)"
    finish
fi
rm -rf "$WORK/probe"
# An MPMD launch ('mpirun -np 1 A : -np 1 B') is how a user gives ranks different settings,
# which the cases below refuse. Debian 13's mpirun (Open MPI 5.0 with external PMIx) crashes
# on any MPMD launch, 'true : true' included, before starting a process (upstream:
# open-mpi/ompi#13303): there those cases cannot run, and are reported as skipped.
mpmd_works() { timeout 60 mpirun --oversubscribe -np 1 true : -np 1 true >/dev/null 2>&1; }
mpmd_skipped() { echo "SKIPPED ($1): this mpirun cannot launch an MPMD job ('mpirun -np 1 true : -np 1 true' fails; Open MPI 5, open-mpi/ompi#13303)"; }

# metrics.csv without the timing columns (tokens_per_s, elapsed_s).
losses() { cut -d, -f1-7 "$1/metrics.csv"; }
same_as() {  # same_as REF DIR LABEL: bit-identical losses, model and optimizer
    [ "$(losses "$1")" = "$(losses "$2")" ] || fail "$3: metrics.csv differs"
    cmp -s "$1/model.safetensors" "$2/model.safetensors" || fail "$3: model differs"
    cmp -s "$1/optimizer.safetensors" "$2/optimizer.safetensors" || fail "$3: optimizer differs"
}
# close_to ONE TWO LABEL LR STEPS: the tolerances above, column by column and weight by weight.
close_to() {
    python3 - "$1" "$2" "$3" "$4" "$5" <<'EOF' || fail "$3"
import csv, json, struct, sys
one, two, label, lr, steps = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5])
rows = lambda d: list(csv.DictReader(open(d + "/metrics.csv")))
a, b = rows(one), rows(two)
bad = []
if [r["step"] for r in a] != [r["step"] for r in b]: bad.append("different logged steps")
for ra, rb in zip(a, b):
    for col, rel in (("train_loss", 1e-4), ("val_loss", 1e-4), ("grad_norm", 1e-3)):
        if ra[col] == "" and rb[col] == "": continue
        x, y = float(ra[col]), float(rb[col])
        if abs(x - y) > rel * max(abs(x), 1e-3): bad.append(f"step {ra['step']} {col} {x} vs {y}")
def tensors(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    head = json.loads(raw[8:8 + n])
    out = {}
    for k, v in head.items():
        if k == "__metadata__": continue
        s, e = v["data_offsets"]
        out[k] = struct.unpack("<%df" % ((e - s) // 4), raw[8 + n + s:8 + n + e])
    return out
ta, tb = tensors(one + "/model.safetensors"), tensors(two + "/model.safetensors")
if ta.keys() != tb.keys(): bad.append("different tensors")
worst = max(max(abs(x - y) for x, y in zip(ta[k], tb[k])) for k in ta)
limit = 1e-4 * lr * steps
if worst > limit: bad.append(f"largest weight difference {worst:.3g} > {limit:.3g}")
print(f"{label}: largest weight difference {worst:.3g} (limit {limit:.3g})")
if bad:
    print("; ".join(bad[:5]))
    sys.exit(1)
EOF
}
# Rank R's pid among mpirun's children (OpenMPI puts the rank in each one's environment).
rank_pid() {  # rank_pid MPIRUN_PID R
    for _ in $(seq 100); do
        for p in $(pgrep -P "$1"); do
            tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2" &&
                echo "$p" && return 0
        done
        sleep 0.1
    done
    return 1
}
TINY=(--config configs/tiny.toml --set train.threads=1 --quiet)

if [ "$WHAT" = train ]; then
    # 1. 2 ranks vs 1 process: 20 steps, every step logged, validation at 10 and 20.
    S=(--set train.steps=20 --set train.log_every=1 --set train.eval_every=10)
    "$BIN" train "${TINY[@]}" "${S[@]}" --out "$WORK/one" >/dev/null || fail "1-process run"
    "${MPI[@]}" "$BIN" train "${TINY[@]}" "${S[@]}" --out "$WORK/two" >"$WORK/two.out" 2>&1 ||
        fail "2-rank run: $(tail -3 "$WORK/two.out")"
    lr=$(grep '^lr *=' "$WORK/one/config.toml" | head -1 | sed 's/.*= *//')
    close_to "$WORK/one" "$WORK/two" "2 ranks vs 1 process" "$lr" 20
    # Only rank 0 writes and reports: one summary line.
    [ "$(grep -c '^final validation' "$WORK/two.out")" = 1 ] || fail "2-rank output: $(cat "$WORK/two.out")"
    # 2. The 2-rank checkpoint in a 1-process eval: the numbers the run logged at step 20.
    logged=$(tail -1 "$WORK/two/metrics.csv" | awk -F, '{printf "validation loss %.4f, accuracy %.4f", $4, $5}')
    evaluated=$("$BIN" eval --run "$WORK/two" 2>&1)
    echo "$evaluated" | grep -q "$logged" || fail "eval of the 2-rank run: '$evaluated', logged '$logged'"
    # ... and eval itself under mpirun is refused once (it would run twice), exit non-zero.
    msg=$("${MPI[@]}" "$BIN" eval --run "$WORK/two" 2>&1)
    code=$?
    [ $code -ne 0 ] || fail "eval under mpirun exited 0"
    [ "$(echo "$msg" | grep -c '^error: roformer eval runs in one process')" = 1 ] ||
        fail "eval under mpirun: $(echo "$msg" | head -3)"
    # 3. A batch of 5 rows: rank 0 takes 3, rank 1 takes 2 (weights 3/5-ish by labels) — handled.
    S5=("${S[@]}" --set train.batch_size=5)
    "$BIN" train "${TINY[@]}" "${S5[@]}" --out "$WORK/one5" >/dev/null || fail "1-process B=5"
    "${MPI[@]}" "$BIN" train "${TINY[@]}" "${S5[@]}" --out "$WORK/two5" >/dev/null 2>&1 || fail "2-rank B=5"
    close_to "$WORK/one5" "$WORK/two5" "B = 5 on 2 ranks vs 1 process" "$lr" 20
    # 4. Fewer rows than ranks: refused in one line, nothing trained.
    msg=$("${MPI[@]}" "$BIN" train "${TINY[@]}" --set train.batch_size=1 --out "$WORK/b1" 2>&1)
    code=$?
    [ $code -ne 0 ] || fail "batch_size 1 on 2 ranks exited 0"
    echo "$msg" | grep -q "^error: train.batch_size = 1 is smaller than the 2 ranks" ||
        fail "batch_size 1 on 2 ranks: $msg"
    # 5. Ranks that read different corpora (an MPMD launch: rank 1 gets another data.path)
    #    are refused on every rank, before any step.
    tr 'ae' 'ea' <data/kjv.txt >"$WORK/other.txt"
    if ! mpmd_works; then mpmd_skipped "ranks on different corpora"; else
    msg=$(mpirun --oversubscribe -np 1 "$BIN" train "${TINY[@]}" --out "$WORK/mixed" : \
          -np 1 "$BIN" train "${TINY[@]}" --set data.path="$WORK/other.txt" --out "$WORK/mixed" 2>&1)
    code=$?
    [ $code -ne 0 ] || fail "ranks on different corpora exited 0"
    echo "$msg" | grep -q "^error: the ranks prepared different data" ||
        fail "ranks on different corpora: $(echo "$msg" | head -3)"
    [ -f "$WORK/mixed/metrics.csv" ] && [ "$(wc -l <"$WORK/mixed/metrics.csv")" -gt 1 ] &&
        fail "ranks on different corpora trained"
    fi
    # 6. Stop after 8, resume to 20 (2 ranks both times) = one uninterrupted 2-rank run.
    "${MPI[@]}" "$BIN" train "${TINY[@]}" "${S[@]}" --stop-after 8 --out "$WORK/resumed" >/dev/null 2>&1 ||
        fail "2-rank run stopped after 8"
    "${MPI[@]}" "$BIN" train "${TINY[@]}" "${S[@]}" --resume --out "$WORK/resumed" >/dev/null 2>&1 ||
        fail "2-rank resume"
    same_as "$WORK/two" "$WORK/resumed" "2-rank stop + resume"
elif [ "$WHAT" = signals ]; then
    S=(--set train.steps=60 --set train.log_every=1 --set train.eval_every=20)
    "${MPI[@]}" "$BIN" train "${TINY[@]}" "${S[@]}" --out "$WORK/ref" >/dev/null 2>&1 || fail "reference"
    dir="$WORK/run"
    rows() { [ -f "$dir/metrics.csv" ] && wc -l <"$dir/metrics.csv" || echo 0; }
    wait_rows() {  # until metrics.csv has more than $1 lines (or 60 s)
        for _ in $(seq 600); do [ "$(rows)" -gt "$1" ] && return 0; sleep 0.1; done
        fail "no metrics row after 60 s"
    }
    # 1. SIGINT to rank 1 alone: both stop after the same step, one checkpoint, exit 130.
    "${MPI[@]}" "$BIN" train "${TINY[@]}" "${S[@]}" --set train.checkpoint_every=0 --out "$dir" \
        >"$WORK/int.out" 2>&1 &
    mpi=$!
    wait_rows 3
    kill -INT "$(rank_pid $mpi 1)" || fail "no rank 1 to signal"
    wait $mpi
    code=$?
    [ $code -eq 130 ] || fail "SIGINT to rank 1: mpirun exit $code, expected 130: $(tail -3 "$WORK/int.out")"
    grep -q "interrupted at step" "$WORK/int.out" || fail "SIGINT: no resume message: $(tail -3 "$WORK/int.out")"
    step=$(tail -1 "$dir/metrics.csv" | cut -d, -f1)
    saved=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['step'])" "$dir/checkpoint.json" 2>&1)
    [ "$saved" = "$step" ] || fail "SIGINT: checkpoint at step '$saved', metrics end at $step"
    [ "$step" -lt 60 ] || fail "SIGINT: the run finished (step $step) before the signal"
    ls "$dir" | grep -q '\.tmp-' && fail "SIGINT: temporaries left: $(ls "$dir")"
    "${MPI[@]}" "$BIN" train "${TINY[@]}" "${S[@]}" --set train.checkpoint_every=0 --resume --out "$dir" \
        >/dev/null 2>&1 || fail "resume after SIGINT"
    same_as "$WORK/ref" "$dir" "SIGINT to rank 1 + resume"
    # 2. SIGKILL to rank 1: rank 0 must not wait forever in the all-reduce.
    dir="$WORK/killed"
    "${MPI[@]}" "$BIN" train "${TINY[@]}" --set train.steps=100000 --set train.log_every=1 \
        --set train.checkpoint_every=5 --out "$dir" >"$WORK/kill.out" 2>&1 &
    mpi=$!
    wait_rows 12  # a checkpoint at step 5 or 10 exists
    rank0=$(rank_pid $mpi 0)
    # (A second job on the same directory meanwhile: refused, naming rank 0, the lock holder.)
    msg=$("${MPI[@]}" "$BIN" train "${TINY[@]}" --resume --out "$dir" 2>&1)
    code=$?
    [ $code -ne 0 ] || fail "a second 2-rank job on a locked directory exited 0"
    echo "$msg" | grep -q "run directory $dir is in use by pid $rank0" ||
        fail "second job on a locked directory: $(echo "$msg" | head -2)"
    kill -KILL "$(rank_pid $mpi 1)" || fail "no rank 1 to kill"
    for _ in $(seq 150); do kill -0 $mpi 2>/dev/null || break; sleep 0.1; done
    if kill -0 $mpi 2>/dev/null; then
        fail "SIGKILL of rank 1: mpirun still running after 15 s"
        kill -KILL $mpi "$rank0" 2>/dev/null
    fi
    wait $mpi
    code=$?
    [ $code -ne 0 ] || fail "SIGKILL of rank 1: mpirun exited 0"
    # mpirun ends rank 0 with SIGTERM (it sets the stop flag but rank 0 waits in the
    # all-reduce), then SIGKILL after odls_base_sigkill_timeout (1 s).
    for _ in $(seq 100); do kill -0 "$rank0" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$rank0" 2>/dev/null && fail "SIGKILL of rank 1: rank 0 (pid $rank0) alive after 10 s"
    out=$("$BIN" eval --run "$dir" 2>&1) || fail "checkpoint after SIGKILL: $out"
elif [ "$WHAT" = compare ]; then
    cat >"$WORK/preset.toml" <<'EOF'
[model]
hidden = 32
num_heads = 2
num_layers = 1
ffn = 64
[data]
vocab_size = 300
seq_len = 32
val_windows = 8
[train]
batch_size = 4
steps = 12
warmup_steps = 2
eval_every = 4
threads = 1
[compare]
schemes = ["rope_interleaved", "learned", "none"]
seeds = 1
EOF
    "$BIN" compare --config "$WORK/preset.toml" --no-plot --out "$WORK/local" >"$WORK/local.out" 2>&1 ||
        fail "local compare: $(tail -3 "$WORK/local.out")"
    "${MPI[@]}" "$BIN" compare --config "$WORK/preset.toml" --no-plot --out "$WORK/mpi" \
        >"$WORK/mpi.out" 2>&1 || fail "2-rank compare: $(tail -3 "$WORK/mpi.out")"
    cmp -s "$WORK/local/curves.csv" "$WORK/mpi/curves.csv" ||
        fail "curves.csv differs: $(diff "$WORK/local/curves.csv" "$WORK/mpi/curves.csv" | head -5)"
    [ -f "$WORK/mpi/summary.md" ] || fail "2-rank compare wrote no summary.md"
    for d in rope_interleaved learned none; do
        same_as "$WORK/local/$d/seed1" "$WORK/mpi/$d/seed1" "compare run $d"
    done
    # Again: every run finished, all skipped.
    out=$("${MPI[@]}" "$BIN" compare --config "$WORK/preset.toml" --no-plot --out "$WORK/mpi" 2>&1) ||
        fail "2-rank compare re-run: $out"
    echo "$out" | grep -q "0 runs trained, 0 resumed, 3 already finished" || fail "re-run: $out"
elif [ "$WHAT" = mixed ] && ! mpmd_works; then
    mpmd_skipped "every case of this part"  # ctest reports the part as skipped, not passed
    exit 0
elif [ "$WHAT" = mixed ]; then
    # Ranks started with different settings (an MPMD launch 'A : B' whose parts differ) are
    # refused before the first collective: exit 2, one line naming the rank and the key, no
    # MPI error (a different model.hidden used to die on MPI_ERR_TRUNCATE, a different lr to
    # train silently on mixed settings), nothing written.
    mixed() {  # mixed LABEL KEY_IN_MESSAGE  ARGS-OF-RANK-0 -- ARGS-OF-RANK-1 (after the command)
        local label=$1 key=$2 a=() b=()
        shift 2
        while [ "$1" != -- ]; do a+=("$1"); shift; done
        shift
        b=("$@")
        rm -rf "$WORK/mixed"
        msg=$(timeout 120 mpirun --oversubscribe -np 1 "$BIN" "${a[@]}" --out "$WORK/mixed" : \
              -np 1 "$BIN" "${b[@]}" --out "$WORK/mixed" 2>&1)
        code=$?
        [ $code -eq 2 ] || fail "$label: exit $code, expected 2: $(echo "$msg" | head -3)"
        [ "$(echo "$msg" | grep -c '^error: ')" = 1 ] &&
            echo "$msg" | grep -q -- "^error: .*different settings: rank 1 in $key" ||
            fail "$label: not one line naming rank 1 and $key: $(echo "$msg" | head -3)"
        echo "$msg" | grep -q "MPI_ERR\|MPI_ABORT" && fail "$label: a raw MPI error: $(echo "$msg" | grep MPI_ | head -2)"
        [ -e "$WORK/mixed" ] && fail "$label: $WORK/mixed was written"
    }
    T=(train "${TINY[@]}" --set train.steps=4)
    mixed "train, another lr" train.lr "${T[@]}" -- "${T[@]}" --set train.lr=0.1
    mixed "train, another model.hidden" model.hidden "${T[@]}" -- "${T[@]}" --set model.hidden=48
    mixed "train, another --stop-after" --stop-after "${T[@]}" -- "${T[@]}" --stop-after 2
    printf '[compare]\nschemes = ["rope_interleaved", "learned"]\nseeds = 1\n[train]\nsteps = 4\nthreads = 1\n' \
        >"$WORK/preset.toml"
    C=(compare --config "$WORK/preset.toml" --no-plot)
    mixed "compare, another lr" train.lr "${C[@]}" -- "${C[@]}" --set train.lr=0.1
    mixed "compare, other schemes" "compare run" "${C[@]}" -- "${C[@]}" --schemes rope_interleaved,none
else
    echo "unknown part '$WHAT'"
    exit 2
fi
finish
