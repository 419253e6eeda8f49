// Room — linear: linear attention's kernels (see linear_kernels.hpp for the shapes).
//
// Legend: B batch, T tokens, C hidden, H heads, D = C/H head size, F feature size, M random
//         features, W:[M, D] the FAVOR projection of one layer.
#include "linear/linear_kernels.hpp"

#include <algorithm>
#include <stdexcept>

#include "linear/linear_attention.hpp"
#include "model/attention.hpp"

namespace rf {

// Causal FAVOR keys are not stabilised (see self_attention below); their exponent is bounded
// by completing the square, w·x̃ − |x̃|²/2 = |w|²/2 − |x̃ − w|²/2 ≤ |w|²/2, whatever x is.
// Float32's exp overflows past ≈ 88.7, so every row of W must have |w|²/2 below this.
static constexpr double kMaxKeyExponent = 85.0;

// Throws std::invalid_argument naming the fix when a row of W:[M, D] has |w|²/2 ≥ the bound.
static void check_causal_key_exponent(const Tensor& projection) {
    const size_t M = projection.size(0), D = projection.size(1);
    double largest = 0.0;  // max_j |w_j|²/2
    for (size_t j = 0; j < M; ++j) {
        double sq = 0.0;
        for (size_t d = 0; d < D; ++d) {
            const double w = projection.data()[j * D + d];
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

LinearAttentionKernels::LinearAttentionKernels(std::shared_ptr<const SwappableOps> base,
                                               const ModelConfig& config,
                                               const PositionConfig& position_config,
                                               uint64_t init_seed)
    : base_(std::move(base)),
      favor_(config.feature_map == FeatureMap::favor),
      rope_(position_config, attention_head_size(config.hidden, config.num_heads),
            attention_feature_size(config)) {
    if (!favor_) return;
    const size_t D = attention_head_size(config.hidden, config.num_heads);
    Rng feature_rng(init_seed ^ 0x3C6EF372FE94F82BULL);
    for (size_t i = 0; i < config.num_layers; ++i) {
        Tensor projection = orthogonal_random_features(config.random_features, D, feature_rng);
        const std::string name =
            "roformer.encoder.layer." + std::to_string(i) + ".attention.self.feature_projection";
        projection.set_name(name);
        if (config.causal) check_causal_key_exponent(projection);
        feature_projection_index_[name] = i;
        feature_projections_.push_back(projection);
    }
}

const Tensor& LinearAttentionKernels::feature_projection(const SelfAttention& attention) const {
    const std::string& query = attention.query.weight.name();  // "<prefix>.self.query.weight"
    const std::string suffix = ".query.weight";
    const bool named = query.size() > suffix.size() &&
                       query.compare(query.size() - suffix.size(), suffix.size(), suffix) == 0;
    const auto it = feature_projection_index_.find(
        named ? query.substr(0, query.size() - suffix.size()) + ".feature_projection" : "");
    if (it == feature_projection_index_.end())
        throw std::logic_error("internal: no FAVOR projection for the attention whose query is '" +
                               query + "'; these kernels serve only the model that made them");
    return feature_projections_[it->second];
}

Tensor LinearAttentionKernels::self_attention(const SelfAttention& attention, const Tensor& x,
                                              PositionScheme& position, bool, Rng&) const {
    SelfAttention::Heads h = attention.project(x);  // q, k, v:[B,H,T,D]
    Tensor& q = h.q;
    Tensor& k = h.k;
    Tensor& v = h.v;
    const bool causal = attention.causal;
    // φ:[B,H,T,D] → [B,H,T,F]. FAVOR's stabiliser c cancels in the ratio. Queries: one c per
    // row (depends on q_m only). Keys, bidirectional: one c per (batch, head) slice. Keys,
    // causal: none — a c over the slice would depend on future keys (cancelling exactly in
    // real arithmetic, not in float32 rounding); the bound above keeps exp finite instead.
    rope_.rotate_before_feature_map(position, q, k, v);  // RoPE's other placement
    Tensor qf, kf;
    if (favor_) {
        const Tensor& W = feature_projection(attention);
        qf = favor_features(q, W, true);
        kf = favor_features(k, W, false, !causal);
    } else {
        qf = elu_plus_one(q);
        kf = elu_plus_one(k);
    }
    Tensor q_num = qf, k_num = kf;                 // numerator features: RoPE rotates these only
    rope_.rotate_features(position, q_num, k_num, v);  // (eq. 19; the denominator stays positive)
    const Tensor context = linear_attention(q_num, k_num, v, qf, kf, causal);  // [B,H,T,D]
    return attention.output(merge_heads(context));                          // [B,T,C]
}

}  // namespace rf
