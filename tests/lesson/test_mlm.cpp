// Stage 6 — tests: MLM windows, masking proportions, labels, validation batches.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "data/mlm.hpp"
#include "data/tokenizer.hpp"

using namespace rf::data;
using rf::Batch;
using rf::kIgnoreLabel;

namespace {

// A stream in which every non-special token is unique (id = 5 + position), so the original
// token at any window position can be recovered; every 7th token is [UNK] (a special).
std::vector<int> unique_stream(size_t n) {
    std::vector<int> tokens(n);
    for (size_t i = 0; i < n; ++i)
        tokens[i] = (i % 7 == 3) ? kUnkId : kNumSpecialTokens + static_cast<int>(i);
    return tokens;
}

// |observed − expected| within 5 binomial standard deviations
void check_share(size_t hits, size_t trials, double p) {
    const double sd = std::sqrt(p * (1.0 - p) / static_cast<double>(trials));
    CAPTURE(hits);
    CAPTURE(trials);
    CAPTURE(p);
    CHECK(std::abs(static_cast<double>(hits) / static_cast<double>(trials) - p) < 5.0 * sd);
}

}  // namespace

TEST_CASE("frame_window writes [CLS] tokens [SEP]") {
    const std::vector<int> tokens{10, 11, 12, 13, 14, 15};
    std::vector<int> out(5);
    frame_window(tokens, 2, 5, out.data());
    CHECK(out == std::vector<int>{kClsId, 12, 13, 14, kSepId});
}

TEST_CASE(
    "training batches: 15 % selected, 80/10/10, labels = originals, specials never selected") {
    const size_t n = 50000, vocab = n + kNumSpecialTokens, T = 128, B = 32, n_batches = 60;
    const auto tokens = unique_stream(n);
    MlmSampler sampler(tokens, T, vocab, 1234);
    size_t candidates = 0, selected = 0, masked = 0, randomized = 0, unchanged = 0;
    for (size_t k = 0; k < n_batches; ++k) {
        const Batch batch = sampler.next(B);
        REQUIRE(batch.input_ids.size() == B * T);
        REQUIRE(batch.labels.size() == B * T);
        for (size_t row = 0; row < B; ++row) {
            const int* ids = batch.input_ids.data() + row * T;
            const int* labels = batch.labels.data() + row * T;
            CHECK(ids[0] == kClsId);
            CHECK(ids[T - 1] == kSepId);
            CHECK(labels[0] == kIgnoreLabel);
            CHECK(labels[T - 1] == kIgnoreLabel);
            // recover the window start from the original token at text position 1 or 2
            const int original_1 = labels[1] != kIgnoreLabel ? labels[1] : ids[1];
            const int original_2 = labels[2] != kIgnoreLabel ? labels[2] : ids[2];
            const size_t start = original_1 != kUnkId ? original_1 - kNumSpecialTokens
                                                      : original_2 - kNumSpecialTokens - 1;
            for (size_t t = 1; t + 1 < T; ++t) {
                const int original = tokens[start + t - 1];
                if (original == kUnkId) {  // a special: never selected, never changed
                    CHECK(labels[t] == kIgnoreLabel);
                    CHECK(ids[t] == kUnkId);
                    continue;
                }
                ++candidates;
                if (labels[t] == kIgnoreLabel) {
                    CHECK(ids[t] == original);
                    continue;
                }
                CHECK(labels[t] == original);
                ++selected;
                if (ids[t] == kMaskId)
                    ++masked;
                else if (ids[t] == original)
                    ++unchanged;
                else {
                    CHECK((ids[t] >= kNumSpecialTokens && static_cast<size_t>(ids[t]) < vocab));
                    ++randomized;
                }
            }
        }
    }
    const double coincide =
        1.0 / static_cast<double>(vocab - kNumSpecialTokens);  // random == original
    check_share(selected, candidates, 0.15);
    check_share(masked, selected, 0.8);
    check_share(randomized, selected, 0.1 * (1.0 - coincide));
    check_share(unchanged, selected, 0.1 + 0.1 * coincide);
}

TEST_CASE("mask probability is configurable and every training row gets at least one label") {
    MaskingOptions options;
    options.select_probability = 0.4;
    const size_t n = 20000, vocab = n + kNumSpecialTokens;
    MlmSampler sampler(unique_stream(n), 64, vocab, 7, options);
    size_t selected = 0, candidates = 0;
    for (int k = 0; k < 20; ++k) {
        const auto batch = sampler.next(16);
        selected += batch.n_selected();
        for (size_t i = 0; i < batch.input_ids.size(); ++i)
            candidates +=
                !Tokenizer::is_special(batch.input_ids[i]) || batch.labels[i] != kIgnoreLabel;
    }
    check_share(selected, candidates, 0.4);

    options.select_probability = 0.001;  // rows would often be empty without the guarantee
    MlmSampler sparse(unique_stream(n), 16, vocab, 7, options);
    const auto batch = sparse.next(64);
    for (size_t row = 0; row < 64; ++row) {
        size_t labelled = 0;
        for (size_t t = 0; t < 16; ++t) labelled += batch.labels[row * 16 + t] != kIgnoreLabel;
        CHECK(labelled >= 1);
    }
    options.select_probability = 0.0;
    CHECK_THROWS_WITH_AS(MlmSampler(unique_stream(n), 16, vocab, 7, options),
                         doctest::Contains("mask probability"), std::invalid_argument);
}

