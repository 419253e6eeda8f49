#!/usr/bin/env python3
"""Make a run directory look like one written before the integrity record could not be dropped.

    tests/machinery/unmark_run.py DIR

Removes the "recorded_by" key (run/checkpoint_commit.hpp, kRecordMark) from the __metadata__ of
DIR/model.safetensors — the header keeps its length, padded with spaces as the format allows —
and updates the model's size and FNV-1a 64 in DIR/checkpoint.json (when there is one) to match,
so the run reads as one from before the mark. Used by cli_run_record.sh and
cli_finetune_inputs.sh.
"""
import json
import os
import struct
import sys

run_dir = sys.argv[1]
path = os.path.join(run_dir, "model.safetensors")
b = bytearray(open(path, "rb").read())
n = struct.unpack("<Q", b[:8])[0]
header = json.loads(b[8:8 + n])
if header.get("__metadata__", {}).pop("recorded_by", None) is None:
    sys.exit(f"{path} has no recorded_by mark")
text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
if len(text) > n:
    sys.exit(f"{path}: the header grew when written again")
b[8:8 + n] = text + b" " * (n - len(text))
open(path, "wb").write(b)
manifest_path = os.path.join(run_dir, "checkpoint.json")
if os.path.exists(manifest_path):
    h = 0xcbf29ce484222325
    for c in b:
        h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    manifest = json.load(open(manifest_path))
    manifest["files"]["model.safetensors"].update({"size": len(b), "fnv1a64": "%016x" % h})
    json.dump(manifest, open(manifest_path, "w"))
