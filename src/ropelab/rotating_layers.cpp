// Room — ropelab: the layers RoPE turns, and the rule for RoPE's keys (see
// rotating_layers.hpp).
#include "ropelab/rotating_layers.hpp"

#include <algorithm>
#include <stdexcept>

#include "ropelab/layer_schemes.hpp"
#include "tensor/format.hpp"

namespace rf {

std::vector<size_t> rope_turning_pairs(const PositionConfig& config, size_t num_layers,
                                       size_t head_dim) {
    const std::vector<bool> with_position = layers_with_position(config, num_layers);
    size_t pairs = 0;  // in a RoPE layer: r/2, of which p-RoPE keeps round(p · r/2) turning
    if (config.scheme == PositionKind::rope)
        pairs = rope_p_rotated_pairs(config.rope_p,
                                     rope_rotary_dims(config.rotary_fraction, head_dim) / 2);
    std::vector<size_t> turning(num_layers, 0);
    for (size_t layer = 0; layer < num_layers; ++layer)
        if (with_position[layer]) turning[layer] = pairs;
    return turning;
}

std::string why_no_layer_rotates(const PositionConfig& config, size_t num_layers, size_t head_dim) {
    if (config.scheme != PositionKind::rope)
        return "position.scheme = " + std::string(enum_name(config.scheme)) + " has no RoPE";
    const std::vector<size_t> turning = rope_turning_pairs(config, num_layers, head_dim);
    if (std::any_of(turning.begin(), turning.end(), [](size_t pairs) { return pairs > 0; }))
        return "";
    const std::vector<bool> with_position = layers_with_position(config, num_layers);
    if (std::none_of(with_position.begin(), with_position.end(), [](bool b) { return b; }))
        return "every layer in position.layer_schemes = \"" + config.layer_schemes + "\" is none";
    return "position.rope_p = " + format_shortest(config.rope_p) + " turns none of the " +
           std::to_string(head_dim / 2) + " pairs of the head";
}

namespace {

// A key that only RoPE reads: its name, whether the config moved it off its default, and what
// it does. Words (enums, flags) are shown with their value; numbers name their default.
struct RopeKey {
    std::string name;      // "position.scaling"
    bool changed;          // its value is not the default
    std::string shown;     // " = yarn" for a word; "" for a number
    std::string fallback;  // the default, as a config file writes it: "none", "1"
    const char* does;      // "rescales RoPE's angles"
};

RopeKey number(const char* key, double value, double fallback, const char* does) {
    return {std::string("position.") + key, value != fallback, "", format_shortest(fallback), does};
}

RopeKey word(const char* key, const std::string& value, const std::string& fallback,
             const char* does) {
    return {std::string("position.") + key, value != fallback, " = " + value, fallback, does};
}

std::string flag(bool value) { return value ? "true" : "false"; }

// Every [position] key that acts only through RoPE (position.hpp), in the table's order.
std::vector<RopeKey> rope_only_keys(const PositionConfig& c) {
    const PositionConfig d;  // the defaults
    const char* rescales = "rescales RoPE's angles";
    std::vector<RopeKey> keys = {
        word("pairing", enum_name(c.pairing), enum_name(d.pairing),
             "chooses which dims RoPE turns together"),
        word("rope_placement", enum_name(c.rope_placement), enum_name(d.rope_placement),
             "chooses where RoPE enters linear attention")};
    if (c.scheme != PositionKind::sinusoidal)  // sinusoidal's table reads the base too
        keys.push_back(number("base", c.base, d.base, "sets RoPE's frequencies base^(-2i/D)"));
    keys.push_back(number("rotary_fraction", c.rotary_fraction, d.rotary_fraction,
                          "chooses how many dims RoPE turns"));
    keys.push_back(number("rope_p", c.rope_p, d.rope_p, "chooses which of RoPE's pairs turn"));
    keys.push_back(word("rotate_values", flag(c.rotate_values), flag(d.rotate_values),
                        "turns v by RoPE's angles too"));
    keys.push_back(
        number("interpolation_factor", c.interpolation_factor, d.interpolation_factor, rescales));
    keys.push_back(number("ntk_factor", c.ntk_factor, d.ntk_factor, rescales));
    keys.push_back(word("scaling", enum_name(c.scaling), enum_name(d.scaling), rescales));
    keys.push_back(number("scaling_factor", c.scaling_factor, d.scaling_factor, rescales));
    keys.push_back(number("original_max_positions", double(c.original_max_positions),
                          double(d.original_max_positions), rescales));
    keys.push_back(number("yarn_beta_fast", c.yarn_beta_fast, d.yarn_beta_fast, rescales));
    keys.push_back(number("yarn_beta_slow", c.yarn_beta_slow, d.yarn_beta_slow, rescales));
    keys.push_back(number("yarn_attention_factor", c.yarn_attention_factor, d.yarn_attention_factor,
                          rescales));
    keys.push_back(number("low_freq_factor", c.low_freq_factor, d.low_freq_factor, rescales));
    keys.push_back(number("high_freq_factor", c.high_freq_factor, d.high_freq_factor, rescales));
    keys.push_back(word("xpos", flag(c.xpos), flag(d.xpos), "is a RoPE variant"));
    keys.push_back(
        number("xpos_gamma", c.xpos_gamma, d.xpos_gamma, "shapes xPos's decay, a RoPE variant"));
    keys.push_back(number("xpos_scale_base", c.xpos_scale_base, d.xpos_scale_base,
                          "shapes xPos's decay, a RoPE variant"));
    keys.push_back(word("learned_frequencies", flag(c.learned_frequencies),
                        flag(d.learned_frequencies), "is a RoPE variant"));
    return keys;
}

}  // namespace

void refuse_rope_keys_without_rotation(const PositionConfig& config, size_t num_layers,
                                       size_t head_dim) {
    const std::string why = why_no_layer_rotates(config, num_layers, head_dim);
    if (why.empty()) return;
    // position.rope_p = 0 on a RoPE scheme is the reason itself (NoPE scores with RoPE's
    // parameters), not a key without effect.
    const bool rope_p_is_why = why.rfind("position.rope_p", 0) == 0;
    for (const RopeKey& key : rope_only_keys(config)) {
        if (!key.changed || (rope_p_is_why && key.name == "position.rope_p")) continue;
        throw std::invalid_argument(key.name + key.shown + " " + key.does + ", but " + why +
                                    ", so no layer rotates and it would change nothing; set it "
                                    "back to its default, " +
                                    key.name + " = " + key.fallback);
    }
}

}  // namespace rf
