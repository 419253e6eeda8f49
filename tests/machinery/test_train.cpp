// The trainer end to end on the shipped corpus at a very small size: it learns, it is
// deterministic, resume equals an uninterrupted run, checkpoints reload to identical logits,
// and it refuses what would lose work or silently mix configurations — for the MLM and, at
// the end, for the causal LM objective (train.objective = clm).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "assembly/swappable_ops_for.hpp"
#include "run/checkpoint.hpp"
#include "train/trainer.hpp"

using namespace rf;
namespace fs = std::filesystem;

namespace {

Config micro_config(const std::string& scheme = "rope") {
    Config c = default_config();
    c.data.path = std::string(RF_SOURCE_DIR) + "/data/kjv.txt";
    c.data.tokenizer = "char";
    c.data.seq_len = 32;
    c.data.val_windows = 16;
    c.model.hidden = 32;
    c.model.num_heads = 2;
    c.model.num_layers = 1;
    c.model.ffn = 64;
    c.position.scheme = parse_enum<PositionKind>(scheme, "position.scheme");
    c.position.max_positions = 64;
    c.train.batch_size = 8;
    c.train.steps = 30;
    c.train.warmup_steps = 5;
    c.train.lr = 3e-3;
    c.train.eval_every = 10;
    c.train.log_every = 5;
    c.train.threads = 1;
    validate(c);
    return c;
}

std::string fresh_dir(const std::string& name) {
    const fs::path dir = fs::path(RF_BINARY_DIR) / "test_runs" / name;
    fs::remove_all(dir);
    return dir.string();
}

// metrics.csv without the timing columns (tokens_per_s, elapsed_s), which legitimately differ
std::string metrics_without_timing(const std::string& dir) {
    std::ifstream in(run_file(dir, "metrics.csv"));
    std::string line, out;
    while (std::getline(in, line)) {
        size_t cut = line.size();
        for (int i = 0; i < 2; ++i) cut = line.rfind(',', cut - 1);
        out += line.substr(0, cut) + "\n";
    }
    return out;
}

// The validation losses of metrics.csv, in order.
std::vector<double> validation_losses(const std::string& dir) {
    std::ifstream in(run_file(dir, "metrics.csv"));
    std::string line;
    std::getline(in, line);
    std::vector<double> val;
    while (std::getline(in, line)) {
        std::vector<std::string> f;
        std::stringstream ss(line);
        std::string cell;
        while (std::getline(ss, cell, ',')) f.push_back(cell);
        if (!f[3].empty()) val.push_back(std::stod(f[3]));
    }
    return val;
}

TrainSummary run(const Config& c, const std::string& dir, bool resume = false,
                 size_t stop_after = 0) {
    TrainOptions o;
    o.out_dir = dir;
    o.resume = resume;
    o.stop_after = stop_after;
    o.quiet = true;
    std::ostringstream log;
    return train(c, o, log);
}

}  // namespace

TEST_CASE("a short training run lowers the validation loss below the unigram entropy") {
    Config c = micro_config();
    c.train.steps = 60;
    const std::string dir = fresh_dir("learns");
    const TrainSummary s = run(c, dir);
    const std::vector<double> val = validation_losses(dir);  // val[0]: step 0, untrained
    REQUIRE(val.size() >= 4);
    CHECK(val.back() < val[1] - 0.3);  // against the first evaluation after training started
    CHECK(s.final_eval.loss < s.unigram_entropy);
    CHECK(s.final_eval.loss == doctest::Approx(val.back()).epsilon(1e-5));
}

// The step column of metrics.csv, in order.
std::vector<size_t> logged_steps(const std::string& dir) {
    std::ifstream in(run_file(dir, "metrics.csv"));
    std::string line;
    std::getline(in, line);
    std::vector<size_t> steps;
    while (std::getline(in, line)) steps.push_back(std::stoull(line.substr(0, line.find(','))));
    return steps;
}

