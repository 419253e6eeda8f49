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
# "One thread pool"; docs/model.md). Run from anywhere; OUT_DIR is replaced.
set -uo pipefail
[ $# -ge 3 ] || { echo "usage: scripts/bitcheck.sh OLD_BINARY NEW_BINARY OUT_DIR [ARGS…]" >&2; exit 2; }
OLD=$(realpath "$1") NEW=$(realpath "$2") OUT=$(realpath -m "$3")
shift 3
extra=("$@")
for bin in "$OLD" "$NEW"; do
    [ -x "$bin" ] || { echo "bitcheck: $bin is not an executable; build it first" >&2; exit 2; }
done
cd "$(dirname "$0")/.." || exit 2
rm -rf "$OUT" && mkdir -p "$OUT" || exit 2
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
