#!/usr/bin/env bash
# Training throughput, ours vs PyTorch, on the same model and the same batches' shape.
#
#   scripts/bench.sh [configs/bench.toml …]    default: configs/bench.toml configs/bench_long.toml
#   REPEATS=3 STEPS=30 scripts/bench.sh        (the defaults: rounds per row, steps per run;
#                                              PYTHON=/usr/bin/python3 runs the PyTorch side)
#
# Per preset, with 1 and then 2 threads, REPEATS rounds, interleaved — ours 1t, composed 1t,
# PyTorch 1t, ours 2t, …, then the next round — so a busy moment of the machine hits every side.
#   ours     build/roformer train --config P --set train.steps=STEPS --set train.threads=T
#            --set train.eval_batches=1 (the final evaluation, after the timed steps, kept short);
#            its `throughput:` line: tokens/s over the training steps, every step counted
#   composed the same with --set model.fused=false: the op-by-op path a student reads
#   PyTorch  tests/bench/bench_torch.py: the same model in float32 (make_reference.py's HF-named
#            RoFormer), random batches of the same shape and masking, AdamW + clipping; the
#            first 2 steps untimed (warm-up), then STEPS timed
# Each table shows medians; GFLOP/s = 3 × forward FLOPs per token × tokens/s (training ≈ 3 ×
# the forward), with the FLOP count ours prints — PyTorch's model is checked to have the same
# parameters and FLOPs. Peak RSS is the whole process's (PyTorch's includes the interpreter
# and the torch libraries). PyTorch is optional: without it, our rows alone.
# Last, one more run of ours on 2 threads with --profile: where its step time goes, op by op.
#
# The machine, above every table: the CPU model and the widest vector ISA its flags name
# (/proc/cpuinfo), the BLAS library (build/tests/bench_matmul --machine: OpenBLAS's build and
# chosen core), the lines of roformer train's run log that name its BLAS and ISA, and the
# load. Before the first round, bench_matmul --peak measures this machine's sgemm peak: the
# best 2-thread GFLOP/s of the [4096×256]·[256×256] product and the wider ones, either
# threading; the "of peak" column is each row's GFLOP/s ÷ that peak — how close the whole
# step comes to the products' limit.
set -euo pipefail
fail() { echo "bench: $*" >&2; exit 1; }

presets=()   # as given, relative to where you are; then everything runs from the repository
for preset in "$@"; do
    [ -f "$preset" ] || fail "no such config file: $preset"
    presets+=("$(realpath "$preset")")
