// roformer export-hf (src/hf/export_hf.*): what it writes is what transformers wrote. The
// fixtures (tests/reference/hf/PROVENANCE-models.md) imported and exported again give back
// HF's model.safetensors tensor for tensor, bit for bit — names, shapes, the sinusoidal table
// in HF's layout, token rows in vocab.txt's order — and HF's config.json key for key; a run
// HF's RoFormer cannot express is refused, naming the key.
#include <doctest/doctest.h>

#include <filesystem>

#include "error_of.hpp"
#include "hf/export_hf.hpp"
#include "hf/hf_mapping.hpp"
#include "hf/import_hf.hpp"
#include "test_hf_fixtures.hpp"

using namespace rf;
using rf::testing::contains;
using rf::testing::error_of;

TEST_CASE("export-hf: the imported fixtures' tensors come back as HF wrote them, bit for bit") {
    for (const char* fixture : {"hf_roformer_tiny", "hf_roformer_tiny_project"}) {
        for (const bool permuted : {false, true}) {
            CAPTURE(std::string(fixture));
            CAPTURE(permuted);
            const std::string vocab = permuted ? rf::testing::vocab_text(60, {33, 1, 59, 3, 20}) : "";
            const hf::ImportedModel imported = hf::read_hf_directory(
                rf::testing::hf_directory(fixture, "export", vocab).string());
            const SafetensorsFile hf_file = read_safetensors(
                (rf::testing::hf_reference(fixture) / "model.safetensors").string());
            const std::vector<NamedTensor> ours =
                hf::hf_tensors(*imported.model, imported.config, *imported.tokenizer);
            REQUIRE(ours.size() == hf_file.tensors.size());
            for (const NamedTensor& t : ours) {
                CAPTURE(t.name);
                const NamedTensor* theirs = hf_file.find(t.name);
                REQUIRE(theirs != nullptr);
                CHECK(t.shape == theirs->shape);
                CHECK(t.data == theirs->data);
            }
        }
    }
}

TEST_CASE("export-hf: config.json has RoFormerForMaskedLM's keys and the fixture's values") {
    for (const char* fixture : {"hf_roformer_tiny", "hf_roformer_tiny_project"}) {
        CAPTURE(std::string(fixture));
        const nlohmann::json theirs =
            rf::testing::read_json(rf::testing::hf_reference(fixture) / "config.json");
        const Config config = hf::config_from_hf(theirs, "config.json");
        const nlohmann::json ours = hf::hf_config_from(config, 60, 0);
        for (const auto& [key, value] : theirs.items()) {
            CAPTURE(key);
            if (key == "transformers_version") {  // the library that wrote it; not ours to claim
                CHECK(!ours.contains(key));
                continue;
            }
            REQUIRE(ours.contains(key));
            CHECK(ours[key] == value);
        }
        for (const auto& [key, value] : ours.items()) CHECK(theirs.contains(key));
    }
}

TEST_CASE("export-hf refuses what HF's RoFormer cannot express, naming the key") {
    auto refusal = [](const std::string& assignment) {
        Config c = default_config();
        apply_override(c, assignment);
        return error_of([&] { hf::require_hf_expressible(c); });
    };
    CHECK_NOTHROW(hf::require_hf_expressible(default_config()));
    CHECK(contains(refusal("position.scheme=\"alibi\""), "position.scheme = alibi"));
    CHECK(contains(refusal("position.pairing=\"half\""), "position.pairing = half"));
    CHECK(contains(refusal("position.rotary_fraction=0.5"), "position.rotary_fraction"));
    CHECK(contains(refusal("position.base=500000"), "position.base"));
    CHECK(contains(refusal("position.rope_p=0.75"), "position.rope_p"));
    CHECK(contains(refusal("position.scaling=\"yarn\""), "position.scaling = yarn"));
    CHECK(contains(refusal("position.interpolation_factor=2"), "position.interpolation_factor"));
    CHECK(contains(refusal("position.xpos=true"), "position.xpos"));
    CHECK(contains(refusal("position.learned_frequencies=true"), "position.learned_frequencies"));
    CHECK(contains(refusal("position.layer_schemes=\"rope,none\""), "position.layer_schemes"));
    CHECK(contains(refusal("model.attention=\"linear\""), "model.attention = linear"));
    CHECK(contains(refusal("train.objective=\"clm\""), "train.objective = clm"));
}
