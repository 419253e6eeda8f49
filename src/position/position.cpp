// Stage 4 — position: config validation (run once, at config load), the factory, the RoPE
// scheme, and the socket the RoPE lab plugs into (rope_lab_socket.hpp).
//
// Legend: C hidden size, H heads, D = C / H head size, r rotary dims.
#include "position/position.hpp"
#include "position/rope_angles.hpp"

#include <cmath>
#include <stdexcept>
#include <utility>

#include "position/rope_lab_socket.hpp"
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
    // The RoPE lab's rules (position.layer_schemes, RoPE's keys on a model where no layer
    // rotates, p-RoPE, xPos, learned frequencies), or, without the lab, a key that needs it.
    if (const RopeLab* lab = rope_lab(position_lab_key(c))) lab->validate(c, num_layers, D);
    if (c.scheme != PositionKind::rope) return;
    const RopeOptions options = rope_options_from_config(c, D);
    validate_rope_options(options);
    // float32: the angles train and read with (bf16 has float32's exponent range)
    validate_rope_angles(options.rotary_dims, static_cast<double>(c.max_positions), c.base,
                         c.ntk_factor, c.interpolation_factor, kFloat32Angles);
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
            if (config.xpos || config.learned_frequencies)  // the RoPE lab's variants
                return rope_lab(config.xpos ? "position.xpos" : "position.learned_frequencies")
                    ->make_variant(config, hidden / num_heads);
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
    if (table_.amplitude() == 1.0) return table_;
    if (!value_table_) {
        RopeOptions o = table_.options();
        o.yarn_attention_factor = 1.0;
        value_table_.emplace(o);
    }
    return *value_table_;
}

std::vector<bool> layers_with_position(const PositionConfig& config, size_t num_layers) {
    if (config.layer_schemes.empty()) return std::vector<bool>(num_layers, true);
    return rope_lab("position.layer_schemes")->parse_layer_schemes(config, num_layers);
}

// ---- the RoPE lab's socket (rope_lab_socket.hpp) ----------------------------------------
static const RopeLab* g_rope_lab = nullptr;

void plug_in_rope_lab(const RopeLab* lab) { g_rope_lab = lab; }

const char* rope_table_lab_key(const RopeConfig& c) {
    if (c.scaling != RopeScaling::none) return "position.scaling";
    if (c.scaling_factor != 1.0) return "position.scaling_factor";
    if (c.interpolation_factor != 1.0) return "position.interpolation_factor";
    if (c.ntk_factor != 1.0) return "position.ntk_factor";
    if (c.rope_p != 1.0) return "position.rope_p";
    return nullptr;
}

const char* position_lab_key(const PositionConfig& c) {
    if (const char* key = rope_table_lab_key(c)) return key;
    if (c.xpos) return "position.xpos";
    if (c.learned_frequencies) return "position.learned_frequencies";
    if (!c.layer_schemes.empty()) return "position.layer_schemes";
    return nullptr;
}

const RopeLab* rope_lab(const char* key) {
    if (key && !g_rope_lab)
        fail(std::string(key) +
             " needs the RoPE lab (src/ropelab/), which this program does not plug in "
             "(plug_in_rope_lab); leave it at its default for the paper's RoPE");
    return g_rope_lab;
}

}  // namespace rf