TEST_CASE("step 0: the untrained model's validation loss is logged once, resumed or not") {
    const Config c = micro_config();
    const std::string whole = fresh_dir("step0_whole"), parts = fresh_dir("step0_parts");
    run(c, whole);
    const std::vector<size_t> steps = logged_steps(whole);
    REQUIRE(!steps.empty());
    CHECK(steps.front() == 0);
    CHECK(std::count(steps.begin(), steps.end(), size_t(0)) == 1);
    // The step-0 row is exactly a freshly initialised model of the same seed, evaluated on the
    // run's validation set (metrics.csv keeps 6 decimals).
    LoadedRun loaded = load_run(whole);
    const PreparedData data = prepare_data(loaded.config.data, c.train.batch_size, loaded.tokenizer,
                                           data::Objective::mlm);
    RoFormer untrained=
        assembled_model(resolved_model_config(loaded.config, loaded.tokenizer->vocab_size()),
                       loaded.config.position, c.train.seed);
    const EvalResult fresh = evaluate(untrained, data.validation, c.train.eval_batches);
    const std::vector<double> val = validation_losses(whole);
    CHECK(std::abs(val.front() - fresh.loss) < 1e-6);
    CHECK(val.back() < val.front() - 0.5);  // and training moves away from it
    // Interrupted after step 13 and resumed from its checkpoint: step 0 is not logged again.
    run(c, parts, false, 13);
    run(c, parts, true);
    CHECK(logged_steps(parts) == steps);
    // Without evaluations there is no step-0 row either.
    Config quiet = c;
    quiet.train.eval_every = 0;
    const std::string none = fresh_dir("step0_none");
    run(quiet, none);
    CHECK(logged_steps(none).front() == quiet.train.log_every);
}

TEST_CASE("same config and seed give bit-identical metrics; another seed does not") {
    const Config c = micro_config();
    const std::string dir_a = fresh_dir("det_a"), dir_b = fresh_dir("det_b"),
                      dir_c = fresh_dir("det_c");
    run(c, dir_a);
    run(c, dir_b);
    Config other = c;
    other.train.seed = 2;
    run(other, dir_c);
    const std::string a = metrics_without_timing(dir_a);
    const std::string b = metrics_without_timing(dir_b);
    const std::string d = metrics_without_timing(dir_c);
    CHECK(a == b);
    CHECK(a != d);
}

TEST_CASE("resume after an interruption gives the same metrics as an uninterrupted run") {
    const Config c = micro_config();
    const std::string whole = fresh_dir("resume_whole"), parts = fresh_dir("resume_parts");
    run(c, whole);
    run(c, parts, false, 13);  // stop mid-way (between evaluations)
    CHECK(read_checkpoint_metadata(run_file(parts, "model.safetensors")).at("step") == "13");
    run(c, parts, true);
    CHECK(metrics_without_timing(whole) == metrics_without_timing(parts));
}

TEST_CASE("save → load gives identical logits, and eval reproduces the final validation loss") {
    const Config c = micro_config("learned");
    const std::string dir = fresh_dir("reload");
    const TrainSummary s = run(c, dir);
    LoadedRun loaded = load_run(dir);
    CHECK(loaded.step == c.train.steps);
    std::unique_ptr<data::Tokenizer> tok = std::move(loaded.tokenizer);
    PreparedData data =
        prepare_data(loaded.config.data, loaded.config.train.batch_size, tok, data::Objective::mlm);
    const EvalResult e = evaluate(*loaded.model, data.validation);
    CHECK(e.loss == s.final_eval.loss);  // bit-identical: same weights, same inputs
    CHECK(e.accuracy == s.final_eval.accuracy);

    // Logits of a reloaded model equal those of a second reload (weights fully restored,
    // nothing left at its random init): compare against a model with a different init seed.
    LoadedRun again = load_run(dir);
    Config shifted = loaded.config;
    shifted.train.seed = 99;
    RoFormer other = assembled_model(loaded.model->config(), shifted.position, 99);
    load_model_weights(other, shifted, run_file(dir, "model.safetensors"));
    NoGradGuard no_grad;
    const std::vector<int> ids = {2, 10, 11, 12, 4, 13, 3};
    Tensor a = again.model->logits_all(ids, 1, ids.size());
    Tensor b = other.logits_all(ids, 1, ids.size());
    REQUIRE(a.numel() == b.numel());
    bool same = true;
    for (size_t i = 0; i < a.numel(); ++i) same &= a.data()[i] == b.data()[i];
    CHECK(same);
}

TEST_CASE("refusals: existing output, mismatched checkpoint, model-changing eval overrides") {
    const Config c = micro_config();
    const std::string dir = fresh_dir("refuse");
    Config short_run = c;
    short_run.train.steps = 2;
    short_run.train.eval_every = 0;
    run(short_run, dir);
    const auto before = fs::last_write_time(run_file(dir, "model.safetensors"));
    CHECK_THROWS_WITH_AS(run(short_run, dir), doctest::Contains("already exists"),
                         std::runtime_error);
    CHECK(fs::last_write_time(run_file(dir, "model.safetensors")) == before);

    Config half = short_run;
    half.position.pairing = RopePairing::half;
    CHECK_THROWS_WITH_AS(run(half, dir, true), doctest::Contains("config differs"),
                         std::runtime_error);

    LoadedRun loaded = load_run(dir);
    RoFormer wrong = assembled_model(loaded.model->config(), half.position, 1);
    CHECK_THROWS_WITH_AS(load_model_weights(wrong, half, run_file(dir, "model.safetensors")),
                         doctest::Contains("position.pairing"), std::runtime_error);
    CHECK_THROWS_WITH_AS(load_run(dir, {"model.hidden=64"}), doctest::Contains("model.hidden"),
                         std::invalid_argument);
    CHECK_NOTHROW(load_run(dir, {"position.interpolation_factor=2"}));
    CHECK_THROWS_WITH_AS(load_run(dir + "_missing"), doctest::Contains("does not exist"),
                         std::runtime_error);
}

