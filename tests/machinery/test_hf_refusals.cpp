// roformer import-hf refuses, with one line naming the key or tensor and what would be needed,
// every config.json key, tensor and tokenizer that HF's RoFormer allows and roformer-cpp cannot
// run (src/hf/hf_mapping.hpp, import_hf.hpp) — and nothing is written.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "error_of.hpp"
#include "hf/hf_mapping.hpp"
#include "hf/import_hf.hpp"
#include "test_hf_fixtures.hpp"

namespace fs = std::filesystem;
using namespace rf;
using rf::testing::contains;
using rf::testing::error_of;

namespace {

// The message of importing the fixture with config.json's `key` set to `value`. The scratch
// folders are named by the key: ctest runs two test cases that call this at once.
std::string refusal_with(const std::string& key, const nlohmann::json& value) {
    const fs::path dir = rf::testing::hf_directory("hf_roformer_tiny", "refusal_" + key);
    nlohmann::json config = rf::testing::read_json(dir / "config.json");
    config[key] = value;
    rf::testing::write_text(dir / "config.json", config.dump());
    const fs::path out = fs::temp_directory_path() / ("rf_test_hf_refusal_out_" + key);
    fs::remove_all(out);
    const std::string message = error_of([&] { hf::import_hf(dir.string(), out.string()); });
    CHECK(!fs::exists(out));
    return message;
}

// The message of importing the fixture with model.safetensors changed by `change`.
template <class F>
std::string refusal_of_tensors(F change) {
    const fs::path dir = rf::testing::hf_directory("hf_roformer_tiny", "tensors");
    SafetensorsFile file = read_safetensors((dir / "model.safetensors").string());
    change(file.tensors);
    write_safetensors((dir / "model.safetensors").string(), file.tensors, {{"format", "pt"}});
    return error_of([&] { hf::read_hf_directory(dir.string()); });
}

}  // namespace

TEST_CASE("import-hf refuses each config.json key roformer-cpp cannot run, naming it") {
    CHECK(contains(refusal_with("is_decoder", true), "\"is_decoder\" is true"));
    CHECK(contains(refusal_with("add_cross_attention", true), "\"add_cross_attention\" is true"));
    CHECK(contains(refusal_with("hidden_act", "relu"), "\"hidden_act\" is \"relu\""));
    CHECK(contains(refusal_with("tie_word_embeddings", false), "\"tie_word_embeddings\" is false"));
    CHECK(contains(refusal_with("model_type", "bert"), "\"model_type\" is \"bert\""));
    CHECK(contains(refusal_with("num_attention_heads", 3), "num_attention_heads"));
    CHECK(contains(refusal_with("hidden_size", -4), "\"hidden_size\""));
    CHECK(contains(refusal_with("vocab_size", 61), "\"vocab_size\": 61"));
}

TEST_CASE("import-hf refuses a missing, unknown or mis-shaped tensor and an untied decoder") {
    using Tensors = std::vector<NamedTensor>;
    auto drop = [](const std::string& name) {
        return [name](Tensors& t) {
            t.erase(std::remove_if(t.begin(), t.end(), [&](const NamedTensor& x) { return x.name == name; }),
                    t.end());
        };
    };
    CHECK(contains(refusal_of_tensors(drop("cls.predictions.bias")), "has no tensor cls.predictions.bias"));
    CHECK(contains(refusal_of_tensors(drop(hf::kPositionTable)), "has no roformer.encoder.embed_positions"));
    CHECK(contains(refusal_of_tensors([](Tensors& t) { t.push_back({"classifier.dense.weight", {2}, {1, 2}}); }),
                   "holds classifier.dense.weight"));
    CHECK(contains(refusal_of_tensors([](Tensors& t) {
                       for (NamedTensor& x : t)
                           if (x.name == "roformer.encoder.layer.1.intermediate.dense.bias")
                               x = {x.name, {32}, std::vector<float>(32)};
                   }),
                   "intermediate.dense.bias has shape [32]"));
    CHECK(contains(refusal_of_tensors([](Tensors& t) {
                       NamedTensor words = *std::find_if(t.begin(), t.end(), [](const NamedTensor& x) {
                           return x.name == hf::kWordEmbeddings;
                       });
                       words.name = hf::kTiedDecoderWeight;
                       words.data[7] += 1;
                       t.push_back(words);
                   }),
                   "an untied decoder"));
    // The same copy unchanged (what an older pytorch_model.bin holds) is accepted: the import
    // gets past it to the next problem.
    CHECK(contains(refusal_of_tensors([](Tensors& t) {
        NamedTensor words = *std::find_if(t.begin(), t.end(), [](const NamedTensor& x) {
            return x.name == hf::kWordEmbeddings;
        });
        words.name = hf::kTiedDecoderWeight;
        t.push_back(words);
        t.push_back({"extra.tensor", {1}, {0}});
    }), "holds extra.tensor"));
}

