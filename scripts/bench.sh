#!/usr/bin/env bash
# Training throughput, ours vs PyTorch, on the same model and the same batches' shape.
#
#   scripts/bench.sh [--cores LIST] [--threads LIST] [--torch-modes LIST] [--torch-root DIR]
#                    [configs/bench.toml …]
#       presets default: configs/bench.toml configs/bench_long.toml
#   REPEATS=3 STEPS=30 scripts/bench.sh        (the defaults: rounds per row, steps per run;
#                                              PYTHON=/usr/bin/python3 runs the PyTorch side)
#   scripts/bench.sh --cores 0,1 --torch-root /srv/trixie-torch   (PyTorch 2.x beside ours)
#   --cores LIST        every timed program (ours, PyTorch, the sgemm peak) under
#                       `taskset -c LIST`: both sides on the same cores, e.g. --cores 0,1
#   --threads LIST      the thread counts of the rows, default 1,2 (e.g. --threads 2 halves
#                       the run)
#   --torch-modes LIST  PyTorch's modes (tests/bench/bench_torch.py --mode): eager (attention
#                       composed of q·kᵀ, softmax, ·v), sdpa (scaled_dot_product_attention),
#                       compile (torch.compile of the sdpa model), autocast-bf16 (the sdpa model
#                       under CPU autocast to bfloat16, weights and AdamW in float32); default:
#                       every mode the torch has. A mode it lacks prints one line saying why,
#                       and is left out.
#   --torch-root DIR    adds the rows of a second PyTorch: the one in the Debian root DIR
#                       (made by scripts/torch_root.sh: Debian 13, PyTorch 2.6), beside this
#                       machine's ($PYTHON's, when it has torch). Its runs go through
#                       scripts/torch_chroot.sh: this repository and /tmp mounted at the same
#                       paths, /proc mounted, the working directory kept, the mounts private to
#                       that one command (gone when it ends, on Ctrl-C too); the same taskset
#                       cores and thread settings (bench_torch.py sets them from --threads).
#                       Ours is built for this machine's Debian and does not run in DIR, so
#                       both torches read the config our run resolved (its config.toml, every
#                       key) and the vocabulary size ours printed. Needs root.
#
# Per preset, with 1 and then 2 threads, REPEATS rounds, interleaved — ours 1t, composed 1t,
# PyTorch eager 1t, PyTorch sdpa 1t, …, ours 2t, …, then the next round — so a busy moment of
# the machine hits every side.
#   ours     build/roformer train --config P --set train.steps=STEPS --set train.threads=T
#            --set train.eval_batches=1 (the final evaluation, after the timed steps, kept short);
#            its `throughput:` line: tokens/s over the training steps, every step counted;
#            the defaults, so its products are oneDNN's in a build with libdnnl-dev
#            (model.products = auto; bench_matmul --peak says whether the build has it)
#   ours openblas  the same with --set model.products=openblas: the fast path's products in
#            OpenBLAS (a row only in a build with oneDNN, where the default is oneDNN's)
#   bf16 ours    ours with --set model.precision=bf16 (a CPU with AVX512_BF16): the
#            products' operands in bfloat16, float32 sums (docs/mixed-precision.md); compared
#            with ours in float32 and with PyTorch's autocast-bf16, never in "ours ÷ PyTorch"
#   composed the same with --set model.fused=false: the op-by-op path a student reads
#   PyTorch  (labelled with its version: PyTorch 1.13 eager, PyTorch 2.6 sdpa, …)
#            tests/bench/bench_torch.py: the same model in float32 (make_reference.py's HF-named
#            RoFormer), random batches of the same shape and masking, AdamW + clipping; the
#            first 2 steps untimed (warm-up), then STEPS timed; a row per mode. Above its rows:
#            the torch version, its BLAS, oneDNN and thread backend (bench_torch.py --probe);
#            after each row, the attention path that row ran, its first-batch gap to eager
#            (and the tolerance), and for compile how often torch.compile compiled before,
#            in the warm-up and in the timed steps (timed must be 0)
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
# threading, over OpenBLAS and (in a build with it) oneDNN; the "of peak" column is each row's GFLOP/s ÷ that peak — how close the whole
# step comes to the products' limit.
set -euo pipefail
fail() { echo "bench: $*" >&2; exit 1; }

