#!/usr/bin/env python3
"""Damage one tensor of a run's checkpoint on purpose, so that only its values are wrong.

    tests/machinery/set_tensor.py DIR FILE NAME_PART VALUE [COUNT]

The first tensor of DIR/FILE (a safetensors file) whose name holds NAME_PART gets VALUE (a
float: nan, inf, 3e38, …) in its first COUNT elements (all of them when COUNT is left out),
and the FNV-1a 64 of FILE in DIR/checkpoint.json is updated to match — so the checkpoint's own
integrity check passes and the commands' finite-value checks are what must catch it. Used by
cli_bad_inputs.sh, cli_nonfinite.sh and probe_hostile.py.
"""
import json
import struct
import sys

run_dir, file_name, part, value = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
path = f"{run_dir}/{file_name}"
b = bytearray(open(path, "rb").read())
n = struct.unpack("<Q", b[:8])[0]
header = json.loads(b[8:8 + n])
name = next(k for k in header if k != "__metadata__" and part in k)
begin, end = (8 + n + o for o in header[name]["data_offsets"])
count = (end - begin) // 4 if len(sys.argv) < 6 else int(sys.argv[5])
b[begin:begin + 4 * count] = struct.pack("<f", value) * count
open(path, "wb").write(b)
h = 0xcbf29ce484222325
for c in b:
    h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
manifest = json.load(open(f"{run_dir}/checkpoint.json"))
manifest["files"][file_name]["fnv1a64"] = "%016x" % h
json.dump(manifest, open(f"{run_dir}/checkpoint.json", "w"))
