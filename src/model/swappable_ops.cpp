// Stage 5 — model: the base class of the swappable ops answers with the composed ops (see
// swappable_ops.hpp; residual_norm and decoder_loss are written in roformer.cpp, which calls
// them itself when the model is handed no ops).
#include "model/swappable_ops.hpp"

#include "model/attention.hpp"

namespace rf {

Tensor SwappableOps::self_attention(const SelfAttention& attention, const Tensor& x,
                               PositionScheme& position, bool training, Rng& rng) const {
    return attention(x, position, training, rng);
}

Tensor SwappableOps::gelu(const Tensor& x) const { return rf::gelu(x); }

Tensor SwappableOps::residual_norm(const LayerNorm& norm, const Tensor& h, const Tensor& r) const {
    return rf::residual_norm(norm, h, r);
}

Tensor SwappableOps::decoder_loss(const Tensor& z, const Tensor& embeddings, const Tensor& bias,
                             const std::vector<int>& targets, int ignore_index,
                             Tensor* logits) const {
    return rf::decoder_loss(z, embeddings, bias, targets, ignore_index, logits);
}

void SwappableOps::optimizer_step(AdamW& optimizer, double lr) const { optimizer.step(lr); }

}  // namespace rf
