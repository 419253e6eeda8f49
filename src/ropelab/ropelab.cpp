// Room — ropelab: the RoPE lab plugged into the core's socket (see ropelab.hpp), and the rules
// of the variants trained in.
#include "ropelab/ropelab.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "ropelab/layer_schemes.hpp"
#include "ropelab/rope_scaling.hpp"
#include "ropelab/rope_variants.hpp"
#include "ropelab/rotating_layers.hpp"
#include "tensor/format.hpp"

namespace rf {

namespace {

void fail(const std::string& message) { throw std::invalid_argument(message); }

// p-RoPE (position.rope_p) on a RoPE scheme: the whole head's ladder, fixed θ_i, and a
// whole number of rotated pairs. It composes with the scaling keys (they rescale the pairs
// that still turn) and with rotate_values (v turns by the same table).
void validate_rope_p(const PositionConfig& c) {
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
void validate_rope_variants(const PositionConfig& c) {
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

class Lab final : public RopeLab {
public:
    void validate(const PositionConfig& c, size_t num_layers, size_t head_dim) const override {
        parse_layer_schemes(c, num_layers);  // position.layer_schemes, read once here
        // The one rule for RoPE's keys, on the resolved model (rotating_layers.hpp).
        refuse_rope_keys_without_rotation(c, num_layers, head_dim);
        if (c.scheme == PositionKind::rope) validate_rope_variants(c);
    }
    void validate_scaling(const RopeOptions& options) const override {
        validate_rope_scaling(options);
    }
    void adjust_frequencies(const RopeOptions& options, size_t length,
                            RopeFrequencies& f) const override {
        adjust_rope_frequencies(options, length, f);
    }
    bool table_for_length(const RopeOptions& options, size_t length) const override {
        return dynamic_ntk_grows(options, length);
    }
    std::unique_ptr<PositionScheme> make_variant(const PositionConfig& c,
                                                 size_t head_dim) const override {
        if (c.xpos)
            return std::make_unique<XposPosition>(rope_options_from_config(c, head_dim),
                                                  c.xpos_gamma, c.xpos_scale_base);
        if (c.learned_frequencies)
            return std::make_unique<LearnedFrequencyRope>(rope_options_from_config(c, head_dim));
        throw std::logic_error("internal: make_variant of a config with no RoPE variant");
    }
    std::vector<bool> parse_layer_schemes(const PositionConfig& c,
                                          size_t num_layers) const override {
        return rf::parse_layer_schemes(c, num_layers);
    }
};

}  // namespace

const RopeLab& rope_lab_room() {
    static const Lab lab;
    return lab;
}

}  // namespace rf
