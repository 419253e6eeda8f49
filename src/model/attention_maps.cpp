// Stage 5 — model: the softmax attention weights of every layer (see attention_maps.hpp).
#include "model/attention_maps.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace rf {

namespace {

// A parameter of the model by its checkpoint name (the embeddings are not exposed otherwise).
const Tensor& parameter_named(const RoFormer& model, const std::string& name) {
    for (const NamedParameter& p : model.parameters())
        if (p.tensor.name() == name) return p.tensor;
    throw std::logic_error("attention_maps: the model has no parameter " + name);
}

// The encoder's input, as RoFormer::encode builds it (no dropout):
// LN(word_emb[ids] + type_emb[0] + absolute positions)   → [1,T,C]
Tensor embed_sequence(RoFormer& model, const std::vector<int>& ids) {
    const std::string p = "roformer.embeddings.";
    Tensor h =
        embedding(parameter_named(model, p + "word_embeddings.weight"), ids, {1, ids.size()});
    h = add(h, slice(parameter_named(model, p + "token_type_embeddings.weight"), 0, 0, 1));
    h = model.position().embed(h);
    return layer_norm(h, parameter_named(model, p + "LayerNorm.weight"),
                      parameter_named(model, p + "LayerNorm.bias"),
                      static_cast<Real>(model.config().layer_norm_eps));
}

// One layer's probabilities from its input x:[1,T,C] → [1,H,T,T].
Tensor layer_probabilities(const SelfAttention& attention, const Tensor& x,
                           PositionScheme& position) {
    Tensor q = split_heads(attention.query(x), attention.num_heads);  // [1,H,T,D]
    Tensor k = split_heads(attention.key(x), attention.num_heads);
    Tensor v = split_heads(attention.value(x), attention.num_heads);
    position.rotate(q, k, v);
    const double D = double(q.size(3));
    Tensor scores = mul_scalar(matmul(q, k, false, true), Real(1.0 / std::sqrt(D)));
    scores = position.bias_scores(scores);
    return attention.causal ? causal_softmax(scores) : softmax(scores);
}

}  // namespace

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
    Tensor h = embed_sequence(model, ids);  // [1,T,C]
    Rng unused(0);                          // dropout is off: training = false
    for (const EncoderLayer& layer : model.layers()) {
        Tensor p = layer_probabilities(layer.attention, h, model.position());
        maps.probabilities.push_back(reshape(p, {maps.heads, maps.length, maps.length}));
        // The layer itself (RoFormer::encode without dropout) gives the next layer's input.
        Tensor a = layer.attention(h, model.position(), false, unused);
        h = layer.attention_norm(add(h, a));
        h = layer.output_norm(add(h, layer.output(gelu(layer.intermediate(h)))));
    }
    return maps;
}

}  // namespace rf
