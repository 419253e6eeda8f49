// Stage 6 — tests: causal-LM batches (labels = next tokens), the fixed validation set, length
// evaluation, the objective's choice in prepare_data, and the clm loss against one computed
// by hand from the model's logits.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "assembly/swappable_ops_for.hpp"
#include "data/clm.hpp"
#include "data/prepare.hpp"
#include "model/roformer.hpp"
#include "tiny_model.hpp"

using namespace rf;
using namespace rf::data;

namespace {

// Every token unique (id = 5 + position): a window's start can be read off its first id.
std::vector<int> unique_stream(size_t n) {
    std::vector<int> tokens(n);
    for (size_t i = 0; i < n; ++i) tokens[i] = kNumSpecialTokens + static_cast<int>(i);
    return tokens;
}

// Every row of `batch` is a window of `tokens`: labels are the next tokens, the last ignored.
void check_rows_are_next_token_windows(const Batch& batch, const std::vector<int>& tokens) {
    const size_t T = batch.seq_len;
    REQUIRE(batch.input_ids.size() == batch.batch * T);
    REQUIRE(batch.labels.size() == batch.batch * T);
    for (size_t row = 0; row < batch.batch; ++row) {
        const int* ids = batch.input_ids.data() + row * T;
        const int* labels = batch.labels.data() + row * T;
        const size_t start = size_t(ids[0] - kNumSpecialTokens);
        REQUIRE(start + T <= tokens.size());
        for (size_t t = 0; t < T; ++t) CHECK(ids[t] == tokens[start + t]);
        for (size_t t = 0; t + 1 < T; ++t) CHECK(labels[t] == tokens[start + t + 1]);
        CHECK(labels[T - 1] == kIgnoreLabel);
    }
}

}  // namespace

TEST_CASE("clm training batches: labels are the next tokens, the last position is ignored") {
    const auto tokens = unique_stream(3000);
    const ClmSampler sampler(tokens, 16, 7);
    for (uint64_t k = 0; k < 5; ++k) {
        const Batch batch = sampler.batch_at(k, 8);
        CHECK(batch.batch == 8);
        CHECK(batch.seq_len == 16);
        check_rows_are_next_token_windows(batch, tokens);
        CHECK(batch.n_selected() == 8 * 15);  // every position but the last: no masking
    }
}

TEST_CASE("clm training batches are a function of (seed, step): same → same, else different") {
    const auto tokens = unique_stream(3000);
    const ClmSampler a(tokens, 16, 7), b(tokens, 16, 7), other_seed(tokens, 16, 8);
    const Batch step3 = a.batch_at(3, 8);
    CHECK(b.batch_at(3, 8).input_ids == step3.input_ids);  // another sampler, no history
    CHECK(b.batch_at(3, 8).labels == step3.labels);
    a.batch_at(0, 8);  // drawing other batches first changes nothing
    CHECK(a.batch_at(3, 8).input_ids == step3.input_ids);
    CHECK(a.batch_at(4, 8).input_ids != step3.input_ids);
    CHECK(other_seed.batch_at(3, 8).input_ids != step3.input_ids);

    // the starts cover the whole split, first and last window included
    const auto small = unique_stream(20);
    const ClmSampler edge(small, 16, 1);  // starts 0 … 4
    std::set<int> firsts;
    for (uint64_t k = 0; k < 50; ++k) {
        const Batch batch = edge.batch_at(k, 4);
        check_rows_are_next_token_windows(batch, small);
        for (size_t row = 0; row < 4; ++row) firsts.insert(batch.input_ids[row * 16]);
    }
    CHECK(firsts == std::set<int>{5, 6, 7, 8, 9});
}

TEST_CASE("clm validation set: fixed windows, identical on every call, spread over the split") {
    const auto tokens = unique_stream(1000);
    const auto first = make_clm_validation_batches(tokens, 32, 10, 4);
    const auto second = make_clm_validation_batches(tokens, 32, 10, 4);
    REQUIRE(first.size() == 3);  // 4 + 4 + 2 rows
    CHECK(first.back().batch == 2);
    std::vector<size_t> starts;
    for (size_t b = 0; b < first.size(); ++b) {
        CHECK(first[b].input_ids == second[b].input_ids);
        CHECK(first[b].labels == second[b].labels);
        check_rows_are_next_token_windows(first[b], tokens);
        for (size_t row = 0; row < first[b].batch; ++row)
            starts.push_back(size_t(first[b].input_ids[row * 32] - kNumSpecialTokens));
    }
    // no framing: the last window ends exactly at the last token
    CHECK(starts == validation_window_starts(1000, 32, 10, 0));
    CHECK(starts.front() == 0);
    CHECK(starts.back() == 1000 - 32);
}

