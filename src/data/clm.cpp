// Room — data: causal-language-model batches (the rules are in clm.hpp).
#include "data/clm.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "data/corpus.hpp"
#include "tensor/random.hpp"

namespace rf::data {

namespace {

constexpr size_t kNoFraming = 0;  // a causal LM window is text only

void check_common(size_t seq_len, size_t batch_size) {
    if (seq_len < 2)
        throw std::invalid_argument(
            "seq_len must be at least 2 for a causal LM (one token to read, one to predict), got " +
            std::to_string(seq_len));
    if (batch_size == 0) throw std::invalid_argument("batch_size must be at least 1");
}

// Windows starting at `starts`, grouped into batches of batch_size rows.
std::vector<Batch> batches_from_starts(const std::vector<int>& tokens,
                                          const std::vector<size_t>& starts, size_t seq_len,
                                          size_t batch_size) {
    std::vector<Batch> batches;
    const size_t T = seq_len;
    for (size_t first = 0; first < starts.size(); first += batch_size) {
        const size_t rows = std::min(batch_size, starts.size() - first);
        Batch batch{rows, T, std::vector<int>(rows * T), std::vector<int>(rows * T)};
        for (size_t row = 0; row < rows; ++row)
            clm_window(tokens, starts[first + row], T, batch.input_ids.data() + row * T,
                       batch.labels.data() + row * T);
        batches.push_back(std::move(batch));
    }
    return batches;
}

}  // namespace

void clm_window(const std::vector<int>& tokens, size_t start, size_t seq_len, int* ids,
                int* labels) {
    std::copy(tokens.begin() + long(start), tokens.begin() + long(start + seq_len), ids);
    std::copy(ids + 1, ids + seq_len, labels);  // labels[t] = x[s+t+1] = ids[t+1]
    labels[seq_len - 1] = kIgnoreLabel;         // the next token lies outside the window
}

// ---- training ------------------------------------------------------------------------------

ClmSampler::ClmSampler(std::vector<int> tokens, size_t seq_len, uint64_t seed)
    : tokens_(std::move(tokens)), seq_len_(seq_len), seed_(seed) {
    check_common(seq_len, 1);
    require_window_fits("", "train", tokens_.size(), seq_len, kNoFraming);
}

Batch ClmSampler::batch_at(uint64_t index, size_t batch_size) const {
    check_common(seq_len_, batch_size);
    Rng rng(batch_seed(seed_, index));
    const size_t T = seq_len_, n_starts = tokens_.size() - T + 1;  // starts 0 … n − T
    Batch out{batch_size, T, std::vector<int>(batch_size * T), std::vector<int>(batch_size * T)};
    for (size_t row = 0; row < batch_size; ++row)
        clm_window(tokens_, rng.below(n_starts), T, out.input_ids.data() + row * T,
                   out.labels.data() + row * T);
    return out;
}

// ---- validation and length evaluation ------------------------------------------------------

std::vector<Batch> make_clm_validation_batches(const std::vector<int>& tokens, size_t seq_len,
                                                  size_t n_windows, size_t batch_size) {
    check_common(seq_len, batch_size);
    const auto starts = validation_window_starts(tokens.size(), seq_len, n_windows, kNoFraming);
    return batches_from_starts(tokens, starts, seq_len, batch_size);
}

std::vector<Batch> make_clm_length_eval_batches(const std::vector<int>& tokens, size_t length,
                                                   size_t batch_size, size_t max_text_tokens) {
    check_common(length, batch_size);
    const size_t used =
        max_text_tokens == 0 ? tokens.size() : std::min(tokens.size(), max_text_tokens);
    require_window_fits("", "validation", used, length, kNoFraming);
    std::vector<size_t> starts;  // overlap by one: window k predicts x[k(L−1)+1 … (k+1)(L−1)]
    for (size_t start = 0; start + length <= used; start += length - 1) starts.push_back(start);
    return batches_from_starts(tokens, starts, length, batch_size);
}

}  // namespace rf::data
