// Stage 5 — model: the composed kernels (see kernels.hpp).
#include "model/kernels.hpp"

#include "model/attention.hpp"

namespace rf {

Tensor Kernels::self_attention(const SelfAttention& attention, const Tensor& x,
                               PositionScheme& position, bool training, Rng& rng) const {
    return attention(x, position, training, rng);
}

Tensor Kernels::gelu(const Tensor& x) const { return rf::gelu(x); }

Tensor Kernels::residual_norm(const LayerNorm& norm, const Tensor& h, const Tensor& r) const {
    return norm(add(h, r));
}

Tensor tied_decoder(const Tensor& z, const Tensor& embeddings, const Tensor& bias) {
    return add(matmul(z, embeddings, false, true), bias);
}

Tensor Kernels::decoder_loss(const Tensor& z, const Tensor& embeddings, const Tensor& bias,
                             const std::vector<int>& targets, int ignore_index,
                             Tensor* logits) const {
    *logits = tied_decoder(z, embeddings, bias);
    return cross_entropy(*logits, targets, ignore_index);
}

void Kernels::optimizer_step(AdamW& optimizer, double lr) const { optimizer.step(lr); }

}  // namespace rf
