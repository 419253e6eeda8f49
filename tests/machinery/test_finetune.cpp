// Fine-tuning pieces (float32): pair framing, the classifier's shapes and token types, the
// metrics on hand-countable cases, the bag-of-words floor, the fine-tune config table, tasks.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "assembly/swappable_ops_for.hpp"
#include "finetune/finetune_config.hpp"
#include "finetune/sentence_pair.hpp"
#include "finetune/tasks.hpp"
#include "data/tokenizer.hpp"
#include "model/classifier.hpp"
#include "finetune/bag_of_words.hpp"
#include "finetune/classification_metrics.hpp"

using namespace rf;

TEST_CASE("frame_for_classifier: [CLS] a [SEP] b [SEP] with types 0/1, longest first") {
    const std::vector<int> a = {10, 11, 12}, b = {20, 21};
    const data::FramedText one = data::frame_for_classifier(a, nullptr, 16);
    CHECK(one.ids == std::vector<int>{data::kClsId, 10, 11, 12, data::kSepId});
    CHECK(one.types == std::vector<int>(5, 0));
    const data::FramedText two = data::frame_for_classifier(a, &b, 16);
    CHECK(two.ids ==
          std::vector<int>{data::kClsId, 10, 11, 12, data::kSepId, 20, 21, data::kSepId});
    CHECK(two.types == std::vector<int>{0, 0, 0, 0, 0, 1, 1, 1});
    // 7 tokens: a (the longer) loses its last token first, then they take turns
    const data::FramedText cut = data::frame_for_classifier(a, &b, 6);
    CHECK(cut.ids == std::vector<int>{data::kClsId, 10, data::kSepId, 20, 21, data::kSepId});
    CHECK_THROWS_AS(data::frame_for_classifier(a, &b, 4), std::invalid_argument);
}

namespace {
ModelConfig tiny_model() {
    ModelConfig c;
    c.vocab_size = 13;
    c.hidden = 8;
    c.num_heads = 2;
    c.num_layers = 1;
    c.ffn = 16;
    return c;
}
}  // namespace

TEST_CASE("SequenceClassifier: logits [B,K], HF tensor names, segment b changes the answer") {
    PositionConfig position;
    SequenceClassifier model(make_model(tiny_model(), position, 3), 4, 5);
    std::vector<std::string> names;
    for (const NamedParameter& p : model.parameters()) names.push_back(p.tensor.name());
    CHECK(std::find(names.begin(), names.end(), "classifier.dense.weight") != names.end());
    CHECK(std::find(names.begin(), names.end(), "classifier.out_proj.weight") != names.end());
    for (const std::string& n : names) CHECK(n.rfind("cls.", 0) != 0);  // no MLM head
    const std::vector<int> ids = {2, 6, 7, 3, 8, 3, 2, 9, 10, 3, 11, 3};
    const ClassifierOutput out = model.forward(ids, {}, {1, 3}, 2, 6, false);
    CHECK(out.logits.shape() == Shape{2, 4});
    CHECK(std::isfinite(out.loss.item()));
    const std::vector<int> types = {0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1};
    // segment b's type-1 embedding reaches [CLS] through attention: its hidden state moves
    const Tensor plain = model.encoder().encode(ids, 2, 6, false);
    const Tensor paired = model.encoder().encode(ids, 2, 6, false, types);
    double moved = 0;
    for (size_t c = 0; c < 8; ++c) moved += std::abs(paired.data()[c] - plain.data()[c]);
    CHECK(moved > 1e-3);
    CHECK_THROWS_AS(model.forward(ids, {}, {4, 0}, 2, 6, false), std::invalid_argument);
    CHECK_THROWS_AS(model.forward(ids, std::vector<int>(12, 2), {}, 2, 6, false),
                    std::invalid_argument);
}

