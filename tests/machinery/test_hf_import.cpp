// roformer import-hf (src/hf/import_hf.*): the two RoFormerForMaskedLM checkpoints that
// transformers itself wrote (tests/reference/hf/PROVENANCE-models.md) give HF's own logits
// (expected_logits.json, from RoFormerForMaskedLM in float64) on every input, a second segment
// included; token rows follow the vocab.txt line order; F16 and BF16 copies import; and what
// HF's RoFormer holds that ours cannot run is refused, naming the key or tensor.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "error_of.hpp"
#include "assembly/swappable_ops_for.hpp"
#include "hf/hf_mapping.hpp"
#include "hf/import_hf.hpp"
#include "tensor/tensor.hpp"
#include "test_hf_fixtures.hpp"

namespace fs = std::filesystem;
using namespace rf;
using rf::testing::contains;
using rf::testing::error_of;

namespace {

// max |ours − HF| and max |HF| over every input of the fixture, our ids = map(HF ids).
std::pair<double, double> logits_error(hf::ImportedModel& imported, const std::string& fixture) {
    const auto expected = rf::testing::read_json(rf::testing::hf_reference(fixture) /
                                                 "expected_logits.json");
    const std::vector<int> our_id = hf::our_ids_of_hf_lines(*imported.tokenizer);
    double worst = 0, largest = 0;
    NoGradGuard no_grad;
    for (const auto& c : expected["cases"]) {
        std::vector<int> ids, types = c["token_type_ids"].get<std::vector<int>>();
        for (int hf_id : c["input_ids"].get<std::vector<int>>()) ids.push_back(our_id[size_t(hf_id)]);
        const Tensor logits = imported.model->logits_all(ids, 1, ids.size(), types);
        const size_t V = logits.size(1);
        for (size_t t = 0; t < ids.size(); ++t)
            for (size_t line = 0; line < V; ++line) {
                const double hf = c["logits"][t][line].get<double>();
                largest = std::max(largest, std::fabs(hf));
                worst = std::max(worst, std::fabs(double(logits.data()[t * V + size_t(our_id[line])]) - hf));
            }
    }
    return {worst, largest};
}

}  // namespace

TEST_CASE("import-hf: both checkpoints transformers wrote give HF's logits on every input") {
    for (const char* fixture : {"hf_roformer_tiny", "hf_roformer_tiny_project"}) {
        CAPTURE(std::string(fixture));
        hf::ImportedModel imported = hf::read_hf_directory(rf::testing::hf_directory(fixture, "logits").string());
        CHECK(imported.dtype == "F32");
        CHECK(imported.position_table_error <= 1e-6);
        const auto [worst, largest] = logits_error(imported, fixture);
        CHECK(largest > 1.0);  // the logits are not all near zero
        CHECK(worst <= 1e-5 * largest);
    }
    // The composed path (model.fused = false, the ops a student reads) agrees with HF too.
    for (const char* fixture : {"hf_roformer_tiny", "hf_roformer_tiny_project"}) {
        CAPTURE(std::string(fixture));
        hf::ImportedModel imported = hf::read_hf_directory(rf::testing::hf_directory(fixture, "composed").string());
        FastConfig unfused;
        unfused.fused = false;
        auto composed = make_model(imported.model->config(), imported.config.position, 1, unfused);
        const auto from = imported.model->parameters();
        const auto to = composed->parameters();
        REQUIRE(from.size() == to.size());
        for (size_t i = 0; i < from.size(); ++i) {
            Tensor target = to[i].tensor;
            copy_into(to_named_tensor(from[i].tensor), target);
        }
        imported.model = std::move(composed);
        const auto [worst, largest] = logits_error(imported, fixture);
        CHECK(worst <= 1e-5 * largest);
    }
    // The projected fixture really has E ≠ C, and a second segment is among the inputs.
    hf::ImportedModel projected = hf::read_hf_directory(
        rf::testing::hf_directory("hf_roformer_tiny_project", "e16").string());
    CHECK(embedding_width(projected.model->config()) == 16);
    const auto cases = rf::testing::read_json(rf::testing::hf_reference("hf_roformer_tiny") /
                                              "expected_logits.json")["cases"];
    bool second_segment = false;
    for (const auto& c : cases)
        for (int t : c["token_type_ids"]) second_segment |= t == 1;
    CHECK(second_segment);
}

TEST_CASE("import-hf: token rows follow vocab.txt's lines wherever the specials are") {
    // [PAD] [UNK] [CLS] [SEP] [MASK] on lines far from 0…4: our ids put them first, so the
    // word-embedding rows and the decoder bias must be permuted — and the logits still agree.
    const std::string vocab = rf::testing::vocab_text(60, {57, 13, 2, 40, 4});
    hf::ImportedModel imported = hf::read_hf_directory(
        rf::testing::hf_directory("hf_roformer_tiny", "permuted", vocab).string());
    const std::vector<int> our_id = hf::our_ids_of_hf_lines(*imported.tokenizer);
    CHECK(our_id[57] == data::kPadId);
    CHECK(our_id[13] == data::kUnkId);
    CHECK(our_id[40] == data::kSepId);
    const auto [worst, largest] = logits_error(imported, "hf_roformer_tiny");
    CHECK(worst <= 1e-5 * largest);
}

TEST_CASE("import-hf: F16 and BF16 copies import, each weight the rounding of HF's") {
    const SafetensorsFile f32 = read_safetensors(
        (rf::testing::hf_reference("hf_roformer_tiny_project") / "model.safetensors").string());
    for (const auto& [dtype, step] : {std::pair{"F16", 1.0 / 1024}, std::pair{"BF16", 1.0 / 128}}) {
        CAPTURE(dtype);
        const fs::path dir = rf::testing::hf_directory("hf_roformer_tiny_project", dtype);
        rf::testing::write_half_copy(f32, dtype, dir / "model.safetensors");
        hf::ImportedModel imported = hf::read_hf_directory(dir.string());
        CHECK(imported.dtype == dtype);
        CHECK(imported.position_table_error > 0);  // the half table is rounded, yet accepted
        for (const NamedParameter& p : imported.model->parameters()) {
            const NamedTensor& hf = f32.at(p.tensor.name());
            double worst = 0;
            for (size_t i = 0; i < hf.data.size(); ++i)
                worst = std::max(worst, std::fabs(double(p.tensor.data()[i]) - hf.data[i]) /
                                            std::max(1e-4, std::fabs(double(hf.data[i]))));
            CHECK(worst <= step);
        }
        const auto [worst, largest] = logits_error(imported, "hf_roformer_tiny_project");
        CHECK(worst <= 0.1 * largest);
    }
}

TEST_CASE("import-hf: the sinusoidal table is checked against our RoPE angles, not loaded") {
    const fs::path dir = rf::testing::hf_directory("hf_roformer_tiny", "table");
    SafetensorsFile file = read_safetensors((dir / "model.safetensors").string());
    // HF's table is our angles exactly: row m = sin(m·θ_i), then cos(m·θ_i).
    const NamedTensor& table = file.at(hf::kPositionTable);
    const Config config = hf::config_from_hf(rf::testing::read_json(dir / "config.json"), "c");
    CHECK(table.data == hf::hf_position_table(config, 64));
    for (NamedTensor& t : file.tensors)
        if (t.name == hf::kPositionTable) t.data[5 * 16 + 3] += 0.01f;  // one entry, row 5
    write_safetensors((dir / "model.safetensors").string(), file.tensors, {{"format", "pt"}});
    const std::string message = error_of([&] { hf::read_hf_directory(dir.string()); });
    CHECK(contains(message, "embed_positions.weight row 5 column 3"));
}
