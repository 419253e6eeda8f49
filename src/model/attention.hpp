// Stage 5 — model: multi-head softmax self-attention with a pluggable position scheme,
// bidirectional or causal.
//
// Legend: B batch, T tokens, C hidden, H heads, D = C/H; m a query position, n a key position.
//   q, k, v = x·Wqᵀ + bq, …                       [B,T,C]
//   split heads                                   [B,T,C] → [B,H,T,D]
//   q, k (, v) ← RoPE(q, k (, v))                  (scheme.rotate; identity for other schemes)
//   s = q·kᵀ / √D  (+ ALiBi bias)                  [B,H,T,T]
//   p = softmax(s), or causal_softmax(s) when causal (p_mn = 0 for n > m)
//   ctx = dropout(p)·v                            [B,H,T,D]
//   merge heads, out = ctx·Woᵀ + bo                [B,T,C]
// This is the composed path; the model's swappable ops (swappable_ops.hpp) may run a faster
// twin of it, or (model.attention = linear) kernelised attention with the same projections
// (src/linear/).
#pragma once

#include <string>
#include <vector>

#include "model/model_config.hpp"
#include "nn/layers.hpp"
#include "position/position.hpp"

namespace rf {

// [B,T,H·D] → [B,H,T,D] and back (copies through the permute op, so both are differentiable).
Tensor split_heads(const Tensor& x, size_t num_heads);
Tensor merge_heads(const Tensor& x);

// Linear attention's feature size F (src/linear/): D for elu1, model.random_features for
// favor. The FLOP and memory estimates read it too.
size_t attention_feature_size(const ModelConfig& config);

struct SelfAttention {
    Linear query, key, value, output;
    size_t num_heads = 0;
    double attention_dropout = 0.0;
    bool causal = false;  // ModelConfig::causal: position m sees n ≤ m only

    SelfAttention() = default;
    // Draws Wq, Wk, Wv, Wo from `rng`, in that order.
    SelfAttention(const ModelConfig& config, Rng& rng, const std::string& prefix);
    // x:[B,T,C] → [B,T,C] (before the output dropout and residual)
    Tensor operator()(const Tensor& x, PositionScheme& position, bool training, Rng& rng) const;

    // The composed path's pieces, which operator() runs (attention_maps.hpp and src/linear/
    // use them too):
    struct Heads {
        Tensor q, k, v;  // [B,H,T,D]
    };
    // q, k, v = split_heads(x·Wqᵀ + bq, …)   x:[B,T,C] → [B,H,T,D] each
    Heads project(const Tensor& x) const;
    // Softmax attention's weights from q and k as the scheme left them (operator() first runs
    // scheme.rotate(q, k, v)): s = q·kᵀ/√D, s ← scheme.bias_scores(s), p = softmax(s) or
    // causal_softmax(s).   → p:[B,H,T,T], row m sums to 1 (before attention dropout)
    Tensor softmax_probabilities(const Heads& heads, PositionScheme& position) const;
    void collect(std::vector<NamedParameter>& params) const;
};

}  // namespace rf