usage() { echo "bench: $* (usage: scripts/bench.sh [--cores LIST] [--threads 1,2]" \
    "[--torch-modes eager,sdpa,compile,autocast-bf16] [--torch-root DIR] [config.toml …])" >&2; exit 2; }

presets=()   # as given, relative to where you are; then everything runs from the repository
cores="" torch_modes="" torch_root="" thread_counts="1 2"
while [ $# -gt 0 ]; do
    case "$1" in
        # An empty value would mean "not given" below (no pinning, every mode, no root): refused.
        --cores) [[ "${2:-}" =~ ^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$ ]] ||
                     usage "--cores needs a CPU list, e.g. --cores 0,1 or --cores 0-3, got '${2:-}'"
                 cores="$2"; shift 2 ;;
        --torch-modes) [ -n "${2:-}" ] || usage "--torch-modes needs a list, e.g. --torch-modes eager,sdpa"
                 torch_modes="$2"; shift 2 ;;
        --torch-root) [ -n "${2:-}" ] || usage "--torch-root needs a directory made by scripts/torch_root.sh"
                 torch_root="$2"; shift 2 ;;
        --threads) [[ "${2:-}" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] ||
                     usage "--threads needs a list of thread counts, e.g. --threads 2 or --threads 1,2"
                 thread_counts="${2//,/ }"; shift 2 ;;
        -*) usage "unknown option $1" ;;
        *) [ -f "$1" ] || usage "no such config file: $1"
           presets+=("$(realpath "$1")"); shift ;;
    esac
done
for mode in ${torch_modes//,/ }; do
    case "$mode" in eager|sdpa|compile|autocast-bf16) ;;
        *) usage "no PyTorch mode '$mode': eager, sdpa, compile or autocast-bf16" ;; esac
done
pin=()   # the prefix of every timed command
if [ -n "$cores" ]; then
    command -v taskset > /dev/null || fail "taskset is missing: apt-get install util-linux"
    pinned_cpus="$(taskset -c "$cores" nproc 2> /dev/null)" ||
        usage "--cores $cores is not a CPU list this machine has (taskset -c $cores fails); e.g. --cores 0,1"
    pin=(taskset -c "$cores")
    [ "$pinned_cpus" -ge 2 ] ||
        echo "bench: --cores $cores gives $pinned_cpus CPU: the 2-thread rows share it" >&2
fi
if [ -n "$torch_root" ]; then   # checked before anything runs: one line, exit 2
    bad_root() { echo "bench: --torch-root $torch_root $*" >&2; exit 2; }
    [ "$(id -u)" -eq 0 ] || bad_root "needs root (chroot, mount): run bench.sh with sudo"
    [ -x "$torch_root/usr/bin/python3" ] ||
        bad_root "holds no Debian root with python3: make one with scripts/torch_root.sh $torch_root"
    torch_root="$(realpath "$torch_root")"
