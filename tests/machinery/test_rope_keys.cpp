// Tests for the one rule for RoPE's keys (src/ropelab/rotating_layers.hpp): decided on the
// resolved model — the scheme of each layer and the pairs that turn — a RoPE key away from its
// default is refused when no layer rotates, for every scheme alike, at load and for every
// --set; where one layer rotates the same keys are accepted. And refusals whose numbers read
// exactly as given.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "error_of.hpp"
#include "hf/hf_mapping.hpp"
#include "ropelab/rotating_layers.hpp"

namespace {

using rf::testing::contains;
using rf::testing::error_of;

// Every RoPE-only key of the [position] table, each moved off its default.
const std::vector<std::string> kRopeKeys = {"position.pairing=half",
                                            "position.rope_placement=before_feature_map",
                                            "position.base=500",
                                            "position.rotary_fraction=0.5",
                                            "position.rope_p=0.5",
                                            "position.rotate_values=true",
                                            "position.interpolation_factor=2",
                                            "position.ntk_factor=2",
                                            "position.scaling=linear",
                                            "position.scaling_factor=2",
                                            "position.original_max_positions=64",
                                            "position.yarn_beta_fast=16",
                                            "position.yarn_beta_slow=2",
                                            "position.yarn_attention_factor=1.1",
                                            "position.low_freq_factor=0.5",
                                            "position.high_freq_factor=3",
                                            "position.xpos=true",
                                            "position.xpos_gamma=0.3",
                                            "position.xpos_scale_base=256",
                                            "position.learned_frequencies=true"};

std::string key_of(const std::string& assignment) {
    return assignment.substr(0, assignment.find('='));
}

// Models in which no layer rotates, each as the overrides that make it (default: 4 layers).
struct NoRotation {
    std::vector<std::string> overrides;
    const char* why;  // the part of the refusal that names the reason
};
const std::vector<NoRotation> kNoRotation = {
    {{"position.scheme=none"}, "position.scheme = none has no RoPE"},
    {{"position.scheme=learned"}, "position.scheme = learned has no RoPE"},
    {{"position.scheme=sinusoidal"}, "position.scheme = sinusoidal has no RoPE"},
    {{"position.scheme=alibi"}, "position.scheme = alibi has no RoPE"},
    {{"position.scheme=alibi", "position.layer_schemes=alibi,none,alibi,none"},
     "position.scheme = alibi has no RoPE"},
    {{"position.layer_schemes=none,none,none,none"},
     "every layer in position.layer_schemes = \"none,none,none,none\" is none"},
    {{"position.rope_p=0"}, "position.rope_p = 0.0 turns none of the 16 pairs of the head"},
};

std::vector<std::string> with(std::vector<std::string> overrides, const std::string& more) {
    overrides.push_back(more);
    return overrides;
}

}  // namespace

TEST_CASE("RoPE keys: each one refused where no layer rotates, whatever the scheme") {
    for (const NoRotation& model : kNoRotation) {
        const std::string reason = model.why;  // a std::string: CAPTURE prints it as text
        CAPTURE(reason);
        CHECK_NOTHROW(rf::load_config(std::nullopt, model.overrides));  // the model itself
        for (const std::string& assignment : kRopeKeys) {
            CAPTURE(assignment);
            const std::string key = key_of(assignment);
            const bool is_the_reason = key == "position.rope_p" && contains(model.why, key);
            const bool sinusoidal_base =  // sinusoidal's table reads the base too
                key == "position.base" && contains(model.why, "sinusoidal");
            const std::vector<std::string> overrides = with(model.overrides, assignment);
            if (is_the_reason || sinusoidal_base) {
                CHECK_NOTHROW(rf::load_config(std::nullopt, overrides));
                continue;
            }
            const std::string message = error_of([&] { rf::load_config(std::nullopt, overrides); });
            CHECK(contains(message, key));
            CAPTURE(message);
            CHECK(contains(message, model.why));
            CHECK(contains(message, "no layer rotates"));
            CHECK(message.find('\n') == std::string::npos);  // one line
        }
    }
}

TEST_CASE("RoPE keys: accepted where one layer of four rotates (the rule reads the model)") {
    // Each valid on a RoPE layer, so the hybrid with one rotating layer takes them all.
    const std::vector<std::vector<std::string>> valid = {
        {"position.pairing=half"},
        {"position.base=500"},
        {"position.rotary_fraction=0.5"},
        {"position.rope_p=0.5"},
        {"position.rotate_values=true"},
        {"position.interpolation_factor=2"},
        {"position.scaling=linear", "position.scaling_factor=2"},
        {"position.learned_frequencies=true"},
        {"position.xpos=true", "train.objective=clm"}};
    for (const std::vector<std::string>& keys : valid) {
        CAPTURE(keys.front());
        std::vector<std::string> overrides = keys;
        overrides.push_back("position.layer_schemes=none,none,rope,none");
        CHECK_NOTHROW(rf::load_config(std::nullopt, overrides));
        overrides.back() = "position.layer_schemes=none,none,none,none";  // the same, none turning
        CHECK(contains(error_of([&] { rf::load_config(std::nullopt, overrides); }),
                       "no layer rotates"));
    }
}

