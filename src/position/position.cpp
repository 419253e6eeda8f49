// Stage 4 — position: config validation (run once, at config load), the factory, and the RoPE
// scheme.
//
// Legend: C hidden size, H heads, D = C / H head size, r rotary dims.
#include "position/position.hpp"

#include <cmath>
#include <stdexcept>
#include <utility>

#include "position/layer_schemes.hpp"
#include "position/rope_scaling.hpp"
#include "position/rope_variants.hpp"
#include "position/rotating_layers.hpp"
#include "position/schemes.hpp"
#include "tensor/format.hpp"

namespace rf {

static void fail(const std::string& message) { throw std::invalid_argument(message); }

size_t attention_head_size(size_t hidden, size_t num_heads) {
    if (num_heads == 0 || hidden % num_heads != 0)
        fail("model.hidden = " + std::to_string(hidden) +
             " must be divisible by model.num_heads = " + std::to_string(num_heads) +
             " (head size D = hidden / num_heads)");
    return hidden / num_heads;
}

// r = rotary_fraction · D and p-RoPE's p · D/2 turning pairs must be whole (and r even).
static void validate_rope_geometry(const PositionConfig& c, size_t D) {
    const double exact = c.rotary_fraction * static_cast<double>(D);
    const size_t r = rope_rotary_dims(c.rotary_fraction, D);
    if (D % 2 == 0 && (std::abs(exact - static_cast<double>(r)) > 1e-9 || r < 2 || r % 2 != 0))
        fail("position.rotary_fraction = " + format_shortest(c.rotary_fraction) + " gives " +
             format_shortest(exact) + " rotary dims for head size " + std::to_string(D) +
             "; it must give an even whole number from 2 to " + std::to_string(D) +
             " (e.g. 0.5 → " + std::to_string(D / 2) + ", 1 → " + std::to_string(D) + ")");
    const size_t half = D / 2;
    const double pairs = c.rope_p * static_cast<double>(half);
    if (D % 2 == 0 && std::abs(pairs - std::round(pairs)) > 1e-9)
        fail("position.rope_p = " + format_shortest(c.rope_p) + " turns " + format_shortest(pairs) +
             " of the " + std::to_string(half) + " pairs of head size " + std::to_string(D) +
             "; it must turn a whole number k of them, rope_p = k/" + std::to_string(half) +
             ": the nearest is position.rope_p = " +
             format_shortest(std::round(pairs) / static_cast<double>(half)) + " (" +
             std::to_string(std::llround(pairs)) + " pairs)");
}

// p-RoPE (position.rope_p) on a RoPE scheme: the whole head's ladder, fixed θ_i, and a
// whole number of rotated pairs. It composes with the scaling keys (they rescale the pairs
// that still turn) and with rotate_values (v turns by the same table).
static void validate_rope_p(const PositionConfig& c) {
    if (c.rope_p == 1.0) return;
    const std::string p = "position.rope_p = " + format_shortest(c.rope_p);
    if (c.rotary_fraction != 1.0)
        fail(p + " keeps the whole head's ladder base^(-2i/D), but position.rotary_fraction = " +
             format_printf("%g", c.rotary_fraction) +
             " re-spaces it over fewer dims; use one of the two (docs/rope.md §8)");
    if (c.learned_frequencies || c.xpos)
        fail(p + " fixes the slow pairs at theta = 0, which position." +
             (c.xpos ? "xpos would still decay" : "learned_frequencies would train away") +
             "; set position." + (c.xpos ? "xpos" : "learned_frequencies") +
             " = false or position.rope_p = 1");
}

// xpos and learned_frequencies on a RoPE scheme: not with each other, nor where they cannot
// mean anything. On a model where no layer rotates every RoPE key is refused before this, by
// refuse_rope_keys_without_rotation (rotating_layers.hpp); the scaling's own knobs are checked
// in validate_rope_scaling.
static void validate_rope_variants(const PositionConfig& c) {
    validate_rope_p(c);
    if (c.xpos && c.learned_frequencies)
        fail("position.xpos and position.learned_frequencies are both true; choose one");
    if ((c.xpos || c.learned_frequencies) && c.rotate_values)
        fail(std::string(c.xpos ? "position.xpos" : "position.learned_frequencies") +
             " = true does not rotate values; set position.rotate_values = false");
    if (c.learned_frequencies &&
        (c.scaling != RopeScaling::none || c.interpolation_factor != 1.0 || c.ntk_factor != 1.0))
        fail(
            "position.learned_frequencies = true has no fixed table to rescale; set "
            "position.scaling = none, position.interpolation_factor = 1 and "
            "position.ntk_factor = 1");
    if (c.xpos && !(c.xpos_gamma > 0.0))
        fail("position.xpos_gamma = " + format_printf("%g", c.xpos_gamma) +
             " must be > 0 (the paper's 0.4)");
    if (c.xpos && !(c.xpos_scale_base > 0.0))
        fail("position.xpos_scale_base = " + format_printf("%g", c.xpos_scale_base) +
             " must be > 0 (the paper's 512)");
}

// The checks that need the config itself; everything a RoPE table needs is checked by
// validate_rope_knobs / validate_rope_options (rope_options.cpp). Called once, at config load.
// Numbers are shown in their shortest round-trip form: a value refused for not being 0.5 must
// not read "0.5" (format_shortest, tensor/format.hpp).
void validate_position_config(const PositionConfig& c, size_t hidden, size_t num_heads,
                              size_t num_layers) {
    validate_rope_knobs(c.base, c.interpolation_factor, c.ntk_factor);  // base: sinusoidal too
    if (!(c.rotary_fraction > 0.0 && c.rotary_fraction <= 1.0))
        fail("position.rotary_fraction = " + format_shortest(c.rotary_fraction) +
             " must be in (0, 1]; 1 rotates the whole head");
    if (!(c.rope_p >= 0.0 && c.rope_p <= 1.0))
        fail("position.rope_p = " + format_shortest(c.rope_p) +
             " must be in [0, 1]: the fraction of RoPE's pairs that turn (1 = all, 0 = none)");
    if (!(c.sinusoidal_scale >= 0.0))
        fail("position.sinusoidal_scale = " + format_printf("%g", c.sinusoidal_scale) +
             " must be >= 0 (0 = 1/sqrt(hidden), 1 = the raw sin/cos table)");
    if (c.max_positions == 0)
        fail("position.max_positions = 0 must be at least the longest sequence (e.g. 512)");
    const size_t D = attention_head_size(hidden, num_heads);
    if (c.scheme == PositionKind::rope) validate_rope_geometry(c, D);
    layers_with_position(c, num_layers);  // position.layer_schemes, read once here
    // The one rule for RoPE's keys, on the resolved model (rotating_layers.hpp).
    refuse_rope_keys_without_rotation(c, num_layers, D);
    if (c.scheme != PositionKind::rope) return;
    validate_rope_variants(c);
    validate_rope_options(rope_options_from_config(c, D));
}

std::unique_ptr<PositionScheme> make_position_scheme(const PositionConfig& config, size_t hidden,
                                                     size_t num_heads, Rng& init_rng) {
    // validate_position_config ran at config load (config/validate.cpp); here only a guard.
    if (num_heads == 0 || hidden % num_heads != 0)
        throw std::logic_error("internal: make_position_scheme needs a validated config");
    switch (config.scheme) {
        case PositionKind::learned:
            return std::make_unique<LearnedPosition>(config.max_positions, hidden, init_rng);
        case PositionKind::sinusoidal:
            return std::make_unique<SinusoidalPosition>(
                hidden, config.base, sinusoidal_amplitude(config.sinusoidal_scale, hidden));
        case PositionKind::alibi:
            return std::make_unique<AlibiPosition>(num_heads);
        case PositionKind::rope:
            if (config.xpos)
                return std::make_unique<XposPosition>(
                    rope_options_from_config(config, hidden / num_heads), config.xpos_gamma,
                    config.xpos_scale_base);
            if (config.learned_frequencies)
                return std::make_unique<LearnedFrequencyRope>(
                    rope_options_from_config(config, hidden / num_heads));
            return std::make_unique<RopePosition>(
                rope_options_from_config(config, hidden / num_heads), config.rotate_values);
        case PositionKind::none:
            break;
    }
    return std::make_unique<NoPosition>();
}

RopePosition::RopePosition(const RopeOptions& options, bool rotate_values)
    : table_(options), rotate_values_(rotate_values) {}

RopeTable& RopePosition::value_table() {
    if (rope_attention_factor(table_.options()) == 1.0) return table_;
    if (!value_table_) {
        RopeOptions o = table_.options();
        o.yarn_attention_factor = 1.0;
        value_table_.emplace(o);
    }
    return *value_table_;
}

}  // namespace rf
