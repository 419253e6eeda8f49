// Room — linear: RoPE's two placements in linear attention (see linear_rope.hpp for the shapes).
//
// Legend: D head size, F feature size (D for elu1, M random features for favor), r_F rotary
//         features.
#include "linear/linear_rope.hpp"

#include <stdexcept>
#include <string>

#include "position/schemes.hpp"
#include "tensor/format.hpp"

namespace rf {

RopeOptions rope_feature_options(const RopeOptions& head, double rotary_fraction, size_t F) {
    const size_t r = rope_rotary_dims(rotary_fraction, F);
    if (F == 0 || r < 2 || r % 2 != 0)
        throw std::invalid_argument(
            "position.rotary_fraction = " + format_printf("%g", rotary_fraction) + " rotates " +
            std::to_string(r) + " of the " + std::to_string(F) +
            " linear-attention features (F = head size for elu1, model.random_features for "
            "favor); it must be an even number ≥ 2: change model.random_features or "
            "position.rotary_fraction");
    RopeOptions o = head;  // same pairing, base, interpolation, NTK factors and scaling
    o.head_dim = F;
    o.rotary_dims = r;
    // YaRN's temperature sharpens a softmax; here it would scale the numerator's features
    // only, so the feature table keeps its angles but not the factor.
    if (o.scaling == RopeScaling::yarn) o.yarn_attention_factor = 1.0;
    return o;
}

LinearRope::LinearRope(const PositionConfig& config, size_t head_dim, size_t feature_size)
    : placement_(config.rope_placement), rotate_values_(config.rotate_values) {
    if (config.scheme == PositionKind::rope && placement_ == RopePlacement::eq19_features)
        feature_table_.emplace(rope_feature_options(rope_options_from_config(config, head_dim),
                                                    config.rotary_fraction, feature_size));
}

RopeTable& LinearRope::feature_table() {
    if (!feature_table_)
        throw std::logic_error(
            "internal: LinearRope has a feature table only with position.scheme = rope and "
            "position.rope_placement = eq19_features");
    return *feature_table_;
}

// q, k:[B,H,T,D] → R_m q, R_m k before linear attention's φ (v too when rotate_values): the
// placement of the Performer figure's code, φ(R_m q_m)·φ(R_n k_n) in numerator and denominator.
void LinearRope::rotate_before_feature_map(PositionScheme& position, Tensor& q, Tensor& k,
                                           Tensor& v, size_t offset) {
    if (placement_ != RopePlacement::before_feature_map) return;
    if (auto* rope_position = dynamic_cast<RopePosition*>(&position))
        rope_position->rotate(q, k, v, offset);
}

// φq, φk:[B,H,T,F] → R_m φq, R_m φk with the F-feature table (eq. 19's numerator);
// v:[B,H,T,D] → R_m v with the head's angles (value_table) when rotate_values.
void LinearRope::rotate_features(PositionScheme& position, Tensor& q_features,
                                 Tensor& k_features, Tensor& v, size_t offset) {
    auto* rope_position = dynamic_cast<RopePosition*>(&position);
    if (placement_ != RopePlacement::eq19_features || !rope_position || !feature_table_) return;
    if (q_features.dim() < 2 || q_features.shape() != k_features.shape())
        throw std::invalid_argument("rotate_features: φ(q) " + shape_str(q_features.shape()) +
                                    " and φ(k) " + shape_str(k_features.shape()) +
                                    " must share one shape [..., T, F]");
    q_features = rope(q_features, *feature_table_, offset);
    k_features = rope(k_features, *feature_table_, offset);
    if (rotate_values_) v = rope(v, rope_position->value_table(), offset);
}

}  // namespace rf
