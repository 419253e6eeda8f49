// Tests for the table of which key applies when (src/config/validate_effects.hpp, issue 57):
// one row per key; each key, moved off its default under each setting where it does nothing,
// is refused in one line naming the key and the setting; at its default it is accepted there;
// the RoPE-only rows agree with the RoPE rule; every shipped config and every run of every
// shipped comparison still loads.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "config/validate_effects.hpp"
#include "error_of.hpp"
#include "experiments/compare.hpp"

namespace {

using rf::testing::contains;
using rf::testing::error_of;

// A value away from the default, valid where the key acts, for every key the table says can
// be idle (and every RoPE-only key).
const std::map<std::string, std::string> kExample = {
    {"model.attention_dropout", "0.1"},
    {"model.feature_map", "favor"},
    {"model.random_features", "32"},
    {"model.isa", "sse2"},
    {"model.products", "openblas"},
    {"model.precision", "bf16"},
    {"position.pairing", "half"},
    {"position.rope_placement", "before_feature_map"},
    {"position.base", "500"},
    {"position.rotary_fraction", "0.5"},
    {"position.rope_p", "0.5"},
    {"position.rotate_values", "true"},
    {"position.interpolation_factor", "2"},
    {"position.ntk_factor", "2"},
    {"position.scaling", "linear"},
    {"position.scaling_factor", "2"},
    {"position.original_max_positions", "64"},
    {"position.yarn_beta_fast", "16"},
    {"position.yarn_beta_slow", "2"},
    {"position.yarn_attention_factor", "1.1"},
    {"position.low_freq_factor", "0.5"},
    {"position.high_freq_factor", "3"},
    {"position.xpos", "true"},
    {"position.xpos_gamma", "0.3"},
    {"position.xpos_scale_base", "256"},
    {"position.learned_frequencies", "true"},
    {"position.sinusoidal_scale", "1"},
    {"data.mask_prob", "0.3"},
    {"train.min_lr_ratio", "0.05"},
};

// The values of `key` other than `word` (an enum's other words, a flag's other value).
std::vector<std::string> others(const std::string& key, const std::string& word) {
    rf::Config c = rf::default_config();
    const rf::ConfigValue value = rf::find_config_field(c, key).value;
    std::vector<std::string> all;
    if (const auto* e = std::get_if<rf::EnumField>(&value)) {
        std::istringstream words(e->choices());
        for (std::string w; std::getline(words, w, ',');)
            all.push_back(w.substr(w.find_first_not_of(' ')));
    } else if (std::holds_alternative<bool*>(value)) {
        all = {"true", "false"};
    }
    REQUIRE_MESSAGE(!all.empty(), key << ": an \"any value but\" setting needs a word key");
    std::vector<std::string> out;
    for (const std::string& w : all)
        if (w != word) out.push_back(w);
    return out;
}

// The overrides that make `key = word` a valid model of its own, where only that setting idles
// the key: scalings need a factor, and the length-aware ones the trained length; a feature map
// is linear attention's.
std::vector<std::string> setting(const std::string& key, const std::string& word) {
    std::vector<std::string> o = {key + "=" + word};
    if (key == "model.feature_map") o.push_back("model.attention=linear");
    if (key == "position.scaling" && word != "none") o.push_back("position.scaling_factor=2");
    if (key == "position.scaling" && (word == "dynamic_ntk" || word == "yarn" || word == "llama3"))
        o.push_back("position.original_max_positions=64");
    return o;
}

std::vector<std::string> with(std::vector<std::string> o, const std::string& more) {
    o.push_back(more);
    return o;
}

}  // namespace

TEST_CASE("key uses: one row for every key, in the key table's order") {
    const std::vector<std::string> keys = rf::config_keys();
    const std::vector<rf::KeyUse>& table = rf::key_uses();
    REQUIRE(table.size() == keys.size());
    for (size_t i = 0; i < keys.size(); ++i) CHECK(table[i].key == keys[i]);
    for (const rf::KeyUse& use : table) {
        CAPTURE(use.key);
        if (!use.idle.empty() || use.rope_only) {
            CHECK(kExample.count(use.key));
            CHECK(std::string(use.does) != "");
        }
        for (const rf::IdleSetting& s : use.idle) CHECK_NOTHROW(others(s.key, s.word));
    }
}

