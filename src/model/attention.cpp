// Stage 5 — model: multi-head self-attention (see attention.hpp for the shapes).
#include "model/attention.hpp"

#include <cmath>
#include <stdexcept>

namespace rf {

Tensor split_heads(const Tensor& x, size_t num_heads) {
    const size_t B = x.size(0), T = x.size(1), C = x.size(2);
    const size_t D = attention_head_size(C, num_heads);
    return permute(reshape(x, {B, T, num_heads, D}), {0, 2, 1, 3});
}

Tensor merge_heads(const Tensor& x) {
    const size_t B = x.size(0), H = x.size(1), T = x.size(2), D = x.size(3);
    return reshape(permute(x, {0, 2, 1, 3}), {B, T, H * D});
}

// Prefix is HF's "roformer.encoder.layer.{i}.attention": self.{query,key,value} and output.dense
SelfAttention::SelfAttention(size_t hidden, size_t num_heads_, double attention_dropout_,
                             double init_std, Rng& rng, const std::string& prefix)
    : query(hidden, hidden, init_std, rng, prefix + ".self.query"),
      key(hidden, hidden, init_std, rng, prefix + ".self.key"),
      value(hidden, hidden, init_std, rng, prefix + ".self.value"),
      output(hidden, hidden, init_std, rng, prefix + ".output.dense"),
      num_heads(num_heads_),
      attention_dropout(attention_dropout_) {}

Tensor SelfAttention::operator()(const Tensor& x, PositionScheme& position, bool training,
                                 Rng& rng) const {
    Tensor q = split_heads(query(x), num_heads);  // [B,H,T,D]
    Tensor k = split_heads(key(x), num_heads);
    Tensor v = split_heads(value(x), num_heads);
    position.rotate(q, k, v);
    const size_t D = q.size(3);
    Tensor scores = mul_scalar(matmul(q, k, false, true), Real(1.0 / std::sqrt(double(D))));
    scores = position.bias_scores(scores);  // [B,H,T,T]
    Tensor probs = dropout(softmax(scores), static_cast<Real>(attention_dropout), training, rng);
    Tensor context = merge_heads(matmul(probs, v));  // [B,T,C]
    return output(context);
}

void SelfAttention::collect(std::vector<NamedParameter>& params) const {
    query.collect(params);
    key.collect(params);
    value.collect(params);
    output.collect(params);
}

}  // namespace rf
