#!/usr/bin/python3
"""PyTorch's side of scripts/bench.sh: training steps of the model `roformer train` trains, timed.

The model is tests/reference/make_reference.py's RoFormerForMaskedLM (HF module structure and
parameter names; imported, not copied), here in float32 on the CPU, with the configured
position scheme, dropout and sizes; the MLM head runs on the labelled rows only, as ours does.
One step is what src/train/trainer.cpp times: draw a batch, forward, backward, clip the global
gradient norm, AdamW (decay on 2-D weights only) at the schedule's learning rate.

Batches are random tokens of the configured shape (B windows of T tokens, ids in [5, V)),
framed [CLS] … [SEP] and masked as src/data/mlm.hpp masks: each inner position selected with
probability data.mask_prob, then 80 % [MASK] / 10 % random / 10 % unchanged (train.objective
= clm: every position labelled with the next token). The numbers the tokens hold do not change
the work; their shape and the share of labelled rows do.

  tests/bench/bench_torch.py --config configs/bench.toml --threads 1 --steps 30 --warmup 2

prints one line (the FLOP count is ours, src/model/roformer.cpp, for the same sizes; the
torch facts as torch_facts() reads them; the numbers here only show the format):
  bench_torch: mode=eager attention=composed threads=1 steps=30 tokens_per_s=11834.2
      ms_per_step=346.1 mflop_per_token=1.92 parameters=1074560 torch=1.13.0 blas=OpenBLAS
      onednn=2.6.3 parallel=OpenMP
a mode other than eager adds its first-batch gap to eager and the gap allowed
(eager_gap=loss:3.1e-04,grad:2.2e-02 tolerance=loss:0.02,grad:0.1), and compile how many
frames torch.compile compiled in that check, in the warm-up and in the timed steps
(compiles_check=2 compiles_warmup=1 compiles_timed=0: a recompile in the timed steps would
time the compiler, not the model);
or, for a mode this torch or this config cannot run, one line saying why (exit status 0):
  bench_torch: mode=compile skipped: not available in torch 1.13 (torch.compile needs torch ≥ 2)

--mode picks how the model runs (one per process, so each has its own peak memory):
  eager    the reference model as it is: attention composed of q·kᵀ, softmax and ·v
  sdpa     the same model, its softmax attention through torch.nn.functional.
           scaled_dot_product_attention (torch ≥ 2.0) on q and k already rotated by RoPE
  compile  torch.compile of the sdpa model (of the eager one where SDPA is missing), torch ≥ 2
  autocast-bf16  the sdpa model (eager where SDPA is missing) with its forward and loss under
           torch.autocast("cpu", dtype=torch.bfloat16): products and attention in bfloat16;
           the weights, their gradients and AdamW stay float32
--probe prints the torch facts and which modes this torch has, and exits.
Before timing, a mode other than eager checks itself against eager on one batch
(check_against_eager): the same loss and gradients within TOLERANCE (bf16's is wider, as its
8-bit significand asks), so it cannot be faster by computing something else.

The config: a preset (configs/*.toml) holds only overrides of roformer's defaults. This script
does not keep its own copy of those defaults: unless the file is fully resolved (a run
directory's config.toml) and the vocabulary size is known (--vocab, or model.vocab_size), it
asks roformer, with a one-step `roformer train` into a temporary directory, and reads back the
config.toml (every key) and the tokenizer's vocabulary size it wrote. scripts/bench.sh passes
the config.toml of our own run and its vocabulary instead, so nothing is trained twice.
"""
import argparse
import contextlib
import copy
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import tomllib
import types

MODES = ("eager", "sdpa", "compile", "autocast-bf16")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", help="a roformer config (preset or resolved)")
    parser.add_argument("--mode", default="eager", choices=MODES, help="how the model runs")
    parser.add_argument("--probe", action="store_true",
                        help="print the torch facts and the modes this torch has, then exit")
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    parser.add_argument("--steps", type=int, default=20, help="timed steps")
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps first")
    parser.add_argument("--vocab", type=int, default=0,
                        help="vocabulary size (default: model.vocab_size, else the tokenizer's)")
    parser.add_argument("--roformer", default=os.path.join(REPO, "build", "roformer"),
                        help="the binary that resolves a preset's defaults")
    args = parser.parse_args()
    if not args.probe and not args.config:
        parser.error("--config is required (unless --probe)")
    if args.threads < 1 or args.steps < 1 or args.warmup < 0:
        parser.error("--threads and --steps must be ≥ 1, --warmup ≥ 0")
    return args


