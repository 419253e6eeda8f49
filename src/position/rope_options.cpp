// Stage 4 — position: RoPE's options from the config, and their rules (declared in
// position.hpp). The rules run once, at config load (validate_position_config, called by
// config/validate.cpp); RopeTable and the schemes only assert them.
//
// Legend: D head size, r rotary dims.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "position/position.hpp"
#include "position/rope.hpp"
#include "position/rope_lab_socket.hpp"
#include "tensor/format.hpp"

namespace rf {

RopePairing parse_rope_pairing(const std::string& name) {
    return parse_enum<RopePairing>(name, "position.pairing");
}

const char* rope_pairing_name(RopePairing pairing) { return enum_name(pairing); }

size_t rope_rotary_dims(double rotary_fraction, size_t head_dim) {
    return static_cast<size_t>(std::llround(rotary_fraction * static_cast<double>(head_dim)));
}

size_t rope_p_rotated_pairs(double rope_p, size_t pairs) {
    return static_cast<size_t>(std::llround(rope_p * static_cast<double>(pairs)));
}

RopeOptions rope_options_from_config(const PositionConfig& config, size_t head_dim) {
    RopeOptions o;
    static_cast<RopeConfig&>(o) = config;  // the knobs, all at once
    o.head_dim = head_dim;
    o.rotary_dims = rope_rotary_dims(config.rotary_fraction, head_dim);
    return o;
}

// ---- the rules for RoPE's knobs, written once ------------------------------------------
void validate_rope_knobs(double base, double interpolation_factor, double ntk_factor) {
    if (!(base > 0.0))
        throw std::invalid_argument("position.base = " + format_printf("%g", base) +
                                    " must be > 0 (the paper uses 10000)");
    if (!(interpolation_factor > 0.0))
        throw std::invalid_argument(
            "position.interpolation_factor = " + format_printf("%g", interpolation_factor) +
            " must be > 0 (1 = no interpolation, 2 = squeeze twice the "
            "trained length)");
    if (!(ntk_factor > 0.0))
        throw std::invalid_argument("position.ntk_factor = " + format_printf("%g", ntk_factor) +
                                    " must be > 0 (1 = no base scaling)");
}

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

void validate_rope_options(const RopeOptions& o) {
    const std::string D = std::to_string(o.head_dim), r = std::to_string(o.rotary_dims);
    if (o.head_dim == 0 || o.head_dim % 2 != 0)
        throw std::invalid_argument(
            "position.scheme = rope needs an even head size, got D = " + D +
            "; choose model.hidden and model.num_heads with an even quotient");
    if (o.rotary_dims < 2 || o.rotary_dims % 2 != 0 || o.rotary_dims > o.head_dim)
        throw std::invalid_argument("RoPE rotary dims r = " + r + " must be even and in [2, " + D +
                                    "]; fix position.rotary_fraction");
    validate_rope_knobs(o.base, o.interpolation_factor, o.ntk_factor);
    if (o.ntk_factor != 1.0 && o.rotary_dims == 2)
        throw std::invalid_argument("position.ntk_factor = " + format_printf("%g", o.ntk_factor) +
                                    " needs at least 4 rotary dims (base·factor^(r/(r-2)) is "
                                    "undefined for r = 2); raise position.rotary_fraction or set "
                                    "position.ntk_factor = 1");
    // position.scaling's rules are the RoPE lab's (without it, a scaling key is refused)
    if (const RopeLab* lab = rope_lab(rope_table_lab_key(o))) lab->validate_scaling(o);
}

}  // namespace rf
