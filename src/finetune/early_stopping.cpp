// Room — finetune: early stopping for a fine-tune (see early_stopping.hpp).
#include "finetune/early_stopping.hpp"

#include <stdexcept>

#include <nlohmann/json.hpp>

#include "io/durable_file.hpp"
#include "io/json_whole.hpp"
#include "run/checkpoint.hpp"
#include "run/checkpoint_commit.hpp"
#include "run/run_directory.hpp"

namespace rf {

using Json = nlohmann::json;

namespace {

Json score_json(const ClassificationScore& s) {
    return {{"loss", s.loss}, {"accuracy", s.accuracy}, {"macro_f1", s.macro_f1}, {"n", s.n}};
}

ClassificationScore score_of(const Json& j, const std::string& name) {
    ClassificationScore s;
    s.loss = j.at("loss").get<double>();
    s.accuracy = j.at("accuracy").get<double>();
    s.macro_f1 = j.at("macro_f1").get<double>();
    s.n = json_whole(j, "n", name + ".n");
    return s;
}

}  // namespace

bool EarlyStopping::update(size_t step, const ClassificationScore& validation,
                           const ClassificationScore& test,
                           const std::function<std::string()>& bytes) {
    if (!has_best || validation.macro_f1 > best_validation.macro_f1) {
        has_best = true;
        best_step = step;
        since_best = 0;
        best_validation = validation;
        best_test = test;
        best_bytes = bytes();
    } else if (step > warmup_steps) {
        ++since_best;
    }
    stopped = since_best >= patience;
    return stopped;
}

std::string EarlyStopping::to_json() const {
    return Json{{"criterion", "validation macro_f1, higher is better (ties: the earlier)"},
                {"patience", patience},
                {"best_step", best_step},
                {"evaluations_since_best", since_best},
                {"stopped", stopped},
                {"best_validation", score_json(best_validation)},
                {"best_test", score_json(best_test)}}
               .dump(2) +
           "\n";
}

void EarlyStopping::restore(const std::string& dir) {
    const std::string path = run_file(dir, "early_stopping.json");
    try {
        const Json j = Json::parse(read_file_bytes(path, 1 << 20));
        best_step = json_whole(j, "best_step", "best_step");
        since_best = json_whole(j, "evaluations_since_best", "evaluations_since_best");
        stopped = j.at("stopped").get<bool>();
        best_validation = score_of(j.at("best_validation"), "best_validation");
        best_test = score_of(j.at("best_test"), "best_test");
    } catch (const std::exception& e) {
        throw std::runtime_error("--resume: '" + path + "' is missing or damaged (" + e.what() +
                                 "); fine-tune again into a new --out");
    }
    verify_checkpoint_file(dir, "best.safetensors");
    best_bytes = read_file_bytes(run_file(dir, "best.safetensors"));
    has_best = true;
}

}  // namespace rf