TEST_CASE("clm length evaluation predicts every token after the first exactly once, at any L") {
    const auto tokens = unique_stream(601);
    for (size_t L : {2, 16, 61, 200}) {
        CAPTURE(L);
        const auto batches = make_clm_length_eval_batches(tokens, L, 3);
        std::vector<int> predicted;
        for (const Batch& b : batches) {
            CHECK(b.seq_len == L);
            check_rows_are_next_token_windows(b, tokens);
            for (int label : b.labels)
                if (label != kIgnoreLabel) predicted.push_back(label);
        }
        // windows overlap by one token, so the labels are tokens 1, 2, 3, … in order
        const size_t windows = (601 - 1) / (L - 1);
        REQUIRE(predicted.size() == windows * (L - 1));
        for (size_t i = 0; i < predicted.size(); ++i) CHECK(predicted[i] == tokens[i + 1]);
    }
    // the first 100 tokens only: (100 − 1) / 15 = 6 windows, 3 rows per batch
    CHECK(make_clm_length_eval_batches(tokens, 16, 3, 100).size() == 2);
    CHECK_THROWS_WITH_AS(make_clm_length_eval_batches(tokens, 1, 3), doctest::Contains("seq_len"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(ClmSampler(unique_stream(10), 16, 1),
                         doctest::Contains("train split is too short"), std::runtime_error);
}

TEST_CASE("prepare_data builds the objective's validation set; the mlm one is unchanged") {
    DataConfig config;
    config.path = std::string(RF_SOURCE_DIR) + "/data/kjv.txt";
    config.tokenizer = "char";
    config.seq_len = 24;
    config.val_windows = 10;
    std::unique_ptr<Tokenizer> tokenizer;
    const PreparedData clm = prepare_data(config, 4, tokenizer, Objective::clm);
    const PreparedData mlm = prepare_data(config, 4, tokenizer, Objective::mlm);
    REQUIRE(clm.validation.size() == 3);
    for (const Batch& b : clm.validation)
        for (size_t row = 0; row < b.batch; ++row)
            for (size_t t = 0; t + 1 < 24; ++t)  // labels are the next tokens, no framing
                CHECK(b.labels[row * 24 + t] == b.input_ids[row * 24 + t + 1]);
    const auto expected_mlm =
        make_validation_batches(mlm.validation_ids, 24, 10, 4, tokenizer->vocab_size(),
                                kValidationSeed, masking_options(config));
    REQUIRE(mlm.validation.size() == expected_mlm.size());
    for (size_t b = 0; b < expected_mlm.size(); ++b) {
        CHECK(mlm.validation[b].input_ids == expected_mlm[b].input_ids);
        CHECK(mlm.validation[b].labels == expected_mlm[b].labels);
    }
    // both entropies are of their own labels: positive, and different label sets
    CHECK(clm.unigram_entropy > 0);
    CHECK(clm.unigram_entropy != mlm.unigram_entropy);
}

TEST_CASE("the clm loss is the mean next-token cross-entropy of logits_all, by hand") {
    // init_std 0.3: logits far from uniform, so a wrong row or label shows
    ModelConfig m = testing::tiny_model_config(30, 0.3);
    m.causal = true;
    RoFormer model = assembled_model(m, PositionConfig{}, 5);
    std::vector<int> stream(200);
    for (size_t i = 0; i < stream.size(); ++i) stream[i] = int(5 + (i * 11 + i / 7) % 25);
    const Batch batch = ClmSampler(stream, 9, 3).batch_at(0, 3);  // B = 3, T = 9
    NoGradGuard no_grad;
    const double loss = model.forward(batch.input_ids, batch.labels, 3, 9, false).loss.item();
    const Tensor logits = model.logits_all(batch.input_ids, 3, 9);  // [B·T, V]
    double nll = 0;
    size_t n = 0;
    for (size_t row = 0; row < 3 * 9; ++row) {
        if (batch.labels[row] == kIgnoreLabel) continue;
        const Real* z = logits.data() + row * 30;
        double top = z[0], sum = 0;
        for (size_t v = 1; v < 30; ++v) top = std::max(top, double(z[v]));
        for (size_t v = 0; v < 30; ++v) sum += std::exp(double(z[v]) - top);
        nll -= double(z[batch.labels[row]]) - top - std::log(sum);  // −log softmax(z)[label]
        ++n;
    }
    CHECK(n == 3 * 8);
    CHECK(loss == doctest::Approx(nll / double(n)).epsilon(1e-5));
}
