// Stage 4 — position: the one rule on RoPE's angle range (see rope_angles.hpp).
#include "position/rope_angles.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "tensor/format.hpp"

namespace rf {

RopeBaseRange rope_angle_base_range(size_t rotary_dims, double largest, double ntk_factor,
                                    double interpolation_factor, const RopeAngleLimits& limits) {
    const double s = interpolation_factor, m = std::max(largest, 1.0);
    RopeBaseRange range{0.0, std::numeric_limits<double>::infinity()};
    if (m / s > limits.max_angle || 1.0 / s < limits.min_angle) return {1.0, 0.0};  // none
    if (rotary_dims <= 2) return range;
    const double E = static_cast<double>(rotary_dims - 2) / static_cast<double>(rotary_dims);
    // largest·B^(−E)/s ≤ max_angle  ⇔  base ≥ (largest / (max_angle·s·ntk))^(1/E)
    range.lo = std::pow(m / (limits.max_angle * s * ntk_factor), 1.0 / E);
    // B^(−E)/s ≥ min_angle  ⇔  base ≤ (min_angle·s·ntk)^(−1/E)
    range.hi = std::pow(limits.min_angle * s * ntk_factor, -1.0 / E);
    return range;
}

void validate_rope_angles(size_t rotary_dims, double largest, double base, double ntk_factor,
                          double interpolation_factor, const RopeAngleLimits& limits) {
    const RopeBaseRange range =
        rope_angle_base_range(rotary_dims, largest, ntk_factor, interpolation_factor, limits);
    if (range.lo <= base && base <= range.hi) return;
    const std::string where = ", for " + std::to_string(rotary_dims) +
                              " rotary dims and positions up to " +
                              format_printf("%.15g", std::max(largest, 1.0));
    const std::string s = format_shortest(interpolation_factor);
    if (range.lo > range.hi)  // the interpolation factor alone
        throw std::invalid_argument(
            "position.interpolation_factor = " + s + " makes RoPE's angles " +
            (std::max(largest, 1.0) / interpolation_factor > limits.max_angle
                 ? "overflow " + std::string(limits.type_name) + " (position/factor past " +
                       format_printf("%.3g", limits.max_angle) + ")"
                 : "vanish in " + std::string(limits.type_name) + " (1/factor below " +
                       format_printf("%.3g", limits.min_angle) + ")") +
            where + "; give a factor near 1 (e.g. 2 to squeeze twice the trained length)");
    const bool low = base < range.lo;
    const bool ntk = ntk_factor != 1.0, interpolated = interpolation_factor != 1.0;
    const std::string knobs =
        "position.base = " + format_shortest(base) +
        (ntk ? " with position.ntk_factor = " + format_shortest(ntk_factor) : "") +
        (interpolated
             ? std::string(ntk ? " and" : " with") + " position.interpolation_factor = " + s
             : "");
    // The fix: the factor's range at this base where an NTK factor is given (the base is
    // multiplied by ntk^(1/E), so ntk may range over (base range / base)^E), else the base's.
    std::string fix;
    if (ntk && rotary_dims > 2) {
        const double E = static_cast<double>(rotary_dims - 2) / static_cast<double>(rotary_dims);
        const RopeBaseRange plain =
            rope_angle_base_range(rotary_dims, largest, 1.0, interpolation_factor, limits);
        fix = "give position.ntk_factor from " +
              format_printf("%.3g", std::pow(plain.lo / base, E)) + " to " +
              format_printf("%.3g", std::pow(plain.hi / base, E)) + " (1 = no scaling)";
    } else {
        fix = "give position.base from " + format_printf("%.3g", range.lo) + " to " +
              format_printf("%.3g", range.hi) + " (the paper uses 10000)";
    }
    throw std::invalid_argument(
        knobs +
        (low ? " makes RoPE's slowest pair turn so fast that its angles overflow "
             : " makes RoPE's slowest pair turn by less than the smallest normal "
               "number of ") +
        limits.type_name + (low ? " (inf, every loss nan)" : " (it would not turn at all)") +
        where + "; " + fix);
}

}  // namespace rf
