// Stage 5 — model: multi-head self-attention (see attention.hpp for the shapes).
//
// Legend: B batch, T tokens, C hidden, H heads, D = C/H head size, F feature size, M random
//         features, W:[M, D] the FAVOR projection of one layer.
#include "ops/linear_attention.hpp"
#include "model/attention.hpp"

#include <algorithm>
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

size_t attention_feature_size(const ModelConfig& config) {
    return config.feature_map == FeatureMap::favor
               ? config.random_features
               : attention_head_size(config.hidden, config.num_heads);
}

// Causal FAVOR keys are not stabilised (see operator() below); their exponent is bounded by
// completing the square, w·x̃ − |x̃|²/2 = |w|²/2 − |x̃ − w|²/2 ≤ |w|²/2, whatever x is. Float32's
// exp overflows past ≈ 88.7, so every row of W must have |w|²/2 below this.
static constexpr double kMaxKeyExponent = 85.0;

// Prefix is HF's "roformer.encoder.layer.{i}.attention": self.{query,key,value} and output.dense
SelfAttention::SelfAttention(const ModelConfig& config, Rng& rng, Rng& feature_rng,
                             const std::string& prefix)
    : query(config.hidden, config.hidden, config.init_std, rng, prefix + ".self.query"),
      key(config.hidden, config.hidden, config.init_std, rng, prefix + ".self.key"),
      value(config.hidden, config.hidden, config.init_std, rng, prefix + ".self.value"),
      output(config.hidden, config.hidden, config.init_std, rng, prefix + ".output.dense"),
      num_heads(config.num_heads),
      attention_dropout(config.attention_dropout),
      linear(config.attention == AttentionKind::linear),
      favor(linear && config.feature_map == FeatureMap::favor),
      causal(config.causal) {
    if (!favor) return;
    const size_t D = attention_head_size(config.hidden, config.num_heads);
    feature_projection = orthogonal_random_features(config.random_features, D, feature_rng);
    feature_projection.set_name(prefix + ".self.feature_projection");
    if (!causal) return;
    double largest = 0.0;  // max_j |w_j|²/2
    for (size_t j = 0; j < config.random_features; ++j) {
        double sq = 0.0;
        for (size_t d = 0; d < D; ++d) {
            const double w = feature_projection.data()[j * D + d];
            sq += w * w;
        }
        largest = std::max(largest, sq / 2.0);
    }
    if (largest >= kMaxKeyExponent)
        throw std::invalid_argument(
            "model.feature_map = favor in a causal model: a random feature of head size D = " +
            std::to_string(D) + " has |w|²/2 = " + std::to_string(largest) +
            ", past float32's exp range; use smaller heads (raise model.num_heads) or "
            "model.feature_map = elu1");
}

SelfAttention::Heads SelfAttention::project(const Tensor& x) const {
    Heads h;
    h.q = split_heads(query(x), num_heads);  // [B,H,T,D]
    h.k = split_heads(key(x), num_heads);
    h.v = split_heads(value(x), num_heads);
    return h;
}

Tensor SelfAttention::softmax_probabilities(Heads& h, PositionScheme& position) const {
    position.rotate(h.q, h.k, h.v);
    const size_t D = h.q.size(3);
    Tensor scores = mul_scalar(matmul(h.q, h.k, false, true), Real(1.0 / std::sqrt(double(D))));
    // ALiBi's symmetric −slope·|m − n| also serves a causal model: the future is masked.
    scores = position.bias_scores(scores);  // [B,H,T,T]
    return causal ? causal_softmax(scores) : softmax(scores);
}

Tensor SelfAttention::operator()(const Tensor& x, PositionScheme& position, bool training,
                                 Rng& rng) const {
    Heads h = project(x);
    Tensor& q = h.q;
    Tensor& k = h.k;
    Tensor& v = h.v;
    Tensor context;  // [B,H,T,D]
    if (!linear) {
        Tensor probs = softmax_probabilities(h, position);
        probs = dropout(probs, static_cast<Real>(attention_dropout), training, rng);
        context = matmul(probs, v);
    } else {
        // φ:[B,H,T,D] → [B,H,T,F]. FAVOR's stabiliser c cancels in the ratio. Queries: one c per
        // row (depends on q_m only). Keys, bidirectional: one c per (batch, head) slice. Keys,
        // causal: none — a c over the slice would depend on future keys (cancelling exactly in
        // real arithmetic, not in float32 rounding); the bound above keeps exp finite instead.
        position.rotate_before_feature_map(q, k, v);  // RoPE's other placement (position.hpp)
        Tensor qf = favor ? favor_features(q, feature_projection, true) : elu_plus_one(q);
        Tensor kf = favor ? favor_features(k, feature_projection, false, !causal) : elu_plus_one(k);
        Tensor q_num = qf, k_num = kf;              // numerator features: RoPE rotates these only
        position.rotate_features(q_num, k_num, v);  // (eq. 19; the denominator stays positive)
        context = linear_attention(q_num, k_num, v, qf, kf, causal);
    }
    return output(merge_heads(context));  // [B,T,C]
}

void SelfAttention::collect(std::vector<NamedParameter>& params) const {
    query.collect(params);
    key.collect(params);
    value.collect(params);
    output.collect(params);
}

}  // namespace rf
