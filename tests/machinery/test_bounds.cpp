// Bounds and checked numbers (issue 14): what is not a regular file is refused before it is
// read, sizes are capped with a message naming the key and the limit, products cannot wrap,
// non-finite numbers are refused naming the key or the tensor, and an evaluation of nothing
// is an error. The command-line side of each is in tests/machinery/cli_bad_inputs.sh.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "assembly/swappable_ops_for.hpp"
#include "cli/bounds.hpp"
#include "config/config.hpp"
#include "data/corpus.hpp"
#include "data/tokenizer.hpp"
#include "experiments/rope_precision.hpp"
#include "io/durable_file.hpp"
#include "io/safetensors.hpp"
#include "position/rope_angles.hpp"
#include "tiny_model.hpp"
#include "run/checkpoint.hpp"
#include "run/checkpoint_commit.hpp"
#include "ropelab/rope_decay.hpp"
#include "tensor/format.hpp"
#include "train/evaluate.hpp"

using namespace rf;
namespace fs = std::filesystem;

namespace {

std::string scratch_dir(const std::string& name) {
    const fs::path dir = fs::path(RF_BINARY_DIR) / "test_runs" / "bounds" / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir.string();
}

std::string validate_message(const std::vector<std::string>& overrides) {
    try {
        load_config(std::nullopt, overrides);
    } catch (const std::exception& e) { return e.what(); }
    return "(accepted)";
}

}  // namespace

TEST_CASE("files: a directory, a FIFO and /dev/zero are refused before reading, each by name") {
    const std::string dir = scratch_dir("files");
    const std::string fifo = dir + "/fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);

    CHECK_THROWS_WITH_AS(data::read_text_file(dir), doctest::Contains("' is a directory"),
                         std::runtime_error);
    CHECK_THROWS_WITH_AS(data::read_text_file(fifo), doctest::Contains("not a regular file"),
                         std::runtime_error);
    CHECK_THROWS_WITH_AS(data::read_text_file("/dev/zero"), doctest::Contains("not a regular file"),
                         std::runtime_error);
    CHECK_THROWS_WITH_AS(
        read_safetensors("/dev/zero"),
        doctest::Contains("checkpoint '/dev/zero' is not a regular file (a device)"),
        std::runtime_error);
    CHECK_THROWS_WITH_AS(read_safetensors(fifo), doctest::Contains("(a FIFO)"), std::runtime_error);
    CHECK_THROWS_WITH_AS(data::load_tokenizer(dir), doctest::Contains("is a directory"),
                         std::runtime_error);
    CHECK_THROWS_WITH_AS(data::load_tokenizer(fifo), doctest::Contains("not a regular file"),
                         std::runtime_error);
    Config config;
    CHECK_THROWS_WITH_AS(apply_toml_file(config, dir), doctest::Contains("is a directory"),
                         std::runtime_error);

    // Over the size limit: refused by the size, before the bytes are read.
    write_file_durably(dir + "/text.txt", "In the beginning\n\nGod created\n");
    CHECK_THROWS_WITH_AS(data::read_text_file(dir + "/text.txt", 10),
                         doctest::Contains("over the limit of 10"), std::runtime_error);
    CHECK_THROWS_WITH_AS(read_file_bytes(dir + "/text.txt", 10),
                         doctest::Contains("over the limit of 10"), std::runtime_error);
    CHECK(data::read_text_file(dir + "/text.txt").size() == 30);
}

TEST_CASE("config: each size key has a ceiling, named with its limit; non-finite numbers refused") {
    CHECK(validate_message({"model.num_layers=100000000"}) ==
          "model.num_layers = 100000000 is over the limit of 1024 (encoder blocks); use a "
          "smaller value");
    CHECK(doctest::String(validate_message({"data.vocab_size=10000000"}).c_str()) ==
          doctest::Contains("data.vocab_size = 10000000 is over the limit of 1000000"));
    CHECK(doctest::String(validate_message({"train.batch_size=100000"}).c_str()) ==
          doctest::Contains("train.batch_size = 100000 is over the limit of 65536"));
    // Every key within its limit, the whole far beyond any machine: the memory estimate.
    CHECK(doctest::String(
              validate_message({"model.hidden=16384", "model.ffn=65536", "model.num_layers=1024"})
                  .c_str()) == doctest::Contains("this config needs about"));
    for (const char* key :
         {"position.base", "position.interpolation_factor", "position.ntk_factor",
          "position.scaling_factor", "position.yarn_beta_fast", "position.yarn_attention_factor",
          "position.high_freq_factor", "position.xpos_scale_base", "train.lr", "data.mask_prob"}) {
        CAPTURE(std::string(key));
        for (const char* value : {"inf", "-inf", "nan"})
            CHECK(doctest::String(validate_message({std::string(key) + "=" + value}).c_str()) ==
                  doctest::Contains((std::string(key) + " = ").c_str()));
        CHECK(doctest::String(validate_message({std::string(key) + "=inf"}).c_str()) ==
              doctest::Contains("is not a finite number"));
    }
    CHECK(validate_message({}) == "(accepted)");  // the defaults fit
}

