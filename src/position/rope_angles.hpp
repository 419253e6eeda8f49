// Stage 4 — position: the one rule on RoPE's angle range — which bases, NTK and interpolation
// factors keep every angle finite and non-vanishing in a number type. Used by the config check
// (validate_position_config: train and every command that reads a config), rope-precision
// (experiments/rope_precision.hpp), rope-decay and the lab (ropelab/rope_decay.hpp).
#pragma once

#include <cstddef>

namespace rf {

// With E = (r − 2)/r, the slowest pair's θ = B^(−E), B = base·ntk^(1/E), and the
// positions 1 … largest divided by the interpolation factor s, every angle m·θ_i/s must stay
//   ≤ max_angle (finite: half the number type's largest, so the product never reaches inf) and
//   ≥ min_angle at m = 1 (non-vanishing: the type's smallest normal number),
// which holds for lo ≤ base ≤ hi. r = 2 (θ_0 = 1) bounds no base: lo = 0, hi = ∞. lo > hi when
// the factors alone break a bound (largest/s > max_angle or 1/s < min_angle).
struct RopeAngleLimits {
    double max_angle, min_angle;
    const char* type_name;
};
inline constexpr RopeAngleLimits kFloat32Angles{0x1p127, 0x1p-126, "float32"};
inline constexpr RopeAngleLimits kDoubleAngles{0x1p1023, 0x1p-1022, "double"};
struct RopeBaseRange {
    double lo = 0, hi = 0;
};
RopeBaseRange rope_angle_base_range(size_t rotary_dims, double largest, double ntk_factor,
                                    double interpolation_factor, const RopeAngleLimits& limits);
// The same rule as a one-line refusal naming the config keys (position.base, …): throws
// std::invalid_argument when a base, NTK or interpolation factor makes an angle overflow or vanish.
void validate_rope_angles(size_t rotary_dims, double largest, double base, double ntk_factor,
                          double interpolation_factor, const RopeAngleLimits& limits);

}  // namespace rf
