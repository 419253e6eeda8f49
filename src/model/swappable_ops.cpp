// Stage 5 — model: the composed answers of the swappable ops (see swappable_ops.hpp), the tied
// decoder among them.
#include "model/swappable_ops.hpp"

#include "model/attention.hpp"

namespace rf {

Tensor SwappableOps::self_attention(const SelfAttention& attention, const Tensor& x,
                               PositionScheme& position, bool training, Rng& rng) const {
    return attention(x, position, training, rng);
}

Tensor SwappableOps::gelu(const Tensor& x) const { return rf::gelu(x); }

Tensor SwappableOps::residual_norm(const LayerNorm& norm, const Tensor& h, const Tensor& r) const {
    return norm(add(h, r));
}

Tensor tied_decoder(const Tensor& z, const Tensor& embeddings, const Tensor& bias) {
    return add(matmul(z, embeddings, false, true), bias);
}

Tensor SwappableOps::decoder_loss(const Tensor& z, const Tensor& embeddings, const Tensor& bias,
                             const std::vector<int>& targets, int ignore_index,
                             Tensor* logits) const {
    *logits = tied_decoder(z, embeddings, bias);
    return cross_entropy(*logits, targets, ignore_index);
}

void SwappableOps::optimizer_step(AdamW& optimizer, double lr) const { optimizer.step(lr); }

}  // namespace rf
