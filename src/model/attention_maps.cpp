// Stage 5 — model: the softmax attention weights of every layer (see attention_maps.hpp).
#include "model/attention_maps.hpp"

#include <stdexcept>
#include <string>

namespace rf {

AttentionMaps attention_maps(RoFormer& model, const std::vector<int>& ids) {
    if (model.config().attention == AttentionKind::linear)
        throw std::invalid_argument(
            "model.attention = linear has no attention probability matrix (the weights are "
            "never formed: φ(q)ᵀS / φ(q)ᵀz, docs/linear_attention.md); attention maps need a "
            "softmax-attention run");
    if (ids.empty()) throw std::invalid_argument("attention_maps: the sequence is empty");
    if (ids.size() > model.position().max_length())
        throw std::invalid_argument(
            sequence_too_long_message(ids.size(), model.position().max_length()));
    NoGradGuard no_grad;
    AttentionMaps maps;
    maps.layers = model.layers().size();
    maps.heads = model.config().num_heads;
    maps.length = ids.size();
    Tensor h = model.embed(ids, 1, ids.size(), false);  // [1,T,C]
    Rng unused(0);                                      // dropout is off: training = false
    for (size_t i = 0; i < model.layers().size(); ++i) {
        const EncoderLayer& layer = model.layers()[i];
        PositionScheme& position = model.layer_position(i);  // `none` in a NoPE layer
        // The layer's own probabilities, by the function its composed forward runs
        SelfAttention::Heads heads = layer.attention.project(h);
        position.rotate(heads.q, heads.k, heads.v);
        Tensor p = layer.attention.softmax_probabilities(heads, position);  // [1,H,T,T]
        maps.probabilities.push_back(reshape(p, {maps.heads, maps.length, maps.length}));
        // and the layer itself, as training runs it, gives the next layer's input.
        h = layer.forward(h, position, false, Real(0), unused);
    }
    return maps;
}

}  // namespace rf
