// Stage 5 — model: the fast path, chosen in one place.
//
// model.fused = false runs the composed ops a student reads first (split_heads, rope, matmul,
// softmax, gelu, add, layer_norm, …); model.fused = true (the default) swaps seven things for
// faster twins that compute the same function (tests/test_fused_attention.cpp,
// tests/test_fused_ops.cpp, tests/test_fused_products.cpp and
// tests/test_adamw_vectorized.cpp hold each twin to the composed ops, values and gradients):
//
//   where                          composed (fused = false)           fast path (fused = true)
//   softmax attention's middle     split_heads … merge_heads, 7 ops   fused_attention, per tile
//   the FFN's and head's GELU      gelu                               gelu_vectorized
//   post-LN residual  LN(h + r)    add, then layer_norm               add_layer_norm
//   a large product's threads      OpenBLAS threads each product      rows split over ours
//   q, k, v projections            3 linear, [N,C]·[C,C] each         stacked_linear [N,C]·[C,3C],
//     (where fused attention runs)                                    read in place (packed)
//   tied decoder + loss            matmul, add, cross_entropy         linear_cross_entropy
//   AdamW's element loop           AdamW::step (double scalars)       AdamW::step_vectorized
//
// execution_plan() below decides all seven from the config, and the functions under it are the
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
    bool packed_qkv = false;           // q, k, v as one stacked_linear product (fused attention)
    bool fused_decoder_loss = false;   // linear_cross_entropy for cross_entropy(z·Eᵀ + b)
    bool vectorized_adamw = false;     // AdamW::step_vectorized for AdamW::step

    // The threading setting a run with `threads` threads wants (threads = 0: every core).
    Threading threading(size_t threads) const { return {threads, split_products}; }
};

// model.fused = true: all seven on (fused attention for softmax attention only: linear
// attention has no T×T probabilities to fuse); false: all off.
ExecutionPlan execution_plan(const ModelConfig& config);

// Whether this attention call takes fused_attention: the plan allows it, the scheme only
// rotates q and k (*table = its RoPE table, or nullptr for none), no attention dropout is active.
bool use_fused_attention(const ExecutionPlan& plan, PositionScheme& position,
                         bool attention_dropout_active, RopeTable** table);
// Softmax attention's middle on the fused path (use_fused_attention said yes): fused_attention
// of x's q, k, v — one stacked product read in place (plan.packed_qkv), or three linear ops.
//   x:[B,T,C] → ctx:[B,T,C] (before the output projection)
Tensor fused_self_attention(const ExecutionPlan& plan, const Tensor& x, const Linear& query,
                            const Linear& key, const Linear& value, size_t num_heads,
                            RopeTable* table, bool causal);
// The tied decoder, composed: logits = z·Eᵀ + bias, the word embeddings E reused as the output
// matrix.   z:[M,C] E:[V,C] bias:[V] → [M,V]
Tensor tied_decoder(const Tensor& z, const Tensor& embeddings, const Tensor& bias);
// The tied decoder and its loss under the plan: cross_entropy(tied_decoder(z, E, bias)) or
// linear_cross_entropy (the same function); *logits receives the [M,V] logits either way.
//   z:[M,C] E:[V,C] bias:[V] targets:[M] → scalar mean cross-entropy
Tensor decoder_loss(const ExecutionPlan& plan, const Tensor& z, const Tensor& embeddings,
                    const Tensor& bias, const std::vector<int>& targets, int ignore_index,
                    Tensor* logits);
// GELU under the plan: gelu or gelu_vectorized (the same function, ~1e-6 apart)
Tensor activation(const ExecutionPlan& plan, const Tensor& x);
// The post-LN residual LN(h + r) under the plan: norm(add(h, r)) or add_layer_norm
Tensor residual_norm(const ExecutionPlan& plan, const LayerNorm& norm, const Tensor& h,
                     const Tensor& r);
// One optimizer update under the plan: optimizer.step(lr) or optimizer.step_vectorized(lr)
void optimizer_step(const ExecutionPlan& plan, AdamW& optimizer, double lr);

}  // namespace rf
