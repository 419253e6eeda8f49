// Stage 4 — position: RoPE's options from the config, and their rules (declared in
// position.hpp). The rules run once, at config load (validate_position_config, called by
// config/validate.cpp); RopeTable and the schemes only assert them.
//
// Legend: D head size, r rotary dims.
#include <cmath>
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