TEST_CASE("score_predictions: accuracy, macro-F1 and confusion on a hand-counted case") {
    // truth 0 0 0 1 ; predicted 0 0 1 1 → class 0: TP 2 FP 0 FN 1 → F1 4/5;
    // class 1: TP 1 FP 1 FN 0 → F1 2/3
    const ClassificationScore s = score_predictions({0, 0, 1, 1}, {0, 0, 0, 1}, 2);
    CHECK(s.accuracy == doctest::Approx(0.75));
    CHECK(s.macro_f1 == doctest::Approx((0.8 + 2.0 / 3.0) / 2));
    CHECK(s.confusion[0][1] == 1);
    // always the majority: F1 of the minority class is 0
    const ClassificationScore m = score_predictions({0, 0, 0, 0}, {0, 0, 0, 1}, 2);
    CHECK(m.macro_f1 == doctest::Approx((6.0 / 7.0 + 0.0) / 2));
    CHECK_THROWS_AS(score_predictions({2}, {0}, 2), std::invalid_argument);
}

TEST_CASE("BagOfWords learns which words mark a class, and nothing about order") {
    // class 0 uses tokens 0..4, class 1 tokens 5..9, plus shared noise token 10
    std::vector<std::vector<int>> xs;
    std::vector<int> ys;
    Rng rng(3);
    for (int i = 0; i < 200; ++i) {
        const int y = i % 2;
        std::vector<int> x = {10};
        for (int k = 0; k < 3; ++k) x.push_back(5 * y + int(rng.next_u64() % 5));
        xs.push_back(x);
        ys.push_back(y);
    }
    BagOfWords model(11, 2);
    model.fit(xs, ys, BagOfWordsOptions{});
    CHECK(model.predict({1, 2, 10}) == 0);
    CHECK(model.predict({6, 7, 10}) == 1);
    CHECK(model.logits({1, 6})[0] == doctest::Approx(model.logits({6, 1})[0]));
}

namespace {
// A skewed task in the char-tokenizer's shape: 80 % class 0, long examples (300 tokens from a
// 30-symbol alphabet, so counts run to a dozen and more), class 1 drawing symbols 0..2
// a little more often (1 draw in 40) — a weak signal under large, repeated counts.
void skewed_examples(uint64_t seed, size_t n, std::vector<std::vector<int>>& xs,
                     std::vector<int>& ys) {
    Rng rng(seed);
    for (size_t i = 0; i < n; ++i) {
        const int y = rng.next_u64() % 5 == 0 ? 1 : 0;
        std::vector<int> x;
        for (int t = 0; t < 300; ++t)
            x.push_back(y == 1 && rng.next_u64() % 40 == 0 ? int(rng.next_u64() % 3)
                                                          : int(rng.next_u64() % 30));
        xs.push_back(x);
        ys.push_back(y);
    }
}
double accuracy_of(const BagOfWords& model, const std::vector<std::vector<int>>& xs,
                   const std::vector<int>& ys) {
    size_t right = 0;
    for (size_t i = 0; i < xs.size(); ++i) right += model.predict(xs[i]) == ys[i];
    return double(right) / double(xs.size());
}
}  // namespace

TEST_CASE("BagOfWords converges on long, skewed count features: never below the majority class") {
    // Two training draws (as two fine-tune seeds draw their max_train_examples) scored on one
    // test set: both converge, both at least the majority class, and they agree closely.
    std::vector<std::vector<int>> test_x;
    std::vector<int> test_y;
    skewed_examples(99, 2000, test_x, test_y);
    const double majority =
        double(std::count(test_y.begin(), test_y.end(), 0)) / double(test_y.size());
    std::vector<double> accuracies;
    for (uint64_t seed : {1, 2}) {
        std::vector<std::vector<int>> xs;
        std::vector<int> ys;
        skewed_examples(seed, 3000, xs, ys);
        BagOfWords model(30, 2);
        const BagOfWordsFit fit = model.fit(xs, ys);
        CHECK(fit.converged);
        CHECK(std::isfinite(fit.loss));
        accuracies.push_back(accuracy_of(model, test_x, test_y));
        CHECK(accuracies.back() >= majority);
    }
    CHECK(std::abs(accuracies[0] - accuracies[1]) < 0.02);
}