ARGS = parse_args()
# Both before torch loads, as the libraries read them then. Debian's torch multiplies with
# OpenBLAS (the pthread build), whose thread pool does not follow torch.set_num_threads:
# without the first line "1 thread" multiplies on 2 cores (ours sets both pools,
# src/run/threads.hpp). Its other loops run on libgomp, whose idle workers spin on the cores
# the BLAS workers need: 2 threads ran up to 8× slower (machine busy) than with a passive
# wait, the policy ours chooses for itself too (src/cli/main.cpp); a value the user set is kept.
os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = str(ARGS.threads)
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.join(REPO, "tests", "reference"))
from make_reference import (IGNORE, MASK_ID, RoFormerForMaskedLM,  # noqa: E402
                            SelfAttention, alibi_bias, causal_mask, clm_labels,
                            config_from_toml, lr_at, rope_rotate)

CLS_ID, SEP_ID, FIRST_TOKEN = 2, 3, 5   # src/data/tokenizer.hpp: ids 0…4 are the specials

# The keys read here or by config_from_toml; a file holding all of them is "fully resolved".
NEEDED = {
    "model": ["vocab_size", "hidden", "num_heads", "num_layers", "ffn", "dropout",
              "attention_dropout", "layer_norm_eps", "init_std", "attention", "feature_map",
              "random_features"],
    "position": ["scheme", "pairing", "base", "rotary_fraction", "rotate_values",
                 "interpolation_factor", "ntk_factor", "max_positions", "sinusoidal_scale"],
    "data": ["seq_len", "mask_prob"],
    "train": ["objective", "seed", "batch_size", "lr", "min_lr_ratio", "warmup_steps",
              "schedule", "beta1", "beta2", "eps", "weight_decay", "grad_clip"],
}


def fully_resolved(conf):
    return all(key in conf.get(table, {}) for table, keys in NEEDED.items() for key in keys)


def resolve_with_roformer(path, roformer):
    """(every key of the config, the tokenizer's vocabulary size), as roformer resolves them.
    roformer has no command that only prints a config, so this trains one step (its overrides
    touch keys this script does not read) and reads the run directory it wrote."""
    with tempfile.TemporaryDirectory(prefix="bench_torch.") as tmp:
        run = os.path.join(tmp, "run")
        command = [roformer, "train", "--config", path, "--set", "train.steps=1",
                   "--set", "train.eval_batches=1", "--quiet", "--out", run]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"bench_torch: `{' '.join(command)}` failed: {done.stderr.strip()}")
        with open(os.path.join(run, "config.toml"), "rb") as f:
            conf = tomllib.load(f)
        with open(os.path.join(run, "tokenizer.json"), encoding="utf-8") as f:
            vocab = len(json.load(f)["vocab"])
    return conf, vocab


def forward_flops_per_token(cfg, seq_len, head_fraction):
    """src/model/roformer.cpp's count (2 FLOPs per multiply-add; embeddings, RoPE, softmax's
    exp and the elementwise maps not counted), so both sides divide the same work."""
    C, F, V, T, H = cfg.hidden, cfg.ffn, cfg.vocab_size, seq_len, cfg.num_heads
    attention = 2 * 2 * T * C                                   # q·kᵀ and probs·v
    if cfg.attention == "linear":
        features = cfg.random_features if cfg.feature_map == "favor" else cfg.head_dim
        attention = 2 * 2 * features * C + 2 * 2 * features * H
        if cfg.feature_map == "favor":
            attention += 2 * 2 * features * C
    per_layer = 2 * 4 * C * C + 2 * 2 * C * F + attention      # projections, FFN, attention
    return cfg.num_layers * per_layer + head_fraction * (2 * C * C + 2 * C * V)


