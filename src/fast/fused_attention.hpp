// Room — fast: softmax self-attention as one op, the fast path of model.fused = true.
//
// Legend: B batch, T tokens, H heads, D head size, C = H·D, r rotary dims.
//
// The composed path (SelfAttention with model.fused = false, the one to read first) runs
//   split_heads → rope(q), rope(k) → q·kᵀ → ·1/√D → softmax (causal: j ≤ i) → probs·v → merge_heads
// as seven ops, each writing a full [B,H,T,D] or [B,H,T,T] tensor that the next one reads
// back. This op computes the same thing one (batch, head) tile at a time, in cache:
//   - a head's q, k, v are read in place from the [B,T,C] projections (row stride C; or
//     3C when the three come from one packed [B,T,3C] product, fused_attention_packed), so
//     split_heads and merge_heads copy nothing: the context is written straight into [B,T,C];
//   - RoPE rotates the tile's q and k rows as they are gathered (the same rotation kernel);
//   - scores, scale and softmax are one pass over the tile's [T,T] block;
//   - tiles run in parallel over OpenMP threads with single-threaded BLAS inside (many small
//     products thread better this way than inside BLAS).
// The backward mirrors it per tile: dprobs = dctx·vᵀ, dv += probsᵀ·dctx, the softmax and scale
// backward, dq = dscores·k, dk = dscoresᵀ·q, rotated back by R_mᵀ — the composed path's chain
// rule, in the same order. Each tile writes only its own slices of dq, dk, dv.
//
// What it saves for the backward: probs [B,H,T,T] (as the composed path does) and the angle
// rows; the rotated q, k are recomputed (cheaper than storing them).
// tests/machinery/test_fused_attention.cpp checks it against the composed ops, values and gradients.
#pragma once

#include "position/rope.hpp"
#include "tensor/tensor.hpp"

namespace rf {

// ctx = merge_heads(softmax(R q_h·(R k_h)ᵀ/√D) · v_h) over heads h, the softmax causal (keys
// j ≤ query i) when `causal`; R the RoPE rotation of `table` (positions 0 … T−1), or none
// when table is nullptr.   q, k, v:[B,T,C], C divisible by num_heads → ctx:[B,T,C]
Tensor fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, size_t num_heads,
                       RopeTable* table, bool causal);
// The same, with q, k, v side by side in one tensor (stacked_linear's output for the stacked
// weights [Wq; Wk; Wv]), read in place with row stride 3C; its gradient lands in the same
// layout.   qkv:[B,T,3C] (q = qkv[..., 0:C], k = [C:2C], v = [2C:3C]) → ctx:[B,T,C]
Tensor fused_attention_packed(const Tensor& qkv, size_t num_heads, RopeTable* table, bool causal);

}  // namespace rf
