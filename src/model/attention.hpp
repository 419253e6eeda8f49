// Stage 5 — model: multi-head self-attention with a pluggable position scheme.
//
// Legend: B batch, T tokens, C hidden, H heads, D = C/H.
//   q, k, v = x·Wqᵀ + bq, …                       [B,T,C]
//   split heads                                   [B,T,C] → [B,H,T,D]
//   q, k (, v) ← RoPE(q, k (, v))                  (scheme.rotate; identity for other schemes)
//   s = q·kᵀ / √D  (+ ALiBi bias)                  [B,H,T,T]
//   p = softmax(s); ctx = p·v                     [B,H,T,D]
//   merge heads, out = ctx·Woᵀ + bo                [B,T,C]
#pragma once

#include <string>
#include <vector>

#include "nn/layers.hpp"
#include "position/position.hpp"

namespace rf {

// [B,T,H·D] → [B,H,T,D] and back (copies through the permute op, so both are differentiable).
Tensor split_heads(const Tensor& x, size_t num_heads);
Tensor merge_heads(const Tensor& x);

struct SelfAttention {
    Linear query, key, value, output;
    size_t num_heads = 0;
    double attention_dropout = 0.0;

    SelfAttention() = default;
    SelfAttention(size_t hidden, size_t num_heads, double attention_dropout, double init_std,
                  Rng& rng, const std::string& prefix);
    // x:[B,T,C] → [B,T,C] (before the output dropout and residual)
    Tensor operator()(const Tensor& x, PositionScheme& position, bool training, Rng& rng) const;
    void collect(std::vector<NamedParameter>& params) const;
};

}  // namespace rf
