// Stage 5 — model: multi-head self-attention with a pluggable position scheme, softmax or
// linear (kernelised), bidirectional or causal.
//
// Legend: B batch, T tokens, C hidden, H heads, D = C/H, F feature size (D for elu1, M for
//         favor), M random features; m a query position, n a key position.
//   q, k, v = x·Wqᵀ + bq, …                       [B,T,C]
//   split heads                                   [B,T,C] → [B,H,T,D]
// model.attention = softmax (the default):
//   q, k (, v) ← RoPE(q, k (, v))                  (scheme.rotate; identity for other schemes)
//   s = q·kᵀ / √D  (+ ALiBi bias)                  [B,H,T,T]
//   p = softmax(s), or causal_softmax(s) when causal (p_mn = 0 for n > m)
//   ctx = dropout(p)·v                            [B,H,T,D]
// model.attention = linear (RoFormer §3.3, eq. 19; docs/linear_attention.md):
//   q, k (, v) ← RoPE(q, k (, v))                  only with position.rope_placement =
//                                                  before_feature_map (rotate_before_feature_map)
//   φq = φ(q), φk = φ(k)                           [B,H,T,F]   elu_plus_one, or favor_features
//                                                  with this layer's fixed W:[M, D]
//   φq_num, φk_num (, v) ← RoPE(φq, φk (, v))      (scheme.rotate_features, the default
//                                                  eq19_features placement; else unchanged)
//   ctx_m = Σ_n (φq_num_m·φk_num_n) v_n / Σ_n φq_m·φk_n,  n over all T or n ≤ m (causal)
//   No attention dropout here: there is no probability matrix to drop entries of.
// merge heads, out = ctx·Woᵀ + bo                  [B,T,C]
// This is the composed path; the model's kernels (kernels.hpp) may run a faster twin of it.
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

// Linear attention's feature size F: D for elu1, model.random_features for favor.
size_t attention_feature_size(const ModelConfig& config);

struct SelfAttention {
    Linear query, key, value, output;
    size_t num_heads = 0;
    double attention_dropout = 0.0;  // softmax attention only
    bool linear = false;             // model.attention = linear
    bool favor = false;              // linear with model.feature_map = favor (else elu1)
    bool causal = false;             // ModelConfig::causal: position m sees n ≤ m only
    // favor: W:[M, D], drawn once, never trained (no grad, not a parameter), saved as
    // "<prefix>.self.feature_projection". Undefined otherwise.
    Tensor feature_projection;

    SelfAttention() = default;
    // Draws Wq, Wk, Wv, Wo from `rng` (in that order, exactly as softmax attention always
    // has) and, for favor only, W from `feature_rng`.
    SelfAttention(const ModelConfig& config, Rng& rng, Rng& feature_rng, const std::string& prefix);
    // x:[B,T,C] → [B,T,C] (before the output dropout and residual)
    Tensor operator()(const Tensor& x, PositionScheme& position, bool training, Rng& rng) const;

    // The composed path's pieces, which operator() runs (and attention_maps.hpp reads):
    struct Heads {
        Tensor q, k, v;  // [B,H,T,D]
    };
    // q, k, v = split_heads(x·Wqᵀ + bq, …)   x:[B,T,C] → [B,H,T,D] each
    Heads project(const Tensor& x) const;
    // Softmax attention's weights: q, k (, v) ← scheme.rotate(q, k, v) (in place of the
    // handles), s = q·kᵀ/√D, s ← scheme.bias_scores(s), p = softmax(s) or causal_softmax(s).
    // → p:[B,H,T,T], row m sums to 1 (before attention dropout)
    Tensor softmax_probabilities(Heads& heads, PositionScheme& position) const;
    void collect(std::vector<NamedParameter>& params) const;
};

}  // namespace rf
