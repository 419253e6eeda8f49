#!/usr/bin/env bash
# The whole program on each BLAS (src/ops/blas_backend.hpp): the tiny preset trained a few
# steps with gemm() through OpenBLAS and through BLIS (RF_BLAS=blis) ends at the same
# validation loss to float rounding, on 2 threads (BLIS threading the products itself and
# inside our row split), and the BLIS run log says so; an unknown RF_BLAS is refused in one
# line with a non-zero exit, before any file is written.
#
#   tests/cli_blas_backend.sh BIN WORKDIR
set -u
BIN=$(realpath "$1")
W=$(realpath -m "$2")
rm -rf "$W" && mkdir -p "$W" || exit 1
cd "$(dirname "$0")/.." || exit 1
fail() { echo "FAIL: $*"; exit 1; }

train() {  # backend, output directory name
    RF_BLAS="$1" "$BIN" train --config configs/tiny.toml --set train.steps=6 \
        --set train.eval_every=0 --set data.val_windows=8 --set train.threads=2 --quiet \
        --out "$W/$2" > "$W/$2.out" 2> "$W/$2.err"
}
loss() { sed -n 's/^final validation: loss \([0-9.]*\) nats.*/\1/p' "$W/$1.out"; }

train openblas openblas || fail "RF_BLAS=openblas: $(tail -n 1 "$W/openblas.err")"
a=$(loss openblas)
[ -n "$a" ] || fail "no final validation line from the OpenBLAS run"

if train blis blis; then
    b=$(loss blis)
    [ -n "$b" ] || fail "no final validation line from the BLIS run"
    awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; exit !(d < 2e-3 && d > -2e-3) }' ||
        fail "final validation loss OpenBLAS $a, BLIS $b: more than float rounding apart"
    echo "OpenBLAS $a, BLIS $b"
    # The run log names the BLAS that ran the products.
    RF_BLAS=blis "$BIN" train --config configs/tiny.toml --set train.steps=1 \
        --set train.eval_every=0 --set data.val_windows=8 --out "$W/blis_log" \
        > "$W/blis_log.out" 2> "$W/blis_log.err" || fail "RF_BLAS=blis run with its log failed"
    grep -q '^products on BLIS .*(RF_BLAS=blis' "$W/blis_log.err" ||
        fail "the RF_BLAS=blis run log does not name BLIS: $(grep -i blas "$W/blis_log.err")"
elif grep -q "this build has no BLIS" "$W/blis.err"; then
    echo "BLIS not linked into this build: RF_BLAS=blis refused as it should be"
else
    fail "RF_BLAS=blis: $(tail -n 1 "$W/blis.err")"
fi

RF_BLAS=mkl "$BIN" train --config configs/tiny.toml --set train.steps=1 --quiet \
    --out "$W/bad" > "$W/bad.out" 2> "$W/bad.err" && fail "RF_BLAS=mkl was accepted"
tail -n 1 "$W/bad.err" | grep -q "RF_BLAS=mkl is not a BLAS this program knows; use openblas or blis" ||
    fail "RF_BLAS=mkl: expected a last line naming the fix, got: $(cat "$W/bad.err")"
[ "$(wc -l < "$W/bad.err")" -eq 1 ] || fail "RF_BLAS=mkl: more than one line: $(cat "$W/bad.err")"
[ ! -e "$W/bad" ] || fail "RF_BLAS=mkl: the refused run still created $W/bad"
echo PASS
