// Stage 5 — model: multi-head self-attention (see attention.hpp for the shapes).
//
// Legend: B batch, T tokens, C hidden, H heads, D = C/H head size.
#include "model/attention.hpp"

#include <cmath>

namespace rf {

Tensor split_heads(const Tensor& x, size_t num_heads) {
    const size_t B = x.size(0), T = x.size(1), D = x.size(2) / num_heads;  // C = H·D
    return permute(reshape(x, {B, T, num_heads, D}), {0, 2, 1, 3});
}

Tensor merge_heads(const Tensor& x) {
    const size_t B = x.size(0), H = x.size(1), T = x.size(2), D = x.size(3);
    return reshape(permute(x, {0, 2, 1, 3}), {B, T, H * D});
}

size_t attention_feature_size(const ModelConfig& config) {
    return config.feature_map == FeatureMap::favor
               ? config.random_features
               : attention_head_size(config.hidden, config.num_heads);
}

// Prefix is HF's "roformer.encoder.layer.{i}.attention": self.{query,key,value} and output.dense
SelfAttention::SelfAttention(const ModelConfig& config, Rng& rng, const std::string& prefix)
    : query(config.hidden, config.hidden, config.init_std, rng, prefix + ".self.query"),
      key(config.hidden, config.hidden, config.init_std, rng, prefix + ".self.key"),
      value(config.hidden, config.hidden, config.init_std, rng, prefix + ".self.value"),
      output(config.hidden, config.hidden, config.init_std, rng, prefix + ".output.dense"),
      num_heads(config.num_heads),
      attention_dropout(config.attention_dropout),
      causal(config.causal) {}

SelfAttention::Heads SelfAttention::project(const Tensor& x) const {
    Heads h;
    h.q = split_heads(query(x), num_heads);  // [B,H,T,D]
    h.k = split_heads(key(x), num_heads);
    h.v = split_heads(value(x), num_heads);
    return h;
}

Tensor SelfAttention::softmax_probabilities(const Heads& h, PositionScheme& position) const {
    const size_t D = h.q.size(3);
    Tensor scores = mul_scalar(matmul(h.q, h.k, false, true), Real(1.0 / std::sqrt(double(D))));
    // ALiBi's symmetric −slope·|m − n| also serves a causal model: the future is masked.
    scores = position.bias_scores(scores);  // [B,H,T,T]
    return causal ? causal_softmax(scores) : softmax(scores);
}

Tensor SelfAttention::operator()(const Tensor& x, PositionScheme& position, bool training,
                                 Rng& rng) const {
    Heads h = project(x);
    position.rotate(h.q, h.k, h.v);  // RoPE turns q and k here (the scheme's place)
    Tensor probs = softmax_probabilities(h, position);  // [B,H,T,T]
    probs = dropout(probs, static_cast<Real>(attention_dropout), training, rng);
    const Tensor context = matmul(probs, h.v);  // [B,H,T,D]
    return output(merge_heads(context));        // [B,T,C]
}

void SelfAttention::collect(std::vector<NamedParameter>& params) const {
    query.collect(params);
    key.collect(params);
    value.collect(params);
    output.collect(params);
}

}  // namespace rf
