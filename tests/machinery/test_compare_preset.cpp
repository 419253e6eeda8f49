// Tests for stage 8 — experiments: the comparison preset's sweeps and variants
// (src/experiments/compare_preset.cpp): any config key can be crossed, runs are named by
// their values, explicit variants are added, and every run's config holds exactly its values.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "experiments/compare.hpp"

namespace {

namespace fs = std::filesystem;

std::string write_preset(const std::string& name, const std::string& text) {
    const fs::path dir = fs::path(RF_BINARY_DIR) / "test_tmp" / "compare_preset";
    fs::create_directories(dir);
    const fs::path path = dir / (name + ".toml");
    std::ofstream(path) << text;
    return path.string();
}

}  // namespace

TEST_CASE("compare preset: swept keys are crossed and name the runs") {
    const std::string path = write_preset("sweep",
                                          "[compare]\n"
                                          "\"position.scheme\" = [\"learned\", \"none\"]\n"
                                          "\"train.lr\" = [0.001, 0.002]\n"
                                          "seeds = 2\n");
    const rf::ComparePreset p = rf::load_compare_preset(path);
    // keys in the table's order (position.scheme before train.lr), values in the array's order
    const std::vector<std::string> expected = {"learned_0.001", "learned_0.002", "none_0.001",
                                               "none_0.002"};
    CHECK(p.settings.schemes == expected);
    CHECK_NOTHROW(rf::check_compare_settings(p.settings));
    const rf::Config c = rf::comparison_run_config(p.base, "none_0.002", 2, p.settings.variants);
    CHECK(c.position.scheme == rf::PositionKind::none);
    CHECK(c.train.lr == 0.002);
    CHECK(c.train.seed == 2);
    // everything else is the base config
    rf::Config expected_config = p.base;
    expected_config.position.scheme = rf::PositionKind::none;
    expected_config.train.lr = 0.002;
    expected_config.train.seed = 2;
    CHECK(c == expected_config);
}

TEST_CASE("compare preset: built-in scheme names cross with swept keys; variants are added") {
    const std::string path =
        write_preset("mixed",
                     "[compare]\n"
                     "schemes = [\"rope_half\", \"alibi\"]\n"
                     "\"model.num_layers\" = [1, 2]\n"
                     "[compare.variants]\n"
                     "deep_rope = [\"model.num_layers=3\", \"position.scheme=rope\"]\n");
    const rf::ComparePreset p = rf::load_compare_preset(path);
    const std::vector<std::string> expected = {"rope_half_1", "rope_half_2", "alibi_1", "alibi_2",
                                               "deep_rope"};
    CHECK(p.settings.schemes == expected);
    const rf::Config half =
        rf::comparison_run_config(p.base, "rope_half_2", 1, p.settings.variants);
    CHECK(half.position.scheme == rf::PositionKind::rope);
    CHECK(half.position.pairing == rf::RopePairing::half);
    CHECK(half.model.num_layers == 2);
    const rf::Config deep = rf::comparison_run_config(p.base, "deep_rope", 1, p.settings.variants);
    CHECK(deep.model.num_layers == 3);
    CHECK(deep.position.scheme == rf::PositionKind::rope);
}

TEST_CASE("compare preset: without sweeps the runs are the built-in schemes, as before") {
    const rf::ComparePreset p =
        rf::load_compare_preset(write_preset("plain", "[compare]\nseeds = 1\n"));
    CHECK(p.settings.schemes == rf::comparison_schemes());
    CHECK(p.settings.variants.empty());
}

TEST_CASE("compare preset: bad sweeps are one-line errors naming the key") {
    CHECK_THROWS_WITH_AS(
        rf::load_compare_preset(write_preset("unknown", "[compare]\n\"model.hiden\" = [64]\n")),
        doctest::Contains("model.hiden"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(
        rf::load_compare_preset(write_preset("empty", "[compare]\n\"model.hidden\" = []\n")),
        doctest::Contains("non-empty array"), std::invalid_argument);
    // a value the key cannot take fails when the run's config is built, naming the key
    const rf::ComparePreset p = rf::load_compare_preset(
        write_preset("badvalue", "[compare]\n\"model.num_layers\" = [0, 1]\n"));
    CHECK_THROWS_WITH_AS(rf::comparison_run_config(p.base, "0", 1, p.settings.variants),
                         doctest::Contains("model.num_layers"), std::invalid_argument);
    // a value that cannot be a directory name is refused before training
    rf::ComparePreset q = rf::load_compare_preset(
        write_preset("path", "[compare]\n\"data.path\" = [\"data/kjv.txt\"]\n"));
    CHECK_THROWS_WITH_AS(rf::check_compare_settings(q.settings),
                         doctest::Contains("directory name"), std::invalid_argument);
}

// Keys compare sets per run itself (train.seed from its seed loop, position.scheme and
// position.pairing from a built-in scheme name) are refused wherever else they are given:
// before, "train.seed" = [1, 2] gave two identical runs, and schemes = ["rope_interleaved"] with
// "position.scheme" = ["learned"] gave a learned run named rope_interleaved_learned.
TEST_CASE("compare preset: keys compare sets per run are refused, naming the key and where") {
    const auto refused = [](const std::string& name, const std::string& text,
                            const std::vector<std::string>& overrides, const char* key) {
        CAPTURE(name);
        CHECK_THROWS_WITH_AS(rf::check_compare_preset(
                                 rf::load_compare_preset(write_preset(name, text), overrides)),
                             doctest::Contains(key), std::invalid_argument);
    };
    refused("seed_swept", "[compare]\n\"train.seed\" = [1, 2]\n", {}, "train.seed");
    refused("seed_variant", "[compare]\n[compare.variants]\na = [\"train.seed=4\"]\n", {},
            "train.seed");
    refused("seed_table", "[compare]\nseeds = 2\n[train]\nseed = 7\n", {}, "line 4");
    refused("seed_set", "[compare]\nseeds = 2\n", {"train.seed=3"}, "--set train.seed=3");
    refused("scheme_crossed",
            "[compare]\nschemes = [\"rope_interleaved\"]\n\"position.scheme\" = [\"learned\"]\n",
            {}, "position.scheme");
    refused("pairing_crossed",
            "[compare]\nschemes = [\"rope_interleaved\"]\n\"position.pairing\" = [\"half\"]\n", {},
            "position.pairing");
    refused("scheme_table", "[compare]\nschemes = [\"learned\"]\n[position]\nscheme = \"none\"\n",
            {}, "position.scheme");
    refused("scheme_set", "[compare]\nschemes = [\"learned\"]\n", {"position.pairing=half"},
            "position.pairing");
    // The same keys where compare does not set them are fine: position.scheme swept without
    // schemes, or named in a variant; --set position.* when every run is a variant.
    CHECK_NOTHROW(rf::check_compare_preset(rf::load_compare_preset(
        write_preset("scheme_swept", "[compare]\n\"position.scheme\" = [\"rope\", \"none\"]\n"))));
    CHECK_NOTHROW(rf::check_compare_preset(rf::load_compare_preset(
        write_preset("scheme_variant",
                     "[compare]\n[compare.variants]\nr = [\"position.scheme=rope\"]\n"),
        {"position.pairing=half"})));
}