fi
cd "$(dirname "$0")/.."
[ ${#presets[@]} -gt 0 ] || presets=(configs/bench.toml configs/bench_long.toml)

REPEATS="${REPEATS:-3}"
STEPS="${STEPS:-30}"
WARMUP=2                # PyTorch's untimed first steps
PYTHON="${PYTHON:-/usr/bin/python3}"  # Debian's python, where apt's python3-torch installs
[[ "$REPEATS" =~ ^[1-9][0-9]*$ ]] || fail "REPEATS must be a positive integer, got '$REPEATS'"
[[ "$STEPS" =~ ^[1-9][0-9]*$ ]] || fail "STEPS must be a positive integer, got '$STEPS'"
[ -x build/roformer ] || scripts/setup.sh --all || fail "scripts/setup.sh --all failed (see above)"
[ -x build/tests/bench_matmul ] || cmake --build build --target bench_matmul > /dev/null ||
    fail "build/tests/bench_matmul is missing and would not build: cmake --build build --target bench_matmul"
[ -x /usr/bin/time ] || fail "/usr/bin/time is missing: apt-get install time (scripts/setup.sh --all does)"

# The torches: "here" ($PYTHON on this machine, when it has torch) and "root" (--torch-root).
# Each gets a name for its rows, "PyTorch 1.13", "PyTorch 2.6", and the modes it has.
torch_python() {  # here|root → the command that starts its python
    if [ "$1" = root ]; then echo scripts/torch_chroot.sh "$torch_root" /usr/bin/python3
    else echo "$PYTHON"; fi
}
torches=()              # here and/or root, those with a working torch
declare -A torch_name=() torch_facts=() torch_where=() side_torch=() side_mode=()
torch_sides=()          # "PyTorch 2.6 sdpa", …: a side per torch and available mode
probe_skipped=""        # a line for each mode a torch lacks
for where in here ${torch_root:+root}; do
    # shellcheck disable=SC2046 # the command's words (a path with spaces is not supported)
    if ! probe="$($(torch_python "$where") tests/bench/bench_torch.py --probe 2> /dev/null)"; then
        [ "$where" = here ] ||
            bad_root "has no working torch (bench_torch.py --probe fails there): scripts/torch_root.sh $torch_root makes or repairs it"
        continue
    fi
    torches+=("$where")
    torch_facts[$where]="$(head -n 1 <<< "$probe" | sed 's/^bench_torch: //')"
    version="$(grep -o 'torch=[0-9]*\.[0-9]*' <<< "${torch_facts[$where]}" | cut -d '=' -f 2)"
    torch_name[$where]="PyTorch $version"
    [ "$where" = here ] || [ "${torch_name[here]:-}" != "PyTorch $version" ] || torch_name[$where]+=" root"
    if [ "$where" = here ]; then torch_where[$where]="$PYTHON"
    else torch_where[$where]="/usr/bin/python3 in $torch_root (Debian $(cat "$torch_root/etc/debian_version"))"; fi
    for mode in ${torch_modes//,/ }; do grep -q "^bench_torch: mode=$mode " <<< "$probe" ||
        fail "bench_torch.py --probe ($where) says nothing of mode $mode"; done
    while read -r line; do
        mode="$(grep -o 'mode=[a-z0-9-]*' <<< "$line" | cut -d '=' -f 2)"
        [ -z "$torch_modes" ] || [[ ",$torch_modes," == *",$mode,"* ]] || continue
        side="${torch_name[$where]} $mode"
        if [[ "$line" == *" available" ]]; then
            torch_sides+=("$side"); side_torch[$side]="$where"; side_mode[$side]="$mode"
        else probe_skipped+="$side: ${line#*skipped: }"$'\n'; fi
    done < <(grep '^bench_torch: mode=' <<< "$probe")
done

work="$(mktemp -d /tmp/bench.XXXXXX)"   # under /tmp: the path PyTorch reads inside a --torch-root
trap 'rm -rf "$work"' EXIT

# The value after `key` in a line like "… 8095 tokens/s …" (key = "tokens/s": the field before).
field_before() { grep -o "[0-9.]* $2" <<< "$1" | head -n 1 | cut -d ' ' -f 1; }
# key=value from bench_torch's line.
field_equals() { grep -o "$2=[0-9.]*" <<< "$1" | cut -d '=' -f 2; }
field_word() { grep -o " $2=[^ ]*" <<< "$1" | cut -d '=' -f 2; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
    END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# One of our runs: fills tokens_per_s, rss_kib, and (first run of a preset) the model facts.
run_ours() {  # preset threads [more roformer train arguments]
    local out="$work/ours" preset="$1" threads="$2"
    shift 2
    "${pin[@]}" /usr/bin/time -f '%M' -o "$work/time" build/roformer train --config "$preset" \
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

# One PyTorch run on the config our run resolved: fills tokens_per_s, rss_kib, attention[];
# tokens_per_s empty when the mode was skipped (skipped_modes says why).
run_torch() {  # side ("PyTorch 2.6 sdpa") threads
    local side="$1" mode="${side_mode[$1]}" line gap
    # shellcheck disable=SC2046 # the command's words
    "${pin[@]}" /usr/bin/time -f '%M' -o "$work/time" $(torch_python "${side_torch[$side]}") \
        tests/bench/bench_torch.py --config "$work/resolved.toml" --vocab "$vocab" --threads "$2" \
        --steps "$STEPS" --warmup "$WARMUP" --mode "$mode" > "$work/stdout" 2> "$work/stderr" ||
        fail "tests/bench/bench_torch.py --mode $mode ($side) failed: $(tail -n 1 "$work/stderr")"
    tokens_per_s=""
    if line="$(grep "^bench_torch: mode=$mode skipped: " "$work/stdout")"; then
        skipped_modes+="$side ($name): ${line#*skipped: }"$'\n'
        return
    fi
    line="$(grep '^bench_torch: mode=.* tokens_per_s=' "$work/stdout")" ||
        fail "no result line from bench_torch.py --mode $mode ($side)"
    [ "$(field_word "$line" threads)" = "$2" ] ||
        fail "PyTorch ran $(field_word "$line" threads) threads, not $2: $line"
    attention[$side]="$(field_word "$line" attention)"
    gap="$(field_word "$line" eager_gap || true)"
    [ -z "$gap" ] || attention[$side]+="; first batch vs eager $gap (allowed $(field_word "$line" tolerance))"
    if [ "$mode" = compile ]; then   # every run's counts: a recompile in a timed step shows
        compiles[$side]+=" $(field_word "$line" compiles_check)/$(field_word "$line" compiles_warmup)/$(field_word "$line" compiles_timed)"
    fi
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
    printf '%-36s %10.0f %9.1f %9.2f %8.0f %% %14.0f%s\n' "$label" "$tps" \
        "$(awk -v n="$tokens_per_step" -v t="$tps" 'BEGIN { print 1000 * n / t }')" \
        "$gflops" "$(awk -v g="$gflops" -v p="$sgemm_peak" 'BEGIN { print 100 * g / p }')" \
        "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" "${2:+   $2}"
}

best() {  # label prefix [text to skip] → "tokens/s label" of the highest median among the
    local label  # rows the prefix begins (and that do not contain the text)
    for label in "${!tokens[@]}"; do
        if [[ "$label" == "$1"* ]] && { [ -z "${2:-}" ] || [[ "$label" != *"$2"* ]]; }; then
            echo "$(median ${tokens[$label]}) $label"
        fi
    done | sort -g | tail -n 1
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
peak_out="$("${pin[@]}" build/tests/bench_matmul --peak --reps 5)" ||
    fail "build/tests/bench_matmul --peak failed"
peak_line="$(grep '^sgemm peak:' <<< "$peak_out")" ||
    fail "no 'sgemm peak:' line from build/tests/bench_matmul --peak"
peak_libraries="$(grep 'OpenBLAS alone' <<< "$peak_out" | sed 's/^ *//')"
# A build with oneDNN (libdnnl-dev), where ours multiplies in oneDNN, adds the rows
# `ours openblas`: model.products = openblas.
have_onednn=no
grep -q 'libraries tried: OpenBLAS, oneDNN' <<< "$peak_out" && have_onednn=yes
# …and, on a CPU with AVX512_BF16, the rows `bf16 ours`: model.precision = bf16 (docs/mixed-precision.md).
have_bf16=no
[ "$have_onednn" = no ] || ! grep -qw avx512_bf16 /proc/cpuinfo || have_bf16=yes
sgemm_peak="$(field_before "$peak_line" 'GFLOP/s')"
load_start="$(cut -d ' ' -f 1-3 /proc/loadavg)"
run_log_lines=""  # roformer train's lines naming its BLAS and ISA (first run of each preset)

print_machine() {
    echo "machine: $cpu_line${cores:+; every timed program pinned: taskset -c $cores}"
    grep -E '^blas' <<< "$machine_blas" | sed 's/^/  /'
    [ -z "$run_log_lines" ] || sed 's/^/  run log: /' <<< "$run_log_lines"
    echo "  $peak_line"
    [ -z "$peak_libraries" ] || echo "  $peak_libraries"
    echo "  load average: $load_start at the start, $(cut -d ' ' -f 1-3 /proc/loadavg) now"
}

for preset in "${presets[@]}"; do
    sides=(ours)
    [ "$have_onednn" = no ] || sides+=("ours openblas")
    [ "$have_bf16" = no ] || sides+=("bf16 ours")
    sides+=(composed)
    sides+=("${torch_sides[@]}")
    skipped_modes="$probe_skipped"
    name="${preset#"$PWD"/}"   # configs/bench.toml rather than the whole path
    declare -A tokens=() peak=() attention=() compiles=()
    for round in $(seq "$REPEATS"); do
        for threads in $thread_counts; do
            for side in "${sides[@]}"; do
                label="$side $threads thread$([ "$threads" = 1 ] || echo s)"
                case "$side" in
                    ours) run_ours "$preset" "$threads" ;;
                    "ours openblas") run_ours "$preset" "$threads" --set model.products=openblas ;;
                    "bf16 ours") run_ours "$preset" "$threads" --set model.precision=bf16 ;;
                    composed) run_ours "$preset" "$threads" --set model.fused=false ;;
                    PyTorch*) run_torch "$side" "$threads" ;;
                esac
                if [ -z "$tokens_per_s" ]; then   # skipped (compile failed): not again
                    for i in "${!sides[@]}"; do [ "${sides[$i]}" != "$side" ] || unset 'sides[i]'; done
                    continue
                fi
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
    printf '%-36s %10s %9s %9s %10s %14s\n' "" "tokens/s" "ms/step" "GFLOP/s" "of peak" "peak RSS MiB"
    for label in "ours 1 thread" "ours 2 threads" "ours openblas 1 thread" "ours openblas 2 threads" \
                 "bf16 ours 1 thread" "bf16 ours 2 threads" "composed 1 thread" "composed 2 threads"; do
        [ -n "${tokens[$label]:-}" ] || continue
        row "$label"
    done
    read -r ours_best ours_label <<< "$(best ours openblas)"  # the defaults
    for where in "${torches[@]}"; do
        echo "${torch_name[$where]}: ${torch_facts[$where]}; ${torch_where[$where]};" \
             "its first $WARMUP steps untimed, ours times every step"
        for side in "${torch_sides[@]}"; do
            [ "${side_torch[$side]}" = "$where" ] || continue
            for threads in $thread_counts; do
                label="$side $threads thread$([ "$threads" = 1 ] || echo s)"
                [ -z "${tokens[$label]:-}" ] || row "$label" "attention: ${attention[$side]}"
            done
            [ -z "${compiles[$side]:-}" ] || echo "    torch.compile's compilations per run," \
                "in the check / the warm-up / the timed steps:${compiles[$side]}"
        done
    done
    [ -z "$skipped_modes" ] || printf '%s' "$skipped_modes" | sed 's/^/  skipped: /'
    if [ -n "$(best PyTorch autocast)" ]; then  # float32 against float32
        read -r torch_best torch_label <<< "$(best PyTorch autocast)"
        echo "ours ÷ PyTorch's best float32 mode = $(awk -v a="$ours_best" -v b="$torch_best" \
            'BEGIN { printf "%.2f", a / b }') (medians: $ours_label ÷ $torch_label)"
    fi
    if [ -n "$(best 'bf16 ours')" ]; then  # bfloat16 products against ours in float32 and PyTorch's autocast
        read -r bf16_best bf16_label <<< "$(best 'bf16 ours')"
        echo "bf16 ours ÷ ours float32 = $(awk -v a="$bf16_best" -v b="$ours_best" \
            'BEGIN { printf "%.2f", a / b }') (medians: $bf16_label ÷ $ours_label)"
        for where in "${torches[@]}"; do
            read -r ac_best ac_label <<< "$(best "${torch_name[$where]} autocast-bf16")"
            [ -z "${ac_best:-}" ] || echo "bf16 ours ÷ ${torch_name[$where]} autocast-bf16 =" \
                "$(awk -v a="$bf16_best" -v b="$ac_best" 'BEGIN { printf "%.2f", a / b }')" \
                "(medians: $bf16_label ÷ $ac_label)"
        done
    fi
    [ ${#torches[@]} -gt 0 ] ||
        echo "PyTorch is missing ($PYTHON -c 'import torch' fails): apt-get install python3-torch adds the comparison"
    [ "$have_onednn" = no ] || echo "(ours = the defaults: products in oneDNN, model.products = auto; ours openblas = ours with model.products = openblas)"
    [ "$have_bf16" = no ] || echo "(bf16 ours = ours with model.precision = bf16: bfloat16 operands, float32 sums)"
    echo "(composed = ours with model.fused = false: the composed ops, OpenBLAS threading its products)"
    echo "model GFLOP/s ÷ sgemm peak: ours best $(awk -v f="$mflop" -v t="$ours_best" \
        -v p="$sgemm_peak" 'BEGIN { printf "%.1f ÷ %.1f = %.0f %%", 3 * f * t / 1000, p, 300 * f * t / 1000 / p }')"
    run_ours "$preset" 2 --profile
    echo
    sed -n '/^profile:/,/^  (not in a row)/p' "$work/stderr"
    unset tokens peak attention compiles
    run_log_lines=""
done
