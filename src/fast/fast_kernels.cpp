// Room — fast: the fast path's kernels (model.fused = true), each a twin of a composed op of
// src/model/swappable_ops.hpp that computes the same function faster.
#include "fast/fast_kernels.hpp"

#include <memory>

#include "fast/fused_attention.hpp"
#include "fast/adamw_vectorized.hpp"
#include "fast/fused_ops.hpp"
#include "model/attention.hpp"

namespace rf {
namespace {

class FastKernels final : public SwappableOps {
public:
    // Softmax attention's middle — split heads to merge heads — as one op, fused_attention,
    // with q, k, v from one stacked product read in place. Only where the position scheme
    // consents (rotation_only: rope, none, learned, sinusoidal; *table its RoPE table or
    // nullptr) and no attention dropout is active (the kernel has none); ALiBi and
    // rotate_values always take the composed ops.
    Tensor self_attention(const SelfAttention& attention, const Tensor& x,
                          PositionScheme& position, bool training, Rng& rng) const override {
        RopeTable* table = nullptr;
        const bool dropping = training && attention.attention_dropout > 0;
        if (dropping || !position.rotation_only(&table))
            return attention(x, position, training, rng);
        const Tensor qkv = stacked_linear(
            x, {attention.query.weight, attention.key.weight, attention.value.weight},
            {attention.query.bias, attention.key.bias, attention.value.bias});  // [B,T,3C]
        return attention.output(
            fused_attention_packed(qkv, attention.num_heads, table, attention.causal));
    }
    Tensor gelu(const Tensor& x) const override { return gelu_vectorized(x); }
    Tensor residual_norm(const LayerNorm& norm, const Tensor& h, const Tensor& r) const override {
        return add_layer_norm(h, r, norm.gamma, norm.beta, norm.eps);
    }
    Tensor decoder_loss(const Tensor& z, const Tensor& embeddings, const Tensor& bias,
                        const std::vector<int>& targets, int ignore_index,
                        Tensor* logits) const override {
        return linear_cross_entropy(z, embeddings, bias, targets, ignore_index, logits);
    }
    void optimizer_step(AdamW& optimizer, double lr) const override {
        adamw_step_vectorized(optimizer, lr);
    }
};

}  // namespace

std::shared_ptr<const SwappableOps> fast_kernels() { return std::make_shared<const FastKernels>(); }

}  // namespace rf