TEST_CASE("RoPE's angles: one rule, in train's config, rope-precision and rope-decay (issue 65)") {
    // The range's edges hold and a step past either is refused, by train's config check.
    const size_t D = default_config().model.hidden / default_config().model.num_heads;
    const double largest = static_cast<double>(default_config().position.max_positions);
    const RopeBaseRange r = rope_angle_base_range(D, largest, 1.0, 1.0, kFloat32Angles);
    REQUIRE(r.lo < 10000.0);
    REQUIRE(r.hi > 10000.0);
    CHECK(validate_message({"position.base=" + format_shortest(r.lo * 1.01)}) == "(accepted)");
    CHECK(validate_message({"position.base=" + format_shortest(r.hi * 0.99)}) == "(accepted)");
    CHECK(doctest::String(validate_message({"position.base=" + format_shortest(r.lo / 2)}).c_str()) ==
          doctest::Contains("overflow float32"));
    CHECK(doctest::String(validate_message({"position.base=" + format_shortest(r.hi * 2)}).c_str()) ==
          doctest::Contains("smallest normal number of float32"));
    // The factors move the range: an NTK factor grows the base, interpolation slows the angles.
    const RopeBaseRange ntk = rope_angle_base_range(D, largest, 4.0, 1.0, kFloat32Angles);
    CHECK(ntk.hi < r.hi);
    CHECK(doctest::String(validate_message({"position.ntk_factor=1e300"}).c_str()) ==
          doctest::Contains("position.ntk_factor = 1e+300"));
    CHECK(doctest::String(validate_message({"position.interpolation_factor=1e-40"}).c_str()) ==
          doctest::Contains("position.interpolation_factor = 1e-40 makes RoPE's angles overflow"));
    CHECK(doctest::String(validate_message({"position.interpolation_factor=1e40"}).c_str()) ==
          doctest::Contains("vanish in float32"));
    // rope-precision's and rope-decay's ranges are this rule's (float32, double).
    CHECK(rope_precision_base_range(64, 100).lo ==
          rope_angle_base_range(64, 100, 1.0, 1.0, kFloat32Angles).lo);
    CHECK(rope_precision_base_range(64, 100).hi ==
          rope_angle_base_range(64, 100, 1.0, 1.0, kFloat32Angles).hi);
    CHECK(rope_decay_smallest_base(64, 1e6) ==
          rope_angle_base_range(64, 1e6, 1.0, 1.0, kDoubleAngles).lo);
}

TEST_CASE("bounded_product: a product that would wrap is refused, not taken as 0") {
    const size_t two32 = size_t(1) << 32;
    CHECK_THROWS_AS(cli::bounded_product({two32, two32, 1}, 4096, "too big"),
                    std::invalid_argument);
    CHECK_THROWS_AS(cli::bounded_product({std::numeric_limits<size_t>::max(), 2}, 4096, "x"),
                    std::invalid_argument);
    CHECK(cli::bounded_product({8, 4, 1}, 4096, "x") == 32);
    CHECK(cli::bounded_product({4096, 1}, 4096, "x") == 4096);
    CHECK_THROWS_AS(cli::bounded_product({4097}, 4096, "x"), std::invalid_argument);
}

TEST_CASE("tokenizer files: malformed JSON is named without the JSON library's codes") {
    try {
        data::parse_tokenizer("{\"type\": \"bpe\", \"vocab\": [", "t.json");
        FAIL("accepted malformed JSON");
    } catch (const std::runtime_error& e) {
        const std::string what = e.what();
        CHECK(what.find("tokenizer file 't.json' is not valid JSON") != std::string::npos);
        CHECK(what.find("[json.exception") == std::string::npos);
    }
    // save() writes the whole file or nothing: the text round-trips through a file.
    const std::string dir = scratch_dir("tokenizer");
    const auto tokenizer = data::train_tokenizer("char", "abc abd", 50);
    tokenizer->save(dir + "/tokenizer.json");
    CHECK(data::load_tokenizer(dir + "/tokenizer.json")->vocab() == tokenizer->vocab());
    CHECK(read_file_bytes(dir + "/tokenizer.json") == tokenizer->to_json());
    CHECK(fs::directory_iterator(dir) != fs::directory_iterator());
    for (const auto& e : fs::directory_iterator(dir))
        CHECK(e.path().filename() == "tokenizer.json");  // no temporary left
}

