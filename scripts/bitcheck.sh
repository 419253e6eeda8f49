#!/usr/bin/env bash
# Do two builds train the same numbers? Short configs/tiny.toml runs (every position scheme,
# both paths, 1 and 2 threads, the causal LM, linear attention, dropout) with each binary; the
# tensors of model.safetensors (every name and every byte of data; the header's metadata, which
# names the config keys a build knows, is left out) and metrics.csv (its speed and time columns
# left out) must match byte for byte.
#
#   scripts/bitcheck.sh OLD_BINARY NEW_BINARY OUT_DIR [ARGS…]   exit 0: every case identical
#
# ARGS are added to every run, e.g. `--set model.fused=false` to compare only the composed path
# (the fast path agrees across builds to float rounding, not bit for bit, when its kernels
# change: docs/performance.md, "Determinism and the two paths").
#
# Used to show that a change keeps `model.fused = false` bit-identical (docs/performance.md,
# "One thread pool"; docs/model.md). Run from anywhere.
# OUT_DIR is replaced on every run, so it must be new, empty, or one this script made (it holds
# the marker file .bitcheck-out): any other folder — a user's, the repository, $HOME or a folder
# above either — is refused before anything is deleted (docs/training.md, "What every script
# guarantees").
set -uo pipefail
usage="usage: scripts/bitcheck.sh OLD_BINARY NEW_BINARY OUT_DIR [ARGS…]"
[ $# -ge 3 ] && [ -n "$1" ] && [ -n "$2" ] && [ -n "$3" ] || { echo "bitcheck: $usage (none of the three empty)" >&2; exit 2; }
OLD=$(realpath -m "$1") NEW=$(realpath -m "$2") OUT=$(realpath -m "$3")
shift 3
extra=("$@")
for bin in "$OLD" "$NEW"; do
    [ -f "$bin" ] && [ -x "$bin" ] || { echo "bitcheck: $bin is not an executable; build it first" >&2; exit 2; }
done
cd "$(dirname "$0")/.." || exit 2
MARKER=.bitcheck-out  # written into OUT_DIR: the proof that this script made it
refuse_out() { echo "bitcheck: $OUT $1; pass a new folder (e.g. build/bitcheck) or remove it yourself" >&2; exit 2; }
for precious in "$(pwd -P)" "$(realpath -m "${HOME:-/}")"; do
    case "$precious/" in "${OUT%/}/"*) refuse_out "is the repository, \$HOME or a folder above one: it is never deleted" ;; esac
done
if [ -e "$OUT" ]; then
    [ -d "$OUT" ] || refuse_out "exists and is not a folder"
    if [ -f "$OUT/$MARKER" ]; then
        rm -rf "$OUT" || exit 2
    elif [ -n "$(ls -A "$OUT")" ]; then
        refuse_out "is not empty and was not made by bitcheck.sh (no $MARKER in it)"
    fi
fi
mkdir -p "$OUT" && echo "made by scripts/bitcheck.sh, which replaces this folder on every run" >"$OUT/$MARKER" || exit 2
every="--set train.eval_every=10"
cases=(
    "rope|--set train.steps=30"
    "composed|--set train.steps=30 --set model.fused=false"
    "t2|--set train.steps=30 --set train.threads=2"
    "t2composed|--set train.steps=30 --set train.threads=2 --set model.fused=false"
    "clm|--set train.steps=30 --set train.objective=clm"
    "favor|--set train.steps=20 --set model.attention=linear --set model.feature_map=favor --set train.objective=clm"
    "elu1|--set train.steps=20 --set model.attention=linear"
    "alibi|--set train.steps=20 --set position.scheme=alibi"
    "learned|--set train.steps=20 --set position.scheme=learned"
    "drop|--set train.steps=20 --set model.dropout=0.1 --set model.attention_dropout=0.1"
    "drop2|--set train.steps=20 --set model.dropout=0.1 --set train.threads=2"
    "half|--set train.steps=20 --set position.pairing=half --set position.rotate_values=true --set train.schedule=linear"
)
metrics() { cut -d, -f1-7 "$1/metrics.csv" | md5sum; }
same_tensors() {  # same_tensors A B: the same tensor names, dtypes, shapes and data bytes
    /usr/bin/python3 - "$1" "$2" <<'PY'
import json, struct, sys
def tensors(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    data = raw[8 + n:]
    return {k: (v["dtype"], v["shape"], data[v["data_offsets"][0]:v["data_offsets"][1]])
            for k, v in header.items()}
sys.exit(0 if tensors(sys.argv[1]) == tensors(sys.argv[2]) else 1)
PY
}
fail=0
for c in "${cases[@]}"; do
    name=${c%%|*}
    read -ra args <<< "${c#*|} $every"
    for side in old new; do
        bin=$OLD; [ $side = new ] && bin=$NEW
        "$bin" train --config configs/tiny.toml "${args[@]}" "${extra[@]}" --quiet --out "$OUT/$side-$name" \
            > "$OUT/$side-$name.log" 2>&1 || { echo "$name: the $side binary failed: $(tail -n 1 "$OUT/$side-$name.log")"; fail=1; continue 2; }
    done
    model_same=no metrics_same=no
    same_tensors "$OUT/old-$name/model.safetensors" "$OUT/new-$name/model.safetensors" && model_same=yes
    [ "$(metrics "$OUT/old-$name")" = "$(metrics "$OUT/new-$name")" ] && metrics_same=yes
    if [ $model_same = yes ] && [ $metrics_same = yes ]; then echo "$name identical"
    else echo "$name DIFFERS (model identical: $model_same, metrics identical: $metrics_same)"; fail=1; fi
done
exit $fail