def init_weights(model, std):
    """As src/model: weights normal(0, init_std), biases 0, LayerNorm gains 1."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2:
                p.normal_(0.0, std)
            elif not name.endswith("LayerNorm.weight"):
                p.zero_()


def random_batch(B, T, V, mask_prob, clm, gen):
    """(ids, labels) [B, T]: random tokens, masked as src/data/mlm.hpp does (clm: next tokens)."""
    ids = torch.randint(FIRST_TOKEN, V, (B, T), generator=gen)
    if clm:
        return ids, clm_labels(ids)
    ids[:, 0], ids[:, -1] = CLS_ID, SEP_ID
    selected = torch.rand(B, T, generator=gen) < mask_prob
    selected[:, 0] = selected[:, -1] = False
    labels = torch.where(selected, ids, torch.full_like(ids, IGNORE))
    r = torch.rand(B, T, generator=gen)
    ids = torch.where(selected & (r < 0.8), torch.full_like(ids, MASK_ID), ids)
    shuffled = torch.randint(FIRST_TOKEN, V, (B, T), generator=gen)
    ids = torch.where(selected & (r >= 0.8) & (r < 0.9), shuffled, ids)
    return ids, labels


def torch_facts():
    """{torch, blas, onednn, parallel}: which torch, which library multiplies its float32
    products (MKL when torch.backends.mkl has it, with the version torch.__config__.show()
    names; else the BLAS library this process has mapped: Debian's torch says only
    BLAS_INFO=generic), oneDNN's version (torch.backends.mkldnn), and ATen's thread backend."""
    shown = torch.__config__.show()
    torch.ones(64, 64) @ torch.ones(64, 64)      # loads the BLAS, if torch loads it lazily
    if torch.backends.mkl.is_available():
        version = re.search(r"Math Kernel Library Version ([0-9.]+)", shown)
        blas = "MKL" + (f"-{version.group(1)}" if version else "")
    else:
        with open("/proc/self/maps", encoding="utf-8") as f:
            mapped = f.read()
        named = re.search(r"BLAS_INFO=(\w+)", shown)
        blas = ("OpenBLAS" if "libopenblas" in mapped else "BLIS" if "libblis" in mapped
                else named.group(1) if named else "unknown")
    onednn = "no"
    if torch.backends.mkldnn.is_available():
        version = re.search(r"(?:oneDNN|MKL-DNN) v([0-9.]+)", shown)
        onednn = version.group(1) if version else "yes"
    backend = re.search(r"ATen parallel backend: (\w+)", torch.__config__.parallel_info())
    return {"torch": torch.__version__.split("+")[0], "blas": blas, "onednn": onednn,
            "parallel": backend.group(1) if backend else "unknown"}


def mode_unavailable(mode, cfg=None):
    """Why this torch (or, given cfg, this model) cannot run the mode; None when it can."""
    version = ".".join(torch.__version__.split(".")[:2])
    if mode in ("sdpa", "compile", "autocast-bf16") and int(version.split(".")[0]) < 2:
        what = {"sdpa": "no torch.nn.functional.scaled_dot_product_attention",
                "compile": "torch.compile needs torch ≥ 2",
                "autocast-bf16": "its CPU autocast fails on this model: expected BFloat16, "
                                 "found Float"}[mode]
        return f"not available in torch {version} ({what})"
    if mode == "sdpa" and not hasattr(F, "scaled_dot_product_attention"):
        return f"not available in torch {version} (no scaled_dot_product_attention)"
    if mode == "compile" and not hasattr(torch, "compile"):
        return f"not available in torch {version} (no torch.compile)"
    if mode == "autocast-bf16" and not hasattr(torch, "autocast"):
        return f"not available in torch {version} (no torch.autocast)"
    if mode == "sdpa" and cfg is not None and cfg.attention != "softmax":
        return f"model.attention = {cfg.attention}: SDPA computes softmax attention only"
    return None


def sdpa_forward(self, h):
    """SelfAttention.forward (make_reference.py) with its softmax attention as one
    scaled_dot_product_attention call: RoPE on q and k first (and v when rotate_values), ALiBi
    as an additive mask, the causal mask, attention dropout as its dropout_p. Same math."""
    cfg = self.cfg
    B, T, C = h.shape

    def heads(x):   # [B, T, C] → [B, H, T, D]
        return x.view(B, T, cfg.num_heads, cfg.head_dim).transpose(1, 2)
    q, k, v = heads(self.query(h)), heads(self.key(h)), heads(self.value(h))
    if cfg.scheme == "rope":
        q, k = rope_rotate(q, cfg), rope_rotate(k, cfg)
        if cfg.rotate_values:
            v = rope_rotate(v, cfg)
    mask = None
    if cfg.scheme == "alibi":
        mask = alibi_bias(T, cfg.num_heads, q.dtype)                            # [H, T, T]
        if cfg.causal:
            mask = mask.masked_fill(causal_mask(T), float("-inf"))
    p = cfg.attention_dropout if self.training else 0.0
    context = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p,
                                             is_causal=cfg.causal and mask is None)
    return context.transpose(1, 2).reshape(B, T, C)


def use_sdpa(model):
    for module in model.modules():
        if isinstance(module, SelfAttention):
            module.forward = types.MethodType(sdpa_forward, module)


def forward_context(mode):
    """autocast-bf16: forward and loss under CPU autocast to bfloat16 (the products and
    attention in bf16, the loss and every weight, gradient and AdamW moment in float32)."""
    if mode == "autocast-bf16":
        return torch.autocast("cpu", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def loss_and_gradients(model, ids, labels, mode="eager"):
    model.zero_grad()
    with forward_context(mode):
        _, loss = model(ids, labels)
    loss.backward()
    gradients = torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])
    model.zero_grad()
    return loss.item(), gradients


# Each mode's (loss, gradients) gap to eager allowed on one batch, relative. sdpa: float64,
# where another attention would differ far above it; compile: float32 sums in another order;
# autocast-bf16 against float32 eager: bf16 keeps 8 significant bits (a relative rounding of
# up to 2⁻⁸ ≈ 0.4 % per product input), so the loss may move by a few 1e-3 and the gradient
# vector by a few per cent; a wrong model moves both by far more.
TOLERANCE = {"sdpa": (1e-9, 1e-7), "compile": (1e-4, 1e-2), "autocast-bf16": (2e-2, 1e-1)}


def check_against_eager(model, runnable, mode, batch):
    """The mode's loss and gradients on one batch against the eager model's, dropout off;
    returns the two relative gaps. sdpa: both in float64 on copies; compile: float32, the
    compiled model itself (its first compile happens here, untimed); autocast-bf16: the model
    under autocast against its float32 self."""
    ids, labels = batch
    model.eval()
    if mode == "sdpa":
        eager, candidate = copy.deepcopy(model).double(), copy.deepcopy(model).double()
        use_sdpa(candidate)
    else:
        eager, candidate = copy.deepcopy(model), runnable
        for module in eager.modules():          # the deep copy kept sdpa_forward: drop it
            module.__dict__.pop("forward", None)
    loss_eager, grad_eager = loss_and_gradients(eager, ids, labels)
    loss_mode, grad_mode = loss_and_gradients(candidate, ids, labels, mode)
    model.train()
    loss_gap = abs(loss_mode - loss_eager) / max(1.0, abs(loss_eager))
    grad_gap = ((grad_mode - grad_eager).norm() / grad_eager.norm()).item()
    loss_tolerance, grad_tolerance = TOLERANCE[mode]
    if not (loss_gap <= loss_tolerance and grad_gap <= grad_tolerance):
        sys.exit(f"bench_torch: mode={mode} computes something else than eager: loss "
                 f"{loss_mode:.9g} vs {loss_eager:.9g}, gradients differ by {grad_gap:.2e} "
                 f"(relative; allowed {loss_tolerance:g} and {grad_tolerance:g})")
    return f"loss:{loss_gap:.1e},grad:{grad_gap:.1e}", f"loss:{loss_tolerance:g},grad:{grad_tolerance:g}"


def compile_model(model):
    """torch.compile with its defaults. The labelled rows' count M changes from batch to batch
    (nonzero() ends the first graph; the head runs in a second one): the first new M
    recompiles that graph with M symbolic (automatic dynamic shapes), after which no batch
    recompiles — in the warm-up, which compilations() shows. dynamic=True everywhere and one
    graph through nonzero (capture_dynamic_output_shape_ops) were no faster here."""
    return torch.compile(model)


def compilations():
    """The frames torch.compile has compiled so far in this process, recompiles included
    (Dynamo's counter; one per graph it captured and handed to Inductor)."""
    from torch._dynamo.utils import counters
    return counters["frames"]["ok"]


def probe():
    facts = torch_facts()
    print("bench_torch: " + " ".join(f"{key}={value}" for key, value in facts.items()))
    for mode in MODES:
        why = mode_unavailable(mode)
        print(f"bench_torch: mode={mode} " + (f"skipped: {why}" if why else "available"))


def main(args):
    if args.probe:
        return probe()
    with open(args.config, "rb") as f:
        conf = tomllib.load(f)
    vocab = args.vocab or conf.get("model", {}).get("vocab_size", 0)
    if not fully_resolved(conf) or vocab == 0:
        conf, tokenizer_vocab = resolve_with_roformer(args.config, args.roformer)
        vocab = args.vocab or conf["model"]["vocab_size"] or tokenizer_vocab
    m, d, t = conf["model"], conf["data"], conf["train"]
    cfg = config_from_toml(conf, vocab)
    clm = t["objective"] == "clm"
    B, T = t["batch_size"], d["seq_len"]

    torch.set_num_threads(args.threads)
    torch.manual_seed(t["seed"])
    gen = torch.Generator().manual_seed(t["seed"])
    model = RoFormerForMaskedLM(cfg).float().train()
    init_weights(model, m["init_std"])
    named = list(model.named_parameters())
    optimizer = torch.optim.AdamW(
        [{"params": [p for _, p in named if p.dim() >= 2], "weight_decay": t["weight_decay"]},
         {"params": [p for _, p in named if p.dim() < 2], "weight_decay": 0.0}],
        lr=t["lr"], betas=(t["beta1"], t["beta2"]), eps=t["eps"])
    schedule = dict(t, steps=args.warmup + args.steps)   # the run is these steps long

    why = mode_unavailable(args.mode, cfg)
    if why:
        print(f"bench_torch: mode={args.mode} skipped: {why}")
        return
    check_batch = random_batch(B, T, vocab, d["mask_prob"], clm,
                               torch.Generator().manual_seed(t["seed"] + 1))
    # sdpa, compile and autocast-bf16 run the sdpa model where this torch and config have it.
    runnable, attention, gaps = model, "composed", None
    if args.mode != "eager" and mode_unavailable("sdpa", cfg) is None:
        gaps = check_against_eager(model, model, "sdpa", check_batch)
        use_sdpa(model)
        attention = "sdpa"
    if args.mode == "compile":
        try:
            runnable = compile_model(model)
            gaps = check_against_eager(model, runnable, "compile", check_batch)
        except Exception as error:   # no C compiler, an unsupported op, …: say so, time the rest
            reason = " ".join(str(error).split())[:200] or type(error).__name__
            print(f"bench_torch: mode=compile skipped: torch.compile failed: {reason}")
            return
        attention += "+compile"
    elif args.mode == "autocast-bf16":
        try:
            gaps = check_against_eager(model, model, "autocast-bf16", check_batch)
        except RuntimeError as error:   # an op autocast cannot run in bf16: say so, time the rest
            reason = " ".join(str(error).split())[:200]
            print(f"bench_torch: mode=autocast-bf16 skipped: autocast failed: {reason}")
            return
        attention += "+bf16"

    compiled = [compilations() if args.mode == "compile" else 0]   # after the check, warm-up, timed
    timed = 0.0
    for step in range(args.warmup + args.steps):
        if step == args.warmup and args.mode == "compile":
            compiled.append(compilations())
        start = time.perf_counter()
        ids, labels = random_batch(B, T, vocab, d["mask_prob"], clm, gen)
        with forward_context(args.mode):
            _, loss = runnable(ids, labels)
        if not torch.isfinite(loss):
            sys.exit(f"bench_torch: loss became {loss.item()} at step {step + 1}")
        optimizer.zero_grad()
        loss.backward()
        if t["grad_clip"] > 0:
            nn.utils.clip_grad_norm_(model.parameters(), t["grad_clip"])
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, schedule)
        optimizer.step()
        if step >= args.warmup:
            timed += time.perf_counter() - start

    extra = ""
    if gaps:
        extra += f" eager_gap={gaps[0]} tolerance={gaps[1]}"
    if args.mode == "compile":
        compiled.append(compilations())
        from torch._inductor.cpu_vec_isa import pick_vec_isa
        isa = pick_vec_isa()
        extra += (f" compiles_check={compiled[0]} compiles_warmup={compiled[1] - compiled[0]}"
                  f" compiles_timed={compiled[2] - compiled[1]} inductor_isa={isa or 'none'}")
    flops = forward_flops_per_token(cfg, T, 1.0 if clm else d["mask_prob"])
    parameters = sum(p.numel() for p in model.parameters())
    facts = " ".join(f"{key}={value}" for key, value in torch_facts().items())
    print(f"bench_torch: mode={args.mode} attention={attention} "
          f"threads={torch.get_num_threads()} steps={args.steps} "
          f"tokens_per_s={args.steps * B * T / timed:.1f} ms_per_step={1e3 * timed / args.steps:.1f} "
          f"mflop_per_token={flops / 1e6:.2f} parameters={parameters} {facts}{extra}")


if __name__ == "__main__":
    main(ARGS)
