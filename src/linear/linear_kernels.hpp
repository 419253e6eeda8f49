// Room — linear: the SwappableOps that swap every layer's softmax for kernelised attention
// (model.attention = linear; RoFormer §3.3, eq. 19; docs/linear_attention.md). The model a
// student reads knows softmax attention only; swappable_ops_for (src/assembly/swappable_ops_for.cpp)
// wraps the model's base kernels, composed or fast, in these when the config asks for linear.
//
// Legend: B batch, T tokens, C hidden, H heads, D = C/H, F feature size (D for elu1, M for
//         favor), M random features; m a query position, n a key position.
//   q, k, v = split_heads(x·Wqᵀ + bq, …)            [B,H,T,D]   the layer's own projections
//   q, k (, v) ← RoPE(q, k (, v))                  only with position.rope_placement =
//                                                  before_feature_map (linear_rope.hpp)
//   φq = φ(q), φk = φ(k)                           [B,H,T,F]   elu_plus_one, or favor_features
//                                                  with this layer's fixed W:[M, D]
//   φq_num, φk_num (, v) ← RoPE(φq, φk (, v))      the default eq19_features placement; else
//                                                  φq_num = φq, φk_num = φk
//   ctx_m = Σ_n (φq_num_m·φk_num_n) v_n / Σ_n φq_m·φk_n,  n over all T or n ≤ m (causal)
//   out = merge_heads(ctx)·Woᵀ + bo                [B,T,C]
// No attention dropout: there is no probability matrix to drop entries of.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "linear/linear_rope.hpp"
#include "model/swappable_ops.hpp"

namespace rf {

class LinearAttentionKernels final : public SwappableOps {
public:
    // Draws FAVOR's W:[M, D] of every layer (model.feature_map = favor only), in layer order,
    // from Rng(init_seed ^ 0x3C6EF372FE94F82B) — a generator of its own, so every other weight
    // is the draw it is in a softmax model of the seed — and builds RoPE's feature table. A
    // causal FAVOR model whose |w|²/2 passes float32's exp range is refused here.
    LinearAttentionKernels(std::shared_ptr<const SwappableOps> base, const ModelConfig& config,
                           const PositionConfig& position_config, uint64_t init_seed);

    // x:[B,T,C] → [B,T,C], linear attention with the layer's q, k, v and output projections
    Tensor self_attention(const SelfAttention& attention, const Tensor& x,
                          PositionScheme& position, bool training, Rng& rng) const override;
    // FAVOR's W of every layer, named "roformer.encoder.layer.{i}.attention.self.
    // feature_projection" (empty for elu1): saved and loaded with the weights, never trained.
    bool is_linear_attention() const override { return true; }
    std::vector<Tensor> buffers() const override { return feature_projections_; }

    // The rest is the base kernels' (composed or fast).
    Tensor gelu(const Tensor& x) const override { return base_->gelu(x); }
    Tensor residual_norm(const LayerNorm& norm, const Tensor& h, const Tensor& r) const override {
        return base_->residual_norm(norm, h, r);
    }
    Tensor decoder_loss(const Tensor& z, const Tensor& embeddings, const Tensor& bias,
                        const std::vector<int>& targets, int ignore_index,
                        Tensor* logits) const override {
        return base_->decoder_loss(z, embeddings, bias, targets, ignore_index, logits);
    }
    void optimizer_step(AdamW& optimizer, double lr) const override {
        base_->optimizer_step(optimizer, lr);
    }

private:
    // The layer's W, found by its attention's name "<prefix>.self.query.weight" →
    // "<prefix>.self.feature_projection".
    const Tensor& feature_projection(const SelfAttention& attention) const;

    std::shared_ptr<const SwappableOps> base_;
    bool favor_;
    std::vector<Tensor> feature_projections_;                 // favor: one W:[M, D] per layer
    std::map<std::string, size_t> feature_projection_index_;  // its name → layer
    // RoPE's placements; mutable as the position scheme is: its tables grow to the longest T.
    mutable LinearRope rope_;
};

}  // namespace rf
