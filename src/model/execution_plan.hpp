// Stage 5 — model: the fast path, chosen in one place.
//
// model.fused = false runs the composed ops a student reads first (split_heads, rope, matmul,
// softmax, gelu, add, layer_norm, …); model.fused = true (the default) swaps five things for
// faster twins that compute the same function (tests/test_fused_attention.cpp and
// tests/test_fused_ops.cpp hold each twin to the composed ops, values and gradients):
//
//   where                          composed (fused = false)           fast path (fused = true)
//   softmax attention's middle     split_heads … merge_heads, 7 ops   fused_attention, per tile
//   the FFN's and head's GELU      gelu                               gelu_vectorized
//   post-LN residual  LN(h + r)    add, then layer_norm               add_layer_norm
//   a large product's threads      OpenBLAS threads each product      rows split over ours
//   AdamW's element loop           AdamW::step (double scalars)       AdamW::step_vectorized
//
// execution_plan() below decides all five from the config, and the functions under it are the
// only places in the model that look at the plan. The fused attention kernel also needs the
// position scheme's consent (PositionScheme::rotation_only: it can only rotate q and k) and no
// active attention dropout (it has no dropout of the probabilities); otherwise that layer
// runs the composed ops.
// The twins' SIMD loops run on the instruction set model.isa chooses (src/ops/simd.hpp: auto =
// the widest the CPU has); the composed ops always run the portable baseline build.
#pragma once

#include "model/model_config.hpp"
#include "nn/adamw.hpp"
#include "nn/layers.hpp"
#include "ops/ops.hpp"
#include "position/position.hpp"

namespace rf {

struct ExecutionPlan {
    bool fused_attention = false;      // softmax attention through fused_attention where it can
    bool vectorized_gelu = false;      // gelu_vectorized for gelu
    bool fused_residual_norm = false;  // add_layer_norm for layer_norm(add(h, r))
    bool split_products = false;       // Threading::split_products (ops.hpp)
    bool vectorized_adamw = false;     // AdamW::step_vectorized for AdamW::step

    // The threading setting a run with `threads` threads wants (threads = 0: every core).
    Threading threading(size_t threads) const { return {threads, split_products}; }
};

// model.fused = true: all five on (fused attention for softmax attention only: linear
// attention has no T×T probabilities to fuse); false: all off.
ExecutionPlan execution_plan(const ModelConfig& config);

// Whether this attention call takes fused_attention: the plan allows it, the scheme only
// rotates q and k (*table = its RoPE table, or nullptr for none), no attention dropout is active.
bool use_fused_attention(const ExecutionPlan& plan, PositionScheme& position,
                         bool attention_dropout_active, RopeTable** table);
// GELU under the plan: gelu or gelu_vectorized (the same function, ~1e-6 apart)
Tensor activation(const ExecutionPlan& plan, const Tensor& x);
// The post-LN residual LN(h + r) under the plan: norm(add(h, r)) or add_layer_norm
Tensor residual_norm(const ExecutionPlan& plan, const LayerNorm& norm, const Tensor& h,
                     const Tensor& r);
// One optimizer update under the plan: optimizer.step(lr) or optimizer.step_vectorized(lr)
void optimizer_step(const ExecutionPlan& plan, AdamW& optimizer, double lr);

}  // namespace rf