done
cd "$(dirname "$0")/.."
[ ${#presets[@]} -gt 0 ] || presets=(configs/bench.toml configs/bench_long.toml)

REPEATS="${REPEATS:-3}"
STEPS="${STEPS:-30}"
WARMUP=2                # PyTorch's untimed first steps
PYTHON="${PYTHON:-/usr/bin/python3}"  # Debian's python, where apt's python3-torch installs
[[ "$REPEATS" =~ ^[1-9][0-9]*$ ]] || fail "REPEATS must be a positive integer, got '$REPEATS'"
[[ "$STEPS" =~ ^[1-9][0-9]*$ ]] || fail "STEPS must be a positive integer, got '$STEPS'"
[ -x build/roformer ] || scripts/setup.sh || fail "scripts/setup.sh failed (see above)"
[ -x build/tests/bench_matmul ] || cmake --build build --target bench_matmul > /dev/null ||
    fail "build/tests/bench_matmul is missing and would not build: cmake --build build --target bench_matmul"
[ -x /usr/bin/time ] || fail "/usr/bin/time is missing: apt-get install time (scripts/setup.sh does)"
have_torch=yes
torch_version="$("$PYTHON" -c 'import torch; print(torch.__version__)' 2>/dev/null)" || have_torch=no

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The value after `key` in a line like "… 8095 tokens/s …" (key = "tokens/s": the field before).
field_before() { grep -o "[0-9.]* $2" <<< "$1" | head -n 1 | cut -d ' ' -f 1; }
# key=value from bench_torch's line.
field_equals() { grep -o "$2=[0-9.]*" <<< "$1" | cut -d '=' -f 2; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
    END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# One of our runs: fills tokens_per_s, rss_kib, and (first run of a preset) the model facts.
run_ours() {  # preset threads [more roformer train arguments]
    local out="$work/ours" preset="$1" threads="$2"
    shift 2
    /usr/bin/time -f '%M' -o "$work/time" build/roformer train --config "$preset" \
        --set "train.steps=$STEPS" --set "train.threads=$threads" --set train.eval_batches=1 \
        --out "$out" "$@" > "$work/stdout" 2> "$work/stderr" ||
        fail "roformer train --config $preset failed: $(grep -v '^step ' "$work/stderr" | tail -n 1)"
    local throughput header
    throughput="$(grep '^throughput:' "$work/stdout")" || fail "no throughput line from roformer train"
    header="$(grep '^run .* parameters' "$work/stderr")" || fail "no run header from roformer train"
    [ -n "$run_log_lines" ] || run_log_lines="$(grep -iE 'blas|isa' "$work/stderr" | grep -v '^step ' || true)"
    tokens_per_s="$(field_before "$throughput" 'tokens/s')"
    rss_kib="$(tail -n 1 "$work/time")"
    mflop="$(field_before "$throughput" 'MFLOP/token')"
    parameters="$(field_before "$header" 'parameters')"
    vocab="$(grep -o 'vocab [0-9]*' <<< "$header" | cut -d ' ' -f 2)"
    tokens_per_step=$(( $(sed -n 's/^batch_size = //p' "$out/config.toml") *
                        $(sed -n 's/^seq_len = //p' "$out/config.toml") ))
    cp "$out/config.toml" "$work/resolved.toml"  # every key, as roformer resolved them
    rm -rf "$out"
}

# One PyTorch run on the config our run resolved: fills tokens_per_s, rss_kib.
run_torch() {  # threads
    /usr/bin/time -f '%M' -o "$work/time" "$PYTHON" tests/bench/bench_torch.py \
        --config "$work/resolved.toml" --vocab "$vocab" --threads "$1" --steps "$STEPS" \
        --warmup "$WARMUP" > "$work/stdout" 2> "$work/stderr" ||
        fail "tests/bench/bench_torch.py failed: $(tail -n 1 "$work/stderr")"
    local line
    line="$(grep '^bench_torch:' "$work/stdout")" || fail "no result line from bench_torch.py"
    [ "$(field_equals "$line" parameters)" = "$parameters" ] &&
        [ "$(field_equals "$line" mflop_per_token)" = "$mflop" ] ||
        fail "the two models differ: ours $parameters parameters, $mflop MFLOP/token; PyTorch: $line"
    tokens_per_s="$(field_equals "$line" tokens_per_s)"
    rss_kib="$(tail -n 1 "$work/time")"
}

row() {  # label, then the tokens/s and peak RSS (KiB) of every round
    local label="$1" tps rss
    tps="$(median ${tokens[$label]})"
    rss="$(median ${peak[$label]})"
    local gflops
    gflops="$(awk -v f="$mflop" -v t="$tps" 'BEGIN { print 3 * f * t / 1000 }')"
    printf '%-18s %10.0f %9.1f %9.2f %8.0f %% %14.0f\n' "$label" "$tps" \
        "$(awk -v n="$tokens_per_step" -v t="$tps" 'BEGIN { print 1000 * n / t }')" \
        "$gflops" "$(awk -v g="$gflops" -v p="$sgemm_peak" 'BEGIN { print 100 * g / p }')" \
        "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')"
}

best() {  # side → its higher median tokens/s of 1 and 2 threads
    { median ${tokens[$1 1 thread]}; median ${tokens[$1 2 threads]}; } | sort -g | tail -n 1
}

# The machine: CPU, widest ISA, BLAS (bench_matmul --machine), then the sgemm peak.
cpu_model="$(grep -m 1 '^model name' /proc/cpuinfo | cut -d ':' -f 2- | sed 's/^ *//')"
cpu_flags=" $(grep -m 1 '^flags' /proc/cpuinfo | cut -d ':' -f 2-) "
case "$cpu_flags" in
    *" avx512f "*) cpu_isa=avx512 ;;
    *" avx2 "*) cpu_isa=avx2 ;;
    *" sse2 "*) cpu_isa=sse2 ;;
    *) cpu_isa="none of sse2/avx2/avx512" ;;
