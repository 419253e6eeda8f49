// Stage 5 — model: the softmax attention weights of a model, for looking at (roformer attention).
//
// Legend: L layers, H heads, T tokens, D head size; m a query position, n a key position.
// For one sequence, every layer's probabilities p_mn, from that layer's input x by the two
// functions SelfAttention's composed forward runs (attention.hpp), around the scheme's rotation:
//   q, k, v = project(x)                        split_heads(x·Wqᵀ + bq, …)  [1,H,T,D]
//   q, k, v ← scheme.rotate(q, k, v)            RoPE turns q and k
//   p = softmax_probabilities(q, k, v)         q·kᵀ/√D, bias, softmax  [1,H,T,T]
// and then the layer's own forward (EncoderLayer::forward, no dropout) gives the next
// layer's input — on the fast path too, so the maps come from the code that trains.
// (The fused kernel computes the same probabilities inside its tiles; the fused-vs-composed
// tests hold the two together.)
// Linear attention has no T×T probability matrix; it is refused.
#pragma once

#include <vector>

#include "model/roformer.hpp"

namespace rf {

struct AttentionMaps {
    size_t layers = 0, heads = 0, length = 0;
    // probabilities[l] is layer l's [H, T, T]: row m = query position, column n = key position.
    std::vector<Tensor> probabilities;
    const Real* at(size_t layer, size_t head) const {  // the [T, T] block of one head
        return probabilities[layer].data() + head * length * length;
    }
};

// Runs the encoder on `ids` (one sequence, batch 1) under NoGradGuard. Throws
// std::invalid_argument for linear attention, an empty sequence, or one longer than the
// position scheme can encode.
AttentionMaps attention_maps(RoFormer& model, const std::vector<int>& ids);

}  // namespace rf
