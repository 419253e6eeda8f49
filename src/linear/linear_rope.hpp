// Room — linear: where RoPE enters linear attention (position.rope_placement; RoFormer §3.3
// eq. 19; docs/linear_attention.md §4). Softmax attention has one place for RoPE, the position
// scheme's rotate(); linear attention has two, and this file owns both:
//
// Legend: B batch, H heads, T tokens, D head size, F feature size (D for elu1, M for favor),
//         r_F rotary features; m = offset + t the position of token t.
//   before_feature_map   q, k (, v) ← R_m q, R_m k (, R_m v)   [B,H,T,D]   the scheme's rotate()
//                        then φ(R_m q), φ(R_n k) in numerator and denominator alike
//   eq19_features        φq_num, φk_num ← R_m φ(q), R_m φ(k)   [B,H,T,F]   an F-feature table
//                        (v ← R_m v with the head's value table when rotate_values); the
//                        denominator keeps the unrotated φ(q), φ(k), so it stays positive
// Only position.scheme = rope acts (RopePosition; xpos and learned_frequencies are refused with
// linear attention by validate_model_options); every other scheme leaves q, k, v and the
// features as they are.
#pragma once

#include <optional>

#include "position/position.hpp"
#include "position/rope.hpp"

namespace rf {

// RoPE on linear attention's features φ:[..., F] (eq. 19): the head table's options with
// head_dim = F and r_F = round(rotary_fraction·F) rotary features, which must be even and ≥ 2
// (throws std::invalid_argument naming position.rotary_fraction and model.random_features).
RopeOptions rope_feature_options(const RopeOptions& head, double rotary_fraction, size_t F);

class LinearRope {
public:
    // head_dim D, feature_size F. With position.scheme = rope and the eq19_features placement
    // the F-feature table is built now, so a bad F fails at model construction.
    LinearRope(const PositionConfig& config, size_t head_dim, size_t feature_size);
    RopePlacement placement() const { return placement_; }

    // before_feature_map: q, k (, v) ← position.rotate(q, k, v, offset), the head table's
    // rotation before φ (the Performer figure's code). eq19_features: nothing.
    void rotate_before_feature_map(PositionScheme& position, Tensor& q, Tensor& k, Tensor& v,
                                   size_t offset = 0);
    // eq19_features: φq, φk:[B,H,T,F] ← rope(·, feature_table(), offset), the numerator's
    // features (the caller keeps the unrotated ones for the denominator); v:[B,H,T,D] ←
    // rope(v, value_table(), offset) when rotate_values. before_feature_map: nothing.
    void rotate_features(PositionScheme& position, Tensor& q_features, Tensor& k_features,
                         Tensor& v, size_t offset = 0);
    // The F-feature table (rope with eq19_features only; throws std::logic_error otherwise).
    RopeTable& feature_table();

private:
    RopePlacement placement_;
    bool rotate_values_;
    std::optional<RopeTable> feature_table_;  // rope with eq19_features only
};

}  // namespace rf
