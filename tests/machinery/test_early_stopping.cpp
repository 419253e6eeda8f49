// Early stopping for a fine-tune (finetune/early_stopping.hpp) and its validation examples
// (finetune/finetune_setup.hpp): the rule on hand-made score sequences, its state surviving a
// checkpoint, and the fixed 10 % hold-out.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "finetune/early_stopping.hpp"
#include "finetune/finetune_progress.hpp"
#include "finetune/finetune_setup.hpp"
#include "run/checkpoint_commit.hpp"

using namespace rf;

namespace {
ClassificationScore f1(double macro_f1) {
    ClassificationScore s;
    s.macro_f1 = macro_f1;
    s.accuracy = macro_f1 / 2;
    s.n = 10;
    return s;
}
}  // namespace

TEST_CASE("early stopping: a new best resets the count, a tie does not, patience stops") {
    EarlyStopping e;
    e.patience = 2;
    size_t saved = 0;  // how often the best model's bytes were made
    auto bytes = [&] { return "model at save " + std::to_string(++saved); };
    CHECK_FALSE(e.update(0, f1(0.40), f1(0.1), bytes));  // the first evaluation is the best
    CHECK(e.best_step == 0);
    CHECK_FALSE(e.update(5, f1(0.50), f1(0.2), bytes));  // better: new best
    CHECK(e.best_step == 5);
    CHECK(e.best_test.macro_f1 == doctest::Approx(0.2));
    CHECK_FALSE(e.update(10, f1(0.50), f1(0.3), bytes));  // a tie keeps the earlier one
    CHECK(e.best_step == 5);
    CHECK(e.since_best == 1);
    CHECK(e.best_bytes == "model at save 2");
    CHECK(e.update(15, f1(0.45), f1(0.4), bytes));  // second evaluation without gain: stop
    CHECK(e.stopped);
    CHECK(saved == 2);
    CHECK(e.best_validation.macro_f1 == doctest::Approx(0.5));
}

TEST_CASE("early stopping: the committed state restores exactly; a damaged one is refused") {
    const auto dir = std::filesystem::temp_directory_path() / "rf_test_early_stopping";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    EarlyStopping e;
    e.patience = 3;
    e.update(0, f1(0.3), f1(0.25), [] { return std::string("best bytes"); });
    e.update(4, f1(0.2), f1(0.35), [] { return std::string("never made"); });
    commit_checkpoint(dir.string(), 4,
                      {{"best.safetensors", e.best_bytes}, {"early_stopping.json", e.to_json()}});
    EarlyStopping r;
    r.patience = 3;
    r.restore(dir.string());
    CHECK(r.best_step == 0);
    CHECK(r.since_best == 1);
    CHECK_FALSE(r.stopped);
    CHECK(r.best_bytes == "best bytes");
    CHECK(r.best_validation.macro_f1 == e.best_validation.macro_f1);
    CHECK(r.best_test.accuracy == e.best_test.accuracy);
    CHECK(r.to_json() == e.to_json());
    std::filesystem::remove(dir / "early_stopping.json");
    CHECK_THROWS_WITH_AS(r.restore(dir.string()), doctest::Contains("early_stopping.json"),
                         std::runtime_error);
    std::filesystem::remove_all(dir);
}

TEST_CASE("early stopping's validation examples: a fixed 10 %, disjoint, order kept") {
    std::vector<data::LabelledExample> all;
    for (int i = 0; i < 95; ++i) all.push_back({"example " + std::to_string(i), "", i % 3});
    auto train = all;
    std::vector<data::LabelledExample> validation;
    finetune_setup::hold_out_validation(train, validation);
    CHECK(validation.size() == 9);
    CHECK(train.size() == 86);
    std::set<std::string> seen;
    for (const auto* part : {&train, &validation}) {
        int last = -1;
        for (const data::LabelledExample& x : *part) {
            CHECK(seen.insert(x.a).second);  // every example exactly once
            const int i = std::stoi(x.a.substr(8));
            CHECK(i > last);  // the original order
            last = i;
        }
    }
    auto again = all;
    std::vector<data::LabelledExample> validation2;
    finetune_setup::hold_out_validation(again, validation2);
    for (size_t i = 0; i < validation.size(); ++i) CHECK(validation2[i].a == validation[i].a);
    std::vector<data::LabelledExample> two = {{"a", "", 0}, {"b", "", 1}}, held;
    finetune_setup::hold_out_validation(two, held);
    CHECK(held.size() == 1);  // at least one
    CHECK(two.size() == 1);
}

