// Stage 5 — model: the swappable ops — the five places where a faster twin may stand in for
// the composed ops (a table of virtual functions, one object per model).
//
// The model a student reads runs composed ops (split_heads, rope, matmul, softmax, gelu, add,
// layer_norm, …). At five places a model handed SwappableOps asks them instead of calling those
// ops directly; the base class here answers with exactly those composed ops, the functions the
// model calls itself when it is handed none (the composed path: no virtual call on the way):
//
//   place                          composed                          model.fused = true (src/fast/)
//   a layer's self-attention       SelfAttention::operator()         fused_attention, per tile,
//                                                                    q, k, v as one product
//   the FFN's and head's GELU      gelu                              gelu_vectorized
//   post-LN residual  LN(h + r)    layer_norm(add(h, r))             add_layer_norm
//   tied decoder + loss            cross_entropy(z·Eᵀ + b)           linear_cross_entropy
//   AdamW's update                 AdamW::step                       adamw_step_vectorized
//
// A model is handed its ops once, when it is built (src/assembly/swappable_ops_for.hpp builds
// them from the config; none handed: the composed ops, called directly); nothing is threaded
// through the forward's signatures. The fast twins are held to these composed ops, values and
// gradients, by tests/machinery/test_fused_*.cpp and test_adamw_vectorized.cpp.
// They may also replace what a place computes: model.attention = linear wraps either set in
// the linear-attention ops (src/linear/linear_kernels.hpp), whose self-attention is
// kernelised attention with the layer's projections, and whose fixed tensors are buffers().
#pragma once

#include <memory>
#include <vector>

#include "model/model_config.hpp"
#include "nn/adamw.hpp"
#include "nn/layers.hpp"
#include "position/position.hpp"

namespace rf {

struct SelfAttention;

struct SwappableOps {
    virtual ~SwappableOps() = default;
    // A layer's self-attention, x:[B,T,C] → [B,T,C]: attention(x, position, training, rng).
    virtual Tensor self_attention(const SelfAttention& attention, const Tensor& x,
                                  PositionScheme& position, bool training, Rng& rng) const;
    // GELU, x·Φ(x)   x:[...] → [...]
    virtual Tensor gelu(const Tensor& x) const;
    // The post-LN residual step LN(h + r)   h, r:[..., C] → [..., C]
    virtual Tensor residual_norm(const LayerNorm& norm, const Tensor& h, const Tensor& r) const;
    // The tied decoder and its loss: logits = z·Eᵀ + bias, mean cross-entropy over the rows
    // whose target is not ignore_index; *logits receives the [M,V] logits.
    //   z:[M,C] E:[V,C] bias:[V] targets:[M] → scalar
    virtual Tensor decoder_loss(const Tensor& z, const Tensor& embeddings, const Tensor& bias,
                                const std::vector<int>& targets, int ignore_index,
                                Tensor* logits) const;
    // One optimizer update at learning rate lr.
    virtual void optimizer_step(AdamW& optimizer, double lr) const;
    // True for linear attention's ops (src/linear/linear_kernels.hpp), whose self_attention is
    // kernelised attention: the model refuses model.attention = linear without them.
    virtual bool is_linear_attention() const { return false; }
    // Fixed named tensors the ops own that are saved and loaded with the model's weights
    // but never trained (RoFormer::buffers()); none here.
    virtual std::vector<Tensor> buffers() const { return {}; }
};

// ---- the composed answers, written once (roformer.cpp): the base class answers with them, and
// the model calls them itself when it is handed no ops. (Self-attention's is SelfAttention's
// call, gelu's rf::gelu, the optimizer's AdamW::step.)
// The post-LN residual step LN(h + r)   h, r:[..., C] → [..., C]
Tensor residual_norm(const LayerNorm& norm, const Tensor& h, const Tensor& r);
// The tied decoder, logits = z·Eᵀ + bias, the word embeddings E reused as the output matrix.
//   z:[M,C] E:[V,C] bias:[V] → [M,V]
Tensor tied_decoder(const Tensor& z, const Tensor& embeddings, const Tensor& bias);
// The tied decoder's logits (into *logits) and their mean cross-entropy over the rows whose
// target is not ignore_index.   z:[M,C] E:[V,C] bias:[V] targets:[M] → scalar
Tensor decoder_loss(const Tensor& z, const Tensor& embeddings, const Tensor& bias,
                    const std::vector<int>& targets, int ignore_index, Tensor* logits);

}  // namespace rf