TEST_CASE("key uses: each key refused under each setting where it does nothing, in one line") {
    size_t cases = 0;
    for (const rf::KeyUse& use : rf::key_uses()) {
        for (const rf::IdleSetting& s : use.idle) {
            const std::vector<std::string> words =
                s.other_than ? others(s.key, s.word) : std::vector<std::string>{s.word};
            for (const std::string& word : words) {
                const std::vector<std::string> model = setting(s.key, word);
                const std::string assignment = std::string(use.key) + "=" + kExample.at(use.key);
                CAPTURE(assignment);
                CAPTURE(model.front());
                CHECK_NOTHROW(rf::load_config(std::nullopt, model));  // the setting alone
                const std::string message =
                    error_of([&] { rf::load_config(std::nullopt, with(model, assignment)); });
                CAPTURE(message);
                CHECK(contains(message, use.key));
                CHECK(contains(message, s.key));  // the setting that makes it do nothing
                CHECK(message.find('\n') == std::string::npos);
                // Its default, written out, changes nothing and is harmless: accepted.
                rf::Config defaults = rf::default_config();
                const std::string fallback =
                    rf::render_value(rf::find_config_field(defaults, use.key).value);
                CHECK_NOTHROW(rf::load_config(std::nullopt,
                                              with(model, std::string(use.key) + "=" + fallback)));
                ++cases;
            }
        }
    }
    CHECK(cases >= 30);
}

TEST_CASE("key uses: the issue's keys — refused where idle, accepted where they act") {
    struct Pair {
        std::vector<std::string> idle, acting;
        const char* says;
    };
    const std::vector<Pair> pairs = {
        {{"position.xpos_gamma=0.3", "train.objective=clm"},
         {"position.xpos_gamma=0.3", "train.objective=clm", "position.xpos=true"},
         "position.xpos_gamma = 0.3 shapes xPos's decay, but position.xpos = false"},
        {{"position.yarn_beta_fast=16"},
         {"position.yarn_beta_fast=16", "position.scaling=yarn", "position.scaling_factor=2",
          "position.original_max_positions=64"},
         "but position.scaling = none, so it would change nothing"},
        {{"position.sinusoidal_scale=1"},
         {"position.sinusoidal_scale=1", "position.scheme=sinusoidal"},
         "but position.scheme = rope"},
        {{"train.min_lr_ratio=0.05", "train.schedule=constant"},
         {"train.min_lr_ratio=0.05", "train.schedule=linear"},
         "train.min_lr_ratio = 0.05 sets where the learning rate's decay ends, but "
         "train.schedule = constant"},
        {{"position.rope_placement=before_feature_map"},
         {"position.rope_placement=before_feature_map", "model.attention=linear"},
         "but model.attention = softmax"},
        {{"position.rope_placement=before_feature_map", "position.scheme=none",
          "model.attention=linear"},
         {"position.rope_placement=before_feature_map", "model.attention=linear"},
         "position.scheme = none has no RoPE"},
    };
    for (const Pair& p : pairs) {
        CAPTURE(std::string(p.says));
        CHECK(contains(error_of([&] { rf::load_config(std::nullopt, p.idle); }), p.says));
        CHECK_NOTHROW(rf::load_config(std::nullopt, p.acting));
    }
    // The message says what to do instead.
    CHECK(contains(error_of([] { rf::load_config(std::nullopt, {"position.xpos_gamma=0.3"}); }),
                   "leave it at its default (position.xpos_gamma = 0.4), or set position.xpos = "
                   "true"));
}

TEST_CASE("key uses: the RoPE-only rows are the keys the RoPE rule refuses where nothing turns") {
    for (const rf::KeyUse& use : rf::key_uses()) {
        if (!kExample.count(use.key)) continue;
        const std::string assignment = std::string(use.key) + "=" + kExample.at(use.key);
        CAPTURE(assignment);
        std::string message;
        try {
            rf::load_config(std::nullopt, {"position.scheme=none", assignment});
        } catch (const std::exception& e) { message = e.what(); }
        CHECK(contains(message, "no layer rotates") == use.rope_only);
    }
}