// ---- causal LM (train.objective = clm) ------------------------------------------------------

TEST_CASE("clm: a short training run lowers the next-token loss below the unigram entropy") {
    Config c = micro_config();
    c.train.objective = data::Objective::clm;
    c.train.steps = 60;
    const std::string dir = fresh_dir("clm_learns");
    const TrainSummary s = run(c, dir);
    const std::vector<double> val = validation_losses(dir);  // val[0]: step 0, untrained
    REQUIRE(val.size() >= 4);
    CHECK(val.back() < val[1] - 0.3);  // against the first evaluation after training started
    CHECK(s.final_eval.loss < s.unigram_entropy);
    // every validation position but the last of each window is predicted
    CHECK(s.final_eval.predictions == c.data.val_windows * (c.data.seq_len - 1));

    // the reloaded run scores its fixed validation set exactly as training did
    LoadedRun loaded = load_run(dir);
    CHECK(loaded.model->config().causal);
    std::unique_ptr<data::Tokenizer> tok = std::move(loaded.tokenizer);
    const PreparedData data =
        prepare_data(loaded.config.data, loaded.config.train.batch_size, tok, data::Objective::clm);
    const EvalResult e = evaluate(*loaded.model, data.validation);
    CHECK(e.loss == s.final_eval.loss);
    CHECK(e.accuracy == s.final_eval.accuracy);

    // the checkpoint records the objective: loading it as an MLM is refused, naming the key
    Config as_mlm = loaded.config;
    as_mlm.train.objective = data::Objective::mlm;
    RoFormer mlm_model=
        assembled_model(resolved_model_config(as_mlm, tok->vocab_size()), as_mlm.position, 1);
    CHECK_THROWS_WITH_AS(load_model_weights(mlm_model, as_mlm, run_file(dir, "model.safetensors")),
                         doctest::Contains("train.objective"), std::runtime_error);
    CHECK_THROWS_WITH_AS(load_run(dir, {"train.objective=mlm"}),
                         doctest::Contains("train.objective"), std::invalid_argument);
}

TEST_CASE("clm: resume after an interruption gives the same metrics as an uninterrupted run") {
    Config c = micro_config();
    c.train.objective = data::Objective::clm;
    const std::string whole = fresh_dir("clm_resume_whole"), parts = fresh_dir("clm_resume_parts");
    run(c, whole);
    run(c, parts, false, 13);  // stop mid-way (between evaluations)
    CHECK(read_checkpoint_metadata(run_file(parts, "model.safetensors")).at("step") == "13");
    run(c, parts, true);
    CHECK(metrics_without_timing(whole) == metrics_without_timing(parts));
    // and the objective matters: the same config as mlm trains differently
    Config mlm = c;
    mlm.train.objective = data::Objective::mlm;
    const std::string other = fresh_dir("clm_resume_mlm");
    run(mlm, other);
    CHECK(metrics_without_timing(other) != metrics_without_timing(whole));
}

TEST_CASE(
    "a run stopped before its first checkpoint resumes from step 0; a half-done commit "
    "is finished on load") {
    const Config c = micro_config();
    const std::string whole = fresh_dir("restart_whole"), parts = fresh_dir("restart_parts");
    run(c, whole);
    run(c, parts);
    // As if killed before any checkpoint: only the run files and a few metrics rows remain.
    for (const char* name : {"model.safetensors", "optimizer.safetensors", "checkpoint.json"})
        fs::remove(run_file(parts, name));
    run(c, parts, true);
    CHECK(metrics_without_timing(whole) == metrics_without_timing(parts));

    // As if killed after checkpoint.json but before the renames: load_run finishes the commit.
    std::ifstream manifest(run_file(parts, "checkpoint.json"));
    const std::string text((std::istreambuf_iterator<char>(manifest)), {});
    const size_t at = text.find("model.safetensors.tmp-");
    REQUIRE(at != std::string::npos);
    const std::string temp = text.substr(at, text.find('"', at) - at);
    fs::rename(run_file(parts, "model.safetensors"), run_file(parts, temp));
    const LoadedRun loaded = load_run(parts);
    CHECK(loaded.step == c.train.steps);
    CHECK(fs::exists(run_file(parts, "model.safetensors")));
    CHECK_FALSE(fs::exists(run_file(parts, temp)));
}