TEST_CASE("the sampler is a function of (seed, batch index): seek reproduces batches") {
    const size_t n = 5000, vocab = n + kNumSpecialTokens;
    MlmSampler a(unique_stream(n), 32, vocab, 99), b(unique_stream(n), 32, vocab, 99);
    const auto first = a.next(8), second = a.next(8), third = a.next(8);
    b.seek(2);
    const auto again = b.next(8);
    CHECK(again.input_ids == third.input_ids);
    CHECK(again.labels == third.labels);
    CHECK(first.input_ids != second.input_ids);
    MlmSampler other_seed(unique_stream(n), 32, vocab, 100);
    CHECK(other_seed.next(8).input_ids != first.input_ids);
}

TEST_CASE("too few tokens for one window is an error naming the split") {
    CHECK_THROWS_WITH_AS(MlmSampler(unique_stream(10), 128, 100, 1),
                         doctest::Contains("train split is too short"), std::runtime_error);
    CHECK_THROWS_WITH_AS(make_validation_batches(unique_stream(10), 128, 4, 2, 100, 1),
                         doctest::Contains("validation split is too short"), std::runtime_error);
}

TEST_CASE("validation_window_starts: even spread, capped, or back to back") {
    CHECK(validation_window_starts(100, 12, 3) ==
          std::vector<size_t>{0, 45, 90});  // last start 100 − 10
    CHECK(validation_window_starts(100, 12, 1) == std::vector<size_t>{0});
    CHECK(validation_window_starts(100, 12, 0) ==
          std::vector<size_t>{0, 10, 20, 30, 40, 50, 60, 70, 80, 90});
    CHECK(validation_window_starts(100, 12, 1000).size() == 91);
}

TEST_CASE("validation batches are identical on every call, and masks follow the token position") {
    const size_t n = 4000, vocab = n + kNumSpecialTokens;
    const auto tokens = unique_stream(n);
    const auto first = make_validation_batches(tokens, 64, 50, 16, vocab, 42);
    const auto second = make_validation_batches(tokens, 64, 50, 16, vocab, 42);
    REQUIRE(first.size() == 4);  // 16 + 16 + 16 + 2 rows
    CHECK(first.back().batch == 2);
    for (size_t b = 0; b < first.size(); ++b) {
        CHECK(first[b].input_ids == second[b].input_ids);
        CHECK(first[b].labels == second[b].labels);
    }
    CHECK(make_validation_batches(tokens, 64, 50, 16, vocab, 43)[0].labels != first[0].labels);

    // stream position → (what the model sees, label), from windows of 64 and of 200
    const auto starts = validation_window_starts(n, 64, 50);
    std::map<size_t, std::pair<int, int>> seen;
    size_t selected = 0, candidates = 0;
    for (size_t w = 0; w < starts.size(); ++w) {
        const auto& batch = first[w / 16];
        const size_t row = w % 16;
        for (size_t t = 1; t + 1 < 64; ++t) {
            const size_t pos = starts[w] + t - 1;
            const int label = batch.labels[row * 64 + t];
            if (tokens[pos] == kUnkId)
                CHECK(label == kIgnoreLabel);
            else
                ++candidates;
            if (label == kIgnoreLabel) continue;
            CHECK(label == tokens[pos]);
            ++selected;
            seen[pos] = {batch.input_ids[row * 64 + t], label};
        }
    }
    check_share(selected, candidates, 0.15);
    const auto long_windows = make_length_eval_batches(tokens, 200, 4, vocab, 42);
    REQUIRE(long_windows.size() == 5);  // floor(4000 / 198) = 20 windows, batches of 4
    size_t compared = 0;
    for (size_t b = 0; b < long_windows.size(); ++b)
        for (size_t row = 0; row < long_windows[b].batch; ++row)
            for (size_t t = 1; t + 1 < 200; ++t) {
                const size_t pos = (b * 4 + row) * 198 + t - 1;
                const auto found = seen.find(pos);
                if (found == seen.end()) continue;
                CHECK(long_windows[b].input_ids[row * 200 + t] == found->second.first);
                CHECK(long_windows[b].labels[row * 200 + t] == found->second.second);
                ++compared;
            }
    CHECK(compared > 100);
}

// The rule itself, one position at a time: the random token is an ordinary one, and the
// generator is drawn for it alone (a draw for [MASK] or the original would shift every batch
// after it, which the whole-batch tests above cannot see).
TEST_CASE("masked_token_for: a random token is never special, and only it draws from the generator") {
    const MaskingOptions options;  // 80/10/10
    const size_t vocab = kNumSpecialTokens + 3;  // five special tokens and three ordinary ones
    rf::Rng rng(11);
    SUBCASE("the random share shows an ordinary token") {
        const double action = options.mask_share + options.random_share / 2;
        int special_token_drawn = -1;
        for (int i = 0; i < 200 && special_token_drawn < 0; ++i) {
            const int token = masked_token_for(7, action, vocab, options, rng);
            REQUIRE(token >= 0);
            REQUIRE(token < static_cast<int>(vocab));
            if (Tokenizer::is_special(token)) special_token_drawn = token;
        }
        CAPTURE(special_token_drawn);
        CHECK(special_token_drawn == -1);
    }
    SUBCASE("[MASK] and the original draw nothing from the generator") {
        for (double action : {0.0, options.mask_share / 2, options.mask_share + options.random_share + 0.01,
                              0.999}) {
            rf::Rng before = rng;
            masked_token_for(7, action, vocab, options, rng);
            const int random_draws = rng.below(1u << 30) == before.below(1u << 30) ? 0 : 1;
            CAPTURE(action);
            CAPTURE(random_draws);
            CHECK(random_draws == 0);
        }
    }
}