TEST_CASE("checkpoints: a non-finite weight is refused at load, naming the tensor") {
    const std::string dir = scratch_dir("nan_weights");
    Config config;
    config.model = testing::tiny_model_config(12);
    config.position = testing::tiny_position_config();
    RoFormer model = assembled_model(config.model, config.position, 1);
    save_checkpoint(dir, model, config, 3, nullptr);
    const std::string path = dir + "/model.safetensors";
    SafetensorsFile file = read_safetensors(path);
    NamedTensor& victim = file.tensors.at(1);
    victim.data.at(2) = std::numeric_limits<float>::infinity();
    fs::remove(dir + "/" + kCheckpointManifest);  // the manifest would refuse the edit first
    write_safetensors(path, file.tensors, file.metadata);

    RoFormer fresh = assembled_model(config.model, config.position, 2);
    const std::string expected =
        "tensor '" + victim.name + "' holds a non-finite value (inf at element 2)";
    CHECK_THROWS_WITH_AS(load_model_weights(fresh, config, path),
                         doctest::Contains(expected.c_str()), std::runtime_error);
    victim.data.at(2) = 0.5f;
    file.metadata["step"] = "12x";
    write_safetensors(path, file.tensors, file.metadata);
    CHECK_THROWS_WITH_AS(load_model_weights(fresh, config, path),
                         doctest::Contains("\"step\" is '12x', not a step number"),
                         std::runtime_error);
}

TEST_CASE("checkpoint manifest: entries that would rename other files are refused") {
    const std::string dir = scratch_dir("manifest");
    commit_checkpoint(dir, 2, {{"model.safetensors", "m"}, {"optimizer.safetensors", "o"}});
    write_file_durably(dir + "/" + kCheckpointManifest,
                       R"({"step": 3, "files": {"model.safetensors": {"size": 1,)"
                       R"( "fnv1a64": "0", "temp": "../../victim"}}})");
    CHECK_THROWS_WITH_AS(recover_checkpoint(dir),
                         doctest::Contains("is not a valid checkpoint manifest"),
                         std::runtime_error);
    // A number out of range is named with its field, never converted (issue 65).
    const std::pair<std::string, std::string> steps[] = {
        {"\"many\"", "\"many\""}, {"1e30", "1e+30"}, {"-1", "-1"}, {"2.5", "2.5"},
        {"9007199254740993", "9007199254740993"}};  // 2^53 + 1
    for (const auto& [step, shown] : steps) {
        CAPTURE(step);
        write_file_durably(dir + "/" + kCheckpointManifest,
                           "{\"step\": " + step + ", \"files\": {}}");
        const std::string expected = "\"step\" is " + shown + ", not a whole number from 0 to 2^53";
        CHECK_THROWS_WITH_AS(recover_checkpoint(dir), doctest::Contains(expected.c_str()),
                             std::runtime_error);
    }
    write_file_durably(dir + "/" + kCheckpointManifest,
                       R"({"step": 3, "files": {"model.safetensors": {"size": -1,)"
                       R"( "fnv1a64": "0", "temp": "model.safetensors.tmp-1"}}})");
    CHECK_THROWS_WITH_AS(recover_checkpoint(dir),
                         doctest::Contains("\"files.model.safetensors.size\" is -1, not a whole"),
                         std::runtime_error);
}

TEST_CASE("evaluate: no labelled position is an error, not a loss of 0") {
    RoFormer model=
        assembled_model(testing::tiny_model_config(12), testing::tiny_position_config(), 1);
    Batch batch;
    batch.batch = 1;
    batch.seq_len = 4;
    batch.input_ids = {2, 5, 6, 3};
    batch.labels = {kIgnoreLabel, kIgnoreLabel, kIgnoreLabel, kIgnoreLabel};
    CHECK_THROWS_WITH_AS(evaluate(model, {batch}), doctest::Contains("scored 0 tokens"),
                         std::runtime_error);
    batch.labels[1] = 5;
    const EvalResult r = evaluate(model, {batch});
    CHECK(r.predictions == 1);
    CHECK(std::isfinite(r.loss));
    CHECK(r.loss > 0);
}
