#!/usr/bin/python3
"""A Hugging Face RoFormer checkpoint published as pytorch_model.bin → model.safetensors, which
`roformer import-hf` reads (docs/huggingface.md).

    /usr/bin/python3 scripts/hf_to_safetensors.py models/roformer_chinese_char_base
    /usr/bin/python3 scripts/hf_to_safetensors.py path/to/pytorch_model.bin --out model.safetensors

SRC is a model folder (its pytorch_model.bin is read; --out defaults to model.safetensors beside
it) or the .bin file itself. The state dict is read with torch.load(weights_only=True) — tensors
only, no pickled code runs — and written by name in the safetensors layout (8-byte header
length, JSON header, the raw little-endian bytes; src/io/safetensors.hpp describes it), each
tensor F32 unless it is F16 or BF16, which stay as they are. Refused, with one line: a state dict
without `roformer.` names (another architecture), a TensorFlow or Flax file (tf_model.h5,
flax_model.msgpack), a non-floating-point tensor, and an output path the scripts' provenance
rule forbids (scripts/script_outputs.py: an existing file is replaced only when this script
wrote it and it has not changed since).
"""
import argparse
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from script_outputs import Refusal, check_text_replaceable, write_bytes  # one rule

OWNER = "roformer-cpp scripts/hf_to_safetensors.py"  # the name in OUT.written-by
DTYPES = {"float32": "F32", "float16": "F16", "bfloat16": "BF16"}


def source_file(src):
    """The .bin to read: SRC itself, or SRC/pytorch_model.bin."""
    if os.path.isdir(src):
        path = os.path.join(src, "pytorch_model.bin")
        if not os.path.isfile(path):
            others = [f for f in ("tf_model.h5", "flax_model.msgpack", "model.safetensors")
                      if os.path.isfile(os.path.join(src, f))]
            if "model.safetensors" in others:
                raise Refusal(f"{src} already has model.safetensors: import it directly with "
                              f"`roformer import-hf {src} --out RUN`")
            if others:
                raise Refusal(f"{src} holds {others[0]}, a TensorFlow/Flax checkpoint; convert it "
                              "with transformers (from_pretrained(..., from_tf=True or "
                              "from_flax=True), then save_pretrained) first")
            raise Refusal(f"{src} has no pytorch_model.bin; give the folder of an HF RoFormer "
                          "checkpoint or the .bin file itself")
        return path
    if not os.path.lexists(src):
        raise Refusal(f"{src!r} does not exist; give a model folder or a pytorch_model.bin")
    if not os.path.isfile(src):
        raise Refusal(f"{src} is not a regular file (a FIFO or a device?); give a model folder "
                      "or a pytorch_model.bin")
    if src.endswith((".h5", ".msgpack")):
        raise Refusal(f"{src} is a TensorFlow/Flax checkpoint; only PyTorch state dicts (.bin) "
                      "are converted")
    return src


def torch_module():
    try:
        import torch
    except ImportError:
        raise Refusal("reading a pytorch_model.bin needs PyTorch for /usr/bin/python3: "
                      "sudo apt install python3-torch") from None
    return torch


def load_state_dict(path):
    torch = torch_module()
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # a pickle with code, a damaged or a non-torch file
        raise Refusal(f"{path} is not a state dict torch.load(weights_only=True) reads "
                      f"({type(e).__name__}): a damaged download, another format, or a pickle "
                      "that runs code, which this script never loads") from None
    if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
        raise Refusal(f"{path} does not hold a state dict (name → tensor)")
    if not any(k.startswith("roformer.") for k in state):
        raise Refusal(f"{path} has no roformer.* tensors ({len(state)} tensors, e.g. "
                      f"{next(iter(state), 'none')}): not a RoFormer checkpoint")
    return state


def encode(state):
    """The safetensors bytes of STATE, tensors in name order."""
    torch = torch_module()
    header, chunks, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name in sorted(state):
        tensor = state[name]
        if not isinstance(tensor, torch.Tensor) or not tensor.is_floating_point():
            raise Refusal(f"tensor {name} is {getattr(tensor, 'dtype', type(tensor).__name__)}, "
                          "not floating point; a RoFormer state dict holds float weights only")
        dtype = str(tensor.dtype).replace("torch.", "")
        if dtype not in DTYPES:
            tensor, dtype = tensor.float(), "float32"
        t = tensor.detach().contiguous().cpu()
        data = (t.view(torch.int16) if dtype != "float32" else t).numpy().astype(
            "<i2" if dtype != "float32" else "<f4").tobytes()
        header[name] = {"dtype": DTYPES[dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":"))
    text += " " * (-(8 + len(text)) % 8)
    return struct.pack("<Q", len(text)) + text.encode("utf-8") + b"".join(chunks)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("src", help="a model folder with pytorch_model.bin, or the .bin file")
    parser.add_argument("--out", help="the safetensors file (default: model.safetensors beside it)")
    args = parser.parse_args(argv)
    try:
        path = source_file(args.src)
        out = args.out or os.path.join(os.path.dirname(path), "model.safetensors")
        check_text_replaceable(out, OWNER)
        state = load_state_dict(path)
        data = encode(state)
        write_bytes(out, data, OWNER)
    except Refusal as e:
        print(f"hf_to_safetensors: {e}", file=sys.stderr)
        return 2
    print(f"wrote {out}: {len(state)} tensors from {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