esac
cpu_line="$cpu_model, family $(grep -m 1 '^cpu family' /proc/cpuinfo | cut -d ':' -f 2 | tr -d ' ')"
cpu_line+=" model $(grep -m 1 '^model[[:space:]]*:' /proc/cpuinfo | cut -d ':' -f 2 | tr -d ' ')"
cpu_line+=", $(nproc) cores; widest ISA $cpu_isa"
machine_blas="$(build/tests/bench_matmul --machine 2>&1)" ||
    fail "build/tests/bench_matmul --machine failed: $(tail -n 1 <<< "$machine_blas")"
echo "  measuring this machine's sgemm peak (build/tests/bench_matmul --peak) …" >&2
peak_line="$(build/tests/bench_matmul --peak --reps 5 | grep '^sgemm peak:')" ||
    fail "no 'sgemm peak:' line from build/tests/bench_matmul --peak"
sgemm_peak="$(field_before "$peak_line" 'GFLOP/s')"
load_start="$(cut -d ' ' -f 1-3 /proc/loadavg)"
run_log_lines=""  # roformer train's lines naming its BLAS and ISA (first run of each preset)

print_machine() {
    echo "machine: $cpu_line"
    grep -E '^blas' <<< "$machine_blas" | sed 's/^/  /'
    [ -z "$run_log_lines" ] || sed 's/^/  run log: /' <<< "$run_log_lines"
    echo "  $peak_line"
    echo "  load average: $load_start at the start, $(cut -d ' ' -f 1-3 /proc/loadavg) now"
}

sides=(ours composed)
[ "$have_torch" = yes ] && sides+=(PyTorch)
for preset in "${presets[@]}"; do
    name="${preset#"$PWD"/}"   # configs/bench.toml rather than the whole path
    declare -A tokens=() peak=()
    for round in $(seq "$REPEATS"); do
        for threads in 1 2; do
            for side in "${sides[@]}"; do
                label="$side $threads thread$([ "$threads" = 1 ] || echo s)"
                case "$side" in
                    ours) run_ours "$preset" "$threads" ;;
                    composed) run_ours "$preset" "$threads" --set model.fused=false ;;
                    PyTorch) run_torch "$threads" ;;
                esac
                echo "  $name round $round/$REPEATS: $label  $tokens_per_s tokens/s" >&2
                tokens[$label]+=" $tokens_per_s"
                peak[$label]+=" $rss_kib"
            done
        done
    done

    echo
    echo "$name: $parameters parameters, vocab $vocab, $tokens_per_step tokens/step," \
         "$mflop MFLOP/token forward; medians of $REPEATS round(s) of $STEPS steps"
    print_machine
    printf '%-18s %10s %9s %9s %10s %14s\n' "" "tokens/s" "ms/step" "GFLOP/s" "of peak" "peak RSS MiB"
    for label in "ours 1 thread" "ours 2 threads" "composed 1 thread" "composed 2 threads"; do
        row "$label"
    done
    if [ "$have_torch" = yes ]; then
        for label in "PyTorch 1 thread" "PyTorch 2 threads"; do row "$label"; done
        ours_best="$(best ours)"
        torch_best="$(best PyTorch)"
        echo "(PyTorch $torch_version, $PYTHON; its first $WARMUP steps untimed, ours times every step)"
        echo "ratio ours best / PyTorch best = $(awk -v a="$ours_best" -v b="$torch_best" \
            'BEGIN { printf "%.2f", a / b }')"
    else
        echo "PyTorch is missing ($PYTHON -c 'import torch' fails): apt-get install python3-torch adds the comparison"
    fi
    echo "(composed = ours with model.fused = false: the composed ops, OpenBLAS threading its products)"
    echo "model GFLOP/s ÷ sgemm peak: ours best $(awk -v f="$mflop" -v t="$(best ours)" \
        -v p="$sgemm_peak" 'BEGIN { printf "%.1f ÷ %.1f = %.0f %%", 3 * f * t / 1000, p, 300 * f * t / 1000 / p }')"
    run_ours "$preset" 2 --profile
    echo
    sed -n '/^profile:/,/^  (not in a row)/p' "$work/stderr"
    unset tokens peak
    run_log_lines=""
done
