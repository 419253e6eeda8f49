#!/usr/bin/env bash
# The PyTorch side of the benchmark without timing anything (ctest cli_bench_torch):
#   1. scripts/bench.sh refuses a --torch-root that is no root, and a mode it does not know,
#      before anything runs; scripts/torch_root.sh refuses a directory that is neither empty
#      nor a Debian root — each in one line with exit status 2.
#   2. With a torch (Debian's python3-torch, or a root made by scripts/torch_root.sh named in
#      RF_TORCH_ROOT): tests/bench/bench_torch.py --probe names every mode, each "available" or
#      "skipped: <why>"; then every available mode trains configs/tiny.toml for a few steps:
#      each non-eager mode printed its first-batch gap to eager, and compile counted at least
#      one compilation before the timed steps and none in them (a recompile per batch is what
#      made it slower than eager once).
# The speed itself is measured by scripts/bench.sh, never asserted here.
#   tests/machinery/cli_bench_torch.sh ROFORMER_BIN WORK_DIR      (run from the repository root)
# Part 2 is skipped (exit 77 after part 1 passed) where no torch is found. torch.compile's
# first compile of the tiny model takes minutes on a loaded 2-core machine (hence the long
# limits); later runs reuse Inductor's cache under /tmp.
set -uo pipefail
BIN=$1 WORK=$2
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK/not_a_root"
one_line_refusal() {  # what, expected text, command…
    local what=$1 expected=$2; shift 2
    "$@" >"$WORK/out" 2>"$WORK/err" </dev/null
    local rc=$?
    [ $rc -eq 2 ] || fail "$what: exit $rc, not 2: $(cat "$WORK/err")"
    [ "$(wc -l <"$WORK/err")" -eq 1 ] || fail "$what: not one line: $(cat "$WORK/err")"
    grep -q -- "$expected" "$WORK/err" || fail "$what: the line lacks '$expected': $(cat "$WORK/err")"
    [ ! -s "$WORK/out" ] || fail "$what printed on stdout: $(cat "$WORK/out")"
}

# 1. Refusals.
if [ "$(id -u)" -eq 0 ]; then
    one_line_refusal "bench.sh --torch-root (no root)" "scripts/torch_root.sh $WORK/not_a_root" \
        scripts/bench.sh --torch-root "$WORK/not_a_root"
    touch "$WORK/not_a_root/file"
    one_line_refusal "torch_root.sh on a non-empty directory" "neither empty nor a Debian root" \
        scripts/torch_root.sh "$WORK/not_a_root"
else
    one_line_refusal "bench.sh --torch-root (not root)" "needs root" \
        scripts/bench.sh --torch-root "$WORK/not_a_root"
fi
scripts/bench.sh --torch-modes eager,fast >/dev/null 2>"$WORK/err" </dev/null
rc=$?
[ $rc -eq 2 ] && grep -q "no PyTorch mode 'fast'" "$WORK/err" ||
    fail "bench.sh --torch-modes eager,fast: exit $rc: $(cat "$WORK/err")"

# 2. With a torch: here, or inside RF_TORCH_ROOT.
if [ -n "${RF_TORCH_ROOT:-}" ]; then
    python=(scripts/torch_chroot.sh "$RF_TORCH_ROOT" /usr/bin/python3)
else
    python=(/usr/bin/python3)
fi
if ! "${python[@]}" -c "import torch, numpy" >/dev/null 2>&1; then
    echo "PASS (refusals); SKIP: no torch (/usr/bin/python3 or RF_TORCH_ROOT)"; exit 77
fi
"${python[@]}" tests/bench/bench_torch.py --probe >"$WORK/probe" 2>"$WORK/probe.err" ||
    fail "bench_torch.py --probe: $(cat "$WORK/probe.err")"
grep -q '^bench_torch: torch=[^ ]* blas=[^ ]* onednn=[^ ]* parallel=' "$WORK/probe" ||
    fail "--probe's first line is not the torch facts: $(head -n 1 "$WORK/probe")"
modes=()
for mode in eager sdpa compile autocast-bf16; do
    line=$(grep "^bench_torch: mode=$mode " "$WORK/probe") || fail "--probe says nothing of $mode"
    case "$line" in
        *" available") modes+=("$mode") ;;
        *" skipped: "?*) ;;
        *) fail "--probe's line for $mode is neither available nor skipped: $line" ;;
    esac
done
[ "$(grep -c '^bench_torch: mode=' "$WORK/probe")" -eq 4 ] || fail "--probe lists other modes: $(cat "$WORK/probe")"

# The tiny model's config, every key resolved by ours (inside a root, ours may not run).
"$BIN" train --config configs/tiny.toml --set train.steps=1 --set train.eval_batches=1 \
    --quiet --out "$WORK/tiny" >/dev/null 2>&1 || fail "roformer train (tiny) to resolve the config"
mkdir -p /tmp/cli_bench_torch.$$ && cp "$WORK/tiny/config.toml" /tmp/cli_bench_torch.$$/config.toml
trap 'rm -rf /tmp/cli_bench_torch.$$' EXIT
for mode in "${modes[@]}"; do
    timeout 1200 "${python[@]}" tests/bench/bench_torch.py --config /tmp/cli_bench_torch.$$/config.toml \
        --vocab 500 --threads 1 --steps 3 --warmup 2 --mode "$mode" >"$WORK/$mode.out" 2>"$WORK/$mode.err" ||
        fail "bench_torch.py --mode $mode exited $?: $(tail -n 1 "$WORK/$mode.err")"
    line=$(grep "^bench_torch: mode=$mode " "$WORK/$mode.out") || fail "--mode $mode printed no result"
    case "$line" in *" skipped: "*) echo "note: $line"; continue ;; esac
    [[ "$line" == *" tokens_per_s="* ]] || fail "--mode $mode: no tokens_per_s: $line"
    if [ "$mode" != eager ]; then
        [[ "$line" =~ \ eager_gap=loss:[0-9.e+-]*,grad:[0-9.e+-]*\ tolerance= ]] ||
            fail "--mode $mode did not print its gap to eager: $line"
    fi
    if [ "$mode" = compile ]; then
        [[ "$line" =~ \ compiles_check=([0-9]+)\ compiles_warmup=([0-9]+)\ compiles_timed=([0-9]+) ]] ||
            fail "--mode compile did not count its compilations: $line"
        [ "${BASH_REMATCH[1]}" -ge 1 ] || fail "the compile counter saw no compilation in the check: $line"
        [ "${BASH_REMATCH[3]}" -eq 0 ] || fail "torch.compile compiled again in the timed steps: $line"
    fi
done
echo "PASS (refusals; --probe; modes run: ${modes[*]})"