TEST_CASE("BagOfWords says when it did not converge") {
    std::vector<std::vector<int>> xs;
    std::vector<int> ys;
    skewed_examples(1, 500, xs, ys);
    BagOfWords model(30, 2);
    BagOfWordsOptions few;
    few.max_iterations = 2;
    const BagOfWordsFit fit = model.fit(xs, ys, few);
    CHECK_FALSE(fit.converged);
    CHECK(fit.iterations == 2);
}

TEST_CASE("finetune config: defaults, file, --set; unknown keys and bad values refused") {
    const auto dir = std::filesystem::temp_directory_path() / "rf_test_finetune_config";
    std::filesystem::create_directories(dir);
    const std::string path = (dir / "ft.toml").string();
    std::ofstream(path) << "[finetune]\nlr = 3e-4\nepochs = 3\n";
    const FinetuneConfig c = load_finetune_config(path, {"batch_size=8", "finetune.seed=4"});
    CHECK(c.lr == doctest::Approx(3e-4));
    CHECK(c.epochs == 3);
    CHECK(c.batch_size == 8);
    CHECK(c.seed == 4);
    std::ofstream(path) << to_toml(c);
    const FinetuneConfig again = load_finetune_config(path);
    CHECK(to_toml(again) == to_toml(c));
    CHECK_THROWS_WITH_AS(load_finetune_config(std::nullopt, {"nope=1"}),
                         doctest::Contains("unknown key finetune.nope"), std::invalid_argument);
    CHECK_THROWS_AS(load_finetune_config(std::nullopt, {"epochs=0"}), std::invalid_argument);
    CHECK_THROWS_AS(load_finetune_config(std::nullopt, {"lr=abc"}), std::invalid_argument);
    std::filesystem::remove_all(dir);
}

TEST_CASE("KJV tasks: test chapters held out, labels consistent, bad corpus refused") {
    const std::string kjv = std::string(RF_SOURCE_DIR) + "/data/kjv.txt";
    const data::ClassificationTask t = data::make_task("kjv-testament", kjv, 0.05);
    CHECK(t.labels.size() == 2);
    CHECK(t.train.size() + t.test.size() == 31102);
    CHECK(t.train.front().a.rfind("In the beginning God created", 0) == 0);
    CHECK(t.train.front().label == 0);
    CHECK(t.train.back().label == 1);  // Revelation 22
    // every 20th chapter (the MLM validation blocks) is test: about 5 % of the verses
    CHECK(t.test.size() > 31102 * 3 / 100);
    CHECK(t.test.size() < 31102 * 8 / 100);
    const data::ClassificationTask book = data::make_task("kjv-book", kjv, 0.05);
    CHECK(book.labels.size() == 66);
    CHECK(book.train.back().label == 65);
    const data::ClassificationTask next = data::make_task("kjv-next-verse", kjv, 0.05);
    CHECK(next.pair);
    size_t positives = 0;
    for (const data::LabelledExample& x : next.train) positives += x.label;
    CHECK(positives > next.train.size() / 3);
    CHECK(positives < 2 * next.train.size() / 3);
    CHECK_THROWS_WITH_AS(data::make_task("nope", kjv, 0.05), doctest::Contains("unknown task"),
                         std::invalid_argument);
    const auto dir = std::filesystem::temp_directory_path() / "rf_test_tasks";
    std::filesystem::create_directories(dir);
    const std::string other = (dir / "other.txt").string();
    std::ofstream(other) << "one verse\n\nanother\n";
    CHECK_THROWS_WITH_AS(data::make_task("kjv-testament", other, 0.05),
                         doctest::Contains("not the KJV's 1189"), std::runtime_error);
    std::filesystem::remove_all(dir);
}