TEST_CASE("key uses: every shipped config and every run of every shipped comparison loads") {
    namespace fs = std::filesystem;
    size_t runs = 0;
    for (const fs::directory_entry& e :
         fs::directory_iterator(fs::path(RF_SOURCE_DIR) / "configs")) {
        const std::string path = e.path().string();
        if (e.path().extension() != ".toml" || e.path().filename() == "finetune.toml") continue;
        CAPTURE(path);
        std::ifstream file(path);
        const std::string text((std::istreambuf_iterator<char>(file)), {});
        if (text.rfind("[compare]", 0) != 0 &&
            text.find("\n[compare]") == std::string::npos) {  // a plain config: its own model
            CHECK_NOTHROW(rf::load_config(path));
            continue;
        }
        rf::ComparePreset preset;
        REQUIRE_NOTHROW(preset = rf::load_compare_preset(path));
        for (const std::string& name : preset.settings.schemes) {
            CAPTURE(name);
            CHECK_NOTHROW(
                rf::comparison_run_config(preset.base, name, 1, preset.settings.variants));
            ++runs;
        }
    }
    CHECK(runs > 20);
}

TEST_CASE("key uses: a run's own config.toml stays readable; only what --set changes is checked") {
    // A run trained before the rule, with a key that changed nothing (saved by to_toml).
    rf::Config trained = rf::default_config();
    trained.position.xpos_gamma = 0.3;
    const std::filesystem::path dir =
        std::filesystem::path(RF_BINARY_DIR) / "test_tmp" / "idle_keys";
    std::filesystem::create_directories(dir);
    const std::string saved = (dir / "config.toml").string();
    std::ofstream(saved) << rf::to_toml(trained);
    CHECK(rf::load_config(saved).position.xpos_gamma == 0.3);
    CHECK_NOTHROW(rf::load_config(saved, {"position.scaling=linear", "position.scaling_factor=2"}));
    CHECK(contains(error_of([&] { rf::load_config(saved, {"position.yarn_beta_fast=16"}); }),
                   "position.yarn_beta_fast = 16"));
    // The same keys in a file of the user's (no to_toml header) are refused.
    std::ifstream in(saved);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    const std::string mine = (dir / "mine.toml").string();
    std::ofstream(mine) << text.substr(text.find('\n') + 1);
    CHECK(contains(error_of([&] { rf::load_config(mine); }), "position.xpos_gamma = 0.3"));
    // And the scope ends with the read: a later config is checked in full.
    CHECK_THROWS_AS(rf::load_config(std::nullopt, {"position.xpos_gamma=0.3"}),
                    std::invalid_argument);
}

TEST_CASE("key uses: settings idle because of another number get a note (issue 65)") {
    const auto notes = [](const std::vector<std::string>& overrides) {
        return rf::idle_relation_notes(rf::load_config(std::nullopt, overrides));
    };
    const auto one_note = [&](const std::vector<std::string>& overrides, const char* says) {
        const std::vector<std::string> n = notes(overrides);
        CAPTURE(overrides.front());
        REQUIRE(n.size() == 1);
        CHECK(contains(n[0], says));
        CHECK(n[0].find('\n') == std::string::npos);
    };
    CHECK(notes({}).empty());  // the defaults act (or are at their default)
    const std::string hidden = std::to_string(rf::default_config().model.hidden);
    one_note({"model.embedding_size=" + hidden}, "model.embedding_size = ");
    CHECK(notes({"model.embedding_size=" + std::to_string(rf::default_config().model.hidden / 2)})
              .empty());
    one_note({"position.scaling=linear", "position.scaling_factor=1"},
             "position.scaling = linear with position.scaling_factor = 1");
    CHECK(notes({"position.scaling=linear", "position.scaling_factor=2"}).empty());
    const size_t steps = rf::default_config().train.steps;
    one_note({"train.checkpoint_every=" + std::to_string(steps + 1)},
             ("is beyond train.steps = " + std::to_string(steps)).c_str());
    CHECK(notes({"train.checkpoint_every=" + std::to_string(steps)}).empty());
}