TEST_CASE("early stopping: evaluations during the warm-up do not count towards patience") {
    // A head still warming up (tiny learning rates) cannot gain yet; counting those evaluations
    // would stop the run there and keep the fresh step-0 head.
    EarlyStopping e;
    e.patience = 1;
    e.warmup_steps = 10;
    auto bytes = [] { return std::string("model"); };
    CHECK_FALSE(e.update(0, f1(0.40), f1(0.1), bytes));
    CHECK_FALSE(e.update(5, f1(0.30), f1(0.1), bytes));   // warm-up: no count
    CHECK_FALSE(e.update(10, f1(0.30), f1(0.1), bytes));  // the last warm-up step: no count
    CHECK(e.since_best == 0);
    CHECK(e.update(15, f1(0.30), f1(0.1), bytes));  // after it: counts, patience 1 stops
    CHECK(e.best_step == 0);
    EarlyStopping later;  // a better evaluation during the warm-up is still the best one
    later.patience = 1;
    later.warmup_steps = 10;
    later.update(0, f1(0.40), f1(0.1), bytes);
    later.update(5, f1(0.50), f1(0.2), bytes);
    CHECK(later.best_step == 5);
}

TEST_CASE("fine-tune records: a number out of range is refused with its field, never converted") {
    // issue 65: get<size_t>() turned 1e30 or -1 into an undefined or wrapped count.
    const auto dir = std::filesystem::temp_directory_path() / "rf_test_finetune_numbers";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const auto write = [&](const char* name, const std::string& text) {
        std::ofstream(dir / name) << text;
    };
    const std::string score = R"({"loss": 1, "accuracy": 0.5, "macro_f1": 0.5, "n": 10})";
    const auto stopping = [&](const std::string& best_step, const std::string& n) {
        std::string bad_score = score;
        bad_score.replace(bad_score.find("10"), 2, n);
        return R"({"best_step": )" + best_step + R"(, "evaluations_since_best": 0, "stopped": false,
                  "best_validation": )" +
               bad_score + R"(, "best_test": )" + score + "}";
    };
    EarlyStopping r;
    write("best.safetensors", "best bytes");  // restore reads the best model's bytes too
    write("early_stopping.json", stopping("3", "10"));
    CHECK_NOTHROW(r.restore(dir.string()));  // the well-formed file reads
    CHECK(r.best_step == 3);
    for (const auto& [step, n, field] :
         std::vector<std::tuple<std::string, std::string, std::string>>{
             {"1e30", "10", "\"best_step\" is 1e+30"},
             {"-1", "10", "\"best_step\" is -1"},
             {"3", "2.5", "\"best_validation.n\" is 2.5"},
             {"3", "18446744073709551615", "\"best_validation.n\" is 18446744073709551615"}}) {
        CAPTURE(field);
        write("early_stopping.json", stopping(step, n));
        CHECK_THROWS_WITH_AS(r.restore(dir.string()), doctest::Contains(field.c_str()),
                             std::runtime_error);
    }
    const auto progress = [](const std::string& step) {
        return R"({"step": )" + step + R"(, "total_steps": 8, "stopped_by": "", )" +
               R"("window_loss_sum": 1.5, "window_count": 2, "elapsed_s": 1})";
    };
    write(kFinetuneProgressFile, progress("4"));
    CHECK(load_progress(dir.string()).step == 4);
    write(kFinetuneProgressFile, progress("1e30"));
    CHECK_THROWS_WITH_AS(load_progress(dir.string()), doctest::Contains("\"step\" is 1e+30"),
                         std::runtime_error);
    std::filesystem::remove_all(dir);
}