TEST_CASE("RoPE keys: a --set on a saved run where no layer rotates is refused (eval's path)") {
    // eval, attention, frequencies read a run's config.toml with the command's --set applied
    // (load_run → load_config); the rule holds there as at train.
    const std::filesystem::path dir =
        std::filesystem::path(RF_BINARY_DIR) / "test_tmp" / "rope_keys";
    std::filesystem::create_directories(dir);
    const std::string path = (dir / "config.toml").string();
    std::ofstream(path) << rf::to_toml(rf::load_config(std::nullopt, {"position.rope_p=0"}));
    CHECK_NOTHROW(rf::load_config(path));
    const std::string message = error_of([&] {
        rf::load_config(path, {"position.scaling=linear", "position.scaling_factor=2"});
    });
    CHECK(contains(message, "position.scaling = linear"));
    CHECK(contains(message, "position.rope_p = 0"));
    CHECK(contains(message, "position.scaling = none"));  // the default to go back to
    CHECK(contains(error_of([&] { rf::load_config(path, {"position.ntk_factor=2"}); }),
                   "position.ntk_factor"));
}

TEST_CASE("rotating layers: the pairs that turn in each layer of the resolved model") {
    rf::PositionConfig p;  // rope, D = 32: 16 pairs in every layer
    CHECK(rf::rope_turning_pairs(p, 3, 32) == std::vector<size_t>{16, 16, 16});
    CHECK(rf::why_no_layer_rotates(p, 3, 32).empty());
    p.layer_schemes = "rope,none,rope";
    p.rope_p = 0.25;
    CHECK(rf::rope_turning_pairs(p, 3, 32) == std::vector<size_t>{4, 0, 4});
    p.rope_p = 0;
    CHECK(rf::rope_turning_pairs(p, 3, 32) == std::vector<size_t>{0, 0, 0});
    CHECK(contains(rf::why_no_layer_rotates(p, 3, 32), "position.rope_p = 0"));
    p.rope_p = 1;
    p.rotary_fraction = 0.5;
    CHECK(rf::rope_turning_pairs(p, 3, 32) == std::vector<size_t>{8, 0, 8});
    p.layer_schemes = "none,none,none";
    CHECK(contains(rf::why_no_layer_rotates(p, 3, 32), "position.layer_schemes"));
    p.scheme = rf::PositionKind::alibi;
    p.layer_schemes = "alibi,alibi,alibi";
    CHECK(rf::rope_turning_pairs(p, 3, 32) == std::vector<size_t>{0, 0, 0});
    CHECK(contains(rf::why_no_layer_rotates(p, 3, 32), "position.scheme = alibi"));
}

TEST_CASE("refusals show the number given, not a rounded one that looks allowed") {
    // p·D/2 = 7.9999999984 pairs: not whole; the message must not print the value as 0.5
    const std::string p =
        error_of([] { rf::load_config(std::nullopt, {"position.rope_p=0.4999999999"}); });
    CHECK(contains(p, "position.rope_p = 0.4999999999 turns 7.9999999984 of the 16 pairs"));
    CHECK(contains(p, "k/16"));
    CHECK(contains(p, "the nearest is position.rope_p = 0.5"));
    // export-hf: a base that differs from 10000 in the 13th digit is shown with it
    rf::Config c = rf::default_config();
    rf::apply_override(c, "position.base=10000.000000001");
    CHECK(contains(error_of([&] { rf::hf::require_hf_expressible(c); }),
                   "position.base = 10000.000000001"));
}

TEST_CASE("export-hf: position.layer_schemes naming rope for every layer is RoPE in every layer") {
    rf::Config c = rf::load_config(std::nullopt, {"position.layer_schemes=rope,rope,rope,rope"});
    CHECK_NOTHROW(rf::hf::require_hf_expressible(c));
    c = rf::load_config(std::nullopt, {"position.layer_schemes=rope,rope,none,rope"});
    const std::string message = error_of([&] { rf::hf::require_hf_expressible(c); });
    CHECK(contains(message, "position.layer_schemes"));
    CHECK(contains(message, "layer 2 has no positions"));
}