TEST_CASE("import-hf refuses a directory without a tokenizer and a word-level Chinese vocabulary") {
    const fs::path dir = rf::testing::hf_directory("hf_roformer_tiny", "vocab");
    fs::remove(dir / "vocab.txt");
    CHECK(contains(error_of([&] { hf::read_hf_directory(dir.string()); }), "has neither vocab.txt nor tokenizer.json"));
    std::string vocab = rf::testing::vocab_text(60);
    vocab.replace(vocab.find("w9\n"), 3, "\xe5\xa4\xa9\xe5\x9c\xb0\n");  // 天地, a word
    rf::testing::write_text(dir / "vocab.txt", vocab);
    rf::testing::write_text(dir / "tokenizer_config.json", R"({"tokenizer_class": "RoFormerTokenizer"})");
    CHECK(contains(error_of([&] { hf::read_hf_directory(dir.string()); }), "needs jieba segmentation"));
    // A character-level vocabulary under RoFormerTokenizer is BERT's WordPiece: accepted.
    rf::testing::write_text(dir / "vocab.txt", rf::testing::vocab_text(60));
    CHECK(hf::read_hf_directory(dir.string()).notes.size() == 1);
}

TEST_CASE("import-hf names config.json's keys: pruned_heads, sizes over a limit, bad JSON") {
    const std::string pruned = refusal_with("pruned_heads", {{"0", {1}}});
    CHECK(contains(pruned, "config.json: \"pruned_heads\" is {\"0\":[1]}"));
    // Values that config_from_hf reads but validation refuses: the message names config.json's
    // key, never ours.
    const std::string positions = refusal_with("max_position_embeddings", 1000000000000);
    CHECK(contains(positions, "config.json: \"max_position_embeddings\" is 1000000000000"));
    CHECK(!contains(positions, "position.max_positions"));
    const std::string dropout = refusal_with("hidden_dropout_prob", 1.5);
    CHECK(contains(dropout, "config.json: \"hidden_dropout_prob\""));
    CHECK(!contains(dropout, "model.dropout"));
    const std::string eps = refusal_with("layer_norm_eps", -1.0);
    CHECK(contains(eps, "\"layer_norm_eps\""));
    CHECK(!contains(eps, "model.layer_norm_eps"));
    // Not JSON: one line with the line and column, without the library's prefix.
    const fs::path dir = rf::testing::hf_directory("hf_roformer_tiny", "badjson");
    rf::testing::write_text(dir / "config.json", "{\n  \"model_type\": \"roformer\",\n  oops\n}");
    const std::string bad = error_of([&] { hf::read_hf_directory(dir.string()); });
    CHECK(contains(bad, "config.json is not valid JSON (line 3, column "));
    CHECK(!contains(bad, "json.exception"));
}

TEST_CASE("import-hf: pruned_heads {} and a sharded checkpoint; imported data.path names no file") {
    const fs::path dir = rf::testing::hf_directory("hf_roformer_tiny", "sharded");
    nlohmann::json config = rf::testing::read_json(dir / "config.json");
    config["pruned_heads"] = nlohmann::json::object();
    rf::testing::write_text(dir / "config.json", config.dump());
    const hf::ImportedModel imported = hf::read_hf_directory(dir.string());
    // An imported run has no training text: not data/kjv.txt relative to the user's directory.
    CHECK(imported.config.data.path == hf::kImportedDataPath);
    CHECK(imported.config.data.path != default_config().data.path);
    fs::rename(dir / "model.safetensors", dir / "model-00001-of-00002.safetensors");
    rf::testing::write_text(dir / "model.safetensors.index.json", R"({"weight_map": {}})");
    const std::string sharded = error_of([&] { hf::read_hf_directory(dir.string()); });
    CHECK(contains(sharded, "model.safetensors.index.json: a sharded checkpoint"));
    CHECK(contains(sharded, "max_shard_size"));
}

TEST_CASE("import-hf: vocab.txt with CR line ends or a BOM; special_tokens_map, added_tokens") {
    const fs::path dir = rf::testing::hf_directory("hf_roformer_tiny", "vocabfiles");
    std::string cr = rf::testing::vocab_text(60);
    std::replace(cr.begin(), cr.end(), '\n', '\r');
    rf::testing::write_text(dir / "vocab.txt", cr);
    rf::testing::write_text(dir / "tokenizer_config.json", R"({"tokenizer_class": "RoFormerTokenizer"})");
    // Sixty lines of one character each, not one line of Chinese words.
    CHECK(hf::read_hf_directory(dir.string()).tokenizer->vocab_size() == 60);
    rf::testing::write_text(dir / "vocab.txt", "\xEF\xBB\xBF" + rf::testing::vocab_text(60));
    CHECK(hf::read_hf_directory(dir.string()).tokenizer->token(data::kPadId) == "[PAD]");
    rf::testing::write_text(dir / "special_tokens_map.json", R"({"mask_token": "<mask>"})");
    CHECK(contains(error_of([&] { hf::read_hf_directory(dir.string()); }),
                   "special_tokens_map.json: mask_token is \"<mask>\""));
    rf::testing::write_text(dir / "special_tokens_map.json", R"({"mask_token": "[MASK]"})");
    rf::testing::write_text(dir / "added_tokens.json", R"({"<new>": 60})");
    CHECK(contains(error_of([&] { hf::read_hf_directory(dir.string()); }),
                   "added_tokens.json: \"<new>\""));
    fs::remove(dir / "added_tokens.json");
    const hf::ImportedModel imported = hf::read_hf_directory(dir.string());
    CHECK(imported.files.count("special_tokens_map.json") == 1);
    // A tokenizer.json beside vocab.txt is not read, and the import says so.
    rf::testing::write_text(dir / "tokenizer.json", "{}");
    const auto notes = hf::read_hf_directory(dir.string()).notes;
    CHECK(std::any_of(notes.begin(), notes.end(), [](const std::string& note) {
        return contains(note, "tokenizer.json beside vocab.txt is not read");
    }));
}
