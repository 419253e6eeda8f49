// Room — data: masked-language-model batches (the rules are in mlm.hpp).
#include "data/mlm.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "data/corpus.hpp"
#include "data/tokenizer.hpp"
#include "tensor/random.hpp"

namespace rf::data {

void MaskingOptions::validate() const {
    const auto in_unit = [](double x) { return x >= 0.0 && x <= 1.0; };
    if (!(select_probability > 0.0 && select_probability <= 1.0))
        throw std::invalid_argument("mask probability must be in (0, 1], got " +
                                    std::to_string(select_probability));
    if (!in_unit(mask_share) || !in_unit(random_share) || mask_share + random_share > 1.0)
        throw std::invalid_argument(
            "mask_share and random_share must be in [0, 1] with a sum ≤ 1, got " +
            std::to_string(mask_share) + " and " + std::to_string(random_share));
}

void frame_window(const std::vector<int>& tokens, size_t start, size_t seq_len, int* out) {
    out[0] = kClsId;
    std::copy(tokens.begin() + start, tokens.begin() + start + (seq_len - kFramingTokens), out + 1);
    out[seq_len - 1] = kSepId;
}

// What a position selected for prediction shows the model: [MASK] with probability
// mask_share, a random non-special token with probability random_share, the original token
// otherwise (BERT, Devlin et al. 2019, §3.1: 80/10/10). Used by the training sampler and the
// validation masks below.
// graded:begin mlm_masking (students/tasks/mlm_masking.cpp)
int masked_token_for(int original, double action, size_t vocab_size, const MaskingOptions& options,
                     Rng& rng) {
    if (action < options.mask_share) return kMaskId;
    if (action < options.mask_share + options.random_share)
        return kNumSpecialTokens + static_cast<int>(rng.below(vocab_size - kNumSpecialTokens));
    return original;
}
// graded:end mlm_masking

static void check_common(size_t seq_len, size_t vocab_size, size_t batch_size,
                         const MaskingOptions& options) {
    if (seq_len <= kFramingTokens)
        throw std::invalid_argument("seq_len must be at least 3 ([CLS] + one token + [SEP]), got " +
                                    std::to_string(seq_len));
    if (vocab_size <= static_cast<size_t>(kNumSpecialTokens))
        throw std::invalid_argument("vocab_size must be greater than the 5 special tokens, got " +
                                    std::to_string(vocab_size));
    if (batch_size == 0) throw std::invalid_argument("batch_size must be at least 1");
    options.validate();
}

// ---- training ------------------------------------------------------------------------------

MlmSampler::MlmSampler(std::vector<int> tokens, size_t seq_len, size_t vocab_size, uint64_t seed,
                       MaskingOptions options)
    : tokens_(std::move(tokens)),
      seq_len_(seq_len),
      vocab_size_(vocab_size),
      seed_(seed),
      options_(options) {
    check_common(seq_len, vocab_size, 1, options);
    require_window_fits("", "train", tokens_.size(), seq_len, kFramingTokens);
}

Batch MlmSampler::next(size_t batch_size) { return batch_at(drawn_++, batch_size); }

Batch MlmSampler::batch_at(uint64_t index, size_t batch_size) const {
    if (batch_size == 0) throw std::invalid_argument("batch_size must be at least 1");
    Rng rng(batch_seed(seed_, index));
    const size_t T = seq_len_, n_starts = tokens_.size() - (T - kFramingTokens) + 1;
    Batch out{batch_size, T, std::vector<int>(batch_size * T),
                 std::vector<int>(batch_size * T, kIgnoreLabel)};
    std::vector<size_t> candidates;
    for (size_t row = 0; row < batch_size; ++row) {
        int* ids = out.input_ids.data() + row * T;
        int* labels = out.labels.data() + row * T;
        frame_window(tokens_, rng.below(n_starts), T, ids);
        candidates.clear();
        bool any_selected = false;
        for (size_t t = 0; t < T; ++t) {
            if (Tokenizer::is_special(ids[t])) continue;  // [CLS] [SEP] [UNK] … are never selected
            candidates.push_back(t);
            if (rng.uniform() >= options_.select_probability) continue;
            labels[t] = ids[t];
            any_selected = true;
        }
        if (!any_selected && !candidates.empty()) {  // keep every row's loss defined
            const size_t t = candidates[rng.below(candidates.size())];
            labels[t] = ids[t];
        }
        for (size_t t = 0; t < T; ++t)
            if (labels[t] != kIgnoreLabel)
                ids[t] = masked_token_for(ids[t], rng.uniform(), vocab_size_, options_, rng);
    }
    return out;
}

// ---- validation ----------------------------------------------------------------------------

std::vector<size_t> validation_window_starts(size_t n_tokens, size_t seq_len, size_t n_windows,
                                             size_t framing_tokens) {
    require_window_fits("", "validation", n_tokens, seq_len, framing_tokens);
    const size_t content = seq_len - framing_tokens, last_start = n_tokens - content;
    std::vector<size_t> starts;
    if (n_windows == 0) {
        for (size_t start = 0; start <= last_start; start += content) starts.push_back(start);
        return starts;
    }
    n_windows = std::min(n_windows, last_start + 1);
    if (n_windows == 1) return {0};
    for (size_t k = 0; k < n_windows; ++k)
        starts.push_back(
            static_cast<size_t>(static_cast<unsigned long long>(k) * last_start / (n_windows - 1)));
    return starts;
}

// For each token of the split: the id the model sees if it is selected, or −1 if not.
// Drawn in order from one Rng(seed), so a position's decision does not depend on windows.
static std::vector<int> per_position_masks(const std::vector<int>& tokens, size_t vocab_size,
                                           uint64_t seed, const MaskingOptions& options) {
    Rng rng(seed);
    std::vector<int> shown(tokens.size(), -1);
    for (size_t p = 0; p < tokens.size(); ++p) {
        const bool selected =
            rng.uniform() < options.select_probability;  // drawn for every position
        if (selected && !Tokenizer::is_special(tokens[p]))
            shown[p] = masked_token_for(tokens[p], rng.uniform(), vocab_size, options, rng);
    }
    return shown;
}

static std::vector<Batch> batches_from_starts(const std::vector<int>& tokens,
                                                 const std::vector<size_t>& starts, size_t seq_len,
                                                 size_t batch_size, const std::vector<int>& shown) {
    std::vector<Batch> batches;
    const size_t T = seq_len;
    for (size_t first = 0; first < starts.size(); first += batch_size) {
        const size_t rows = std::min(batch_size, starts.size() - first);
        Batch batch{rows, T, std::vector<int>(rows * T),
                       std::vector<int>(rows * T, kIgnoreLabel)};
        for (size_t row = 0; row < rows; ++row) {
            const size_t start = starts[first + row];
            int* ids = batch.input_ids.data() + row * T;
            int* labels = batch.labels.data() + row * T;
            frame_window(tokens, start, T, ids);
            for (size_t t = 1; t + 1 < T; ++t) {  // text position t holds tokens[start + t − 1]
                const int replacement = shown[start + t - 1];
                if (replacement < 0) continue;
                labels[t] = ids[t];
                ids[t] = replacement;
            }
        }
        batches.push_back(std::move(batch));
    }
    return batches;
}

std::vector<Batch> make_validation_batches(const std::vector<int>& tokens, size_t seq_len,
                                              size_t n_windows, size_t batch_size,
                                              size_t vocab_size, uint64_t seed,
                                              const MaskingOptions& options) {
    check_common(seq_len, vocab_size, batch_size, options);
    const auto starts = validation_window_starts(tokens.size(), seq_len, n_windows);
    return batches_from_starts(tokens, starts, seq_len, batch_size,
                               per_position_masks(tokens, vocab_size, seed, options));
}

std::vector<Batch> make_length_eval_batches(const std::vector<int>& tokens, size_t length,
                                               size_t batch_size, size_t vocab_size, uint64_t seed,
                                               const MaskingOptions& options,
                                               size_t max_text_tokens) {
    check_common(length, vocab_size, batch_size, options);
    const size_t used =
        max_text_tokens == 0 ? tokens.size() : std::min(tokens.size(), max_text_tokens);
    require_window_fits("", "validation", used, length, kFramingTokens);
    const size_t content = length - kFramingTokens;
    std::vector<size_t> starts;
    for (size_t start = 0; start + content <= used; start += content) starts.push_back(start);
    return batches_from_starts(tokens, starts, length, batch_size,
                               per_position_masks(tokens, vocab_size, seed, options));
}

}  // namespace rf::data
